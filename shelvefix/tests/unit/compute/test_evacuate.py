"""Tests for the compute manager's evacuation and the source's clean-up.

A :class:`~shelvefix.race.move_cloud.MoveCloud` on the placement double
starts with compute-1 down and an evacuation ``accepted``; the conductor
schedules compute-2 (``schedule_evacuation``), compute-2 rebuilds
(``serve``) and compute-1 starts again (``source_starts``).
"""

from oslo_utils import uuidutils

from shelvefix.backends import fixture as placement_fixture
from shelvefix.compute import collaborators
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


class EvacuateTestBase(base.TestCase):

    def setUp(self):
        super(EvacuateTestBase, self).setUp()
        self.placement = self.useFixture(placement_fixture.PlacementFixture())
        self.providers = move_cloud.create_providers(self.placement)
        self.src_rp, self.dst_rp = self.providers

    def cloud(self, **kwargs):
        cloud = move_cloud.MoveCloud(self.placement, self.providers,
                                     start=move_cloud.EVACUATING, **kwargs)
        self.addCleanup(cloud.remove_from_placement)
        return cloud

    def evacuated(self, **kwargs):
        """The evacuation scheduled and rebuilt on compute-2."""
        cloud = self.cloud(**kwargs)
        cloud.schedule_evacuation()
        cloud.serve(DESTINATION, timeout=5)
        return cloud

    def set_status(self, cloud, status):
        cloud.migrations.update(cloud.migration_uuid, {'status': status})


class RebuildInstanceTestCase(EvacuateTestBase):

    def test_scheduled_on_compute_2(self):
        cloud = self.cloud()
        cloud.schedule_evacuation()
        # The scheduler's claim adds compute-2 to what compute-1 holds.
        self.assertEqual({self.src_rp: RESOURCES, self.dst_rp: RESOURCES},
                         cloud.held())
        self.assertEqual(1, cloud.transport.waiting('compute', DESTINATION))

    def test_rebuild(self):
        cloud = self.evacuated()
        saved = cloud.saved()
        self.assertEqual((vm_states.ACTIVE, None, DESTINATION, DESTINATION),
                         (saved['vm_state'], saved['task_state'],
                          saved['host'], saved['node']))
        migration = cloud.saved_migration()
        self.assertEqual(migration_obj.DONE, migration['status'])
        self.assertEqual((DESTINATION, DESTINATION),
                         (migration['dest_compute'], migration['dest_node']))
        self.assertEqual([('rebuild', cloud.instance.uuid),
                          ('get_info', cloud.instance.uuid)],
                         cloud.drivers[DESTINATION].calls)
        self.assertEqual(RESOURCES, cloud.usage()[DESTINATION])
        self.assertEqual([cloud.instance.uuid],
                         cloud.rts[DESTINATION].tracked_on(DESTINATION))
        # The source's allocations stay until it starts again.
        self.assertEqual({self.src_rp: RESOURCES, self.dst_rp: RESOURCES},
                         cloud.held())

    def test_failed_rebuild(self):
        cloud = self.cloud(failing={DESTINATION: ('rebuild',)})
        cloud.schedule_evacuation()
        self.assertRaises(collaborators.DriverFailed, cloud.serve,
                          DESTINATION, timeout=5)
        self.assertEqual(migration_obj.FAILED,
                         cloud.saved_migration()['status'])
        self.assertEqual({self.src_rp: RESOURCES}, cloud.held())
        saved = cloud.saved()
        self.assertEqual((vm_states.ERROR, None, SOURCE),
                         (saved['vm_state'], saved['task_state'],
                          saved['host']))
        self.assertEqual({}, cloud.usage()[DESTINATION])
        self.assertEqual({}, cloud.rts[DESTINATION].tracked_migrations)
        self.assertIn('Evacuation of instance %s to %s failed'
                      % (cloud.instance.uuid, DESTINATION), self.log.output)

    def test_only_an_evacuation_is_rebuilt(self):
        cloud = self.cloud()
        instance, migration = cloud._loaded()
        self.placement.reset_calls()
        self.assertRaises(
            exception.Invalid, cloud.computes[DESTINATION].rebuild_instance,
            cloud.ctx, instance, None, None, [], None, {}, [], False, True,
            False, migration, DESTINATION, {}, None)
        self.assertEqual([], self.placement.calls)
        self.assertEqual([], cloud.drivers[DESTINATION].calls)
        # reverts_task_state cleared the task.
        self.assertIsNone(cloud.saved()['task_state'])


