"""Tests for the compute manager's live migration and its tracker's part.

A :class:`~shelvefix.race.live_migration.LiveMigrationCloud` on the
placement double: the server ``ACTIVE`` on compute-1, compute-1 disabled;
``live_migrate`` is the API and the conductor, ``serve`` compute-1's
service running the ``live_migration`` cast.
"""

from unittest import mock

from shelvefix.backends import fixture as placement_fixture
from shelvefix.compute import collaborators
from shelvefix.compute import power_state
from shelvefix.compute import task_states
from shelvefix.compute import vm_states
from shelvefix import exception
from shelvefix.objects import instance as instance_obj
from shelvefix.objects import migration as migration_obj
from shelvefix.race import live_migration
from shelvefix.race import scenario
from shelvefix.tests import base

SOURCE = live_migration.SOURCE
DESTINATION = live_migration.DESTINATION
RESOURCES = scenario.FLAVOR.resources


class LiveMigrationTestBase(base.TestCase):

    def setUp(self):
        super(LiveMigrationTestBase, self).setUp()
        self.placement = self.useFixture(placement_fixture.PlacementFixture())
        self.src_rp, self.dst_rp = live_migration.move_cloud.create_providers(
            self.placement)

    def cloud(self, **kwargs):
        cloud = live_migration.LiveMigrationCloud(
            self.placement, (self.src_rp, self.dst_rp), **kwargs)
        self.addCleanup(cloud.remove_from_placement)
        return cloud

    def scheduled(self, **kwargs):
        """The conductor done: ``live_migration`` cast to compute-1."""
        cloud = self.cloud(**kwargs)
        cloud.live_migrate()
        return cloud

    def migration(self, cloud):
        return migration_obj.Migration.get_by_uuid(cloud.migrations,
                                                   cloud.migration_uuid)

    def instance(self, cloud):
        return instance_obj.Instance.get_by_uuid(cloud.store,
                                                 cloud.instance.uuid)

    def assertSaved(self, cloud, vm_state, task_state, host):
        saved = cloud.saved()
        self.assertEqual((vm_state, task_state, host, host),
                         (saved['vm_state'], saved['task_state'],
                          saved['host'], saved['node']))

    def assertRolledBack(self, cloud, status):
        """The server on compute-1 again, holding it; the migration ended."""
        self.assertSaved(cloud, vm_states.ACTIVE, None, SOURCE)
        self.assertEqual(status, cloud.saved_migration()['status'])
        self.assertEqual({self.src_rp: RESOURCES}, cloud.held())
        self.assertEqual({}, cloud.held(cloud.migration_uuid))


