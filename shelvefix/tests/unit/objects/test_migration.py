"""Tests for the migration model and its store."""

import datetime

from oslo_utils import fixture as utils_fixture
from oslo_utils import uuidutils

from shelvefix import exception
from shelvefix.objects import instance as instance_obj
from shelvefix.objects import migration as migration_obj
from shelvefix.tests import base
from shelvefix.tests.unit.objects import test_instance


class ConstantsTestCase(base.TestCase):

    def test_not_in_progress_matches_nova(self):
        # migration_get_in_progress_by_host_and_node's exclusion list.
        self.assertEqual(
            {'confirmed', 'reverted', 'error', 'failed', 'completed',
             'cancelled', 'done'}, set(migration_obj.NOT_IN_PROGRESS))
        self.assertNotIn(migration_obj.FINISHED,
                         migration_obj.NOT_IN_PROGRESS)
        self.assertEqual(set(), set(migration_obj.NOT_IN_PROGRESS) -
                         set(migration_obj.ALL_STATUSES))

    def test_types(self):
        self.assertEqual(('migration', 'resize', 'evacuation',
                          'live-migration'), migration_obj.MIGRATION_TYPES)


class MigrationTestCase(base.TestCase):

    def setUp(self):
        super(MigrationTestCase, self).setUp()
        self.store = migration_obj.MigrationStore()
        self.uuid = uuidutils.generate_uuid()
        self.instance_uuid = uuidutils.generate_uuid()
        self.migration = migration_obj.Migration.create(
            self.store, self.uuid, instance_uuid=self.instance_uuid,
            source_compute='src', source_node='src-node',
            dest_compute='dst', dest_node='dst-node',
            migration_type=migration_obj.RESIZE,
            status=migration_obj.MIGRATING,
            old_flavor=instance_obj.Flavor(),
            new_flavor=instance_obj.Flavor(name='m1.big', vcpus=4))

    def test_in_memory_change_is_invisible_until_saved(self):
        self.migration.status = migration_obj.FINISHED
        self.assertEqual(migration_obj.MIGRATING,
                         self.store.get(self.uuid)['status'])
        self.assertEqual({'status'}, self.migration.obj_what_changed())
        self.migration.save()
        self.assertEqual(migration_obj.FINISHED,
                         self.store.get(self.uuid)['status'])
        self.assertEqual(set(), self.migration.obj_what_changed())

    def test_save_writes_only_changed_fields(self):
        other = migration_obj.Migration.get_by_uuid(self.store, self.uuid)
        other.dest_node = 'elsewhere'
        other.save()
        self.migration.status = migration_obj.FINISHED
        self.migration.save()
        # The stale dest_node in self.migration was not written back.
        row = self.store.get(self.uuid)
        self.assertEqual(('elsewhere', migration_obj.FINISHED),
                         (row['dest_node'], row['status']))
        self.assertEqual('elsewhere', self.migration.dest_node)

    def test_flavors_round_trip_as_copies(self):
        loaded = migration_obj.Migration.get_by_uuid(self.store, self.uuid)
        self.assertEqual(4, loaded.new_flavor.vcpus)
        self.assertEqual(instance_obj.Flavor(), loaded.old_flavor)
        loaded.new_flavor.vcpus = 8
        self.assertEqual(4, self.store.get(self.uuid)['new_flavor'].vcpus)
        self.assertEqual(4, self.migration.new_flavor.vcpus)

    def test_expected_status(self):
        self.migration.status = migration_obj.POST_MIGRATING
        self.migration.save(expected_status=migration_obj.MIGRATING)
        self.migration.status = migration_obj.FINISHED
        self.migration.save(expected_status=[migration_obj.PRE_MIGRATING,
                                             migration_obj.POST_MIGRATING])
        self.assertEqual(migration_obj.FINISHED,
                         self.store.get(self.uuid)['status'])

    def test_expected_status_conflict_changes_nothing(self):
        self.migration.status = migration_obj.CONFIRMED
        self.migration.dest_node = 'x'
        e = self.assertRaises(
            exception.MigrationUpdateConflict, self.migration.save,
            expected_status=[migration_obj.FINISHED,
                             migration_obj.REVERTING])
        self.assertIn(self.uuid, str(e))
        self.assertIn("'finished', 'reverting'", str(e))
        self.assertIn("'migrating'", str(e))
        row = self.store.get(self.uuid)
        self.assertEqual((migration_obj.MIGRATING, 'dst-node'),
                         (row['status'], row['dest_node']))
        self.assertEqual({'status', 'dest_node'},
                         self.migration.obj_what_changed())

    def test_refresh_drops_local_changes(self):
        self.migration.status = migration_obj.ERROR
        other = migration_obj.Migration.get_by_uuid(self.store, self.uuid)
        other.status = migration_obj.FINISHED
        other.save()
        self.migration.refresh()
        self.assertEqual(migration_obj.FINISHED, self.migration.status)
        self.assertEqual(set(), self.migration.obj_what_changed())

    def test_obj_clone(self):
        self.migration.status = migration_obj.FINISHED
        clone = self.migration.obj_clone()
        self.assertEqual({'status'}, clone.obj_what_changed())
        self.assertEqual(migration_obj.FINISHED, clone.status)
        clone.new_flavor.vcpus = 2
        self.assertEqual(4, self.migration.new_flavor.vcpus)
        clone.save()
        self.assertEqual(migration_obj.FINISHED,
                         self.store.get(self.uuid)['status'])
        self.assertEqual({'status'}, self.migration.obj_what_changed())

    def test_properties(self):
        self.assertTrue(self.migration.is_resize)
        self.assertFalse(self.migration.is_evacuation)
        self.migration.migration_type = migration_obj.EVACUATION
        self.assertTrue(self.migration.is_evacuation)
        self.assertFalse(self.migration.is_resize)
        self.assertIn(self.uuid, repr(self.migration))

    def test_observers_see_saves_in_order(self):
        seen = []
        self.store.observers.append(
            lambda uuid, row: seen.append((uuid, row['status'])))
        for status in (migration_obj.POST_MIGRATING, migration_obj.FINISHED,
                       migration_obj.CONFIRMED):
            self.migration.status = status
            self.migration.save()
        self.assertEqual([(self.uuid, 'post-migrating'),
                          (self.uuid, 'finished'),
                          (self.uuid, 'confirmed')], seen)

    def test_observer_does_not_see_conflicting_update(self):
        seen = []
        self.store.observers.append(lambda uuid, row: seen.append(uuid))
        self.assertRaises(exception.MigrationUpdateConflict,
                          self.store.update, self.uuid, {'status': 'done'},
                          expected_status='accepted')
        self.assertEqual([], seen)

    def test_bad_input(self):
        new = uuidutils.generate_uuid()
        self.assertRaises(exception.InvalidUUID, migration_obj.Migration,
                          self.store, 'not-a-uuid')
        for kwargs in ({'migration_type': 'teleport'},
                       {'status': 'bogus'}, {'status': None},
                       {'old_flavor': {'vcpus': 1}}):
            self.assertRaises(exception.Invalid, migration_obj.Migration,
                              self.store, new, **kwargs)
        self.assertRaises(AttributeError, setattr, self.migration,
                          'colour', 1)
        self.assertRaises(AttributeError, setattr, self.migration, 'uuid',
                          new)
        e = self.assertRaises(exception.Invalid,
                              migration_obj.Migration.create, self.store,
                              self.uuid)
        self.assertIn('already exists', str(e))
        self.assertEqual([self.uuid], self.store.uuids())

    def test_save_validates_before_writing(self):
        self.migration.status = 'bogus'
        self.assertRaises(exception.Invalid, self.migration.save)
        self.assertEqual(migration_obj.MIGRATING,
                         self.store.get(self.uuid)['status'])
        for values in ({'colour': 'red'},
                       {'uuid': uuidutils.generate_uuid()}):
            self.assertRaises(exception.Invalid, self.store.update,
                              self.uuid, values)
        self.assertEqual([self.uuid], self.store.uuids())

    def test_unknown_migration(self):
        uuid = uuidutils.generate_uuid()
        e = self.assertRaises(exception.MigrationNotFound, self.store.get,
                              uuid)
        self.assertEqual('Migration %s could not be found.' % uuid, str(e))
        self.assertRaises(exception.MigrationNotFound, self.store.peek, uuid)
        self.assertRaises(exception.MigrationNotFound, self.store.update,
                          uuid, {'status': 'done'})
        self.assertRaises(exception.MigrationNotFound,
                          migration_obj.Migration.get_by_uuid, self.store,
                          uuid)

    def test_defaults(self):
        migration = migration_obj.Migration(self.store,
                                            uuidutils.generate_uuid())
        self.assertEqual(migration_obj.MIGRATION, migration.migration_type)
        self.assertEqual(migration_obj.PRE_MIGRATING, migration.status)
        self.assertIsNone(migration.old_flavor)