class DestroyEvacuatedInstancesTestCase(EvacuateTestBase):

    def other_evacuation(self, cloud, source, status, instance_uuid=None):
        """Another evacuation (its instance created unless given)."""
        if instance_uuid is None:
            instance_uuid = instance_obj.Instance.create(
                cloud.store, uuidutils.generate_uuid(),
                host=DESTINATION, node=DESTINATION,
                flavor=scenario.FLAVOR).uuid
        return migration_obj.Migration.create(
            cloud.migrations, uuidutils.generate_uuid(),
            instance_uuid=instance_uuid, source_compute=source,
            source_node=source, dest_compute=DESTINATION,
            dest_node=DESTINATION, migration_type=migration_obj.EVACUATION,
            status=status, old_flavor=scenario.FLAVOR,
            new_flavor=scenario.FLAVOR)

    def test_done_evacuation_is_cleaned_up(self):
        cloud = self.evacuated()
        cloud.source_starts()
        self.assertEqual([('destroy', cloud.instance.uuid)],
                         cloud.drivers[SOURCE].calls)
        self.assertEqual({self.dst_rp: RESOURCES}, cloud.held())
        self.assertEqual(migration_obj.COMPLETED,
                         cloud.saved_migration()['status'])
        # The server itself is untouched.
        saved = cloud.saved()
        self.assertEqual((vm_states.ACTIVE, DESTINATION),
                         (saved['vm_state'], saved['host']))

    def test_in_flight_evacuations_are_left_to_their_destination(self):
        for status, scheduled in ((migration_obj.ACCEPTED, False),
                                  (migration_obj.ACCEPTED, True),
                                  (migration_obj.PRE_MIGRATING, True)):
            cloud = self.cloud()
            if scheduled:
                cloud.schedule_evacuation()
            self.set_status(cloud, status)
            held = cloud.held()
            cloud.source_starts()
            self.assertEqual([('destroy', cloud.instance.uuid)],
                             cloud.drivers[SOURCE].calls, status)
            self.assertEqual(held, cloud.held(), status)
            self.assertEqual(status, cloud.saved_migration()['status'])
            self.assertIn('Evacuation of instance %s is in progress (%s)'
                          % (cloud.instance.uuid, status), self.log.output)
            cloud.remove_from_placement()

    def test_evacuations_of_other_hosts_and_other_moves_untouched(self):
        cloud = self.evacuated()
        other = self.other_evacuation(cloud, DESTINATION, migration_obj.DONE)
        resize = migration_obj.Migration.create(
            cloud.migrations, uuidutils.generate_uuid(),
            instance_uuid=cloud.instance.uuid, source_compute=SOURCE,
            source_node=SOURCE, dest_compute=DESTINATION,
            dest_node=DESTINATION, migration_type=migration_obj.RESIZE,
            status=migration_obj.FINISHED, old_flavor=scenario.FLAVOR,
            new_flavor=scenario.FLAVOR)
        ended = self.other_evacuation(cloud, SOURCE, migration_obj.FAILED)
        found = cloud.computes[SOURCE]._destroy_evacuated_instances(
            cloud.ctx, {})
        self.assertEqual([cloud.instance.uuid], sorted(found))
        self.assertEqual([('destroy', cloud.instance.uuid)],
                         cloud.drivers[SOURCE].calls)
        self.assertEqual(migration_obj.DONE,
                         cloud.migrations.peek(other.uuid)['status'])
        self.assertEqual(migration_obj.FINISHED,
                         cloud.migrations.peek(resize.uuid)['status'])
        self.assertEqual(migration_obj.FAILED,
                         cloud.migrations.peek(ended.uuid)['status'])
        self.assertEqual(migration_obj.COMPLETED,
                         cloud.saved_migration()['status'])

    def test_instance_not_found_is_skipped(self):
        cloud = self.evacuated()
        ghost = self.other_evacuation(cloud, SOURCE, migration_obj.DONE,
                                      instance_uuid=uuidutils.generate_uuid())
        found = cloud.computes[SOURCE]._destroy_evacuated_instances(
            cloud.ctx, {})
        self.assertEqual(sorted([cloud.instance.uuid, ghost.instance_uuid]),
                         sorted(found))
        self.assertEqual([('destroy', cloud.instance.uuid)],
                         cloud.drivers[SOURCE].calls)
        self.assertEqual(migration_obj.DONE,
                         cloud.migrations.peek(ghost.uuid)['status'])
        self.assertEqual(migration_obj.COMPLETED,
                         cloud.saved_migration()['status'])
        self.assertEqual({self.dst_rp: RESOURCES}, cloud.held())

    def test_node_cache_names_the_provider(self):
        cloud = self.evacuated()
        cloud.rts[SOURCE].compute_nodes = {}
        cloud.computes[SOURCE]._destroy_evacuated_instances(
            cloud.ctx, {SOURCE: self.src_rp})
        self.assertEqual({self.dst_rp: RESOURCES}, cloud.held())
        self.assertEqual(migration_obj.COMPLETED,
                         cloud.saved_migration()['status'])

    def test_unknown_source_node_is_not_completed(self):
        cloud = self.evacuated()
        cloud.rts[SOURCE].compute_nodes = {}
        cloud.source_starts()
        self.assertEqual({self.src_rp: RESOURCES, self.dst_rp: RESOURCES},
                         cloud.held())
        self.assertEqual(migration_obj.DONE,
                         cloud.saved_migration()['status'])
        self.assertIn('source node %s is not known' % SOURCE,
                      self.log.output)

    def test_deleted_instance_is_completed_without_placement(self):
        cloud = self.evacuated()
        cloud.store.update(cloud.instance.uuid,
                           {'vm_state': vm_states.DELETED,
                            'task_state': task_states.DELETING})
        self.placement.reset_calls()
        cloud.source_starts()
        self.assertEqual([], self.placement.calls)
        self.assertEqual(migration_obj.COMPLETED,
                         cloud.saved_migration()['status'])
        self.assertEqual([('destroy', cloud.instance.uuid)],
                         cloud.drivers[SOURCE].calls)
