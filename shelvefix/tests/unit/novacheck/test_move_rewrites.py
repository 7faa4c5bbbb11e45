"""The move rewrites: exactly the intended lines, on the library's classes.

Each rewrite is applied to the source of the class the race lab's variant
derives from (:func:`~shelvefix.novacheck.rewrite.class_source`), and the
difference is compared hunk by hunk: what it removes and adds, and nothing
else (every other line stays byte for byte). Small texts in the wrong
shape must be refused with :class:`~shelvefix.novacheck.rewrite.
RewriteError`. Last, :func:`~shelvefix.novacheck.rewrite.rewrite_method`
with ``defined_in`` makes a subclass of the concrete class whose rewritten
mixin method is the one that runs.
"""

import difflib
import inspect
import textwrap

from oslo_utils import uuidutils

from shelvefix.backends import fixture
from shelvefix.compute import collaborators
from shelvefix.compute import evacuate
from shelvefix.compute import manager
from shelvefix.compute import move_claims
from shelvefix.compute import resize
from shelvefix.compute import resource_tracker
from shelvefix.compute import vm_states
from shelvefix import context
from shelvefix.novacheck import move_rewrites
from shelvefix.novacheck import rewrite
from shelvefix.objects import instance as instance_obj
from shelvefix.objects import migration as migration_obj
from shelvefix.race import move_cloud
from shelvefix.race import variants
from shelvefix.tests import base
from shelvefix import utils

SEMAPHORE = resource_tracker.COMPUTE_RESOURCE_SEMAPHORE


def hunks(old, new):
    """What changed from ``old`` to ``new``: ``[(removed, added)]`` lines.

    Everything between two hunks is byte-identical in both texts.
    """
    a, b = old.splitlines(True), new.splitlines(True)
    matcher = difflib.SequenceMatcher(None, a, b, autojunk=False)
    return [(a[i1:i2], b[j1:j2])
            for tag, i1, i2, j1, j2 in matcher.get_opcodes()
            if tag != 'equal']


def lines(text):
    """A dedented block of source lines, each with its newline."""
    return textwrap.dedent(text).splitlines(True)


def indented(by, text):
    return [' ' * by + line if line.strip() else line
            for line in lines(text)]


def source(cls):
    return rewrite.class_source(cls)[0]


