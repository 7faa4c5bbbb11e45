"""Tests for the compute manager's resize, confirm and revert.

A :class:`~shelvefix.race.move_cloud.MoveCloud` on the placement double
runs the real flow: the conductor's task, ``prep_resize`` on compute-2,
``resize_instance`` on compute-1 and ``finish_resize`` on compute-2.
"""

from unittest import mock

from shelvefix.backends import fixture as placement_fixture
from shelvefix.compute import collaborators
from shelvefix.compute import power_state
from shelvefix.compute import rpcapi
from shelvefix.compute import task_states
from shelvefix.compute import vm_states
from shelvefix.objects import migration as migration_obj
from shelvefix.race import move_cloud
from shelvefix.race import scenario
from shelvefix.tests import base

SOURCE = move_cloud.SOURCE
DESTINATION = move_cloud.DESTINATION
RESOURCES = scenario.FLAVOR.resources


class PreparedCloud(move_cloud.MoveCloud):
    """A MoveCloud stopped after the conductor's task.

    ``prep_resize`` waits in compute-2's queue; nothing else ran but the
    audits.
    """

    def _serve_one(self, host):
        pass


class ResizeTestBase(base.TestCase):

    def setUp(self):
        super(ResizeTestBase, self).setUp()
        self.placement = self.useFixture(placement_fixture.PlacementFixture())
        self.providers = move_cloud.create_providers(self.placement)
        self.src_rp, self.dst_rp = self.providers

    def cloud(self, cls=move_cloud.MoveCloud, **kwargs):
        cloud = cls(self.placement, self.providers, **kwargs)
        self.addCleanup(cloud.remove_from_placement)
        return cloud