class TimestampTestCase(base.TestCase):
    """The store stamps rows as nova's database does, never tying."""

    def setUp(self):
        super(TimestampTestCase, self).setUp()
        self.store = migration_obj.MigrationStore()
        # The clock stands still: only the store's sequence separates
        # the stamps.
        self.now = datetime.datetime(2026, 1, 1, 12, 0)
        self.useFixture(utils_fixture.TimeFixture(self.now))

    def create(self, **fields):
        return migration_obj.Migration.create(
            self.store, uuidutils.generate_uuid(), **fields)

    def test_create_stamps_created_at_only(self):
        migration = self.create()
        row = self.store.peek(migration.uuid)
        self.assertEqual(self.now, row['created_at'])
        self.assertIsNone(row['updated_at'])
        # The object holds the row as saved.
        self.assertEqual((self.now, None),
                         (migration.created_at, migration.updated_at))
        self.assertEqual(set(), migration.obj_what_changed())

    def test_each_write_is_later_than_the_one_before(self):
        first, second = self.create(), self.create()
        first.status = migration_obj.MIGRATING
        first.save()
        stamps = [first.created_at, second.created_at, first.updated_at]
        second.status = migration_obj.MIGRATING
        second.save()
        stamps.append(second.updated_at)
        self.assertEqual(sorted(set(stamps)), stamps)
        self.assertEqual(datetime.timedelta(microseconds=3),
                         stamps[-1] - stamps[0])
        self.assertEqual(first.created_at,
                         self.store.peek(first.uuid)['created_at'])

    def test_a_clock_gone_back_does_not_go_back(self):
        first = self.create()
        self.useFixture(utils_fixture.TimeFixture(
            self.now - datetime.timedelta(hours=1)))
        first.status = migration_obj.MIGRATING
        first.save()
        self.assertGreater(first.updated_at, first.created_at)

    def test_the_stamps_follow_the_clock(self):
        first = self.create()
        later = self.now + datetime.timedelta(seconds=5)
        self.useFixture(utils_fixture.TimeFixture(later))
        first.status = migration_obj.MIGRATING
        first.save()
        self.assertEqual(later, first.updated_at)

    def test_only_the_store_writes_them(self):
        given = datetime.datetime(2000, 1, 1)
        migration = self.create(created_at=given, updated_at=given)
        self.assertEqual((self.now, None),
                         (migration.created_at, migration.updated_at))
        for field in migration_obj.TIMESTAMPS:
            self.assertRaises(AttributeError, setattr, migration, field,
                              given)
            e = self.assertRaises(exception.Invalid, self.store.update,
                                  migration.uuid, {field: given})
            self.assertIn(field, str(e))
        self.assertIsNone(self.store.peek(migration.uuid)['updated_at'])

    def test_loaded_and_cloned_migrations_carry_them(self):
        migration = self.create()
        migration.status = migration_obj.MIGRATING
        migration.save()
        loaded = migration_obj.Migration.get_by_uuid(self.store,
                                                     migration.uuid)
        clone = migration.obj_clone()
        listed, = migration_obj.MigrationList.get_by_filters(self.store, {})
        for other in (loaded, clone, listed):
            self.assertEqual(
                (migration.created_at, migration.updated_at),
                (other.created_at, other.updated_at))