class StatusOutsideLockTestCase(base.TestCase):

    def test_the_status_moves_before_the_critical_section(self):
        text = source(move_claims.MoveClaims)
        new = move_rewrites.status_outside_lock(text)
        status = {'CONFIRMED': 'migration.status = migration_obj.CONFIRMED\n',
                  'REVERTED': 'migration.status = migration_obj.REVERTED\n'}
        save = 'migration.save()\n'
        self.assertEqual([
            ([], [' ' * 8 + status['CONFIRMED'], ' ' * 8 + save]),
            ([' ' * 12 + status['CONFIRMED'], ' ' * 12 + save], []),
            ([], [' ' * 8 + status['REVERTED'], ' ' * 8 + save]),
            ([' ' * 12 + status['REVERTED'], ' ' * 12 + save], []),
        ], hunks(text, new))
        # Just before the ``with``, and the drop is left alone in it.
        for which, node in (('CONFIRMED', 'source_node'),
                            ('REVERTED', 'dest_node')):
            self.assertIn(''.join(indented(8, '''\
                migration.status = migration_obj.%s
                migration.save()
                with self._semaphore():
                    self._drop_move_claim(context, instance, migration.%s,
                ''' % (which, node))), new)
        self.assertEqual(text.count('\n'), new.count('\n'))

    def test_the_class_name_is_looked_up(self):
        text = source(move_claims.MoveClaims)
        self.assertRaises(rewrite.RewriteError,
                          move_rewrites.status_outside_lock, text,
                          class_name='ResourceTracker')

    def test_refused_shapes(self):
        good = textwrap.dedent('''\
            def drop_move_claim_at_dest(self, context, instance, migration):
                with self._semaphore():
                    migration.status = 'reverted'
                    migration.save()
                    self._drop_move_claim(context, instance)
            ''')
        shapes = {
            'no method': '''\
                def drop_move_claim_at_source(self, c, i, migration):
                    with self._semaphore():
                        migration.status = 'confirmed'
                        self._drop_move_claim(c, i)
                ''',
            'no with block': '''\
                def drop_move_claim_at_source(self, c, i, migration):
                    migration.status = 'confirmed'
                    migration.save()
                    self._drop_move_claim(c, i)
                ''',
            'status not first': '''\
                def drop_move_claim_at_source(self, c, i, migration):
                    with self._semaphore():
                        self._drop_move_claim(c, i)
                        migration.status = 'confirmed'
                        migration.save()
                ''',
            'nothing but the status': '''\
                def drop_move_claim_at_source(self, c, i, migration):
                    with self._semaphore():
                        migration.status = 'confirmed'
                        migration.save()
                ''',
        }
        for what, body in shapes.items():
            if what == 'no method':
                methods = textwrap.dedent(body)
            else:
                methods = textwrap.dedent(body) + good
            text = 'class MoveClaims(object):\n' + ''.join(
                indented(4, methods))
            self.assertRaises(rewrite.RewriteError,
                              move_rewrites.status_outside_lock, text)
        # The good shape for both methods is accepted.
        text = 'class MoveClaims(object):\n' + ''.join(
            indented(4, good.replace('_at_dest', '_at_source') + good))
        self.assertEqual(4, len(hunks(
            text, move_rewrites.status_outside_lock(text))))

    def locked(self, name, status, extra=''):
        return textwrap.dedent('''\
            @utils.synchronized(SEMAPHORE, fair=True)
            def %s(self, context, instance, migration):
                """Doc."""
                # Why.
                migration.status = '%s'
                migration.save()
            %s
                self._drop_move_claim(context, instance)
            ''') % (name, status, extra)

    def test_a_decorated_lock_is_split_in_two(self):
        # nova's shape: the whole method is the critical section.
        text = 'class ResourceTracker(object):\n' + ''.join(indented(
            4, self.locked('drop_move_claim_at_source', 'confirmed') + '\n' +
            self.locked('drop_move_claim_at_dest', 'reverted')))
        new = move_rewrites.status_outside_lock(
            text, class_name='ResourceTracker')
        expected = 'class ResourceTracker(object):\n' + ''.join(indented(
            4, '''\
            def drop_move_claim_at_source(self, context, instance, migration):
                migration.status = 'confirmed'
                migration.save()
                return self._locked_drop_move_claim_at_source(context, instance, migration)

            @utils.synchronized(SEMAPHORE, fair=True)
            def _locked_drop_move_claim_at_source(self, context, instance, migration):
                """Doc."""
                # Why.

                self._drop_move_claim(context, instance)

            def drop_move_claim_at_dest(self, context, instance, migration):
                migration.status = 'reverted'
                migration.save()
                return self._locked_drop_move_claim_at_dest(context, instance, migration)

            @utils.synchronized(SEMAPHORE, fair=True)
            def _locked_drop_move_claim_at_dest(self, context, instance, migration):
                """Doc."""
                # Why.

                self._drop_move_claim(context, instance)
            '''))  # noqa: E501
        self.assertEqual(expected, new)
        # And it runs: the status is saved before the lock is taken.
        namespace = {}
        order = []

        class Utils(object):
            @staticmethod
            def synchronized(name, fair=False):
                def decorate(func):
                    def locked(*args):
                        order.append('lock')
                        return func(*args)
                    return locked
                return decorate

        class Migration(object):
            def save(self):
                order.append('save ' + self.status)

        exec(new, {'utils': Utils, 'SEMAPHORE': 's'}, namespace)
        tracker = namespace['ResourceTracker']()
        tracker._drop_move_claim = lambda c, i: order.append('drop')
        tracker.drop_move_claim_at_source(None, None, Migration())
        self.assertEqual(['save confirmed', 'lock', 'drop'], order)

    def test_refused_decorated_shapes(self):
        other = self.locked('drop_move_claim_at_dest', 'reverted')
        for method in [
                # No lock decorator, no with block.
                self.locked('drop_move_claim_at_source', 'confirmed').replace(
                    '@utils.synchronized(SEMAPHORE, fair=True)\n', ''),
                # More than positional arguments.
                self.locked('drop_move_claim_at_source', 'confirmed').replace(
                    'migration):', 'migration, *args):'),
                # The status not first in the critical section.
                self.locked('drop_move_claim_at_source', 'confirmed',
                            extra='    pass\n').replace(
                    "    migration.status = 'confirmed'\n", '').replace(
                    '    pass\n', "    migration.status = 'confirmed'\n")]:
            text = 'class ResourceTracker(object):\n' + ''.join(
                indented(4, method + '\n' + other))
            self.assertRaises(rewrite.RewriteError,
                              move_rewrites.status_outside_lock, text,
                              class_name='ResourceTracker')


