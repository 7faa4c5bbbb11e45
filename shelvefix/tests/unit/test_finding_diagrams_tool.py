"""``tools/finding_diagrams.py``: the saved counterexamples of nova's code."""

import io
import os
import subprocess
from unittest import mock

import fixtures
import testtools

from shelvefix.tests import shipped

MARKDOWN = ('# shelvefix race\n\n```mermaid\nsequenceDiagram\n'
            '    A->>B: x\n```\n')


class FindingDiagramsToolTestCase(testtools.TestCase):

    def setUp(self):
        super().setUp()
        self.tool = shipped.use_script(self, 'tools', 'finding_diagrams.py')
        self.saved = self.useFixture(fixtures.TempDir()).path
        patcher = mock.patch.object(self.tool, 'SAVED', self.saved)
        patcher.start()
        self.addCleanup(patcher.stop)
        self.drawn = MARKDOWN

    def fake_run(self, argv, **kwargs):
        self.assertEqual(['--target', 'nova', '--backend', 'double'],
                         argv[4:8])
        with open(argv[-1], 'w') as f:
            f.write(self.drawn)
        return subprocess.CompletedProcess(argv, 1, '', '')

    def main(self, *argv):
        out = io.StringIO()
        with mock.patch.object(self.tool.subprocess, 'run', self.fake_run), \
                mock.patch('sys.stdout', out):
            rc = self.tool.main(list(argv))
        return rc, out.getvalue()

    def test_written_then_current_then_stale(self):
        rc, out = self.main('live-migrate')
        self.assertEqual(0, rc)
        with open(os.path.join(self.saved, 'live-migrate.md')) as f:
            self.assertEqual(MARKDOWN, f.read())
        self.assertEqual((0, 'live-migrate         current\n'),
                         self.main('--check', 'live-migrate'))
        self.drawn = MARKDOWN.replace('x', 'y')
        rc, out = self.main('--check', 'live-migrate')
        self.assertEqual(1, rc)
        self.assertIn('STALE: run tools/finding_diagrams.py live-migrate',
                      out)
        self.assertIn('+    A->>B: y', out)

    def test_every_saved_file_has_its_entry(self):
        # The guide's saved diagrams are the tool's, and no more.
        # The guide ships with the checkout only, not with the package.
        folder = os.path.join(shipped.CHECKOUT, 'doc', 'source', 'findings',
                              'diagrams')
        if not os.path.isdir(folder):
            self.skipTest('no guide here (an installed package)')
        names = sorted(name[:-3] for name in os.listdir(folder)
                       if name.endswith('.md'))
        self.assertEqual(sorted(name for name, _args in self.tool.DIAGRAMS),
                         names)

    def test_an_unknown_name_is_one_line(self):
        err = io.StringIO()
        with mock.patch('sys.stderr', err):
            e = self.assertRaises(SystemExit, self.tool.main, ['nope'])
        self.assertEqual(2, e.code)
        self.assertIn('unknown diagram nope', err.getvalue())
