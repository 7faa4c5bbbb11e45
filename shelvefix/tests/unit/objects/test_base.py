"""What the instance and the migration store share, checked on both.

The same contract, run once per store: copies in and out, one
interceptor call before each intercepted access and its result after,
observers after each successful write only, the store's own NotFound.
The stores' own checks (expected states, statuses) are tested with their
models.
"""

from oslo_utils import uuidutils

from shelvefix import exception
from shelvefix.objects import instance as instance_obj
from shelvefix.objects import migration as migration_obj
from shelvefix.tests import base
from shelvefix.tests.unit.objects import test_instance


class RowStoreContract(object):
    """Mixed into a test case per store; the subclass says how rows look.

    :cvar kind: what the store calls its rows in messages
    :cvar field: a field any update may write, ``initial`` in every row
    :cvar not_found: the store's NotFound exception
    :cvar conflict: what an update raises given ``unexpected``
    """

    def setUp(self):
        super(RowStoreContract, self).setUp()
        self.store = self.make_store()
        self.uuid = uuidutils.generate_uuid()
        self.store.create(self.row(self.uuid))
        self.saves = []
        self.store.observers.append(
            lambda uuid, row: self.saves.append((uuid, row[self.field])))
        self.interceptor = test_instance.RecordingInterceptor()

    def intercepted(self):
        self.store.interceptor = self.interceptor
        return self.interceptor.events

    def test_create_copies_and_refuses_an_existing_uuid(self):
        values = self.row(uuidutils.generate_uuid())
        self.store.create(values)
        values[self.field] = 'changed after create'
        self.assertNotEqual('changed after create',
                            self.store.peek(values['uuid'])[self.field])
        e = self.assertRaises(exception.Invalid, self.store.create,
                              self.row(self.uuid))
        self.assertIn('%s %s already exists' % (self.kind, self.uuid),
                      str(e))
        self.assertEqual(sorted([self.uuid, values['uuid']]),
                         self.store.uuids())
        self.assertEqual([values['uuid']], [u for u, _v in self.saves])

    def test_creating_is_intercepted(self):
        events = self.intercepted()
        uuid = uuidutils.generate_uuid()
        self.store.create(self.row(uuid))
        self.assertRaises(exception.Invalid, self.store.create,
                          self.row(uuid))
        self.assertEqual([('create', uuid), ('create', uuid)],
                         [tuple(event[:2]) for event in events])
        # Each reported done: the new row, then the refusal.
        self.assertIsNotNone(events[0][3])
        self.assertEqual('Invalid', events[1][3])

    def test_reads_are_copies(self):
        for read in (self.store.get, self.store.peek):
            read(self.uuid)[self.field] = 'scribbled'
        self.store.query()[0][self.field] = 'scribbled'
        self.assertNotEqual('scribbled', self.store.peek(self.uuid)[
            self.field])

    def test_get_is_intercepted_peek_and_uuids_are_not(self):
        events = self.intercepted()
        row = self.store.get(self.uuid)
        self.store.peek(self.uuid)
        self.store.uuids()
        self.assertEqual([['get', self.uuid, None, self.describe(row)]],
                         events)

    def test_query_is_one_intercepted_read_of_every_row(self):
        other = uuidutils.generate_uuid()
        self.store.create(self.row(other))
        events = self.intercepted()
        rows = self.store.query(uuid=other)
        self.assertEqual([other], [row['uuid'] for row in rows])
        self.assertEqual(sorted([self.uuid, other]),
                         [row['uuid'] for row in self.store.query()])
        self.assertEqual([['list', None, None, '1 row(s)'],
                          ['list', None, None, '2 row(s)']], events)

    def test_update_writes_notifies_and_reports(self):
        events = self.intercepted()
        values = {self.field: 'x'}
        row = self.store.update(self.uuid, values)
        values[self.field] = 'changed after update'
        self.assertEqual('x', row[self.field])
        row[self.field] = 'scribbled'
        self.assertEqual('x', self.store.peek(self.uuid)[self.field])
        self.assertEqual([(self.uuid, 'x')], self.saves)
        self.assertEqual(
            [['update', self.uuid, None,
              self.describe(self.store.peek(self.uuid))]], events)

    def test_interceptor_is_called_before_the_access(self):
        seen = []

        def interceptor(op, uuid, guard=None):
            seen.append((op, self.store.peek(self.uuid)[self.field]))
            return self.interceptor(op, uuid, guard)
        self.store.interceptor = interceptor
        self.store.update(self.uuid, {self.field: 'x'})
        self.store.get(self.uuid)
        self.assertEqual([('update', self.initial), ('get', 'x')], seen)

    def test_a_conflicting_update_writes_and_notifies_nothing(self):
        events = self.intercepted()
        self.assertRaises(self.conflict, self.store.update, self.uuid,
                          {self.field: 'x'}, **self.unexpected)
        self.assertEqual(self.initial, self.store.peek(self.uuid)[
            self.field])
        self.assertEqual([], self.saves)
        self.assertEqual([['update', self.uuid, None,
                           self.conflict.__name__]], events)

    def failed_get_result(self):
        """What a read of a missing row reports: its exception's name."""
        return self.not_found.__name__

    def test_unknown_uuid(self):
        missing = uuidutils.generate_uuid()
        events = self.intercepted()
        self.assertRaises(self.not_found, self.store.peek, missing)
        self.assertRaises(self.not_found, self.store.update, missing,
                          {self.field: 'x'})
        self.assertRaises(self.not_found, self.store.get, missing)
        self.assertEqual(
            [['update', missing, None, self.not_found.__name__],
             ['get', missing, None, self.failed_get_result()]], events)
        self.assertEqual([], self.saves)

    def test_wait_for_is_one_guarded_step_when_intercepted(self):
        events = self.intercepted()
        row = self.store.wait_for(self.uuid,
                                  lambda r: r[self.field] == 'x')
        (op, uuid, guard, result), = events
        self.assertEqual(('wait', self.uuid, self.describe(row)),
                         (op, uuid, result))
        self.assertFalse(guard())
        self.store.interceptor = None
        self.store.update(self.uuid, {self.field: 'x'})
        self.assertTrue(guard())

    def test_wait_for_times_out_naming_the_row(self):
        e = self.assertRaises(TimeoutError, self.store.wait_for, self.uuid,
                              lambda r: False, timeout=0,
                              sleep=self.fail, clock=lambda: 0.0)
        self.assertEqual('%s %s: condition not met within 0.0 s'
                         % (self.kind, self.uuid), str(e))

    def test_soft_delete_hides_the_row_from_reads_and_writes(self):
        other = uuidutils.generate_uuid()
        self.store.create(self.row(other))
        del self.saves[:]
        events = self.intercepted()
        row = self.store.soft_delete(self.uuid)
        self.assertEqual(self.initial, row[self.field])
        self.assertEqual([['destroy', self.uuid, None, 'deleted']], events)
        # Observers are not called: no field changed.
        self.assertEqual([], self.saves)
        del events[:]
        # read_deleted='no': not found by a read, a write or a query.
        self.assertRaises(self.not_found, self.store.get, self.uuid)
        self.assertRaises(self.not_found, self.store.update, self.uuid,
                          {self.field: 'x'})
        self.assertEqual([other], [r['uuid'] for r in self.store.query()])
        self.assertEqual([], self.store.query(uuid=self.uuid))
        self.assertEqual(
            [['get', self.uuid, None, self.failed_get_result()],
             ['update', self.uuid, None, self.not_found.__name__],
             ['list', None, None, '1 row(s)'],
             ['list', None, None, '0 row(s)']], events)
        self.assertEqual([], self.saves)
        # The row is kept, unchanged: checks still see it.
        self.assertEqual(self.initial, self.store.peek(self.uuid)[
            self.field])
        self.assertEqual(sorted([self.uuid, other]), self.store.uuids())
        self.assertTrue(self.store.is_deleted(self.uuid))
        self.assertFalse(self.store.is_deleted(other))
        self.assertEqual(other, self.store.get(other)['uuid'])
        # Its uuid stays taken.
        self.assertRaises(exception.Invalid, self.store.create,
                          self.row(self.uuid))

    def test_soft_delete_twice_or_of_nothing_is_not_found(self):
        self.store.soft_delete(self.uuid)
        events = self.intercepted()
        self.assertRaises(self.not_found, self.store.soft_delete, self.uuid)
        missing = uuidutils.generate_uuid()
        self.assertRaises(self.not_found, self.store.soft_delete, missing)
        self.assertRaises(self.not_found, self.store.is_deleted, missing)
        self.assertEqual(
            [['destroy', self.uuid, None, self.not_found.__name__],
             ['destroy', missing, None, self.not_found.__name__]], events)

    def test_soft_delete_under_the_lock(self):
        # Checked and marked in one critical section: a write racing it
        # lands before it or finds the row deleted.
        held = []

        def interceptor(op, uuid, guard=None):
            held.append(self.store._lock._is_owned())
            return self.interceptor(op, uuid, guard)
        self.store.interceptor = interceptor
        real_read = self.store._read

        def read(uuid):
            held.append(self.store._lock._is_owned())
            return real_read(uuid)
        self.store._read = read
        self.store.soft_delete(self.uuid)
        # Intercepted before the lock, read and marked under it.
        self.assertEqual([False, True], held)

    def test_observers_run_under_the_lock(self):
        held = []
        self.store.observers.append(
            lambda uuid, row: held.append(self.store._lock._is_owned()))
        self.store.update(self.uuid, {self.field: 'x'})
        self.assertEqual([True], held)