class LiveMigrationTestCase(LiveMigrationTestBase):

    def test_scheduled(self):
        cloud = self.scheduled()
        # The migration holds compute-1, the server compute-2.
        self.assertEqual({self.dst_rp: RESOURCES}, cloud.held())
        self.assertEqual({self.src_rp: RESOURCES},
                         cloud.held(cloud.migration_uuid))
        migration = cloud.saved_migration()
        self.assertEqual(
            (migration_obj.LIVE_MIGRATION, migration_obj.ACCEPTED, SOURCE,
             SOURCE, DESTINATION, DESTINATION),
            tuple(migration[field] for field in (
                'migration_type', 'status', 'source_compute', 'source_node',
                'dest_compute', 'dest_node')))
        self.assertSaved(cloud, vm_states.ACTIVE, task_states.MIGRATING,
                         SOURCE)
        self.assertEqual(1, cloud.transport.waiting('compute', SOURCE))

    def test_completes(self):
        cloud = self.scheduled()
        self.placement.reset_calls()
        cloud.serve(SOURCE, timeout=5)
        # Placement is asked once the server is saved on compute-2: the
        # migration's allocations on compute-1 deleted.
        self.assertEqual(
            [('GET', '/allocations/%s' % cloud.migration_uuid),
             ('PUT', '/allocations/%s' % cloud.migration_uuid)],
            [(call.method, call.path) for call in self.placement.calls])
        self.assertSaved(cloud, vm_states.ACTIVE, None, DESTINATION)
        self.assertEqual(migration_obj.COMPLETED,
                         cloud.saved_migration()['status'])
        self.assertEqual({self.dst_rp: RESOURCES}, cloud.held())
        self.assertEqual({}, cloud.held(cloud.migration_uuid))
        self.assertEqual({SOURCE: {}, DESTINATION: RESOURCES},
                         cloud.usage())
        self.assertEqual([cloud.instance.uuid],
                         cloud.rts[DESTINATION].tracked_on(DESTINATION))
        # The scheduler is told where the server is.
        self.assertEqual(
            {cloud.instance.uuid},
            cloud.computes[DESTINATION].query_client.instance_info[
                DESTINATION])
        self.assertEqual(set(), cloud.computes[SOURCE].query_client
                         .instance_info[SOURCE])

    def test_the_hypervisor_fails(self):
        cloud = self.scheduled(failing={SOURCE: ('live_migration',)})
        cloud.serve(SOURCE, timeout=5)
        self.assertRolledBack(cloud, migration_obj.FAILED)
        self.assertIn(('rollback_live_migration_at_source',
                       cloud.instance.uuid), cloud.drivers[SOURCE].calls)
        # Shared storage: nothing cast to compute-2, its networks torn
        # down from here.
        self.assertEqual(0, cloud.transport.waiting('compute', DESTINATION))

    def test_pre_live_migration_fails(self):
        cloud = self.scheduled(failing={DESTINATION: ('pre_live_migration',)})
        self.assertRaises(collaborators.DriverFailed, cloud.serve, SOURCE,
                          timeout=5)
        self.assertRolledBack(cloud, migration_obj.ERROR)
        self.assertNotIn(('rollback_live_migration_at_source',
                          cloud.instance.uuid), cloud.drivers[SOURCE].calls)

    def test_the_driver_raises(self):
        # Too late to roll back: the server goes to ERROR, the migration
        # too, what placement holds stays as it was.
        cloud = self.scheduled()
        with mock.patch.object(cloud.drivers[SOURCE], 'live_migration',
                               side_effect=collaborators.DriverFailed('x')):
            self.assertRaises(collaborators.DriverFailed, cloud.serve,
                              SOURCE, timeout=5)
        self.assertSaved(cloud, vm_states.ERROR, None, SOURCE)
        self.assertEqual(migration_obj.ERROR,
                         cloud.saved_migration()['status'])
        self.assertEqual({self.src_rp: RESOURCES},
                         cloud.held(cloud.migration_uuid))

    def test_block_migration_rolls_back_at_the_destination(self):
        cloud = self.scheduled()
        compute = cloud.computes[SOURCE]
        instance = self.instance(cloud)
        compute._rollback_live_migration(
            cloud.ctx, instance, DESTINATION, {'block_migration': True},
            migration=self.migration(cloud))
        self.assertRolledBack(cloud, migration_obj.FAILED)
        cloud.serve(DESTINATION, timeout=5)
        self.assertEqual(('rollback_live_migration_at_destination',
                          instance.uuid),
                         cloud.drivers[DESTINATION].calls[-1])

    def test_callbacks_without_a_migration(self):
        cloud = self.scheduled()
        compute = cloud.computes[SOURCE]
        compute._rollback_live_migration(cloud.ctx, self.instance(cloud),
                                         DESTINATION)
        self.assertIn('rolled back with no migration', self.log.output)
        # Nothing moved back: the migration still holds compute-1.
        self.assertEqual({self.src_rp: RESOURCES},
                         cloud.held(cloud.migration_uuid))
        instance = self.instance(cloud)
        instance.task_state = task_states.MIGRATING
        instance.save()
        compute._post_live_migration(cloud.ctx, instance, DESTINATION)
        self.assertIn('ended with no migration', self.log.output)
        self.assertSaved(cloud, vm_states.ACTIVE, None, DESTINATION)
        self.assertEqual({self.src_rp: RESOURCES},
                         cloud.held(cloud.migration_uuid))


class ChecksTestCase(LiveMigrationTestBase):

    def test_the_source_refuses(self):
        cloud = self.cloud(failing={SOURCE: (
            'check_can_live_migrate_source',)})
        compute = cloud.computes[DESTINATION]
        error = self.assertRaises(
            exception.MigrationPreCheckError,
            compute.check_can_live_migrate_destination, cloud.ctx,
            self.instance(cloud), False, False, None, {})
        self.assertIn('the source compute-1 refused', str(error))
        # The destination's check is cleaned up all the same.
        self.assertEqual(('cleanup_live_migration_destination_check',),
                         cloud.drivers[DESTINATION].calls[-1])

    def test_both_answer(self):
        cloud = self.cloud()
        data = cloud.computes[DESTINATION].check_can_live_migrate_destination(
            cloud.ctx, self.instance(cloud), False, False, None, {})
        self.assertEqual({'block_migration': False,
                          'is_shared_instance_path': True}, data)


