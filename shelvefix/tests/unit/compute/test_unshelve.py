"""Unit tests for ComputeManager's unshelve (the destination's side).

The report client is a mock here: what matters is which calls compute
makes, in which order with the saves, and what it leaves behind when the
network set-up fails. The race lab drives the same code against the
placement double.
"""

from unittest import mock

import fixtures
from oslo_utils import uuidutils

from shelvefix.compute import collaborators
from shelvefix.compute import manager
from shelvefix.compute import power_state
from shelvefix.compute import resource_tracker
from shelvefix.compute import task_states
from shelvefix.compute import vm_states
from shelvefix import exception
from shelvefix.objects import instance as instance_obj
from shelvefix.race import variants
from shelvefix.tests import base
from shelvefix.tests.unit.compute import test_manager


class UnshelveTestCase(base.TestCase):
    """An offloaded instance the conductor sends to compute-2."""

    def setUp(self):
        super(UnshelveTestCase, self).setUp()
        self.timeline = []
        self.store = test_manager.recording_store(self.timeline)
        self.inst = instance_obj.Instance.create(
            self.store, uuidutils.generate_uuid(),
            vm_state=vm_states.SHELVED_OFFLOADED,
            task_state=task_states.UNSHELVING, project_id='p', user_id='u',
            power_state=power_state.SHUTDOWN)
        del self.timeline[:]
        self.client = mock.Mock()
        self.client.get_allocations_for_consumer.side_effect = (
            lambda ctx, uuid: self.timeline.append(('get allocations',)) or
            {'rp': {'resources': {'VCPU': 1}}})
        self.client.delete_allocation_for_instance.side_effect = (
            lambda ctx, uuid, force: self.timeline.append(
                ('delete allocations', force)))
        self.rt = resource_tracker.ResourceTracker(
            'compute-2', reportclient=self.client, store=self.store)
        self.network = collaborators.RecordingNetworkAPI()
        self.driver = collaborators.RecordingDriver()
        self.query = collaborators.SchedulerQueryClient()

    def unshelve(self, cls=manager.ComputeManager):
        compute = cls(host='compute-2', driver=self.driver,
                      network_api=self.network, reportclient=self.client,
                      query_client=self.query, rt=self.rt)
        compute.unshelve_instance(self.context, self.inst, None,
                                  {'limits': {}}, 'node-2')

    def saved(self):
        row = self.store.peek(self.inst.uuid)
        return (row['vm_state'], row['task_state'], row['host'],
                row['node'])

    def test_unshelve(self):
        self.unshelve()
        self.assertEqual([
            ('save', vm_states.SHELVED_OFFLOADED, task_states.SPAWNING,
             None),
            ('get allocations',),
            # The claim makes the instance the node's.
            ('save', vm_states.SHELVED_OFFLOADED, task_states.SPAWNING,
             'compute-2'),
            ('save', vm_states.ACTIVE, None, 'compute-2'),
        ], self.timeline)
        self.assertEqual((vm_states.ACTIVE, None, 'compute-2', 'node-2'),
                         self.saved())
        self.assertEqual(power_state.RUNNING,
                         self.store.peek(self.inst.uuid)['power_state'])
        self.assertEqual([self.inst.uuid], self.rt.tracked_on('node-2'))
        self.assertEqual(
            [('setup_instance_network_on_host', self.inst.uuid, 'compute-2'),
             ('get_instance_nw_info', self.inst.uuid)], self.network.calls)
        self.assertEqual([('spawn', self.inst.uuid),
                          ('get_info', self.inst.uuid)], self.driver.calls)
        self.assertEqual({self.inst.uuid},
                         self.query.instance_info['compute-2'])

    def test_port_binding_failure_gives_everything_back(self):
        self.network.binding_fails = True
        self.assertRaises(exception.PortBindingFailed, self.unshelve)
        self.assertIn(('delete allocations', True), self.timeline)
        self.assertEqual(
            (vm_states.SHELVED_OFFLOADED, None, None, None), self.saved())
        self.assertEqual([], self.rt.tracked_on('node-2'))
        self.assertEqual([], self.driver.calls)
        self.assertIn('Instance %s failed to spawn' % self.inst.uuid,
                      self.log.output)

    def test_spawn_failure_gives_everything_back(self):
        self.driver.spawn = mock.Mock(side_effect=RuntimeError('boom'))
        self.assertRaises(RuntimeError, self.unshelve)
        self.assertIn(('delete allocations', True), self.timeline)
        self.assertEqual(
            (vm_states.SHELVED_OFFLOADED, None, None, None), self.saved())
        self.assertEqual([], self.rt.tracked_on('node-2'))

    def test_allocation_read_failure_gives_the_claim_back(self):
        # nova 34 reads the allocations before the try: placement failing
        # there (a 500 from a database node going away) left the
        # scheduler's claim held by an offloaded instance.
        self.client.get_allocations_for_consumer.side_effect = (
            exception.ConsumerAllocationRetrievalFailed(
                consumer_uuid=self.inst.uuid, error='HTTP 500'))
        self.assertRaises(exception.ConsumerAllocationRetrievalFailed,
                          self.unshelve)
        self.client.delete_allocation_for_instance.assert_called_once_with(
            self.context, self.inst.uuid, force=True)
        self.assertEqual(
            (vm_states.SHELVED_OFFLOADED, None, None, None), self.saved())
        self.assertEqual([], self.rt.tracked_on('node-2'))
        self.assertEqual([], self.driver.calls)

    def test_claim_failing_after_saving_host_and_node(self):
        # The claim saves host and node first, then counts the instance: a
        # failure in between returns no Claim, so nothing aborts it and
        # only the manager's failure path can take the instance off the
        # node again.
        placement = {self.inst.uuid: {'rp': {'resources': {'VCPU': 1}}}}
        self.client.get_allocations_for_consumer.side_effect = (
            lambda ctx, uuid: dict(placement[uuid]))

        def delete(ctx, uuid, force):
            self.timeline.append(('delete allocations', force))
            placement.pop(uuid, None)
        self.client.delete_allocation_for_instance.side_effect = delete
        saved_before_failure = []

        def count_fails(context, instance, nodename, is_removed=False):
            saved_before_failure.append(self.saved())
            raise RuntimeError('counting failed')
        self.useFixture(fixtures.MockPatchObject(
            self.rt, '_update_usage_from_instance',
            side_effect=count_fails))

        error = self.assertRaises(RuntimeError, self.unshelve)

        self.assertEqual('counting failed', str(error))
        # The failure came after the claim had saved host and node.
        self.assertEqual(
            [(vm_states.SHELVED_OFFLOADED, task_states.SPAWNING,
              'compute-2', 'node-2')], saved_before_failure)
        # Cleared again, with the task state.
        self.assertEqual(
            (vm_states.SHELVED_OFFLOADED, None, None, None), self.saved())
        self.assertIsNone(self.inst.host)
        self.assertIsNone(self.inst.node)
        # The scheduler's allocations went back; the node counts nothing.
        self.client.delete_allocation_for_instance.assert_called_once_with(
            self.context, self.inst.uuid, force=True)
        self.assertNotIn(self.inst.uuid, placement)
        self.assertEqual([], self.rt.tracked_on('node-2'))
        self.assertEqual({}, self.rt.usage('node-2'))
        self.assertEqual([], self.driver.calls)
        self.assertEqual([], self.network.calls)

    def test_pre_1862633_variant_leaks_the_allocations(self):
        # The rewrite the race lab's pre-fix variant uses: the port binding
        # failure is raised outside the try that gives the allocations back.
        self.network.binding_fails = True
        self.assertRaises(exception.PortBindingFailed, self.unshelve,
                          variants.leaking_compute_manager())
        self.assertNotIn(('delete allocations', True), self.timeline)
        self.assertEqual(
            (vm_states.SHELVED_OFFLOADED, None, None, None), self.saved())

    def test_state_changed_under_the_unshelve(self):
        # Someone else took the instance: the final save refuses, and the
        # task state is left to its new owner.
        spawn = self.driver.spawn

        def spawn_and_steal(*args, **kwargs):
            spawn(*args, **kwargs)
            self.store.update(self.inst.uuid,
                              {'task_state': task_states.DELETING})
        self.driver.spawn = spawn_and_steal
        self.assertRaises(exception.UnexpectedTaskStateError, self.unshelve)
        self.assertEqual(task_states.DELETING,
                         self.store.peek(self.inst.uuid)['task_state'])

    def test_start_instance_for_a_shelved_instance(self):
        inst = instance_obj.Instance.create(
            self.store, uuidutils.generate_uuid(), vm_state=vm_states.SHELVED,
            task_state=task_states.POWERING_ON, host='compute-2',
            power_state=power_state.SHUTDOWN)
        compute = manager.ComputeManager(
            host='compute-2', driver=self.driver, network_api=self.network,
            reportclient=self.client, rt=self.rt)
        compute.start_instance(self.context, inst)
        row = self.store.peek(inst.uuid)
        self.assertEqual((vm_states.ACTIVE, None, power_state.RUNNING),
                         (row['vm_state'], row['task_state'],
                          row['power_state']))
        self.assertEqual([('power_on', inst.uuid), ('get_info', inst.uuid)],
                         self.driver.calls)