class ResizeFlowTestCase(ResizeTestBase):

    def test_resized_on_compute_2(self):
        cloud = self.cloud()
        saved = cloud.saved()
        self.assertEqual((vm_states.RESIZED, None, DESTINATION, DESTINATION),
                         (saved['vm_state'], saved['task_state'],
                          saved['host'], saved['node']))
        migration = cloud.saved_migration()
        self.assertEqual(migration_obj.FINISHED, migration['status'])
        self.assertEqual((SOURCE, SOURCE, DESTINATION, DESTINATION),
                         (migration['source_compute'],
                          migration['source_node'],
                          migration['dest_compute'], migration['dest_node']))
        self.assertEqual(migration_obj.MIGRATION, migration['migration_type'])
        # The source is held by the migration, the destination by the
        # instance.
        self.assertEqual({self.src_rp: RESOURCES},
                         cloud.held(cloud.migration_uuid))
        self.assertEqual({self.dst_rp: RESOURCES}, cloud.held())
        self.assertEqual({SOURCE: RESOURCES, DESTINATION: RESOURCES},
                         cloud.usage())
        self.assertEqual(
            [('migrate_disk_and_power_off', cloud.instance.uuid)],
            cloud.drivers[SOURCE].calls)
        self.assertEqual([('finish_migration', cloud.instance.uuid)],
                         cloud.drivers[DESTINATION].calls)

    def test_confirm(self):
        cloud = self.cloud()
        cloud.confirm()
        self.assertEqual({}, cloud.held(cloud.migration_uuid))
        self.assertEqual({self.dst_rp: RESOURCES}, cloud.held())
        saved = cloud.saved()
        self.assertEqual((vm_states.ACTIVE, None, DESTINATION),
                         (saved['vm_state'], saved['task_state'],
                          saved['host']))
        self.assertEqual(migration_obj.CONFIRMED,
                         cloud.saved_migration()['status'])
        self.assertEqual({SOURCE: {}, DESTINATION: RESOURCES},
                         cloud.usage())
        self.assertIn(('confirm_migration', cloud.instance.uuid),
                      cloud.drivers[SOURCE].calls)
        # The scheduler forgets the server on the source.
        self.assertIn(('delete_instance_info', SOURCE, cloud.instance.uuid),
                      cloud.computes[SOURCE].query_client.calls)
        # The source's next audit agrees.
        cloud.periodic(SOURCE)
        self.assertEqual({}, cloud.usage()[SOURCE])

    def test_confirm_of_a_shut_down_server_stops_it(self):
        cloud = self.cloud()
        cloud.store.update(cloud.instance.uuid,
                           {'power_state': power_state.SHUTDOWN})
        cloud.confirm()
        self.assertEqual(vm_states.STOPPED, cloud.saved()['vm_state'])

    def test_confirm_placement_calls(self):
        cloud = self.cloud()
        generation = cloud.client.get_allocs_for_consumer(
            cloud.ctx, cloud.migration_uuid)['consumer_generation']
        self.placement.reset_calls()
        cloud.confirm()
        path = '/allocations/%s' % cloud.migration_uuid
        self.assertEqual([('GET', path, '1.28'), ('PUT', path, '1.28')],
                         [(c.method, c.path, c.microversion)
                          for c in self.placement.calls])
        # Emptied at the generation read (force=False), not DELETEd.
        self.assertEqual({'allocations': {},
                          'consumer_generation': generation,
                          'project_id': scenario.PROJECT,
                          'user_id': scenario.USER},
                         self.placement.calls[1].body)
        self.assertEqual(204, self.placement.calls[1].status)

    def test_failed_confirm_still_frees_the_source(self):
        cloud = self.cloud(failing={SOURCE: ('confirm_migration',)})
        self.assertRaises(collaborators.DriverFailed, cloud.confirm)
        self.assertEqual({}, cloud.held(cloud.migration_uuid))
        self.assertEqual({self.dst_rp: RESOURCES}, cloud.held())
        self.assertEqual(vm_states.ERROR, cloud.saved()['vm_state'])
        self.assertEqual(DESTINATION, cloud.saved()['host'])
        # Not confirmed (the drop of the source's claim never ran): the
        # migration ends in error, as errors_out_migration saves it.
        self.assertEqual(migration_obj.ERROR,
                         cloud.saved_migration()['status'])
        self.assertIn('Confirm resize failed on source host %s' % SOURCE,
                      self.log.output)
        self.assertIn(('delete_instance_info', SOURCE, cloud.instance.uuid),
                      cloud.computes[SOURCE].query_client.calls)

    def test_confirm_of_a_confirmed_migration_does_nothing(self):
        cloud = self.cloud()
        cloud.confirm()
        instance, migration = cloud._loaded()
        calls = list(cloud.drivers[SOURCE].calls)
        self.placement.reset_calls()
        cloud.computes[SOURCE].confirm_resize(cloud.ctx, instance, migration)
        self.assertEqual([], self.placement.calls)
        self.assertEqual(calls, cloud.drivers[SOURCE].calls)
        self.assertEqual(migration_obj.CONFIRMED,
                         cloud.saved_migration()['status'])
        self.assertIn('Migration %s is already confirmed'
                      % cloud.migration_uuid, self.log.output)

    def test_confirm_in_an_unexpected_status_does_nothing(self):
        cloud = self.cloud()
        instance, migration = cloud._loaded()
        migration.status = migration_obj.REVERTING
        migration.save()
        self.placement.reset_calls()
        cloud.computes[SOURCE].confirm_resize(cloud.ctx, instance, migration)
        self.assertEqual([], self.placement.calls)
        self.assertEqual({self.src_rp: RESOURCES},
                         cloud.held(cloud.migration_uuid))
        self.assertEqual(vm_states.RESIZED, cloud.saved()['vm_state'])
        self.assertIn("Unexpected confirmation status 'reverting'",
                      self.log.output)

    def test_confirm_is_serialised_per_instance(self):
        cloud = self.cloud()
        seen = []
        cloud.locks[SOURCE].interceptor = (
            lambda op, name, held: seen.append((op, name)))
        cloud.confirm()
        self.assertEqual(('acquire', cloud.instance.uuid), seen[0])
        self.assertEqual(('release', cloud.instance.uuid), seen[-1])

    def test_revert(self):
        cloud = self.cloud()
        cloud.revert()
        # compute-2 dropped its claim and cast to compute-1.
        self.assertEqual(1, cloud.transport.waiting(rpcapi.TOPIC, SOURCE))
        self.assertEqual(migration_obj.REVERTED,
                         cloud.saved_migration()['status'])
        self.assertEqual({}, cloud.usage()[DESTINATION])
        cloud.serve(SOURCE, timeout=5)
        self.assertEqual({self.src_rp: RESOURCES}, cloud.held())
        self.assertEqual({}, cloud.held(cloud.migration_uuid))
        saved = cloud.saved()
        self.assertEqual((vm_states.ACTIVE, None, SOURCE, SOURCE),
                         (saved['vm_state'], saved['task_state'],
                          saved['host'], saved['node']))
        self.assertEqual(migration_obj.REVERTED,
                         cloud.saved_migration()['status'])
        self.assertEqual({SOURCE: RESOURCES, DESTINATION: {}}, cloud.usage())
        self.assertIn(('destroy', cloud.instance.uuid),
                      cloud.drivers[DESTINATION].calls)
        self.assertIn(('finish_revert_migration', cloud.instance.uuid),
                      cloud.drivers[SOURCE].calls)
        for host in (SOURCE, DESTINATION):
            cloud.periodic(host)
        self.assertEqual({SOURCE: RESOURCES, DESTINATION: {}}, cloud.usage())

    def test_revert_allocation_with_nothing_held(self):
        cloud = self.cloud()
        cloud.confirm()
        instance, migration = cloud._loaded()
        self.placement.reset_calls()
        self.assertFalse(cloud.computes[SOURCE]._revert_allocation(
            cloud.ctx, instance, migration))
        self.assertEqual(['GET'], [c.method for c in self.placement.calls])
        self.assertEqual({self.dst_rp: RESOURCES}, cloud.held())
        self.assertIn('holds no allocations on the source node',
                      self.log.output)


