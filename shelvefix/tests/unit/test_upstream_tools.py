"""The series, rows and judgements of ``tools/upstream*.py``."""

import io
import os
import tarfile

import fixtures
import testtools

from shelvefix.tests import shipped
from shelvefix.tests import upstream_toy


class UpstreamToolsTestCase(testtools.TestCase):

    def setUp(self):
        super().setUp()
        if not os.path.isdir(upstream_toy.TOOLS):
            shipped.missing(self, 'no tools/ beside the package')
        self.series_mod = upstream_toy.load_tool('upstream_series')
        self.checks = upstream_toy.load_tool('upstream_checks')
        self.root = self.useFixture(fixtures.TempDir()).path
        upstream_toy.write(os.path.join(self.root, 'contributor.ini'),
                           upstream_toy.CONTRIBUTOR)
        self.folder = os.path.join(self.root, 'nova', 'toy')
        for name, text in (
                ('series.ini', upstream_toy.SERIES),
                ('reproducer.py', upstream_toy.REPRODUCER % 5),
                ('fix.diff', ''), ('commit-0001.txt', 'One\n'),
                ('commit-0002.txt', 'Two\n\nSigned-off-by: @AUTHOR@ '
                 '<@EMAIL@>\n')):
            upstream_toy.write(os.path.join(self.folder, name), text)

    def load(self, slugs=None):
        return self.series_mod.load(root=self.root, slugs=slugs)

    def test_placeholders_are_filled_in(self):
        [series] = self.load()
        self.assertEqual(
            'nova/tests/functional/regressions/test_bug_1234567.py',
            series.reproducer)
        self.assertEqual(
            'nova.tests.functional.regressions.test_bug_1234567',
            series.test_id)
        self.assertIn('Regression test for bug 1234567',
                      series.source('reproducer.py'))
        self.assertIn('NOTE(ada)', series.source('reproducer.py'))
        self.assertEqual({'./nova/tests/unit': [
            r'^nova\.tests\.unit\.test_thing\.']}, series.suites())

    def test_each_commit_is_signed_off_and_has_a_stable_change_id(self):
        [series] = self.load()
        message = series.message(2)
        self.assertIn('Signed-off-by: Ada Lovelace <ada@example.net>\n',
                      message)
        self.assertRegex(message, r'\nChange-Id: I[0-9a-f]{40}\n$')
        self.assertEqual(message, series.message(2))
        self.assertNotEqual(message.splitlines()[-1],
                            series.message(1).splitlines()[-1])

    def test_the_template_is_reported_unfilled(self):
        values = self.series_mod.contributor(
            os.path.join(upstream_toy.UPSTREAM, 'contributor.ini'))
        self.assertEqual('email, name, nick and %d bug numbers'
                         % len(values['bugs']),
                         self.series_mod.unfilled(values))
        self.assertEqual('', self.series_mod.unfilled(
            self.series_mod.contributor(
                os.path.join(self.root, 'contributor.ini'))))

    def test_every_committed_series_loads(self):
        upstream = upstream_toy.UPSTREAM
        found = self.series_mod.load(root=upstream)
        self.assertEqual(
            sorted(self.series_mod.contributor(os.path.join(
                upstream, 'contributor.ini'))['bugs']),
            sorted(s.slug for s in found))
        for series in found:
            self.assertEqual(2, len(series.patches()), series)
            if os.path.isdir(upstream_toy.DOC):
                # The guide is not installed: its pages are checked in a
                # checkout.
                self.assertTrue(os.path.isfile(os.path.join(
                    upstream_toy.DOC, series.page)), series)

    def test_bad_series_are_refused(self):
        error = self.series_mod.SeriesError
        self.assertRaisesRegex(error, 'no series nope', self.load, ['nope'])
        with open(os.path.join(self.folder, 'series.ini'), 'a') as f:
            f.write('    ^placement\\.tests\\.unit\\.x\n')
        self.assertRaisesRegex(error, 'does not start with', self.load)
        os.remove(os.path.join(self.folder, 'fix.diff'))
        self.assertRaisesRegex(error, 'lacks fix.diff', self.load)

    def test_a_finding_without_a_bug_number_is_refused(self):
        upstream_toy.write(os.path.join(self.root, 'contributor.ini'),
                           upstream_toy.CONTRIBUTOR.replace(
                               'toy = 1234567', 'other = 1'))
        self.assertRaisesRegex(self.series_mod.SeriesError,
                               'no bug number for toy', self.load)

    def test_a_control_must_fail_on_an_assertion(self):
        def outcome(tests=1, passed=0, failures=(), errors=()):
            return {'tests': tests, 'passed': passed, 'skipped': 0,
                    'failures': list(failures), 'errors': list(errors)}
        judge = self.checks.judge
        self.assertEqual((1, []), judge([outcome(failures=['t: x'])],
                                        'fail'))
        # An error (an import failure, a typo) proves nothing.
        self.assertEqual(0, judge([outcome(errors=['t: ImportError'])],
                                  'fail')[0])
        self.assertEqual(0, judge([outcome(failures=['a'], errors=['b'])],
                                  'fail')[0])
        self.assertEqual((2, []), judge([outcome(passed=1)] * 2, 'pass'))
        # No test at all is no pass.
        self.assertEqual(0, judge([outcome(tests=0)], 'pass')[0])

    def test_the_table_has_a_row_a_mode(self):
        [series] = self.load()

        class Target(object):
            label = 'nova 1.0.0'

        row = self.checks.Row(series, Target(), 'eventlet')
        self.assertFalse(row.ok)
        row.applies, row.bug, row.fixed = 'yes', (5, 5), (5, 5)
        row.controls = {'a': True, 'b': True}
        row.existing = {'passed': 3, 'failed': 0, 'skipped': 0}
        self.assertTrue(row.ok)
        lines = self.checks.table([row]).splitlines()
        self.assertEqual(['finding', 'target', 'mode', 'applies', 'bug',
                          'shown', 'fixed', 'controls', 'existing', 'tests',
                          'exploration'], lines[0].split())
        self.assertIn('5/5', lines[1])
        self.assertIn('2/2 fail', lines[1])
        row.controls['b'] = False
        self.assertFalse(row.ok)
        self.assertIn('1/2 fail', self.checks.table([row]))