class FreeAfterSuccessTestCase(base.TestCase):

    def test_the_finally_becomes_the_tail_of_the_try(self):
        text = source(resize.ResizeMixin)
        new = move_rewrites.free_after_success(text)
        delete = indented(20, '''\
            self._delete_allocation_after_move(context, instance,
                                               migration)
            self._delete_scheduler_instance_info(context,
                                                 instance.uuid)
            ''')
        self.assertEqual([([], delete),
                          ([' ' * 16 + 'finally:\n'] + delete, [])],
                         hunks(text, new))
        self.assertIn(''.join(indented(16, '''\
            try:
                self._confirm_resize(context, instance,
                                     migration=migration)
                self._delete_allocation_after_move(context, instance,
            ''')), new)
        self.assertNotIn('finally', new)

    def test_refused_shapes(self):
        handler = 'except Exception:\n    raise\n'
        delete = ('finally:\n'
                  '    self._delete_allocation_after_move(context, instance,\n'
                  '                                       migration)\n')

        def method(body):
            return ('class ResizeMixin(object):\n'
                    '    def confirm_resize(self, context, instance, '
                    'migration):\n' + ''.join(indented(8, body)))
        shapes = {
            'no finally': 'try:\n    confirm()\n' + handler,
            'no handler': 'try:\n    confirm()\n' + delete,
            'another finally': 'try:\n    confirm()\n' + handler +
                               'finally:\n    log()\n',
            'two of them': ('try:\n    confirm()\n' + handler + delete) * 2,
        }
        for what, body in shapes.items():
            self.assertRaises(rewrite.RewriteError,
                              move_rewrites.free_after_success,
                              method(textwrap.dedent(body)))
        self.assertRaises(rewrite.RewriteError,
                          move_rewrites.free_after_success,
                          'class ResizeMixin(object):\n    pass\n')
        # The shape itself, nested in a with block as confirm_resize has it.
        good = method('with lock:\n' + ''.join(indented(4, (
            'try:\n    confirm()\n' + handler + delete))))
        self.assertEqual(2, len(hunks(
            good, move_rewrites.free_after_success(good))))


class RevertOutsideLockTestCase(base.TestCase):

    def test_the_tracker_call_becomes_nova_s_four_statements(self):
        text = source(resize.ResizeMixin)
        new = move_rewrites.revert_outside_lock(text)
        indent = ' ' * 12
        self.assertEqual([(
            [indent + 'self.rt.revert_migration_at_source(context, instance, '
             'migration)\n'],
            [indent + 'instance.flavor = migration.old_flavor\n',
             indent + 'instance.host = migration.source_compute\n',
             indent + 'instance.node = migration.source_node\n',
             indent + 'instance.save(expected_task_state='
             '[task_states.RESIZE_REVERTING])\n'])], hunks(text, new))
        # Where the tracker's critical section was, before the allocations
        # move back.
        self.assertIn(indent + 'instance.save(expected_task_state='
                      '[task_states.RESIZE_REVERTING])\n' +
                      indent + 'try:\n' + indent +
                      '    self._revert_allocation(context, instance, '
                      'migration)\n', new)

    def test_refused_shapes(self):
        def method(body):
            return ('class ResizeMixin(object):\n'
                    '    def _finish_revert_resize(self, context, instance, '
                    'migration):\n' + ''.join(indented(8, body)))
        call = 'self.rt.revert_migration_at_source(context, instance, m)\n'
        for body in ('pass\n', call * 2,
                     'self.rt.revert_migration_at_source(context, m)\n',
                     'self.rt.revert_migration_at_source(context, instance, '
                     'migration=m)\n'):
            self.assertRaises(rewrite.RewriteError,
                              move_rewrites.revert_outside_lock,
                              method(body))
        # Its arguments are the ones the call names.
        self.assertIn('    inst.host = mig.source_compute\n',
                      move_rewrites.revert_outside_lock(method(
                          'self.rt.revert_migration_at_source(ctx, inst, '
                          'mig)\n')))


