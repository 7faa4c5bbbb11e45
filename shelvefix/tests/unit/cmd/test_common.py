"""Tests for shelvefix.cmd.common: progress, problems, output paths."""

import io
import os
from unittest import mock

import fixtures
from keystoneauth1 import exceptions as ks_exc
import testtools

from shelvefix import backends
from shelvefix.cmd import common


class Clock(object):
    def __init__(self):
        self.now = 100.0

    def __call__(self):
        return self.now


class ProgressTestCase(testtools.TestCase):

    def setUp(self):
        super().setUp()
        self.clock = Clock()
        self.useFixture(fixtures.MockPatch(
            'shelvefix.cmd.common.time.monotonic', self.clock))

    def test_plain_lines_when_not_a_terminal(self):
        stream = io.StringIO()
        progress = common.Progress(stream, 'real/legacy', total=200,
                                   unit='runs')
        for done, at in ((1, 100.5), (2, 105.0), (3, 110.0), (4, 115.0),
                         (5, 121.0)):
            self.clock.now = at
            progress(done)
        progress.finish()
        lines = stream.getvalue().splitlines()
        # Not before a second, then one line per ten seconds at most.
        self.assertEqual(2, len(lines))
        self.assertTrue(lines[0].startswith('real/legacy: [...'))
        self.assertIn(' 3/200 (0.3/s, 10 s)', lines[0])
        self.assertIn(' 5/200 (0.2/s, 21 s)', lines[1])
        self.assertNotIn('\r', stream.getvalue())

    def test_redrawn_on_a_terminal(self):
        stream = io.StringIO()
        stream.isatty = lambda: True
        progress = common.Progress(stream, 'cell')
        self.clock.now = 102.0
        progress(10)
        progress(20)
        progress.finish()
        self.assertEqual('\rcell: 10 interleavings (5.0/s, 2 s)'
                         '\rcell: 20 interleavings (10/s, 2 s)\n',
                         stream.getvalue())


class ProblemTestCase(testtools.TestCase):

    def test_known_problems_are_one_line(self):
        self.assertEqual('no', common.problem(common.CommandError('no')))
        self.assertEqual('gone', common.problem(
            backends.BackendUnavailable('gone')))
        self.assertIn('placement cannot be reached', common.problem(
            ks_exc.ConnectFailure('refused')))

    def test_fixture_setup_failures_are_unwrapped(self):
        error = backends.BackendUnavailable('needs gunicorn')
        wrapped = fixtures.MultipleExceptions(
            (type(error), error, None), (RuntimeError, RuntimeError(), None))
        self.assertEqual('needs gunicorn', common.problem(wrapped))

    def test_bugs_are_not_problems(self):
        self.assertIsNone(common.problem(KeyError('x')))

    def test_one_line(self):
        self.assertEqual('short', common.one_line('short'))
        self.assertEqual(
            'db sync failed on x ... oslo_db.exception.DBError: (sqlite3) '
            'no file',
            common.one_line('db sync failed on x:\nTraceback:\n  File "a"\n'
                            'oslo_db.exception.DBError: (sqlite3) no file\n'
                            '(Background on this error at: http://x)\n'))


class CheckWritableTestCase(testtools.TestCase):

    def test_paths(self):
        directory = self.useFixture(fixtures.TempDir()).path
        common.check_writable(os.path.join(directory, 'new.md'))
        e = self.assertRaises(common.CommandError, common.check_writable,
                              directory)
        self.assertIn('it is a directory', str(e))
        e = self.assertRaises(common.CommandError, common.check_writable,
                              os.path.join(directory, 'no', 'x.md'))
        self.assertIn('no directory', str(e))
        with mock.patch('os.access', return_value=False):
            e = self.assertRaises(common.CommandError,
                                  common.check_writable,
                                  os.path.join(directory, 'x.md'))
        self.assertIn('permission denied', str(e))
