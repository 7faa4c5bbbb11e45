"""Ordinary OS errors in one line; secrets never shown; --version.

An output that cannot be written (a full disk), a text its encoding
cannot show, a path the operating system refuses, a database URL in an
error's text or a log line: each is the user's environment, told in one
plain line, never "a bug in shelvefix" and never a password.
"""

import errno
import importlib.metadata
import io
import logging
import os
import sys
from unittest import mock

import fixtures
import pbr.version

from shelvefix.cmd import common
from shelvefix.cmd import main
from shelvefix.cmd import output
from shelvefix.tests import base

SECRET = 'S3cr3tPw'
URL = 'mysql+pymysql://placement:%s@127.0.0.1:1/placement' % SECRET


class FailingStream(io.StringIO):
    """A stream whose every write fails as ``exc`` says."""

    def __init__(self, exc):
        super().__init__()
        self.exc = exc

    def write(self, text):
        raise self.exc


class OutputTestCase(base.TestCase):

    def run_main(self, argv, out):
        err = io.StringIO()
        rc = main.main(argv, out=out, err=err)
        return rc, err.getvalue()

    def assertOneLine(self, expected, err):
        self.assertEqual(1, len(err.splitlines()), err)
        self.assertIn(expected, err)
        self.assertNotIn('a bug in shelvefix', err)

    @staticmethod
    def _close(stream):
        try:
            stream.close()
        except OSError:
            pass   # what it still holds cannot be written either

    def test_full_output(self):
        if not os.path.exists('/dev/full'):
            self.skipTest('no /dev/full')
        full = open('/dev/full', 'w')
        self.addCleanup(self._close, full)
        rc, err = self.run_main(['timeline', '--backend', 'double'], full)
        self.assertEqual(2, rc)
        self.assertOneLine('shelvefix timeline: cannot write to /dev/full: '
                           'No space left on device', err)

    def test_write_fails(self):
        stream = FailingStream(OSError(errno.EIO, 'Input/output error'))
        rc, err = self.run_main(['timeline', '--backend', 'double'], stream)
        self.assertEqual(2, rc)
        self.assertOneLine('cannot write to the output: Input/output error',
                           err)

    def test_reader_gone_is_still_141(self):
        stream = FailingStream(BrokenPipeError(errno.EPIPE, 'Broken pipe'))
        rc, err = self.run_main(['timeline', '--backend', 'double'], stream)
        self.assertEqual(main.EXIT_BROKEN_PIPE, rc)
        self.assertEqual('', err)

    def test_encoding_that_cannot_show_a_path(self):
        # PYTHONIOENCODING=ascii: the path is escaped, as on stderr.
        tmp = self.useFixture(fixtures.TempDir()).path
        path = os.path.join(tmp, 'caf\xe9.py')
        with open(path, 'w') as f:
            f.write('class ComputeManager:\n    pass\n')
        raw = io.BytesIO()
        stream = io.TextIOWrapper(raw, encoding='ascii')
        rc, err = self.run_main(['check', path], stream)
        stream.flush()
        self.assertEqual(2, rc)   # CANNOT TELL: nothing to model
        self.assertEqual('', err)
        self.assertIn(b'caf\\xe9.py', raw.getvalue())

    def test_encoding_error_of_a_stream_that_cannot_escape(self):
        exc = UnicodeEncodeError('ascii', 'caf\xe9', 3, 4, 'no')
        rc, err = self.run_main(['timeline', '--backend', 'double'],
                                FailingStream(exc))
        self.assertEqual(2, rc)
        self.assertOneLine("cannot write to the output: its encoding "
                           "(ascii) cannot show '\xe9'", err)

    def test_names_of_streams(self):
        with mock.patch('sys.stdout', io.StringIO()) as stdout:
            self.assertEqual('stdout', output.name(stdout))
        self.assertEqual('the output', output.name(io.StringIO()))


class OSErrorTestCase(base.TestCase):

    def test_path_and_reason(self):
        exc = FileNotFoundError(errno.ENOENT, 'No such file or directory',
                                '/proc/pg.leases')
        self.assertEqual('/proc/pg.leases: No such file or directory',
                         common.problem(exc))

    def test_two_paths(self):
        exc = OSError(errno.EXDEV, 'Invalid cross-device link', '/a', None,
                      '/b')
        self.assertEqual('/a -> /b: Invalid cross-device link',
                         common.problem(exc))

    def test_inside_a_fixture_failure(self):
        exc = PermissionError(errno.EACCES, 'Permission denied', '/x')
        try:
            raise exc
        except PermissionError:
            wrapped = type('MultipleExceptions', (Exception,), {})(
                sys.exc_info())
        self.assertEqual('/x: Permission denied', common.problem(wrapped))

    def test_machine_errors_without_a_path(self):
        self.assertEqual('No space left on device', common.problem(
            OSError(errno.ENOSPC, 'No space left on device')))
        # Anything else without a path is not known to be ordinary.
        self.assertIsNone(common.problem(
            OSError(errno.EBADF, 'Bad file descriptor')))

    def test_bug_names_the_cause(self):
        # A fixture's failure is reported by its cause, not the wrapper.
        try:
            raise KeyError('k')
        except KeyError:
            wrapped = type('MultipleExceptions', (Exception,), {})(
                sys.exc_info())
        err = io.StringIO()
        with mock.patch('shelvefix.cmd.timeline.run',
                        side_effect=wrapped):
            rc = main.main(['timeline'], out=io.StringIO(), err=err)
        self.assertEqual(2, rc)
        self.assertIn('a bug in shelvefix: KeyError', err.getvalue())


class SecretTestCase(base.TestCase):
    """A database password is masked in every line the command writes."""

    def test_error_line_and_traceback(self):
        err = io.StringIO()
        with mock.patch('shelvefix.cmd.timeline.run',
                        side_effect=RuntimeError('cannot use %s' % URL)):
            rc = main.main(['--debug', 'timeline'], out=io.StringIO(),
                           err=err)
        self.assertEqual(2, rc)
        text = err.getvalue()
        self.assertIn('Traceback', text)
        self.assertIn('placement:***@127.0.0.1', text)
        self.assertNotIn(SECRET, text)

    def test_debug_log(self):
        stream = io.StringIO()
        handler = logging.StreamHandler(stream)
        handler.setFormatter(logging.Formatter('%(message)s'))
        root = logging.getLogger()
        self.useFixture(fixtures.MockPatchObject(root, 'handlers',
                                                 [handler]))
        self.useFixture(fixtures.MockPatchObject(root, 'level',
                                                 logging.DEBUG))
        main.setup_logging(True)
        logging.getLogger('shelvefix.test').warning('connecting to %s', URL)
        self.assertEqual('connecting to %s\n' % URL.replace(SECRET, '***'),
                         stream.getvalue())


class VersionTestCase(base.TestCase):

    def test_version(self):
        stdout = self.useFixture(fixtures.StringStream('stdout')).stream
        with mock.patch('sys.stdout', stdout):
            e = self.assertRaises(SystemExit, main.main, ['--version'])
        self.assertEqual(0, e.code)
        stdout.seek(0)
        shown = stdout.read()
        self.assertEqual(
            'shelvefix %s\n'
            % pbr.version.VersionInfo('shelvefix').release_string(), shown)
        # The installed metadata's version, .devN included.
        self.assertEqual('shelvefix %s\n' % importlib.metadata.version(
            'shelvefix'), shown)
