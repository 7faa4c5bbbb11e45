"""``shelvefix check`` on the installed nova and on rewritten copies of it.

The installed ``nova/compute/manager.py`` must read as fixed. Copies of the
whole file rewritten to older shapes (``rt = self._get_resource_tracker()``
as in Rocky and Stein, the report client freeing directly) and to the
legacy order must read as what they are, with evidence at the lines where
the statements now are. The static check needs nova's files, not nova
importable; only the legacy copy of the compiled method needs the import.
"""

import ast
import collections
import io
import json
import os

import fixtures
import testtools

from shelvefix.cmd import check as check_cmd
from shelvefix.novacheck import check
from shelvefix.novacheck import rewrite
from shelvefix.novacheck import source
from shelvefix.novacheck import steps
from shelvefix import race
from shelvefix.tests.nova import base


def line_of(text, fragment, nth=1):
    """The 1-based line holding the ``nth`` occurrence of ``fragment``."""
    numbers = [n for n, line in enumerate(text.splitlines(), 1)
               if fragment in line]
    return numbers[nth - 1]


class Args(object):

    def __init__(self, path=None, installed=False, json=False, bug=None):
        self.path = path
        self.installed = installed
        self.json = json
        self.bug = bug


class InstalledNovaTestCase(testtools.TestCase):

    def setUp(self):
        super(InstalledNovaTestCase, self).setUp()
        try:
            self.manager = source.installed()
        except source.SourceError as e:
            self.skipTest('%s; %s' % (e, base.RUN_HINT))
        self.text = self.manager.read()

    def write_tree(self, text):
        root = self.useFixture(fixtures.TempDir()).path
        path = os.path.join(root, 'nova', 'compute', 'manager.py')
        os.makedirs(os.path.dirname(path))
        with open(path, 'w') as f:
            f.write(text)
        return root

    def assertEvidence(self, result, text, free, save):
        self.assertEqual(line_of(text, free), result.free.node.lineno,
                         result.render())
        self.assertEqual(line_of(text, save), result.save.node.lineno)

    def test_installed_nova_is_fixed(self):
        out = io.StringIO()
        rc = check_cmd.run(Args(installed=True), out, io.StringIO())
        self.assertEqual(0, rc, out.getvalue())
        lines = out.getvalue().splitlines()
        self.assertTrue(lines[0].startswith('nova/compute/manager.py (%s'
                                            % self.manager.filename))
        # One line per fix; nova's releases have all but host lost.
        self.assertEqual(['FIXED', 'FIXED', 'FIXED', 'MISSING'],
                         [line[13:25].strip() for line in lines[1:5]])
        lines = lines[:1] + lines[6:]
        self.assertTrue(lines[1].startswith('FIXED: '))
        free = line_of(self.text, 'self.rt.delete_allocation_for_shelve_')
        self.assertTrue(lines[2].startswith(
            '  every path to a save of SHELVED_OFFLOADED frees the '
            'allocations first'), lines[2])
        self.assertEqual(
            '  frees allocations: nova/compute/manager.py:%d: self.rt.'
            'delete_allocation_for_shelve_offloaded_instance(context, '
            'instance)' % free, lines[3])
        self.assertIn('    nova/compute/manager.py:%d: self.rt.delete_'
                      'allocation_for_shelve_offloaded_instance(context, '
                      'instance) -> frees allocations' % free, lines)
        state = line_of(self.text, 'instance.vm_state = vm_states.SHELVED_')
        self.assertIn('  sets the state:    nova/compute/manager.py:%d: '
                      'instance.vm_state = vm_states.SHELVED_OFFLOADED'
                      % state, lines)
        self.assertLess(free, state)

    def test_installed_nova_json(self):
        out = io.StringIO()
        rc = check_cmd.run(Args(installed=True, json=True), out,
                           io.StringIO())
        data = json.loads(out.getvalue())
        self.assertEqual((0, 'fixed', self.manager.filename),
                         (rc, data['status'], data['file']))
        self.assertEqual('self.rt', data['free']['receiver']['expression'])

    def test_legacy_order_copy(self):
        text = rewrite.legacy_order(self.text)
        out = io.StringIO()
        rc = check_cmd.run(Args(path=self.write_tree(text)), out,
                           io.StringIO())
        self.assertEqual(1, rc, out.getvalue())
        result = check.check_source(text)
        self.assertEqual(check.LEGACY, result.status)
        self.assertEvidence(result, text,
                            'self.rt.delete_allocation_for_shelve_',
                            'instance.save(expected_task_state=[task_states'
                            '.SHELVING,')
        self.assertLess(result.save.node.lineno, result.free.node.lineno)

    def test_rocky_shape_copies(self):
        fixed = rewrite.local_tracker_shape(self.text)
        for text, status in ((fixed, check.FIXED),
                             (rewrite.legacy_order(fixed), check.LEGACY)):
            result = check.check_source(text)
            self.assertEqual(status, result.status, result.render())
            self.assertEvidence(result, text, ' rt.delete_allocation_for_',
                                'instance.save(expected_task_state=[task_'
                                'states.SHELVING,')
            self.assertEqual(
                {'expression': 'rt', 'binding':
                 'rt = self._get_resource_tracker()',
                 'bound_at': line_of(text, 'rt = self._get_resource_track')},
                result.free.receiver)
            self.assertIn('  rt bound at:       nova/compute/manager.py:%d: '
                          'rt = self._get_resource_tracker()'
                          % result.free.receiver['bound_at'],
                          result.render())

    def test_report_client_shape_copies(self):
        fixed = rewrite.report_client_shape(self.text)
        for text, status in ((fixed, check.FIXED),
                             (rewrite.legacy_order(fixed), check.LEGACY)):
            result = check.check_source(text)
            self.assertEqual(status, result.status, result.render())
            self.assertEqual('self.reportclient.delete_allocation_for_'
                             'instance(context, instance.uuid)',
                             result.free.source)

    def test_every_method_of_the_manager_reads(self):
        """Each ComputeManager method, read as the method to check.

        Hundreds of real shapes (loops, handlers, nested functions, deep
        helper chains) the check must walk without error and without the
        number of states exploding.
        """
        tree = ast.parse(self.text)
        cls, method = steps.find_method(tree)
        method.name = '_original_shelve_offload_instance'
        methods = [node for node in cls.body
                   if isinstance(node, (ast.FunctionDef,
                                        ast.AsyncFunctionDef))]
        seen = collections.Counter()
        most = 0
        fixed = []
        for node in methods:
            name, node.name = node.name, steps.METHOD_NAME
            try:
                result = check.check_tree(tree, 'nova/compute/manager.py')
                result.render()
                json.dumps(result.to_dict())
            finally:
                node.name = name
            seen[result.status] += 1
            most = max(most, result.states)
            if result.status == check.FIXED:
                fixed.append(name)
        self.assertGreater(len(methods), 200)
        self.assertEqual(len(methods), sum(seen.values()))
        # Only the real method is fixed. (The public one calls
        # self._shelve_offload_instance, which is then itself: recursion
        # the check does not follow.) No other method frees an instance's
        # allocations and saves it SHELVED_OFFLOADED.
        self.assertEqual(['_original_shelve_offload_instance'], fixed)
        self.assertLess(most, 20000)

    def test_rewrites_refuse_what_they_do_not_apply_to(self):
        legacy = rewrite.legacy_order(self.text)
        e = self.assertRaises(rewrite.RewriteError, rewrite.legacy_order,
                              legacy)
        self.assertIn('expected the fixed order, the check says legacy',
                      str(e))