class AbortTestCase(LiveMigrationTestBase):

    def test_abort_before_the_job_takes_it(self):
        # The abort arrives while the destination prepares: the job finds
        # the migration gone and rolls back.
        cloud = self.scheduled()
        source = cloud.computes[SOURCE]
        prepare = cloud.computes[DESTINATION].pre_live_migration

        def pre_live_migration(context, **kwargs):
            source.live_migration_abort(context, kwargs['instance'],
                                        cloud.migration_uuid)
            return prepare(context, **kwargs)

        with mock.patch.object(cloud.computes[DESTINATION],
                               'pre_live_migration', pre_live_migration):
            cloud.serve(SOURCE, timeout=5)
        self.assertRolledBack(cloud, migration_obj.CANCELLED)
        self.assertNotIn('live_migration',
                         [call[0] for call in cloud.drivers[SOURCE].calls])

    def test_abort_a_running_migration(self):
        cloud = self.scheduled()
        source = cloud.computes[SOURCE]
        driver = cloud.drivers[SOURCE]
        migrate = driver.live_migration

        def live_migration(context, instance, dest, post_method,
                           recover_method, block_migration=False,
                           migrate_data=None):
            source.live_migration_abort(context, instance,
                                        cloud.migration_uuid)
            # This hypervisor completes it anyway.
            migrate(context, instance, dest, post_method, recover_method,
                    block_migration, migrate_data)

        with mock.patch.object(driver, 'live_migration', live_migration):
            cloud.serve(SOURCE, timeout=5)
        self.assertIn(('live_migration_abort', cloud.instance.uuid),
                      driver.calls)
        self.assertEqual(migration_obj.COMPLETED,
                         cloud.saved_migration()['status'])

    def test_abort_what_cannot_be(self):
        cloud = self.scheduled()
        cloud.serve(SOURCE, timeout=5)
        error = self.assertRaises(
            exception.InvalidMigrationState,
            cloud.computes[SOURCE].live_migration_abort, cloud.ctx,
            self.instance(cloud), cloud.migration_uuid)
        self.assertIn('is completed', str(error))
        # Cast as the API casts it.
        cloud.compute_rpcapi.live_migration_abort(
            cloud.ctx, self.instance(cloud), cloud.migration_uuid)
        self.assertRaises(exception.InvalidMigrationState, cloud.serve,
                          DESTINATION, timeout=5)


class TrackerTestCase(LiveMigrationTestBase):
    """The destination counts the migration, then the server, once."""

    def test_audit_counts_the_incoming_migration(self):
        cloud = self.scheduled()
        rt = cloud.rts[DESTINATION]
        cloud.periodic(DESTINATION)
        self.assertEqual(RESOURCES, rt.usage(DESTINATION))
        self.assertIn(cloud.instance.uuid, rt.tracked_migrations)
        # The source counts the server, not its migration.
        cloud.periodic(SOURCE)
        self.assertEqual(RESOURCES, cloud.rts[SOURCE].usage(SOURCE))
        self.assertEqual({}, cloud.rts[SOURCE].tracked_migrations)
        cloud.serve(SOURCE, timeout=5)
        # Counted once: the migration's count became the server's.
        self.assertEqual(RESOURCES, rt.usage(DESTINATION))
        self.assertEqual({}, rt.tracked_migrations)
        cloud.periodic(DESTINATION)
        self.assertEqual(RESOURCES, rt.usage(DESTINATION))

    def test_finish_refuses_a_server_not_migrating(self):
        cloud = self.cloud()
        rt = cloud.rts[DESTINATION]
        self.assertRaises(exception.UnexpectedTaskStateError,
                          rt.finish_live_migration_at_dest, cloud.ctx,
                          self.instance(cloud), DESTINATION,
                          power_state.RUNNING)
        self.assertEqual({}, rt.usage(DESTINATION))

    def test_source_drops_the_server_once(self):
        cloud = self.cloud()
        rt = cloud.rts[SOURCE]
        instance = self.instance(cloud)
        self.assertEqual(RESOURCES, rt.usage(SOURCE))
        rt.drop_live_migrated_instance(cloud.ctx, instance, SOURCE)
        self.assertEqual({}, rt.usage(SOURCE))
        rt.drop_live_migrated_instance(cloud.ctx, instance, SOURCE)
        self.assertEqual({}, rt.usage(SOURCE))
        self.assertEqual([], rt.tracked_on(SOURCE))
