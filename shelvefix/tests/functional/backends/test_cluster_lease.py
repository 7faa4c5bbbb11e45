"""A command stops the PostgreSQL cluster it started; nothing else does.

Each test has a private cluster (its own data directory and port, through
``SHELVEFIX_PG_DATA`` and ``SHELVEFIX_PG_PORT``), so that the suite's warm
one, which other workers use meanwhile, is never touched. Real
``postgres`` processes (Debian's package, installed by the script when
run as root); the tests skip, saying why, when it cannot be had.
"""

import io
import os
import socket
import subprocess
from unittest import mock
import uuid

import fixtures

from shelvefix import backends
from shelvefix.backends import ports
from shelvefix.backends import postgresql
from shelvefix.cmd import main
from shelvefix.tests import base
from shelvefix.tests.functional.backends import test_mariadb
from shelvefix.tests.functional.backends import test_server
from shelvefix.tests.functional.cmd import test_interrupt

#: postgresql.sh's port when SHELVEFIX_PG_PORT is not set.
DEFAULT_PORT = 5433


def postgres_running(data):
    """Whether a ``postgres`` of the cluster in ``data`` is running."""
    for entry in os.listdir('/proc'):
        if not entry.isdigit():
            continue
        try:
            with open('/proc/%s/cmdline' % entry, 'rb') as f:
                cmdline = f.read().split(b'\0')
        except OSError:
            continue
        if cmdline and cmdline[0].endswith(b'postgres') and \
                data.encode() in cmdline:
            return True
    return False


class PrivateClusterTestCase(base.TestCase):
    """A cluster of the test's own: data directory and (a free) port."""

    #: Whether SHELVEFIX_PG_PORT names the port (else the default's rule).
    port_given = True

    def setUp(self):
        super().setUp()
        test_server._require(self, 'postgresql')
        directory = self.useFixture(fixtures.TempDir()).path
        os.chmod(directory, 0o755)
        self.data = os.path.join(directory, 'pg')
        self.useFixture(fixtures.EnvironmentVariable('SHELVEFIX_PG_DATA',
                                                     self.data))
        self.port = ports.free_port() if self.port_given else None
        self.useFixture(fixtures.EnvironmentVariable(
            'SHELVEFIX_PG_PORT', str(self.port) if self.port else None))
        self.addCleanup(self.script, 'purge')

    def script(self, command):
        return subprocess.run(
            ['bash', postgresql.POSTGRESQL_SCRIPT, command],
            stdin=subprocess.DEVNULL, capture_output=True, text=True,
            timeout=300)


