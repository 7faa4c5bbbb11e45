"""Unit tests for ComputeManager's shelve-offload (no placement involved).

The resource tracker is a recording stand-in here; the functional tests
drive the same code against the placement double.
"""

from unittest import mock

from oslo_utils import uuidutils

from shelvefix.compute import collaborators
from shelvefix.compute import manager
from shelvefix.compute import power_state
from shelvefix.compute import task_states
from shelvefix.compute import vm_states
from shelvefix import exception
from shelvefix.objects import instance as instance_obj
from shelvefix.tests import base


class RecordingResourceTracker(object):
    """Stands in for the resource tracker; ``fail`` makes freeing fail."""

    def __init__(self, timeline, store, fail=None):
        self.timeline = timeline
        self.store = store
        self.fail = fail
        self.reportclient = mock.sentinel.reportclient

    def delete_allocation_for_shelve_offloaded_instance(self, context,
                                                        instance):
        saved = self.store.get(instance.uuid)
        self.timeline.append(('free_allocations', saved['vm_state']))
        if self.fail:
            raise self.fail
        return True

    def update_usage(self, context, instance, nodename):
        self.timeline.append(('update_usage', instance.vm_state, nodename))


def recording_store(timeline):
    """An instance store that notes each save in ``timeline``."""
    store = instance_obj.InstanceStore()
    store.observers.append(
        lambda uuid, row: timeline.append(
            ('save', row['vm_state'], row['task_state'], row['host'])))
    return store


class ManagerTestBase(base.TestCase):
    """An instance being shelve-offloaded on compute-1, and the manager."""

    def setUp(self):
        super(ManagerTestBase, self).setUp()
        self.timeline = []
        self.store = recording_store(self.timeline)
        self.inst = instance_obj.Instance.create(
            self.store, uuidutils.generate_uuid(),
            vm_state=vm_states.SHELVED,
            task_state=task_states.SHELVING_OFFLOADING, host='compute-1',
            node='node-1', project_id='p', user_id='u')
        del self.timeline[:]
        self.rt = RecordingResourceTracker(self.timeline, self.store)
        self.driver = collaborators.RecordingDriver()
        self.network = collaborators.RecordingNetworkAPI()
        self.volumes = collaborators.RecordingVolumeAPI(
            {self.inst.uuid: [{'volume_id': 'vol-1'}, {'volume_id': None}]})
        self.notifier = collaborators.LoggingNotifier()
        self.query = collaborators.SchedulerQueryClient()
        self.query.instance_info['compute-1'].add(self.inst.uuid)
        self.compute = manager.ComputeManager(
            host='compute-1', driver=self.driver, network_api=self.network,
            volume_api=self.volumes, notifier=self.notifier,
            query_client=self.query, rt=self.rt)


