"""Tests for the conductor's live migration, on the placement double.

The conductor of a :class:`~shelvefix.race.live_migration.LiveMigrationCloud`
(its scheduler, report client and migration store; both computes answer
calls); the server ``ACTIVE`` on compute-1, compute-1 disabled. Where the
task refuses, the server keeps compute-1 and no task, the migration is
``error`` and nothing is cast.
"""

from unittest import mock

from shelvefix.backends import fixture as placement_fixture
from shelvefix.compute import power_state
from shelvefix.compute import task_states
from shelvefix.compute import vm_states
from shelvefix.conductor import live_migrate
from shelvefix import exception
from shelvefix.objects import instance as instance_obj
from shelvefix.objects import migration as migration_obj
from shelvefix.race import live_migration
from shelvefix.race import scenario
from shelvefix.scheduler import request_spec
from shelvefix.tests import base

SOURCE = live_migration.SOURCE
DESTINATION = live_migration.DESTINATION
RESOURCES = scenario.FLAVOR.resources


class ServiceGroup(object):
    """Services up, except those named."""

    def __init__(self, down=()):
        self.down = set(down)

    def service_is_up(self, host):
        return host not in self.down


class LiveMigrateInstanceTestCase(base.TestCase):

    def setUp(self):
        super(LiveMigrateInstanceTestCase, self).setUp()
        self.placement = self.useFixture(placement_fixture.PlacementFixture())
        providers = live_migration.move_cloud.create_providers(
            self.placement)
        self.src_rp, self.dst_rp = providers
        self.cloud = live_migration.LiveMigrationCloud(self.placement,
                                                       providers)
        self.addCleanup(self.cloud.remove_from_placement)
        self.conductor = self.cloud.conductor

    def migrating(self, **fields):
        """The server as the API leaves it: ``MIGRATING``."""
        instance = instance_obj.Instance.get_by_uuid(
            self.cloud.store, self.cloud.instance.uuid)
        instance.task_state = task_states.MIGRATING
        for name, value in fields.items():
            setattr(instance, name, value)
        instance.save()
        return instance

    def live_migrate(self, instance, host=None, **kwargs):
        return self.conductor.live_migrate_instance(
            self.cloud.ctx, instance, {'host': host}, False, False,
            request_spec.RequestSpec.from_instance(instance), **kwargs)

    def assertRefused(self, error, instance, vm_state=vm_states.ACTIVE,
                      **kwargs):
        self.placement.reset_calls()
        self.assertRaises(error, self.live_migrate, instance, **kwargs)
        saved = self.cloud.saved()
        self.assertEqual((vm_state, None, SOURCE),
                         (saved['vm_state'], saved['task_state'],
                          saved['host']))
        [migration] = migration_obj.MigrationList.get_by_filters(
            self.cloud.migrations, {'instance_uuid': instance.uuid})
        self.assertEqual(migration_obj.ERROR, migration.status)
        self.assertEqual({self.src_rp: RESOURCES}, self.cloud.held())
        self.assertEqual({}, self.cloud.held(migration.uuid))
        self.assertEqual(0, self.cloud.transport.waiting('compute', SOURCE))
        return migration

    def test_schedules_and_casts(self):
        instance = self.migrating()
        migration = self.live_migrate(instance)
        self.assertTrue(migration.uuid)
        self.assertEqual((migration_obj.LIVE_MIGRATION, DESTINATION,
                          DESTINATION),
                         (migration.migration_type, migration.dest_compute,
                          migration.dest_node))
        self.assertEqual({self.dst_rp: RESOURCES}, self.cloud.held())
        self.assertEqual({self.src_rp: RESOURCES},
                         self.cloud.held(migration.uuid))
        self.assertEqual(1, self.cloud.transport.waiting('compute', SOURCE))

    def test_a_server_not_running(self):
        instance = self.migrating(power_state=power_state.SHUTDOWN)
        self.assertRefused(exception.InstanceInvalidState, instance)
        # Refused before placement was asked anything.
        self.assertEqual([], [call for call in self.placement.calls
                              if call.method != 'GET'])

    def test_a_forced_destination(self):
        # No scheduler: the server claims compute-2 (disabled or not, as
        # nova's force does), and compute-2 checks.
        self.placement.reset_calls()
        migration = self.live_migrate(self.migrating(), host=DESTINATION)
        self.assertEqual([], [call for call in self.placement.calls
                              if 'allocation_candidates' in call.path])
        self.assertEqual((DESTINATION, DESTINATION),
                         (migration.dest_compute, migration.dest_node))
        self.assertEqual({self.dst_rp: RESOURCES}, self.cloud.held())
        self.assertEqual({self.src_rp: RESOURCES},
                         self.cloud.held(migration.uuid))
        self.assertEqual(1, self.cloud.transport.waiting('compute', SOURCE))

    def test_forced_to_its_own_host(self):
        self.assertRefused(exception.Invalid, self.migrating(), host=SOURCE)
        self.assertEqual([], [call for call in self.placement.calls
                              if call.method != 'GET'])

    def test_forced_to_a_host_without_a_node(self):
        self.assertRefused(exception.Invalid, self.migrating(),
                           host='compute-9')

    def test_forced_destination_down(self):
        self.conductor.servicegroup_api = ServiceGroup(down=[DESTINATION])
        self.assertRefused(exception.MigrationPreCheckError,
                           self.migrating(), host=DESTINATION)

    def test_forced_destination_refuses(self):
        with mock.patch.object(
                self.cloud.drivers[DESTINATION],
                'check_can_live_migrate_destination',
                side_effect=exception.MigrationPreCheckError(reason='no')):
            self.assertRefused(exception.MigrationPreCheckError,
                               self.migrating(), host=DESTINATION)

    def test_forced_destination_claim_refused(self):
        with mock.patch.object(self.cloud.client, 'claim_resources',
                               return_value=False):
            self.assertRefused(exception.NoValidHost, self.migrating(),
                               host=DESTINATION)

    def test_the_source_service_down(self):
        self.conductor.servicegroup_api = ServiceGroup(down=[SOURCE])
        self.assertRefused(exception.MigrationPreCheckError,
                           self.migrating())

    def test_the_destination_refuses(self):
        # compute-2 refuses; its claim is removed and no host is left.
        with mock.patch.object(
                self.cloud.drivers[DESTINATION],
                'check_can_live_migrate_destination',
                side_effect=exception.MigrationPreCheckError(reason='no')):
            self.assertRefused(exception.NoValidHost, self.migrating())
        self.assertIn('Skipping host compute-2', self.log.output)

    def test_retries_are_bounded(self):
        selection = mock.Mock(service_host=DESTINATION, nodename=DESTINATION,
                              compute_node_uuid=self.dst_rp, limits={})
        with mock.patch.object(
                self.cloud.scheduler, 'select_destinations',
                return_value=[[selection]]) as select, \
                mock.patch.object(
                    self.cloud.compute_rpcapi,
                    'check_can_live_migrate_destination',
                    side_effect=exception.MigrationPreCheckError(
                        reason='no')):
            self.assertRefused(exception.NoValidHost, self.migrating())
        self.assertEqual(live_migrate.MIGRATE_MAX_RETRIES + 1,
                         select.call_count)
        # Each attempt left out the hosts tried before.
        self.assertEqual([SOURCE, DESTINATION],
                         select.call_args[1]['spec_obj'].ignore_hosts[:2])

    def test_an_unexpected_failure(self):
        with mock.patch.object(self.cloud.compute_rpcapi, 'live_migration',
                               side_effect=RuntimeError('bus down')):
            self.assertRefused(RuntimeError, self.migrating(),
                               vm_state=vm_states.ERROR)

    def test_the_migration_uuid_given(self):
        migration = self.live_migrate(
            self.migrating(), migration_uuid=self.cloud.migration_uuid)
        self.assertEqual(self.cloud.migration_uuid, migration.uuid)
