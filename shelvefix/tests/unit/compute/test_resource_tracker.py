"""Tests for the resource tracker: claims, usage and the periodic audit."""

from unittest import mock

from oslo_utils import uuidutils

from shelvefix.compute import resource_tracker
from shelvefix.compute import task_states
from shelvefix.compute import vm_states
from shelvefix.objects import instance as instance_obj
from shelvefix.race import variants
from shelvefix.tests import base
from shelvefix import utils

FLAVOR = instance_obj.Flavor(vcpus=2, memory_mb=1024, root_gb=5)
RESOURCES = {'VCPU': 2, 'MEMORY_MB': 1024, 'DISK_GB': 5}


class ResourceTrackerTestCase(base.TestCase):

    def setUp(self):
        super(ResourceTrackerTestCase, self).setUp()
        self.client = mock.Mock()
        self.store = instance_obj.InstanceStore()
        self.inst = instance_obj.Instance.create(
            self.store, uuidutils.generate_uuid(), flavor=FLAVOR)

    def tracker(self, cls=resource_tracker.ResourceTracker, **kwargs):
        return cls('h', reportclient=self.client, store=self.store, **kwargs)

    def test_default_strategy_is_delete(self):
        rt = self.tracker()
        rt.delete_allocation_for_shelve_offloaded_instance(self.context,
                                                           self.inst)
        self.client.delete_allocation_for_instance.assert_called_once_with(
            self.context, self.inst.uuid, force=True)

    def test_get_and_put_empty_strategy(self):
        rt = self.tracker(force_delete_allocations=False)
        rt.delete_allocation_for_shelve_offloaded_instance(self.context,
                                                           self.inst)
        self.client.delete_allocation_for_instance.assert_called_once_with(
            self.context, self.inst.uuid, force=False)

    def test_claim_makes_the_instance_the_nodes(self):
        rt = self.tracker()
        claim = rt.instance_claim(self.context, self.inst, 'n1')
        self.assertIsInstance(claim, resource_tracker.Claim)
        saved = self.store.peek(self.inst.uuid)
        self.assertEqual(('h', 'n1'), (saved['host'], saved['node']))
        self.assertEqual(RESOURCES, rt.usage('n1'))
        self.assertEqual({}, rt.usage('n2'))
        self.assertEqual([self.inst.uuid], rt.tracked_on('n1'))
        self.assertNotIn('Host field should not be set', self.log.output)

    def test_claim_of_an_instance_with_a_host_warns(self):
        self.inst.host = 'elsewhere'
        self.inst.save()
        self.tracker().instance_claim(self.context, self.inst, 'n1')
        self.assertIn('Host field should not be set on instance %s'
                      % self.inst.uuid, self.log.output)

    def test_failed_build_aborts_the_claim(self):
        rt = self.tracker()

        def build():
            with rt.instance_claim(self.context, self.inst, 'n1'):
                raise ValueError('spawn failed')
        self.assertRaises(ValueError, build)
        saved = self.store.peek(self.inst.uuid)
        self.assertEqual((None, None), (saved['host'], saved['node']))
        self.assertEqual([], rt.tracked_on('n1'))

    def test_update_usage(self):
        rt = self.tracker()
        rt.instance_claim(self.context, self.inst, 'n1')
        rt.update_usage(self.context, self.inst, 'n1')
        self.assertIn(self.inst.uuid, rt.tracked_instances)
        # Offloaded but being spawned again by an unshelve: still counted.
        self.inst.vm_state = vm_states.SHELVED_OFFLOADED
        self.inst.task_state = task_states.SPAWNING
        rt.update_usage(self.context, self.inst, 'n1')
        self.assertIn(self.inst.uuid, rt.tracked_instances)
        self.inst.task_state = None
        rt.update_usage(self.context, self.inst, 'n1')
        self.assertEqual({}, rt.usage('n1'))
        self.assertIn('Stopped tracking instance %s' % self.inst.uuid,
                      self.log.output)
        # An instance the node does not count is not started on.
        rt.update_usage(self.context, self.inst, 'n1')
        self.assertEqual({}, rt.usage('n1'))

    def place(self, uuid=None, host='h', node='n1', **states):
        values = dict(flavor=FLAVOR, host=host, node=node, **states)
        return instance_obj.Instance.create(
            self.store, uuid or uuidutils.generate_uuid(), **values)

    def test_periodic_counts_what_the_states_say(self):
        active = self.place()
        spawning = self.place(vm_state=vm_states.SHELVED_OFFLOADED,
                              task_state=task_states.SPAWNING)
        self.place(vm_state=vm_states.SHELVED_OFFLOADED)
        self.place(vm_state=vm_states.DELETED)
        self.place(host='other')
        self.place(node='n2')
        rt = self.tracker()
        rt.update_available_resource(self.context, 'n1')
        self.assertEqual(sorted([active.uuid, spawning.uuid]),
                         rt.tracked_on('n1'))
        self.assertEqual({rc: 2 * amount for rc, amount in RESOURCES.items()},
                         rt.usage('n1'))

    def test_periodic_recounts_only_its_node(self):
        rt = self.tracker()
        on_n2 = self.place(node='n2')
        rt.update_available_resource(self.context, 'n2')
        stale = self.place()
        rt.update_available_resource(self.context, 'n1')
        stale.vm_state = vm_states.SHELVED_OFFLOADED
        stale.save()
        rt.update_available_resource(self.context, 'n1')
        self.assertEqual([], rt.tracked_on('n1'))
        self.assertEqual([on_n2.uuid], rt.tracked_on('n2'))

    def test_pre_2025480_tracker_drops_a_spawning_instance(self):
        # The rewrite the race lab's pre-fix variant uses: testing vm_state
        # alone, the periodic stops counting a server being unshelved.
        spawning = self.place(vm_state=vm_states.SHELVED_OFFLOADED,
                              task_state=task_states.SPAWNING)
        fixed = self.tracker()
        fixed.update_available_resource(self.context, 'n1')
        self.assertEqual([spawning.uuid], fixed.tracked_on('n1'))
        old = self.tracker(variants.untracking_resource_tracker())
        old.update_available_resource(self.context, 'n1')
        self.assertEqual([], old.tracked_on('n1'))

    def test_claims_and_the_periodic_take_the_host_lock(self):
        seen = []
        locks = utils.Locks()
        locks.interceptor = lambda op, name, held: seen.append((op, name))
        rt = self.tracker(locks=locks)
        rt.instance_claim(self.context, self.inst, 'n1')
        rt.update_available_resource(self.context, 'n1')
        semaphore = resource_tracker.COMPUTE_RESOURCE_SEMAPHORE
        self.assertEqual([('acquire', semaphore), ('release', semaphore)] * 2,
                         seen)
