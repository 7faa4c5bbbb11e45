"""Unit tests of race_diagrams: running shelvefix race, choosing blocks."""

import os
import subprocess
import sys
import tempfile
import unittest
from unittest import mock

import race_diagrams as rd
import sequence_diagrams as sd


class TestRace(unittest.TestCase):

    MARKDOWN = ('# heading\n\n## one\n\n```mermaid\nsequenceDiagram\n'
                '    title legacy, get-put: ok\n'
                '    A->>B: one\n```\n\n## two\n\n```mermaid\n'
                'sequenceDiagram\n    title legacy, get-put: claim wiped\n'
                '    A->>B: two\n```\n')

    def _fake_run(self, returncode, markdown=None, output='out'):
        def run(command, **kwargs):
            self.assertEqual([sys.executable, '-m', 'shelvefix', 'race',
                              '--ordering', 'legacy', '--diagram'],
                             command[:-1])
            self.assertEqual(rd.RACE_TIMEOUT, kwargs['timeout'])
            if markdown is not None:
                with open(command[-1], 'w') as f:
                    f.write(markdown)
            return subprocess.CompletedProcess(command, returncode, output)
        return run

    def test_race_blocks(self):
        with mock.patch.object(rd.subprocess, 'run',
                               self._fake_run(1, self.MARKDOWN)):
            blocks = rd.run_shelvefix_race('--ordering legacy')
        self.assertEqual(2, len(blocks))

    def test_race_failure_carries_output(self):
        with mock.patch.object(rd.subprocess, 'run',
                               self._fake_run(2, None, 'bad --option')):
            with self.assertRaises(rd.RaceError) as cm:
                rd.run_shelvefix_race(['--ordering', 'legacy'])
        self.assertIn('exited 2', str(cm.exception))
        self.assertIn('bad --option', str(cm.exception))

    def test_race_without_diagram(self):
        with mock.patch.object(rd.subprocess, 'run',
                               self._fake_run(0, 'No bad outcome was found.')):
            with self.assertRaises(rd.RaceError) as cm:
                rd.run_shelvefix_race('--ordering legacy')
        self.assertIn('no Mermaid diagram', str(cm.exception))

    def test_race_timeout(self):
        def run(command, **kwargs):
            raise subprocess.TimeoutExpired(command, kwargs['timeout'],
                                            output='partial')
        with mock.patch.object(rd.subprocess, 'run', run):
            with self.assertRaises(rd.RaceError) as cm:
                rd.run_shelvefix_race('--ordering legacy')
        self.assertIn('timed out after 120 s', str(cm.exception))
        self.assertIn('partial', str(cm.exception))

    def test_diagram_argument_refused(self):
        with self.assertRaises(rd.RaceError):
            rd.run_shelvefix_race('--diagram x.md')

    @unittest.skipUnless(os.environ.get('SHELVEFIX_DOC_RACE'),
                         'set SHELVEFIX_DOC_RACE=1 to run shelvefix race')
    def test_real_race(self):
        blocks = rd.run_shelvefix_race('--ordering legacy --free get-put')
        for block in blocks:
            diagram = sd.parse_strict(block)
            self.assertTrue(diagram.messages)


class TestSelect(unittest.TestCase):

    BLOCKS = sd.mermaid_blocks(TestRace.MARKDOWN)

    def test_first_or_every(self):
        self.assertEqual(self.BLOCKS[:1], rd.select(self.BLOCKS))
        self.assertEqual(self.BLOCKS, rd.select(self.BLOCKS, every=True))

    def test_by_outcome(self):
        self.assertEqual(self.BLOCKS[1:],
                         rd.select(self.BLOCKS, 'claim wiped'))
        with self.assertRaises(rd.RaceError) as cm:
            rd.select(self.BLOCKS, 'host lost')
        self.assertIn("no counterexample ends 'host lost'",
                      str(cm.exception))
        self.assertIn('legacy, get-put: claim wiped', str(cm.exception))

    def test_a_saved_file(self):
        with tempfile.TemporaryDirectory() as tmp:
            path = os.path.join(tmp, 'saved.md')
            with open(path, 'w') as f:
                f.write(TestRace.MARKDOWN)
            self.assertEqual(self.BLOCKS, rd.read_saved(path))
            with open(path, 'w') as f:
                f.write('No bad outcome was found.')
            self.assertRaises(rd.RaceError, rd.read_saved, path)
        self.assertRaises(rd.RaceError, rd.read_saved, path)


if __name__ == '__main__':
    unittest.main()