class LegacyMethodTestCase(base.NovaTestCase):
    """The compiled legacy copy differs from nova's only in order."""

    def setUp(self):
        super(LegacyMethodTestCase, self).setUp()
        self.nova_cls = self.harness.nova_manager.ComputeManager
        variants = base.load('shelvefix.nova.variants')
        self.cls = variants.code(race.LEGACY).manager_cls

    def method(self, text):
        return steps.find_method(ast.parse(text))[1]

    def statements(self, text):
        return [ast.dump(stmt) for stmt in self.method(text).body]

    def test_only_the_free_moved(self):
        original, _first = rewrite.class_source(self.nova_cls)
        moved = self.cls.rewritten_source
        self.assertEqual(check.FIXED, check.check_source(original).status)
        result = check.check_source(moved)
        self.assertEqual(check.LEGACY, result.status)
        before, after = self.statements(original), self.statements(moved)
        self.assertNotEqual(before, after)
        self.assertEqual(collections.Counter(before),
                         collections.Counter(after))
        # Take the free out of both and the rest is identical, in order.
        free = [ast.dump(s) for s in self.method(moved).body
                if s.lineno <= result.free.node.lineno <= s.end_lineno][0]
        self.assertEqual([s for s in before if s != free],
                         [s for s in after if s != free])

    def test_compiled_class_runs_the_moved_source(self):
        self.assertTrue(issubclass(self.cls, self.nova_cls))
        method = self.cls._shelve_offload_instance
        self.assertIsNot(self.nova_cls._shelve_offload_instance, method)
        # Its globals are nova's module: the same objects, stubs included.
        self.assertIs(vars(self.harness.nova_manager), method.__globals__)
        # Tracebacks point at nova's file.
        self.assertEqual(self.harness.nova_manager.__file__,
                         method.__code__.co_filename)
