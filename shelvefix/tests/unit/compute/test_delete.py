"""Tests for the compute manager's delete (``terminate_instance``).

A :class:`~shelvefix.race.move_cloud.MoveCloud` on the placement double:
the server is resized to compute-2 and confirmed, then the API's cast
``terminate_instance`` runs on compute-2: saved ``DELETED``, its
allocations deleted, then its record destroyed (nova's soft delete).
"""

from unittest import mock

import fixtures

from shelvefix.backends import fixture as placement_fixture
from shelvefix.compute import collaborators
from shelvefix.compute import power_state
from shelvefix.compute import rpcapi
from shelvefix.compute import task_states
from shelvefix.compute import vm_states
from shelvefix import exception
from shelvefix.objects import instance as instance_obj
from shelvefix.objects import migration as migration_obj
from shelvefix.race import move_cloud
from shelvefix.race import scenario
from shelvefix.tests import base

SOURCE = move_cloud.SOURCE
DESTINATION = move_cloud.DESTINATION
RESOURCES = scenario.FLAVOR.resources


class ResizedCloudTestBase(base.TestCase):
    """A resized server on a MoveCloud (``self.cloud``), not confirmed."""

    def setUp(self):
        super(ResizedCloudTestBase, self).setUp()
        self.placement = self.useFixture(placement_fixture.PlacementFixture())
        self.providers = move_cloud.create_providers(self.placement)
        self.cloud = move_cloud.MoveCloud(self.placement, self.providers)
        self.addCleanup(self.cloud.remove_from_placement)
        self.uuid = self.cloud.instance.uuid


