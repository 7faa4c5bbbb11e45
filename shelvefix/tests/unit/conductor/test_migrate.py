"""Tests for the conductor's side of a move, on the placement double.

compute-1 (the source, disabled) and compute-2 are providers of the
double; the scheduler is the library's, so that its claim of compute-2 is
real.
"""

from unittest import mock

from oslo_utils import uuidutils

from shelvefix.backends import fixture as placement_fixture
from shelvefix.compute import rpcapi
from shelvefix.compute import task_states
from shelvefix.compute import vm_states
from shelvefix.conductor import manager
from shelvefix.conductor import migrate
from shelvefix import exception
from shelvefix.objects import instance as instance_obj
from shelvefix.objects import migration as migration_obj
from shelvefix.race import cloud as cloud_mod
from shelvefix.race import scenario
from shelvefix import rpc
from shelvefix.scheduler import host_manager
from shelvefix.scheduler import manager as scheduler_mod
from shelvefix.scheduler import request_spec
from shelvefix.tests import base

SOURCE = cloud_mod.SOURCE
DESTINATION = cloud_mod.DESTINATION
FLAVOR = scenario.FLAVOR
BIGGER = instance_obj.Flavor(name='m1.medium', vcpus=2, memory_mb=1024,
                             root_gb=20)
HUGE = instance_obj.Flavor(name='m1.huge', vcpus=64, memory_mb=512,
                           root_gb=10)


class MigrateTestBase(base.TestCase):

    def setUp(self):
        super(MigrateTestBase, self).setUp()
        self.placement = self.useFixture(placement_fixture.PlacementFixture())
        self.client = self.placement.client
        self.src_rp, self.dst_rp = cloud_mod.create_providers(self.placement)
        self.store = instance_obj.InstanceStore()
        self.migrations = migration_obj.MigrationStore()
        self.transport = rpc.Transport()
        self.compute_rpcapi = rpcapi.ComputeAPI(self.transport)
        self.scheduler = scheduler_mod.SchedulerManager(
            self.client, host_manager.HostManager([
                host_manager.ComputeNode(self.src_rp, SOURCE, SOURCE),
                host_manager.ComputeNode(self.dst_rp, DESTINATION,
                                         DESTINATION)]))
        self.inst = instance_obj.Instance.create(
            self.store, uuidutils.generate_uuid(), host=SOURCE, node=SOURCE,
            project_id=scenario.PROJECT, user_id=scenario.USER,
            flavor=FLAVOR)
        self.client.claim_resources(
            self.context, self.inst.uuid,
            scenario.alloc_request(self.src_rp), scenario.PROJECT,
            scenario.USER, scenario.CLAIM_VERSION)

    def held(self, consumer):
        body = self.client.get_allocs_for_consumer(self.context, consumer)
        return {rp: a['resources'] for rp, a in body['allocations'].items()}

    def new_migration(self):
        return migration_obj.Migration.create(
            self.migrations, uuidutils.generate_uuid(),
            instance_uuid=self.inst.uuid, source_compute=SOURCE,
            source_node=SOURCE, old_flavor=FLAVOR, new_flavor=FLAVOR)