class EvacuationRewritesTestCase(base.TestCase):

    def test_cleanup_in_flight_tests_every_evacuation_status(self):
        text = source(evacuate.EvacuateMixin)
        new = move_rewrites.cleanup_in_flight(text)
        self.assertEqual([(
            indented(12, '''\
                if migration.status not in FINISHED_EVACUATION_STATUSES:
                '''),
            indented(12, '''\
                if migration.status not in EVACUATION_STATUSES:
                '''))], hunks(text, new))

    def test_cleanup_in_flight_changes_the_method_only(self):
        text = textwrap.dedent('''\
            class EvacuateMixin(object):
                statuses = FINISHED_EVACUATION_STATUSES

                def _destroy_evacuated_instances(self, context, node_cache):
                    if (a in FINISHED_EVACUATION_STATUSES or
                            b in FINISHED_EVACUATION_STATUSES):
                        return FINISHED_EVACUATION_STATUSES, 1

                def other(self):
                    return FINISHED_EVACUATION_STATUSES
            ''')
        new = move_rewrites.cleanup_in_flight(text)
        self.assertEqual(text.replace(
            '''\
        if (a in FINISHED_EVACUATION_STATUSES or
                b in FINISHED_EVACUATION_STATUSES):
            return FINISHED_EVACUATION_STATUSES, 1''',
            '''\
        if (a in EVACUATION_STATUSES or
                b in EVACUATION_STATUSES):
            return EVACUATION_STATUSES, 1'''), new)
        self.assertEqual(2, new.count('FINISHED_EVACUATION_STATUSES'))
        self.assertRaises(rewrite.RewriteError,
                          move_rewrites.cleanup_in_flight,
                          text.replace('FINISHED_', ''))
        self.assertRaises(rewrite.RewriteError,
                          move_rewrites.cleanup_in_flight,
                          'class EvacuateMixin(object):\n    pass\n')

    def test_rebuild_saved_apart_saves_after_the_spawn(self):
        text = source(evacuate.EvacuateMixin)
        new = move_rewrites.rebuild_saved_apart(text)
        indent = ' ' * 8
        save = (indent + 'instance.save(expected_task_state='
                '[task_states.REBUILD_SPAWNING])\n')
        self.assertEqual([([], [save])], hunks(text, new))
        self.assertIn(indent + 'self._update_instance_after_spawn('
                      'instance, vm_state=vm_states.ACTIVE)\n' + save, new)

    def test_rebuild_saved_apart_after_the_whole_call(self):
        def method(body):
            return ('class EvacuateMixin(object):\n'
                    '    def _do_rebuild_instance(self, context, instance):\n'
                    + ''.join(indented(8, body)))
        text = method('''\
            self._update_instance_after_spawn(
                instance, vm_state='active')
            return 1
            ''')
        self.assertEqual(text.replace(
            "'active')\n", "'active')\n        instance.save("
            "expected_task_state=[task_states.REBUILD_SPAWNING])\n"),
            move_rewrites.rebuild_saved_apart(text))
        for body in ('pass\n', 'self._update_instance_after_spawn(i)\n' * 2):
            self.assertRaises(rewrite.RewriteError,
                              move_rewrites.rebuild_saved_apart,
                              method(body))

    def test_evacuation_not_counted_removes_the_counting(self):
        text = source(resource_tracker.ResourceTracker)
        new = move_rewrites.evacuation_not_counted(text)
        self.assertEqual([(indented(12, '''\
            resources = dict(instance.flavor.resources)
            tracked = self.tracked_migrations.pop(instance.uuid, None)
            if instance.uuid not in self.tracked_instances:
                self.tracked_instances[instance.uuid] = (node, resources)
                if tracked is None:
                    self._update_usage(resources, node)
            '''), [])], hunks(text, new))
        self.assertIn(''.join(indented(12, '''\
            instance.save()
            if migration is not None:
            ''')), new)

    def test_evacuation_not_counted_refused_shapes(self):
        def method(body):
            return ('class ResourceTracker(object):\n'
                    '    def finish_evacuation(self, instance, node, m):\n'
                    + ''.join(indented(8, body)))
        for body in ('instance.save()\ncount()\nif m:\n    m.save()\n',
                     'with lock:\n    instance.save()\n    count()\n',
                     'with lock:\n    count()\n    if m:\n        m.save()\n',
                     'with lock:\n    instance.save()\n    if m:\n'
                     '        m.save()\n'):
            self.assertRaises(rewrite.RewriteError,
                              move_rewrites.evacuation_not_counted,
                              method(body))
        self.assertRaises(rewrite.RewriteError,
                          move_rewrites.evacuation_not_counted,
                          'class ResourceTracker(object):\n    pass\n')