class TerminateTestCase(ResizedCloudTestBase):

    def setUp(self):
        super(TerminateTestCase, self).setUp()
        self.cloud.confirm()

    def deleting(self):
        """The server as the API saved it: ``DELETING``."""
        inst = instance_obj.Instance.get_by_uuid(self.cloud.store, self.uuid)
        inst.task_state = task_states.DELETING
        inst.save()
        return inst

    def test_the_cast_goes_to_the_servers_host(self):
        inst = self.deleting()
        self.cloud.compute_rpcapi.terminate_instance(self.cloud.ctx, inst,
                                                     None)
        self.assertEqual(1, self.cloud.transport.waiting(rpcapi.TOPIC,
                                                         DESTINATION))
        self.assertEqual(0, self.cloud.transport.waiting(rpcapi.TOPIC,
                                                         SOURCE))
        message = self.cloud.transport.receive(rpcapi.TOPIC, DESTINATION)
        self.assertEqual('terminate_instance', message.method)
        self.assertEqual({'instance', 'bdms'}, set(message.kwargs))

    def test_terminate(self):
        self.assertEqual({SOURCE: {}, DESTINATION: RESOURCES},
                         self.cloud.usage())
        inst = self.deleting()
        self.cloud.compute_rpcapi.terminate_instance(self.cloud.ctx, inst,
                                                     None)
        self.cloud.serve(DESTINATION, timeout=5.0)
        saved = self.cloud.saved()
        self.assertEqual(
            (vm_states.DELETED, None, power_state.NOSTATE, DESTINATION),
            (saved['vm_state'], saved['task_state'], saved['power_state'],
             saved['host']))
        # Then destroyed: nobody finds it any more.
        self.assertTrue(self.cloud.store.is_deleted(self.uuid))
        self.assertRaises(exception.InstanceNotFound,
                          instance_obj.Instance.get_by_uuid,
                          self.cloud.store, self.uuid)
        self.assertEqual([], self.cloud.store.query(host=DESTINATION))
        # Its allocations are gone, consumer record and all.
        self.assertEqual({}, self.cloud.held())
        self.assertNotIn(self.uuid, self.placement.state.consumers)
        # compute-2 stops counting it, and its audit agrees.
        self.assertEqual({}, self.cloud.usage()[DESTINATION])
        self.assertEqual([], self.cloud.rts[DESTINATION].tracked_on(
            DESTINATION))
        self.cloud.periodic(DESTINATION)
        self.assertEqual({}, self.cloud.usage()[DESTINATION])
        self.assertIn(('destroy', self.uuid),
                      self.cloud.drivers[DESTINATION].calls)
        self.assertNotIn(('destroy', self.uuid),
                         self.cloud.drivers[SOURCE].calls)
        self.assertIn(('delete_instance_info', DESTINATION, self.uuid),
                      self.cloud.computes[DESTINATION].query_client.calls)
        self.assertIn('compute.instance.delete.end',
                      self.log.output)

    def test_under_the_instance_lock(self):
        locks = self.cloud.locks[DESTINATION]
        held = []

        def destroy(*args, **kwargs):
            held.append(locks.held(self.uuid))
        self.useFixture(mock_patch(self.cloud.drivers[DESTINATION],
                                   'destroy', destroy))
        self.cloud.computes[DESTINATION].terminate_instance(
            self.cloud.ctx, self.deleting(), None)
        self.assertEqual([True], held)
        self.assertFalse(locks.held(self.uuid))

    def test_destroyed_last(self):
        # nova's order: saved DELETED, the deletion completed (its
        # allocations gone), then the record destroyed.
        order = []
        manager = self.cloud.computes[DESTINATION]
        real_complete = manager._complete_deletion
        inst = self.deleting()

        def complete(context, instance):
            order.append(('complete', self.cloud.saved()['vm_state']))
            real_complete(context, instance)
        self.useFixture(mock_patch(manager, '_complete_deletion', complete))
        self.cloud.store.observers.append(
            lambda uuid, row: order.append(('save', row['vm_state'])))
        real_destroy = instance_obj.Instance.destroy

        def destroy(instance):
            order.append(('destroy', dict(self.cloud.held())))
            real_destroy(instance)
        self.useFixture(fixtures.MockPatchObject(
            instance_obj.Instance, 'destroy', autospec=True,
            side_effect=destroy))
        manager.terminate_instance(self.cloud.ctx, inst, None)
        self.assertEqual([('save', vm_states.DELETED),
                          ('complete', vm_states.DELETED),
                          ('destroy', {})], order)
        self.assertTrue(self.cloud.store.is_deleted(self.uuid))

    def test_a_failed_deletion_is_not_destroyed(self):
        def delete_allocation(*args, **kwargs):
            raise exception.AllocationDeleteFailed(consumer_uuid=self.uuid,
                                                   error='boom')
        manager = self.cloud.computes[DESTINATION]
        self.useFixture(mock_patch(manager.reportclient,
                                   'delete_allocation_for_instance',
                                   delete_allocation))
        self.assertRaises(exception.AllocationDeleteFailed,
                          manager.terminate_instance, self.cloud.ctx,
                          self.deleting(), None)
        # Left for another delete to find, in ERROR.
        self.assertFalse(self.cloud.store.is_deleted(self.uuid))
        self.assertEqual(vm_states.ERROR, self.cloud.saved()['vm_state'])

    def test_a_second_terminate_finds_it_gone(self):
        inst = self.deleting()
        manager = self.cloud.computes[DESTINATION]
        manager.terminate_instance(self.cloud.ctx, inst.obj_clone(), None)
        manager.terminate_instance(self.cloud.ctx, inst, None)
        self.assertIn('vanished while it was terminated', self.log.output)
        self.assertTrue(self.cloud.store.is_deleted(self.uuid))

    def test_allocations_freed_with_a_delete(self):
        self.placement.reset_calls()
        self.cloud.computes[DESTINATION].terminate_instance(
            self.cloud.ctx, self.deleting(), None)
        self.assertEqual(
            [('DELETE', '/allocations/%s' % self.uuid)],
            [(c.method, c.path) for c in self.placement.calls])

    def test_a_failure_leaves_the_server_in_error(self):
        def destroy(*args, **kwargs):
            raise collaborators.DriverFailed('destroy failed')
        self.useFixture(mock_patch(self.cloud.drivers[DESTINATION],
                                   'destroy', destroy))
        self.assertRaises(
            collaborators.DriverFailed,
            self.cloud.computes[DESTINATION].terminate_instance,
            self.cloud.ctx, self.deleting(), None)
        saved = self.cloud.saved()
        self.assertEqual((vm_states.ERROR, None),
                         (saved['vm_state'], saved['task_state']))
        # Nothing was freed: the server still uses compute-2.
        self.assertEqual({self.providers[1]: RESOURCES}, self.cloud.held())
        self.assertEqual(RESOURCES, self.cloud.usage()[DESTINATION])

    def test_a_vanished_server_is_not_an_error(self):
        manager = self.cloud.computes[DESTINATION]
        inst = self.deleting()
        with mock.patch.object(
                manager, '_delete_instance',
                side_effect=exception.InstanceNotFound(
                    instance_id=self.uuid)):
            manager.terminate_instance(self.cloud.ctx, inst, None)
        self.assertIn('vanished while it was terminated', self.log.output)
        self.assertEqual(task_states.DELETING,
                         self.cloud.saved()['task_state'])

    def test_the_block_device_mappings_given_are_used(self):
        # The host's own list (vol-2) is read only when none is given.
        volumes = collaborators.RecordingVolumeAPI(
            {self.uuid: [{'volume_id': 'vol-2'}]})
        manager = self.cloud.computes[DESTINATION]
        manager.volume_api = volumes
        manager.terminate_instance(self.cloud.ctx, self.deleting(),
                                   [{'volume_id': 'vol-1'}])
        self.assertEqual(['vol-1'], [call[1] for call in volumes.calls
                                     if call[0] == 'terminate_connection'])

    def test_the_host_reads_them_when_none_are_given(self):
        volumes = collaborators.RecordingVolumeAPI(
            {self.uuid: [{'volume_id': 'vol-2'}]})
        manager = self.cloud.computes[DESTINATION]
        manager.volume_api = volumes
        manager.terminate_instance(self.cloud.ctx, self.deleting(), None)
        self.assertEqual(['vol-2'], [call[1] for call in volumes.calls
                                     if call[0] == 'terminate_connection'])