class ReplaceAllocationTestCase(MigrateTestBase):

    def test_moves_the_instance_allocations_to_the_migration(self):
        migration = self.new_migration()
        self.placement.reset_calls()
        held = migrate.replace_allocation_with_migration(
            self.context, self.inst, migration, self.client, self.src_rp)
        self.assertEqual({self.src_rp: FLAVOR.resources},
                         {rp: a['resources'] for rp, a in held.items()})
        posts = [c for c in self.placement.calls if c.method != 'GET']
        self.assertEqual([('POST', '/allocations')],
                         [(c.method, c.path) for c in posts])
        self.assertEqual(204, posts[0].status)
        self.assertEqual({self.src_rp: FLAVOR.resources},
                         self.held(migration.uuid))
        self.assertEqual({}, self.held(self.inst.uuid))

    def test_nothing_on_the_source(self):
        migration = self.new_migration()
        self.client.delete_allocation_for_instance(self.context,
                                                   self.inst.uuid, force=True)
        self.placement.reset_calls()
        self.assertIsNone(migrate.replace_allocation_with_migration(
            self.context, self.inst, migration, self.client, self.src_rp))
        self.assertEqual(['GET'], [c.method for c in self.placement.calls])
        self.assertEqual({}, self.held(migration.uuid))

    def test_allocations_elsewhere_are_not_moved(self):
        migration = self.new_migration()
        self.client.delete_allocation_for_instance(self.context,
                                                   self.inst.uuid, force=True)
        self.client.claim_resources(
            self.context, self.inst.uuid,
            scenario.alloc_request(self.dst_rp), scenario.PROJECT,
            scenario.USER, scenario.CLAIM_VERSION)
        self.assertIsNone(migrate.replace_allocation_with_migration(
            self.context, self.inst, migration, self.client, self.src_rp))
        self.assertEqual({self.dst_rp: FLAVOR.resources},
                         self.held(self.inst.uuid))
        self.assertEqual({}, self.held(migration.uuid))

    def test_refused_move_is_no_valid_host(self):
        migration = self.new_migration()
        with mock.patch.object(self.client, 'move_allocations',
                               return_value=False):
            self.assertRaises(exception.NoValidHost,
                              migrate.replace_allocation_with_migration,
                              self.context, self.inst, migration,
                              self.client, self.src_rp)
        self.assertEqual({self.src_rp: FLAVOR.resources},
                         self.held(self.inst.uuid))

    def test_revert_gives_the_allocations_back(self):
        migration = self.new_migration()
        migrate.replace_allocation_with_migration(
            self.context, self.inst, migration, self.client, self.src_rp)
        migrate.revert_allocation_for_migration(
            self.context, self.src_rp, self.inst, migration, self.client)
        self.assertEqual({self.src_rp: FLAVOR.resources},
                         self.held(self.inst.uuid))
        self.assertEqual({}, self.held(migration.uuid))

    def test_revert_of_a_move_that_happened_changes_nothing(self):
        # The instance holds its allocations, the migration none: taken
        # as given back already.
        migration = self.new_migration()
        migrate.revert_allocation_for_migration(
            self.context, self.src_rp, self.inst, migration, self.client)
        self.assertNotIn('Unable to give instance', self.log.output)
        self.assertEqual({self.src_rp: FLAVOR.resources},
                         self.held(self.inst.uuid))

    def test_revert_with_nothing_to_give_back_logs(self):
        migration = self.new_migration()
        self.client.delete_allocation_for_instance(self.context,
                                                   self.inst.uuid, force=True)
        migrate.revert_allocation_for_migration(
            self.context, self.src_rp, self.inst, migration, self.client)
        self.assertIn('Unable to give instance %s back its allocations'
                      % self.inst.uuid, self.error_logs()[-1])
        self.assertEqual({}, self.held(self.inst.uuid))


class MigrationTaskTestCase(MigrateTestBase):

    def execute(self, flavor=FLAVOR, query_client=None):
        # The API's part: the task state, the source left out.
        self.inst.task_state = task_states.RESIZE_PREP
        self.inst.save(expected_task_state=[None])
        self.migration_uuid = uuidutils.generate_uuid()
        self.spec = request_spec.RequestSpec.from_instance(self.inst)
        task = migrate.MigrationTask(
            self.context, self.inst, flavor, self.spec, self.compute_rpcapi,
            query_client or self.scheduler, self.client, self.migrations,
            self.src_rp, self.migration_uuid)
        return task.execute()

    def saved_migration(self):
        return self.migrations.peek(self.migration_uuid)

    def assertScheduled(self, migration, flavor, migration_type):
        saved = self.saved_migration()
        self.assertEqual(
            (self.inst.uuid, SOURCE, SOURCE, None, migration_type,
             migration_obj.PRE_MIGRATING, FLAVOR, flavor),
            (saved['instance_uuid'], saved['source_compute'],
             saved['source_node'], saved['dest_compute'],
             saved['migration_type'], saved['status'], saved['old_flavor'],
             saved['new_flavor']))
        self.assertEqual(self.migration_uuid, migration.uuid)
        self.assertEqual({self.src_rp: FLAVOR.resources},
                         self.held(self.migration_uuid))
        self.assertEqual({self.dst_rp: flavor.resources},
                         self.held(self.inst.uuid))
        self.assertEqual(task_states.RESIZE_PREP,
                         self.store.peek(self.inst.uuid)['task_state'])
        self.assertEqual(flavor, self.spec.flavor)
        message = self.transport.receive(rpcapi.TOPIC, DESTINATION,
                                         timeout=0)
        self.assertEqual('prep_resize', message.method)
        kwargs = message.kwargs
        self.assertEqual(
            (self.inst.uuid, self.migration_uuid, flavor, DESTINATION, True),
            (kwargs['instance'].uuid, kwargs['migration'].uuid,
             kwargs['flavor'], kwargs['node'], kwargs['clean_shutdown']))
        self.assertIn('limits', kwargs['filter_properties'])
        self.assertEqual(0, self.transport.waiting(rpcapi.TOPIC, SOURCE))

    def test_cold_migration(self):
        migration = self.execute()
        self.assertScheduled(migration, FLAVOR, migration_obj.MIGRATION)

    def test_resize(self):
        migration = self.execute(BIGGER)
        self.assertScheduled(migration, BIGGER, migration_obj.RESIZE)

    def assertGivenBack(self):
        self.assertEqual({self.src_rp: FLAVOR.resources},
                         self.held(self.inst.uuid))
        self.assertEqual({}, self.held(self.migration_uuid))
        self.assertEqual(migration_obj.ERROR,
                         self.saved_migration()['status'])
        saved = self.store.peek(self.inst.uuid)
        self.assertEqual((vm_states.ACTIVE, None, SOURCE),
                         (saved['vm_state'], saved['task_state'],
                          saved['host']))
        self.assertEqual(0, self.transport.waiting(rpcapi.TOPIC,
                                                   DESTINATION))

    def test_no_valid_host(self):
        self.assertRaises(exception.NoValidHost, self.execute, HUGE)
        self.assertGivenBack()

    def test_scheduler_failure(self):
        query = mock.Mock()
        query.select_destinations.side_effect = exception.NoValidHost(
            reason='none')
        self.assertRaises(exception.NoValidHost, self.execute,
                          query_client=query)
        self.assertGivenBack()
        query.select_destinations.assert_called_once_with(
            self.context, self.spec, None, spec_obj=self.spec,
            instance_uuids=[self.inst.uuid], return_objects=True,
            return_alternates=False)