class ShelveOffloadTestCase(ManagerTestBase):

    def test_corrected_order(self):
        self.compute.shelve_offload_instance(self.context, self.inst,
                                             clean_shutdown=True)
        # One save makes the state visible with host and node cleared: no
        # later save of compute's can undo what an unshelve saves next.
        self.assertEqual([
            ('free_allocations', vm_states.SHELVED),
            ('save', vm_states.SHELVED_OFFLOADED, None, None),
            ('update_usage', vm_states.SHELVED_OFFLOADED, 'node-1'),
        ], self.timeline)
        self.assertEqual(
            [('power_off', self.inst.uuid, 60, 10),
             ('get_info', self.inst.uuid), ('destroy', self.inst.uuid)],
            self.driver.calls)
        self.assertEqual([('get_instance_nw_info', self.inst.uuid),
                          ('unbind_ports', (), False)], self.network.calls)
        self.assertEqual([('terminate_connection', 'vol-1', 'compute-1')],
                         self.volumes.calls)
        self.assertEqual(
            ['compute.instance.shelve_offload.start',
             'compute.instance.shelve_offload.end'],
            [c[0] for c in self.notifier.calls])
        self.assertEqual(set(), self.query.instance_info['compute-1'])
        saved = self.store.get(self.inst.uuid)
        self.assertEqual(power_state.SHUTDOWN, saved["power_state"])
        self.assertIsNone(saved['node'])

    def test_unclean_shutdown(self):
        self.compute.shelve_offload_instance(self.context, self.inst,
                                             clean_shutdown=False)
        self.assertEqual(('power_off', self.inst.uuid, 0, 0),
                         self.driver.calls[0])

    def test_shelving_task_state_is_offloadable(self):
        self.inst.task_state = task_states.SHELVING
        self.inst.save()
        self.compute.shelve_offload_instance(self.context, self.inst, True)
        self.assertEqual(vm_states.SHELVED_OFFLOADED,
                         self.store.get(self.inst.uuid)['vm_state'])

    def test_free_failure_stops_before_state_change(self):
        self.rt.fail = exception.AllocationDeleteFailed(
            consumer_uuid=self.inst.uuid, error='HTTP 503')
        e = self.assertRaises(exception.AllocationDeleteFailed,
                              self.compute.shelve_offload_instance,
                              self.context, self.inst, True)
        self.assertIs(self.rt.fail, e)
        saved = self.store.get(self.inst.uuid)
        self.assertEqual(vm_states.SHELVED, saved['vm_state'])
        self.assertIsNone(saved['task_state'])
        self.assertEqual('compute-1', saved['host'])
        self.assertEqual(
            [('free_allocations', vm_states.SHELVED),
             ('save', vm_states.SHELVED, None, 'compute-1')], self.timeline)
        errors = self.error_logs()
        self.assertEqual(1, len(errors))
        self.assertIn('consumer %s' % self.inst.uuid, errors[0])
        self.assertIn('stays shelved', errors[0])
        self.assertIn('HTTP 503', errors[0])
        # The scheduler still knows the instance is on this host.
        self.assertIn(self.inst.uuid, self.query.instance_info['compute-1'])

    def test_wrong_task_state_changes_nothing(self):
        self.inst.task_state = None
        self.inst.save()
        del self.timeline[:]
        e = self.assertRaises(exception.UnexpectedTaskStateError,
                              self.compute.shelve_offload_instance,
                              self.context, self.inst, True)
        self.assertIn("Actual: {'task_state': None}", str(e))
        self.assertEqual([], self.timeline)
        self.assertEqual([], self.driver.calls)
        self.assertEqual([], self.notifier.calls)

    def test_task_state_changed_concurrently_is_not_reverted(self):
        # Someone else (a delete) takes the task state after the check.
        def steal(context, instance):
            other = instance_obj.Instance.get_by_uuid(self.store,
                                                      instance.uuid)
            other.task_state = task_states.DELETING
            other.save()
        self.rt.delete_allocation_for_shelve_offloaded_instance = steal
        self.assertRaises(exception.UnexpectedTaskStateError,
                          self.compute.shelve_offload_instance,
                          self.context, self.inst, True)
        saved = self.store.get(self.inst.uuid)
        self.assertEqual(task_states.DELETING, saved['task_state'])
        self.assertEqual(vm_states.SHELVED, saved['vm_state'])

    def test_revert_failure_is_logged_and_original_raised(self):
        self.rt.fail = exception.AllocationDeleteFailed(
            consumer_uuid=self.inst.uuid, error='boom')
        with mock.patch.object(self.compute, '_instance_update',
                               side_effect=RuntimeError('db down')):
            self.assertRaises(exception.AllocationDeleteFailed,
                              self.compute.shelve_offload_instance,
                              self.context, self.inst, True)
        self.assertIn('Failed to revert task state for instance %s'
                      % self.inst.uuid, self.log.output)

    def test_scheduler_info_failure_does_not_undo_offload(self):
        self.query.delete_instance_info = mock.Mock(
            side_effect=RuntimeError('rpc down'))
        self.compute.shelve_offload_instance(self.context, self.inst, True)
        self.assertEqual(vm_states.SHELVED_OFFLOADED,
                         self.store.get(self.inst.uuid)['vm_state'])
        self.assertIn('Failed to delete scheduler instance info',
                      self.log.output)

    def test_other_host_skips_resource_tracker(self):
        self.inst.host = 'compute-2'
        self.inst.save()
        del self.timeline[:]
        self.compute.shelve_offload_instance(self.context, self.inst, True)
        self.assertNotIn('update_usage', [t[0] for t in self.timeline])

    def test_default_collaborators(self):
        compute = manager.ComputeManager(host='h', reportclient=mock.Mock())
        self.assertIsInstance(compute.driver, collaborators.RecordingDriver)
        self.assertTrue(compute.rt.force_delete_allocations)
        self.assertIs(compute.reportclient, compute.rt.reportclient)
        compute = manager.ComputeManager(host='h', rt=self.rt)
        self.assertIs(mock.sentinel.reportclient, compute.reportclient)