SRC, DST = move_cloud.SOURCE, move_cloud.DESTINATION


class RewriteMixinMethodTestCase(base.TestCase):
    """``rewrite_method(..., defined_in=Mixin)``: the concrete class."""

    def test_a_subclass_of_the_concrete_class(self):
        cls = variants.status_outside_lock_tracker()
        self.assertTrue(issubclass(cls, resource_tracker.ResourceTracker))
        self.assertEqual('Pre1879878ResourceTracker', cls.__name__)
        self.assertEqual(resource_tracker.__name__, cls.__module__)
        self.assertEqual(
            move_rewrites.status_outside_lock(source(move_claims.MoveClaims)),
            cls.rewritten_source)
        for name in move_rewrites.DROP_METHODS:
            self.assertIn(name, vars(cls))
            original = inspect.unwrap(
                getattr(move_claims.MoveClaims, name)).__code__
            code = inspect.unwrap(vars(cls)[name]).__code__
            # Compiled with the lines of the mixin's own file.
            self.assertEqual(original.co_filename, code.co_filename)
            self.assertEqual(original.co_firstlineno, code.co_firstlineno)
            self.assertNotEqual(original.co_code, code.co_code)
        # Only the rewritten methods are the subclass's own.
        self.assertEqual(set(move_rewrites.DROP_METHODS), {
            name for name, value in vars(cls).items() if callable(value)})
        # The library's classes are untouched.
        self.assertIs(move_claims.MoveClaims.drop_move_claim_at_source,
                      resource_tracker.ResourceTracker.
                      drop_move_claim_at_source)

    def test_the_concrete_class_alone_has_no_such_method(self):
        self.assertRaises(rewrite.RewriteError, rewrite.rewrite_method,
                          resource_tracker.ResourceTracker,
                          move_rewrites.status_outside_lock, 'X',
                          method_name=None)
        self.assertRaises(rewrite.RewriteError, rewrite.rewrite_method,
                          manager.ComputeManager,
                          move_rewrites.free_after_success, 'X',
                          method_name='confirm_resize')

    def test_a_method_the_rewrite_does_not_produce(self):
        self.assertRaises(rewrite.RewriteError, rewrite.rewrite_method,
                          manager.ComputeManager,
                          move_rewrites.free_after_success, 'X',
                          method_name='no_such_method',
                          defined_in=resize.ResizeMixin)

        def unchanged(text, class_name):
            return text
        self.assertRaises(rewrite.RewriteError, rewrite.rewrite_method,
                          manager.ComputeManager, unchanged, 'X',
                          method_name=None, defined_in=resize.ResizeMixin)

    def test_the_evacuation_manager_stacks_two_rewrites(self):
        cls = variants.nova_evacuate_manager()
        self.assertTrue(issubclass(cls, manager.ComputeManager))
        self.assertIn('_do_rebuild_instance', vars(cls))
        self.assertNotIn('_destroy_evacuated_instances', vars(cls))
        cleaning = cls.__bases__[0]
        self.assertIn('_destroy_evacuated_instances', vars(cleaning))
        self.assertEqual((manager.ComputeManager,), cleaning.__bases__)
        self.assertIs(evacuate.EvacuateMixin._do_rebuild_instance,
                      manager.ComputeManager._do_rebuild_instance)

    def tracker(self, cls, host):
        ctx = context.get_admin_context()
        store = instance_obj.InstanceStore()
        migrations = migration_obj.MigrationStore()
        rt = cls(host, reportclient=object(), store=store,
                 locks=utils.Locks(), migration_store=migrations,
                 compute_nodes={host: uuidutils.generate_uuid()})
        old = instance_obj.Flavor(name='old', vcpus=1, memory_mb=512)
        new = instance_obj.Flavor(name='new', vcpus=2, memory_mb=1024)
        instance = instance_obj.Instance.create(
            store, uuidutils.generate_uuid(), vm_state=vm_states.RESIZED,
            host=DST, node=DST, flavor=new)
        migration = migration_obj.Migration.create(
            migrations, uuidutils.generate_uuid(),
            instance_uuid=instance.uuid, source_compute=SRC,
            source_node=SRC, dest_compute=DST, dest_node=DST,
            migration_type=migration_obj.RESIZE,
            status=migration_obj.CONFIRMING, old_flavor=old, new_flavor=new)
        rt.update_available_resource(ctx, host)
        saved = []

        def observe(uuid, row):
            # Whether the tracker's lock is held when the status is saved;
            # if not, an audit can run right then.
            held = rt.locks.held(SEMAPHORE)
            saved.append((row['status'], held))
            if not held:
                rt.update_available_resource(ctx, host)
        migrations.observers.append(observe)
        return ctx, rt, instance, migration, saved

    def confirm(self, cls):
        ctx, rt, instance, migration, saved = self.tracker(cls, SRC)
        self.assertEqual({'DISK_GB': 1, 'MEMORY_MB': 512, 'VCPU': 1},
                         rt.usage(SRC))
        rt.drop_move_claim_at_source(ctx, instance, migration)
        return rt.usage(SRC), saved

    def test_the_corrected_tracker_saves_the_status_under_its_lock(self):
        usage, saved = self.confirm(resource_tracker.ResourceTracker)
        self.assertEqual([(migration_obj.CONFIRMED, True)], saved)
        self.assertEqual({}, usage)

    def test_the_pre_1879878_tracker_saves_it_before_the_lock(self):
        usage, saved = self.confirm(variants.status_outside_lock_tracker())
        self.assertEqual([(migration_obj.CONFIRMED, False)], saved)
        # The audit at the save stopped counting the migration, and the
        # drop subtracted its flavor once more (bug 1879878).
        self.assertEqual({'DISK_GB': -1, 'MEMORY_MB': -512, 'VCPU': -1},
                         usage)

    def test_the_revert_drop_too(self):
        for cls, held in ((resource_tracker.ResourceTracker, True),
                          (variants.status_outside_lock_tracker(), False)):
            ctx, rt, instance, migration, saved = self.tracker(cls, DST)
            rt.drop_move_claim_at_dest(ctx, instance, migration)
            self.assertEqual([(migration_obj.REVERTED, held)], saved)