class DeleteOfAResizedServerTestCase(ResizedCloudTestBase):
    """The API's delete confirms a resize first (nova's ``_delete``)."""

    def test_delete_confirms_then_terminates(self):
        cloud = self.cloud
        self.assertTrue(cloud.delete())
        # The source cleaned up before the cast.
        self.assertEqual(migration_obj.CONFIRMED,
                         cloud.saved_migration()['status'])
        self.assertEqual({}, cloud.held(cloud.migration_uuid))
        # The confirm's last save clears DELETING, as in nova.
        self.assertEqual((vm_states.ACTIVE, None),
                         (cloud.saved()['vm_state'],
                          cloud.saved()['task_state']))
        cloud.serve(DESTINATION, timeout=5.0)
        self.assertEqual(vm_states.DELETED, cloud.saved()['vm_state'])
        self.assertTrue(cloud.store.is_deleted(self.uuid))
        self.assertEqual({}, cloud.held())
        self.assertEqual({SOURCE: {}, DESTINATION: {}}, cloud.usage())

    def test_the_api_refuses_to_confirm_a_deleting_server(self):
        cloud = self.cloud
        self.assertTrue(cloud.delete())
        self.assertFalse(cloud.api_confirm())

    def test_a_second_delete_is_ignored(self):
        cloud = self.cloud
        cloud.confirm()
        self.assertTrue(cloud.delete())
        self.assertEqual(task_states.DELETING, cloud.saved()['task_state'])
        self.assertFalse(cloud.delete())
        self.assertEqual(1, cloud.transport.waiting(rpcapi.TOPIC,
                                                    DESTINATION))


def mock_patch(obj, name, new):
    """Replace ``obj.name`` by a mock calling ``new``, for the test."""
    return fixtures.MockPatchObject(obj, name, side_effect=new)