class InstanceStoreTestCase(RowStoreContract, base.TestCase):

    kind, field, initial = 'instance', 'host', 'compute-1'
    not_found = exception.InstanceNotFound
    conflict = exception.UnexpectedTaskStateError
    unexpected = {'expected_task_state': ['spawning']}

    def failed_get_result(self):
        # Unlike the migration store's, a read of a missing instance
        # leaves its step without a result.
        return None

    def make_store(self):
        return instance_obj.InstanceStore()

    def row(self, uuid):
        return instance_obj.Instance(self.make_store(), uuid,
                                     host=self.initial)._values()

    def describe(self, row):
        return 'vm_state=%s task_state=%s host=%s' % (
            row['vm_state'], row['task_state'], row['host'])


class MigrationStoreTestCase(RowStoreContract, base.TestCase):

    kind, field, initial = 'migration', 'dest_node', 'dst-node'
    not_found, conflict = (exception.MigrationNotFound,
                           exception.MigrationUpdateConflict)
    unexpected = {'expected_status': ['done']}

    def make_store(self):
        return migration_obj.MigrationStore()

    def row(self, uuid):
        return migration_obj.Migration(self.make_store(), uuid,
                                       dest_node=self.initial)._values()

    def describe(self, row):
        return 'status=%s' % row['status']