class ClusterPolicyTestCase(PrivateClusterTestCase):

    def running(self):
        return self.script('status').returncode == 0

    def stress(self, *extra):
        out, err = io.StringIO(), io.StringIO()
        with mock.patch('sys.stderr', err):
            rc = main.main(['stress', '--servers', '1', '--cycles', '1',
                            '--ordering', 'corrected'] + list(extra),
                           out=out)
        self.assertEqual(0, rc, err.getvalue())
        return err.getvalue()

    def assertStopped(self):
        self.assertFalse(self.running())
        self.assertFalse(postgres_running(self.data))
        self.assertFalse(test_mariadb.listening(self.port))

    def test_a_command_stops_the_cluster_it_started(self):
        # Every process the command starts (the cluster's, gunicorn's
        # master and workers) inherits the marker: none is left.
        marker = uuid.uuid4().hex
        self.useFixture(fixtures.EnvironmentVariable(test_interrupt.MARKER,
                                                     marker))
        self.assertFalse(self.running())
        err = self.stress()
        self.assertIn('stopped the PostgreSQL cluster it had started', err)
        self.assertStopped()
        test_interrupt.wait_for(
            lambda: not test_interrupt.processes_with(marker),
            'no process left', 10)

    def test_a_cluster_running_before_stays_running(self):
        self.assertEqual(0, self.script('start').returncode)
        err = self.stress()
        self.assertNotIn('PostgreSQL cluster', err)
        self.assertTrue(self.running())
        self.assertTrue(test_mariadb.listening(self.port))

    def test_kept_if_asked_and_said_how_to_stop(self):
        err = self.stress('--keep-database')
        self.assertTrue(self.running())
        # The data directory is not the default: the command names it.
        self.assertIn('left running (--keep-database); stop it with: '
                      'SHELVEFIX_PG_DATA=%s bash %s stop'
                      % (os.path.realpath(self.data),
                         postgresql.POSTGRESQL_SCRIPT), err)
        self.assertEqual(0, self.script('stop').returncode)
        self.assertStopped()

    def test_options_instead_of_the_environment(self):
        # --postgresql-data and --postgresql-port name the cluster as the
        # variables do.
        self.useFixture(fixtures.EnvironmentVariable('SHELVEFIX_PG_DATA'))
        self.useFixture(fixtures.EnvironmentVariable('SHELVEFIX_PG_PORT'))
        err = self.stress('--keep-database', '--postgresql-data', self.data,
                          '--postgresql-port', str(self.port))
        self.assertTrue(postgres_running(self.data), err)
        self.assertTrue(test_mariadb.listening(self.port))
        self.assertNotIn('SHELVEFIX_PG_DATA', os.environ)
        self.useFixture(fixtures.EnvironmentVariable('SHELVEFIX_PG_DATA',
                                                     self.data))
        self.useFixture(fixtures.EnvironmentVariable('SHELVEFIX_PG_PORT',
                                                     str(self.port)))
        self.assertEqual(0, self.script('stop').returncode)
        self.assertStopped()

    def test_the_last_user_stops_it(self):
        command = postgresql.ClusterLease(stop_if_started=True)
        command.setUp()
        self.assertTrue(command.started)
        fixture = postgresql.ClusterLease()
        fixture.setUp()
        self.assertFalse(fixture.started)
        command.cleanUp()
        # Another user holds it: still running.
        self.assertEqual('in use', command.outcome)
        self.assertTrue(self.running())
        fixture.cleanUp()
        self.assertEqual('stopped', fixture.outcome)
        self.assertStopped()

    def test_a_fixture_keeps_it_warm(self):
        lease = postgresql.ClusterLease()
        lease.setUp()
        self.assertTrue(lease.started)
        lease.cleanUp()
        self.assertEqual('left running', lease.outcome)
        self.assertTrue(self.running())

    def test_a_dead_process_lease_does_not_count(self):
        command = postgresql.ClusterLease(stop_if_started=True)
        command.setUp()
        # A lease left by a process that no longer runs.
        stale = subprocess.Popen(['true'])
        stale.wait()
        with open(os.path.join(command.leases, '%d-dead' % stale.pid),
                  'w'):
            pass
        command.cleanUp()
        self.assertEqual('stopped', command.outcome)
        self.assertStopped()

    def test_a_stale_mark_stops_nothing(self):
        # A command started the cluster and died without giving its lease
        # back; the cluster was stopped, then started again by someone
        # else (CI's script, an operator). The dead command's mark is for
        # a server that is gone: the next users leave the new one alone.
        command = postgresql.ClusterLease(stop_if_started=True)
        command.setUp()
        self.assertTrue(command.started)
        os.unlink(command.path)
        self.assertEqual(0, self.script('stop').returncode)
        self.assertTrue(os.path.exists(command.mark))
        self.assertEqual(0, self.script('start').returncode)
        fixture = postgresql.ClusterLease()
        fixture.setUp()
        self.assertFalse(fixture.started)
        fixture.cleanUp()
        self.assertEqual('left running', fixture.outcome)
        self.assertTrue(self.running())
        self.assertFalse(os.path.exists(command.mark))

    def test_a_dead_commands_mark_still_stops_its_server(self):
        # The command that started it died; its server still runs: the
        # last user stops it, as that command would have.
        command = postgresql.ClusterLease(stop_if_started=True)
        command.setUp()
        os.unlink(command.path)
        fixture = postgresql.ClusterLease()
        fixture.setUp()
        fixture.cleanUp()
        self.assertEqual('stopped', fixture.outcome)
        self.assertStopped()


class TakenDefaultPortTestCase(PrivateClusterTestCase):
    """A machine whose 5433 is taken by another server still gets a cluster.

    The default port gives way to the next free one; a port the user
    named in ``SHELVEFIX_PG_PORT`` is used or refused, never changed.
    """

    port_given = False

    def setUp(self):
        super().setUp()
        # The suite's own cluster may hold 5433 already; if not, a plain
        # listener does, as another server would.
        if not test_mariadb.listening(DEFAULT_PORT):
            listener = socket.socket()
            self.addCleanup(listener.close)
            listener.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
            listener.bind(('127.0.0.1', DEFAULT_PORT))
            listener.listen()

    def test_default_port_gives_way(self):
        url, started = postgresql.start()
        self.assertTrue(started)
        port = int(url.rsplit(':', 1)[1].split('/')[0])
        self.assertNotEqual(DEFAULT_PORT, port)
        self.assertTrue(test_mariadb.listening(port))
        self.assertTrue(postgres_running(self.data))

    def test_a_named_port_is_refused_not_changed(self):
        self.useFixture(fixtures.EnvironmentVariable(
            'SHELVEFIX_PG_PORT', str(DEFAULT_PORT)))
        error = self.assertRaises(backends.BackendUnavailable,
                                  postgresql.start)
        self.assertIn('127.0.0.1:%d taken' % DEFAULT_PORT, str(error))
        self.assertFalse(postgres_running(self.data))