class TreesTestCase(testtools.TestCase):

    def setUp(self):
        super().setUp()
        if not os.path.isdir(upstream_toy.TOOLS):
            shipped.missing(self, 'no tools/ beside the package')
        self.trees = upstream_toy.load_tool('upstream_trees')

    def test_what_a_tree_needs_that_this_python_lacks(self):
        tree = self.useFixture(fixtures.TempDir()).path
        upstream_toy.write(os.path.join(tree, 'requirements.txt'), (
            '# a comment\n'
            'testtools>=0.1  # met\n'
            'no-such-package-shelvefix>=1.0\n'
            'fixtures>=9999\n'
            'also-missing; python_version < "3"\n'
            '-r other.txt\n'))
        upstream_toy.write(os.path.join(tree, 'test-requirements.txt'),
                           'no-such-test-package-shelvefix\n')
        self.assertEqual(['no-such-package-shelvefix>=1.0',
                          'fixtures>=9999', 'no-such-test-package-shelvefix'],
                         self.trees.unsatisfied(tree))

    def _sdist(self, *members):
        folder = self.useFixture(fixtures.TempDir()).path
        path = os.path.join(folder, 'toy-1.0.tar.gz')
        with tarfile.open(path, 'w:gz') as archive:
            for name, text in members:
                data = text.encode()
                info = tarfile.TarInfo(name)
                info.size = len(data)
                archive.addfile(info, io.BytesIO(data))
        return path

    def test_an_sdist_unpacks_afresh_into_its_top_directory(self):
        dest = self.useFixture(fixtures.TempDir()).path
        stale = os.path.join(dest, 'toy-1.0', 'stale.py')
        upstream_toy.write(stale, 'left from before\n')
        top = self.trees.unpack(self._sdist(
            ('toy-1.0/setup.py', 'pass\n'), ('toy-1.0/toy/__init__.py', '')),
            dest)
        self.assertEqual(os.path.join(os.path.realpath(dest), 'toy-1.0'), top)
        self.assertTrue(
            os.path.isfile(os.path.join(top, 'toy', '__init__.py')))
        self.assertFalse(os.path.exists(stale))

    def test_an_sdist_leaving_its_directory_is_refused(self):
        dest = self.useFixture(fixtures.TempDir()).path
        for members in ((('toy-1.0/../../escape.py', 'x'),),
                        (('toy-1.0/a.py', ''), ('other-2.0/b.py', ''))):
            self.assertRaises(self.trees.TargetError, self.trees.unpack,
                              self._sdist(*members), dest)
        self.assertEqual([], os.listdir(dest))