class MigrationListTestCase(base.TestCase):

    def setUp(self):
        super(MigrationListTestCase, self).setUp()
        self.store = migration_obj.MigrationStore()
        self.inst = uuidutils.generate_uuid()

    def _make(self, status, source=('a', 'a-node'), dest=('b', 'b-node'),
              migration_type=migration_obj.MIGRATION, instance_uuid=None):
        return migration_obj.Migration.create(
            self.store, uuidutils.generate_uuid(),
            instance_uuid=instance_uuid or self.inst,
            source_compute=source[0], source_node=source[1],
            dest_compute=dest[0], dest_node=dest[1],
            migration_type=migration_type, status=status).uuid

    def _uuids(self, migrations):
        for migration in migrations:
            self.assertIsInstance(migration, migration_obj.Migration)
        return [migration.uuid for migration in migrations]

    def test_in_progress_on_source_and_dest(self):
        migrating = self._make(migration_obj.MIGRATING)
        finished = self._make(migration_obj.FINISHED, source=('b', 'b-node'),
                              dest=('c', 'c-node'))
        get = migration_obj.MigrationList.get_in_progress_by_host_and_node
        self.assertEqual([migrating], self._uuids(get(self.store, 'a',
                                                      'a-node')))
        self.assertEqual(sorted([migrating, finished]),
                         self._uuids(get(self.store, 'b', 'b-node')))
        self.assertEqual([finished], self._uuids(get(self.store, 'c',
                                                     'c-node')))

    def test_in_progress_host_and_node_must_match_on_same_end(self):
        self._make(migration_obj.MIGRATING)
        get = migration_obj.MigrationList.get_in_progress_by_host_and_node
        self.assertEqual([], get(self.store, 'a', 'b-node'))
        self.assertEqual([], get(self.store, 'b', 'a-node'))
        self.assertEqual([], get(self.store, 'a', 'other-node'))

    def test_in_progress_excludes_finished_statuses(self):
        for status in migration_obj.ALL_STATUSES:
            self._make(status)
        get = migration_obj.MigrationList.get_in_progress_by_host_and_node
        statuses = {m.status for m in get(self.store, 'a', 'a-node')}
        self.assertEqual(
            {'pre-migrating', 'migrating', 'post-migrating', 'finished',
             'confirming', 'reverting', 'accepted', 'queued', 'preparing',
             'running'}, statuses)
        self.assertEqual(statuses, {m.status for m in get(self.store, 'b',
                                                          'b-node')})

    def test_in_progress_sees_only_saved_status(self):
        uuid = self._make(migration_obj.FINISHED)
        migration = migration_obj.Migration.get_by_uuid(self.store, uuid)
        migration.status = migration_obj.CONFIRMED
        get = migration_obj.MigrationList.get_in_progress_by_host_and_node
        self.assertEqual([uuid], self._uuids(get(self.store, 'a', 'a-node')))
        migration.save()
        self.assertEqual([], get(self.store, 'a', 'a-node'))

    def test_get_by_filters(self):
        other_inst = uuidutils.generate_uuid()
        done = self._make(migration_obj.DONE,
                          migration_type=migration_obj.EVACUATION)
        accepted = self._make(migration_obj.ACCEPTED,
                              migration_type=migration_obj.EVACUATION)
        failed = self._make(migration_obj.FAILED,
                            migration_type=migration_obj.EVACUATION,
                            source=('c', 'c-node'), dest=('a', 'a-node'))
        resize = self._make(migration_obj.FINISHED,
                            migration_type=migration_obj.RESIZE,
                            instance_uuid=other_inst)
        get = migration_obj.MigrationList.get_by_filters
        self.assertEqual(
            sorted([done, accepted]),
            self._uuids(get(self.store, {
                'source_compute': 'a', 'migration_type': 'evacuation',
                'status': ['accepted', 'done']})))
        self.assertEqual([done], self._uuids(get(self.store,
                                                 {'status': 'done'})))
        self.assertEqual([resize], self._uuids(get(
            self.store, {'instance_uuid': other_inst})))
        self.assertEqual([failed], self._uuids(get(
            self.store, {'dest_compute': 'a'})))
        self.assertEqual(sorted([done, accepted, failed, resize]),
                         self._uuids(get(self.store, {})))
        self.assertEqual([], get(self.store, {'status': []}))

    def test_get_by_filters_host_and_node_match_either_end(self):
        out = self._make(migration_obj.MIGRATING)
        back = self._make(migration_obj.MIGRATING, source=('b', 'b-node'),
                          dest=('a', 'a-node'))
        get = migration_obj.MigrationList.get_by_filters
        self.assertEqual(sorted([out, back]),
                         self._uuids(get(self.store, {'host': 'a'})))
        self.assertEqual(sorted([out, back]),
                         self._uuids(get(self.store, {'node': 'b-node'})))
        # As in nova, 'host' wins over 'source_compute'.
        self.assertEqual(sorted([out, back]), self._uuids(get(
            self.store, {'host': 'a', 'source_compute': 'b'})))
        self.assertEqual([back], self._uuids(get(
            self.store, {'host': 'a', 'uuid': [back]})))

    def test_results_are_copies(self):
        uuid = migration_obj.Migration.create(
            self.store, uuidutils.generate_uuid(),
            new_flavor=instance_obj.Flavor()).uuid
        found, = migration_obj.MigrationList.get_by_filters(self.store, {})
        found.new_flavor.vcpus = 8
        self.store.query()[0]['new_flavor'].vcpus = 16
        self.assertEqual(1, self.store.peek(uuid)['new_flavor'].vcpus)

    def test_get_by_filters_rejects_unknown_keys(self):
        e = self.assertRaises(exception.Invalid,
                              migration_obj.MigrationList.get_by_filters,
                              self.store, {'hidden': False})
        self.assertIn('hidden', str(e))


