"""Tests for the compute manager's RPC method decorators."""

from oslo_utils import uuidutils

from shelvefix.compute import decorators
from shelvefix.compute import task_states
from shelvefix import exception
from shelvefix.objects import instance as instance_obj
from shelvefix.objects import migration as migration_obj
from shelvefix.tests import base


class Boom(Exception):
    pass


class FakeManager(object):
    """Just what the decorators need: ``_instance_update``."""

    def __init__(self, fail_update=False):
        self.updates = []
        self.fail_update = fail_update

    def _instance_update(self, context, instance, **kwargs):
        self.updates.append((instance.uuid, kwargs))
        if self.fail_update:
            raise RuntimeError('database gone')
        for field, value in kwargs.items():
            setattr(instance, field, value)
        instance.save()

    @decorators.reverts_task_state
    def operation(self, context, image, instance, node=None, error=None):
        """Documented."""
        if error is not None:
            raise error
        return 'done'

    @decorators.errors_out_migration
    def move(self, context, instance, migration=None, error=None):
        if error is not None:
            raise error
        return 'moved'

    @decorators.reverts_task_state
    @decorators.errors_out_migration
    def both(self, context, instance, migration, error=None):
        raise error


class DecoratorsTestBase(base.TestCase):

    def setUp(self):
        super(DecoratorsTestBase, self).setUp()
        self.store = instance_obj.InstanceStore()
        self.inst = instance_obj.Instance.create(
            self.store, uuidutils.generate_uuid(),
            task_state=task_states.RESIZE_PREP)
        self.migrations = migration_obj.MigrationStore()
        self.migration = migration_obj.Migration.create(
            self.migrations, uuidutils.generate_uuid(),
            instance_uuid=self.inst.uuid, migration_type=migration_obj.RESIZE,
            status=migration_obj.PRE_MIGRATING)
        self.manager = FakeManager()

    def saved_task_state(self):
        return self.store.peek(self.inst.uuid)['task_state']

    def saved_status(self):
        return self.migrations.peek(self.migration.uuid)['status']


class RevertsTaskStateTestCase(DecoratorsTestBase):

    def test_success_changes_nothing(self):
        self.assertEqual('done', self.manager.operation(
            self.context, None, self.inst))
        self.assertEqual([], self.manager.updates)
        self.assertEqual(task_states.RESIZE_PREP, self.saved_task_state())

    def test_keeps_the_name_and_doc(self):
        self.assertEqual('operation', FakeManager.operation.__name__)
        self.assertEqual('Documented.', FakeManager.operation.__doc__)

    def test_instance_by_position(self):
        self.assertRaises(Boom, self.manager.operation, self.context, None,
                          self.inst, 'node', Boom())
        self.assertEqual([(self.inst.uuid, {'task_state': None})],
                         self.manager.updates)
        self.assertIsNone(self.saved_task_state())

    def test_instance_by_keyword(self):
        self.assertRaises(Boom, self.manager.operation, self.context,
                          image=None, error=Boom(), instance=self.inst)
        self.assertEqual([(self.inst.uuid, {'task_state': None})],
                         self.manager.updates)
        self.assertIsNone(self.saved_task_state())

    def test_unexpected_task_state_is_left_alone(self):
        error = exception.UnexpectedTaskStateError(
            instance_uuid=self.inst.uuid, expected={}, actual={})
        self.assertRaises(exception.UnexpectedTaskStateError,
                          self.manager.operation, self.context, None,
                          self.inst, error=error)
        self.assertEqual([], self.manager.updates)
        self.assertEqual(task_states.RESIZE_PREP, self.saved_task_state())
        self.assertIn('Task possibly preempted', self.log.output)

    def test_failed_revert_raises_the_original_error(self):
        manager = FakeManager(fail_update=True)
        self.assertRaises(Boom, manager.operation, self.context, None,
                          self.inst, error=Boom())
        self.assertEqual(1, len(manager.updates))
        self.assertIn('Failed to revert task state for instance %s'
                      % self.inst.uuid, self.log.output)


class ErrorsOutMigrationTestCase(DecoratorsTestBase):

    def test_success_changes_nothing(self):
        self.assertEqual('moved', self.manager.move(
            self.context, self.inst, self.migration))
        self.assertEqual(migration_obj.PRE_MIGRATING, self.saved_status())

    def test_failure_saves_error(self):
        self.assertRaises(Boom, self.manager.move, self.context, self.inst,
                          self.migration, Boom())
        self.assertEqual(migration_obj.ERROR, self.saved_status())

    def test_migration_by_keyword(self):
        self.assertRaises(Boom, self.manager.move, self.context,
                          error=Boom(), migration=self.migration,
                          instance=self.inst)
        self.assertEqual(migration_obj.ERROR, self.saved_status())

    def test_without_a_migration(self):
        self.assertRaises(Boom, self.manager.move, self.context, self.inst,
                          error=Boom())

    def test_failed_save_raises_the_original_error(self):
        # Never saved: the store does not know it.
        unsaved = migration_obj.Migration(
            self.migrations, uuidutils.generate_uuid(),
            instance_uuid=self.inst.uuid)
        self.assertRaises(Boom, self.manager.move, self.context, self.inst,
                          unsaved, Boom())
        self.assertIn('Could not save migration %s as failed'
                      % unsaved.uuid, self.log.output)
        self.assertEqual(migration_obj.PRE_MIGRATING, self.saved_status())

    def test_both_decorators(self):
        self.assertRaises(Boom, self.manager.both, self.context, self.inst,
                          self.migration, error=Boom())
        self.assertEqual(migration_obj.ERROR, self.saved_status())
        self.assertIsNone(self.saved_task_state())
