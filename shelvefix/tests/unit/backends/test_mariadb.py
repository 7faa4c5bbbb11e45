"""Tests for shelvefix.backends.mariadb that start no server."""

import fcntl
import os
import subprocess
from unittest import mock

import fixtures
import testtools

from shelvefix import backends
from shelvefix.backends import mariadb


class EnsureInstalledTestCase(testtools.TestCase):

    def setUp(self):
        super().setUp()
        self.lock = os.path.join(self.useFixture(fixtures.TempDir()).path,
                                 'apt.lock')
        self.useFixture(fixtures.MockPatchObject(mariadb, 'INSTALL_LOCK',
                                                 self.lock))

    def test_installed_does_nothing(self):
        with mock.patch.object(mariadb, '_tool', return_value='/x'), \
                mock.patch.object(subprocess, 'run') as run:
            mariadb.ensure_installed()
        run.assert_not_called()

    def test_not_root_says_how_to_install(self):
        with mock.patch.object(mariadb, '_tool', return_value=None), \
                mock.patch('os.geteuid', return_value=1000):
            e = self.assertRaises(backends.BackendUnavailable,
                                  mariadb.ensure_installed)
        self.assertIn('apt-get install mariadb-server', str(e))

    def test_root_installs_with_apt_get(self):
        installed = []
        done = mock.Mock(returncode=0, stderr='')

        def run(cmd, **kwargs):
            installed.append(cmd)
            return done
        with mock.patch.object(
                mariadb, '_tool',
                side_effect=lambda name: '/x' if len(installed) == 2
                else None), \
                mock.patch('os.geteuid', return_value=0), \
                mock.patch('shutil.which', return_value='/usr/bin/apt-get'), \
                mock.patch.object(subprocess, 'run', side_effect=run):
            mariadb.ensure_installed()
        wait = ['-o', 'DPkg::Lock::Timeout=900']
        self.assertEqual(
            [['apt-get'] + wait + ['update'],
             ['apt-get'] + wait + ['install', '-y', '--no-install-recommends',
                                   'mariadb-server']], installed)

    def test_one_installs_at_a_time(self):
        # Held while apt-get runs: another process's install waits.
        held = []

        def run(cmd, **kwargs):
            with open(self.lock) as other:
                try:
                    fcntl.flock(other, fcntl.LOCK_EX | fcntl.LOCK_NB)
                except BlockingIOError:
                    held.append(cmd[-1])
                else:
                    fcntl.flock(other, fcntl.LOCK_UN)
            return mock.Mock(returncode=0, stderr='')
        with mock.patch.object(mariadb, '_installed',
                               side_effect=[False, False, True]), \
                mock.patch('os.geteuid', return_value=0), \
                mock.patch('shutil.which', return_value='/usr/bin/apt-get'), \
                mock.patch.object(subprocess, 'run', side_effect=run):
            mariadb.ensure_installed()
        self.assertEqual(['update', 'mariadb-server'], held)

    def test_installed_by_the_one_waited_for(self):
        # Missing, then installed by the process that held the lock: no
        # second apt-get.
        with mock.patch.object(mariadb, '_installed',
                               side_effect=[False, True, True]), \
                mock.patch('os.geteuid', return_value=0), \
                mock.patch('shutil.which', return_value='/usr/bin/apt-get'), \
                mock.patch.object(subprocess, 'run') as run:
            mariadb.ensure_installed()
        run.assert_not_called()

    def test_galera_needs_its_provider_and_rsync(self):
        with mock.patch.object(mariadb, '_tool', return_value='/x'), \
                mock.patch('os.path.exists', return_value=False), \
                mock.patch('os.geteuid', return_value=1000):
            e = self.assertRaises(
                backends.BackendUnavailable, mariadb.ensure_installed,
                packages=(mariadb.PACKAGE, mariadb.GALERA_PACKAGE))
        self.assertIn('apt-get install mariadb-server galera-4 rsync',
                      str(e))

    def test_apt_get_failing_is_one_reason(self):
        failed = mock.Mock(returncode=100, stderr='E: no space left')
        with mock.patch.object(mariadb, '_tool', return_value=None), \
                mock.patch('os.geteuid', return_value=0), \
                mock.patch('shutil.which', return_value='/usr/bin/apt-get'), \
                mock.patch.object(subprocess, 'run', return_value=failed):
            e = self.assertRaises(backends.BackendUnavailable,
                                  mariadb.ensure_installed)
        self.assertEqual('apt-get update failed (exit 100): E: no space '
                         'left', str(e))


class StopTestCase(testtools.TestCase):

    def test_sigterm_then_sigkill(self):
        server = mariadb.MariaDBServer()
        process = server.process = mock.Mock()
        process.poll.return_value = None
        process.wait.side_effect = [subprocess.TimeoutExpired('x', 1), 0]
        server.stop(timeout=1)
        # SIGCONT after the SIGTERM: a paused server acts on it.
        self.assertEqual([mock.call(mariadb.signal.SIGTERM),
                          mock.call(mariadb.signal.SIGCONT)],
                         process.send_signal.call_args_list)
        process.kill.assert_called_once_with()
        self.assertIsNone(server.process)
        # Stopped once: a second stop does nothing.
        server.stop()
        self.assertEqual(2, process.send_signal.call_count)

    def test_a_server_that_exited_is_not_signalled(self):
        server = mariadb.MariaDBServer()
        process = server.process = mock.Mock()
        process.poll.return_value = 1
        server.stop()
        process.send_signal.assert_not_called()


class ErrorLogTestCase(testtools.TestCase):

    def test_a_start_failure_shows_the_error_lines(self):
        server = mariadb.MariaDBServer()
        directory = self.useFixture(fixtures.TempDir()).path
        server.log_path = os.path.join(directory, 'error.log')
        with open(server.log_path, 'w') as f:
            f.write('[Note] starting\n[ERROR] WSREP: bind: Address already '
                    'in use\n' + '[Note] more\n' * 500)
        self.assertEqual('[ERROR] WSREP: bind: Address already in use',
                         server._error_log())
