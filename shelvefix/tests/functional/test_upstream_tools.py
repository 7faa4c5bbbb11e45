"""``tools/upstream*.py`` on a toy project: patches made, controls run.

The toy (:mod:`shelvefix.tests.upstream_toy`) is small enough to prove in
seconds with the tool's real steps: git am, the reproducer and its
controls in a process of their own, the existing tests through stestr.
"""

import io
import os
import subprocess
import sys

import fixtures
import testtools

from shelvefix.tests import shipped
from shelvefix.tests import upstream_toy


class ProveToyTestCase(testtools.TestCase):

    def setUp(self):
        super().setUp()
        if not os.path.isdir(upstream_toy.TOOLS):
            shipped.missing(self, 'no tools/ beside the package')
        self.series_mod = upstream_toy.load_tool('upstream_series')
        self.checks = upstream_toy.load_tool('upstream_checks')
        self.trees = upstream_toy.load_tool('upstream_trees')
        self.work = self.useFixture(fixtures.TempDir()).path
        self.tree = upstream_toy.make_tree(os.path.join(self.work, 'toy'))
        self.lines = []

    def prove(self, exploration=None, **kwargs):
        root = os.path.join(self.work, 'upstream-%d' % len(self.lines))
        upstream_toy.make_series(root, **kwargs)
        [series] = self.series_mod.load(root=root)
        series.exploration = exploration
        target = self.trees.Target('nova', 'toy 1.0', self.tree)
        written = self.series_mod.generate(series, self.tree)
        target.reset()
        self.assertEqual(2, len(written))
        self.lines.append(root)
        return series, self.checks.prove(
            series, target, ['eventlet'], 2, os.path.join(self.work, 'w'),
            self.lines.append)

    def test_a_true_series_holds(self):
        series, [row] = self.prove()
        self.assertEqual([], row.problems)
        self.assertEqual(('yes', (2, 2), (2, 2)),
                         (row.applies, row.bug, row.fixed))
        self.assertEqual({'fixed test on unfixed code': True,
                          'reproducer on fixed code': True}, row.controls)
        self.assertEqual(1, row.existing['passed'])
        self.assertTrue(row.ok)
        # The patches: the named regression test, the sign-off, and git
        # am takes them.
        one, two = series.patches()
        with open(one) as f:
            text = f.read()
        self.assertIn('regressions/test_bug_1234567.py', text)
        self.assertIn('From: Ada Lovelace <ada@example.net>', text)
        self.assertIn('Signed-off-by: Ada Lovelace <ada@example.net>', text)
        self.assertIn('Related-Bug: #1234567', text)
        # The tree is back at its base.
        self.assertEqual('', upstream_toy.git(self.tree, 'status',
                                              '--porcelain'))

    def test_the_exploration_runs_on_the_unfixed_then_the_fixed_code(self):
        script = ('from nova import thing; '
                  'print("wrong" if thing.double(2) == 5 else "right")')
        self.useFixture(fixtures.MonkeyPatch(
            'upstream_checks.EXPLORER', (sys.executable, '-c', script)))
        _series, [row] = self.prove(exploration=('explore {tree}', 'wro'))
        self.assertEqual((True, False), row.explored)
        self.assertTrue(row.ok)
        self.assertIn('shown, then not shown', self.checks.table([row]))

    def test_regenerating_gives_the_same_patches(self):
        series, _rows = self.prove()
        before = [open(p).read() for p in series.patches()]
        self.series_mod.generate(series, self.tree)
        self.assertEqual(before, [open(p).read() for p in series.patches()])

    def test_a_fix_that_fixes_nothing_fails_its_control(self):
        # 0002 flips the test but leaves the code: the fixed test fails.
        _series, [row] = self.prove(fix=upstream_toy.BUGGY)
        self.assertEqual((0, 2), row.fixed)
        self.assertFalse(row.controls['reproducer on fixed code'])
        self.assertFalse(row.ok)

    def test_a_test_that_is_not_flipped_fails_its_control(self):
        # 0002 fixes the code and says the bug is still there.
        _series, [row] = self.prove(flipped=5)
        self.assertEqual((2, 2), row.bug)
        self.assertFalse(row.controls['fixed test on unfixed code'])
        self.assertFalse(row.ok)

    def test_a_series_that_does_not_apply_says_so(self):
        series, _rows = self.prove()
        upstream_toy.write(os.path.join(self.tree, 'nova', 'thing.py'),
                           'def double(x):\n    return 2 * x + 1\n')
        upstream_toy.git(self.tree, 'commit', '--quiet', '-am', 'moved')
        target = self.trees.Target('nova', 'toy 2.0', self.tree)
        [row] = self.checks.prove(series, target, ['threading'], 1,
                                  os.path.join(self.work, 'w2'),
                                  self.lines.append)
        self.assertEqual('no (0002)', row.applies)
        self.assertFalse(row.ok)

    def test_the_command_prints_the_table_and_its_verdict(self):
        root = os.path.join(self.work, 'upstream')
        upstream_toy.make_series(root)
        out = io.StringIO()
        self.useFixture(fixtures.MonkeyPatch('sys.stdout', out))
        upstream = upstream_toy.load_tool('upstream')
        self.assertEqual(0, upstream.main([
            '--upstream', root, '--workdir', os.path.join(self.work, 'w'),
            '--no-release', '--nova-tree', self.tree, '--regenerate',
            '--repeat', '1']))
        text = out.getvalue()
        self.assertRegex(text, r'toy defect +nova master@[0-9a-f]{10} ')
        self.assertRegex(text, r'eventlet +yes +1/1 +1/1 +2/2 fail')
        self.assertRegex(text, r'threading +yes +1/1 +1/1 +2/2 fail')
        self.assertIn('upstream: 2 rows, every series applies', text)

    def test_bad_arguments_are_one_line_and_status_2(self):
        proc = subprocess.run(
            (sys.executable, os.path.join(upstream_toy.TOOLS, 'upstream.py'),
             '--finding', 'no-such-finding'), text=True,
            stdout=subprocess.PIPE, stderr=subprocess.STDOUT)
        self.assertEqual(2, proc.returncode)
        self.assertEqual(1, len(proc.stdout.splitlines()), proc.stdout)
        self.assertIn('no series no-such-finding', proc.stdout)