class PrepResizeFailureTestCase(ResizeTestBase):

    def setUp(self):
        super(PrepResizeFailureTestCase, self).setUp()
        self.cloud = self.cloud(cls=PreparedCloud)
        self.assertEqual(task_states.RESIZE_PREP,
                         self.cloud.saved()['task_state'])
        self.assertEqual({self.src_rp: RESOURCES},
                         self.cloud.held(self.cloud.migration_uuid))
        self.assertEqual({self.dst_rp: RESOURCES}, self.cloud.held())

    def assertRolledBack(self):
        cloud = self.cloud
        self.assertEqual({self.src_rp: RESOURCES}, cloud.held())
        self.assertEqual({}, cloud.held(cloud.migration_uuid))
        self.assertEqual(migration_obj.ERROR,
                         cloud.saved_migration()['status'])
        saved = cloud.saved()
        self.assertEqual((vm_states.ACTIVE, None, SOURCE),
                         (saved['vm_state'], saved['task_state'],
                          saved['host']))
        self.assertEqual({SOURCE: RESOURCES, DESTINATION: {}}, cloud.usage())

    def test_claim_failure(self):
        rt = self.cloud.rts[DESTINATION]
        with mock.patch.object(rt, 'resize_claim',
                               side_effect=RuntimeError('no room')):
            self.assertRaises(RuntimeError, self.cloud.serve, DESTINATION,
                              timeout=5)
        self.assertRolledBack()
        self.assertEqual(0, self.cloud.transport.waiting(rpcapi.TOPIC,
                                                         SOURCE))
        self.assertIn('Resize of instance %s failed on %s'
                      % (self.cloud.instance.uuid, DESTINATION),
                      self.log.output)

    def test_failure_inside_the_claim_aborts_it(self):
        with mock.patch.object(self.cloud.compute_rpcapi, 'resize_instance',
                               side_effect=RuntimeError('bus down')):
            self.assertRaises(RuntimeError, self.cloud.serve, DESTINATION,
                              timeout=5)
        self.assertRolledBack()
        self.assertEqual({}, self.cloud.rts[DESTINATION].tracked_migrations)

    def test_success_casts_to_the_source(self):
        self.cloud.serve(DESTINATION, timeout=5)
        self.assertEqual(1, self.cloud.transport.waiting(rpcapi.TOPIC,
                                                         SOURCE))
        self.assertEqual(RESOURCES, self.cloud.usage()[DESTINATION])
        saved = self.cloud.saved_migration()
        self.assertEqual((DESTINATION, DESTINATION,
                          migration_obj.PRE_MIGRATING),
                         (saved['dest_compute'], saved['dest_node'],
                          saved['status']))