class StoreInterceptorTestCase(base.TestCase):

    def setUp(self):
        super(StoreInterceptorTestCase, self).setUp()
        self.store = migration_obj.MigrationStore()
        self.uuid = uuidutils.generate_uuid()
        migration_obj.Migration.create(self.store, self.uuid,
                                       source_compute='a', source_node='a',
                                       status=migration_obj.MIGRATING)
        self.interceptor = test_instance.RecordingInterceptor()
        self.store.interceptor = self.interceptor

    def test_ops_are_intercepted(self):
        migration = migration_obj.Migration.get_by_uuid(self.store,
                                                        self.uuid)
        migration.status = migration_obj.FINISHED
        migration.save()
        self.assertRaises(exception.MigrationUpdateConflict,
                          self.store.update, self.uuid, {'status': 'done'},
                          expected_status=[migration_obj.MIGRATING])
        migration_obj.MigrationList.get_in_progress_by_host_and_node(
            self.store, 'a', 'a')
        migration_obj.MigrationList.get_by_filters(self.store,
                                                   {'status': 'done'})
        self.assertRaises(exception.MigrationNotFound, self.store.get,
                          'missing')
        self.store.peek(self.uuid)
        self.store.uuids()
        self.assertEqual(
            [('get', self.uuid, None, 'status=migrating'),
             ('update', self.uuid, None, 'status=finished'),
             ('update', self.uuid, None, 'MigrationUpdateConflict'),
             ('list', None, None, '1 row(s)'),
             ('list', None, None, '0 row(s)'),
             ('get', 'missing', None, 'MigrationNotFound')],
            [tuple(e) for e in self.interceptor.events])

    def test_interceptor_runs_before_the_access(self):
        seen = []

        def interceptor(op, uuid, guard=None):
            seen.append(self.store.peek(self.uuid)['status'])
            return test_instance.RecordingInterceptor()(op, uuid, guard)
        self.store.interceptor = interceptor
        self.store.update(self.uuid, {'status': migration_obj.FINISHED})
        self.assertEqual([migration_obj.MIGRATING], seen)