class RewrittenConfirmRunsTestCase(base.TestCase):
    """The pre-1821594 manager's ``confirm_resize`` is the one that runs."""

    def setUp(self):
        super(RewrittenConfirmRunsTestCase, self).setUp()
        self.placement = self.useFixture(fixture.PlacementFixture())
        self.providers = move_cloud.create_providers(self.placement)

    def confirm_failing(self, manager_cls):
        cloud = move_cloud.MoveCloud(
            self.placement, self.providers, manager_cls=manager_cls,
            failing={SRC: ('confirm_migration',)})
        self.addCleanup(cloud.remove_from_placement)
        self.assertEqual({self.providers[0]},
                         set(cloud.held(cloud.migration_uuid)))
        self.assertRaises(collaborators.DriverFailed, cloud.confirm)
        self.assertEqual(vm_states.ERROR, cloud.saved()['vm_state'])
        return set(cloud.held(cloud.migration_uuid))

    def test_corrected_frees_the_migration_anyway(self):
        self.assertEqual(set(), self.confirm_failing(manager.ComputeManager))

    def test_pre_1821594_keeps_the_source(self):
        cls = variants.leaking_confirm_manager()
        self.assertIn('confirm_resize', vars(cls))
        # Decorated as the original is (the decorators run too).
        method = vars(cls)['confirm_resize']
        self.assertEqual(resize.__file__,
                         inspect.unwrap(method).__code__.co_filename)
        self.assertEqual(
            inspect.unwrap(resize.ResizeMixin.confirm_resize).__code__.
            co_firstlineno, inspect.unwrap(method).__code__.co_firstlineno)
        self.assertEqual({self.providers[0]}, self.confirm_failing(cls))