class Selection(object):
    service_host = DESTINATION
    nodename = 'node-2'
    limits = {'memory_mb': 1024}


class RebuildInstanceTestCase(base.TestCase):
    """``ComputeTaskManager.rebuild_instance`` (an evacuation)."""

    def setUp(self):
        super(RebuildInstanceTestCase, self).setUp()
        self.store = instance_obj.InstanceStore()
        self.migrations = migration_obj.MigrationStore()
        self.inst = instance_obj.Instance.create(
            self.store, uuidutils.generate_uuid(), host=SOURCE, node=SOURCE,
            task_state=task_states.REBUILDING, project_id='p',
            user_id='u')
        self.migration = migration_obj.Migration.create(
            self.migrations, uuidutils.generate_uuid(),
            instance_uuid=self.inst.uuid, source_compute=SOURCE,
            source_node=SOURCE, migration_type=migration_obj.EVACUATION,
            status=migration_obj.ACCEPTED)
        self.transport = rpc.Transport()
        self.scheduler = mock.Mock()
        self.scheduler.select_destinations.return_value = [[Selection()]]
        self.conductor = manager.ComputeTaskManager(
            self.scheduler, rpcapi.ComputeAPI(self.transport))
        self.spec = request_spec.RequestSpec(self.inst.uuid, None, None)

    def rebuild(self, recreate=True, migration=True):
        self.conductor.rebuild_instance(
            self.context, self.inst, None, None, [], None, {}, [], recreate,
            True, request_spec=self.spec,
            migration=self.migration if migration else None)

    def test_schedules_and_casts(self):
        self.rebuild()
        self.scheduler.select_destinations.assert_called_once_with(
            self.context, self.spec, None, spec_obj=self.spec,
            instance_uuids=[self.inst.uuid], return_objects=True,
            return_alternates=False)
        self.assertEqual(('p', 'u'), (self.spec.project_id,
                                      self.spec.user_id))
        message = self.transport.receive(rpcapi.TOPIC, DESTINATION,
                                         timeout=0)
        self.assertEqual('rebuild_instance', message.method)
        self.assertEqual(('node-2', {'memory_mb': 1024}, True,
                          self.migration.uuid),
                         (message.kwargs['scheduled_node'],
                          message.kwargs['limits'],
                          message.kwargs['recreate'],
                          message.kwargs['migration'].uuid))
        self.assertEqual(migration_obj.ACCEPTED,
                         self.migrations.peek(self.migration.uuid)['status'])
        self.assertEqual(task_states.REBUILDING,
                         self.store.peek(self.inst.uuid)['task_state'])

    def test_scheduling_failure(self):
        self.scheduler.select_destinations.side_effect = (
            exception.NoValidHost(reason='none'))
        self.assertRaises(exception.NoValidHost, self.rebuild)
        self.assertEqual(migration_obj.ERROR,
                         self.migrations.peek(self.migration.uuid)['status'])
        saved = self.store.peek(self.inst.uuid)
        self.assertEqual((vm_states.ERROR, None, SOURCE),
                         (saved['vm_state'], saved['task_state'],
                          saved['host']))
        self.assertEqual(0, self.transport.waiting(rpcapi.TOPIC,
                                                   DESTINATION))

    def test_other_failure_is_raised_too(self):
        self.scheduler.select_destinations.side_effect = RuntimeError('x')
        self.assertRaises(RuntimeError, self.rebuild)
        self.assertEqual(migration_obj.ERROR,
                         self.migrations.peek(self.migration.uuid)['status'])
        self.assertEqual(vm_states.ERROR,
                         self.store.peek(self.inst.uuid)['vm_state'])

    def test_only_an_evacuation_with_its_migration(self):
        self.assertRaises(exception.Invalid, self.rebuild, recreate=False)
        self.assertRaises(exception.Invalid, self.rebuild, migration=False)
        self.scheduler.select_destinations.assert_not_called()
        self.assertEqual(0, self.transport.waiting(rpcapi.TOPIC,
                                                   DESTINATION))
