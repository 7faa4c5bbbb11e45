"""SIGKILL mid-run: nothing the command started outlives it.

``shelvefix stress`` runs as a subprocess with a run directory, a
temporary directory and a marker of its own (every child inherits the
marker, see :mod:`.test_interrupt`). Once its servers are up it is killed
with SIGKILL, which no handler sees; within a bounded time no marked
process (the watchdog included, once it has reaped), no port the run
listed and nothing in its temporary directory may remain, and
``shelvefix cleanup`` finds nothing. The tests skip like the other
server tests (``SHELVEFIX_REQUIRE_PLACEMENT_SERVER=1`` fails instead).
"""

import json
import os
import signal
import subprocess
import sys
import time
import uuid

import fixtures
from testtools import content

from shelvefix.backends import ports
from shelvefix.backends import postgresql
from shelvefix.backends import runs
from shelvefix.tests import base
from shelvefix.tests.functional.backends import test_cluster_lease
from shelvefix.tests.functional.backends import test_mariadb
from shelvefix.tests.functional.backends import test_server
from shelvefix.tests.functional.cmd import test_interrupt

#: How long the servers may take to start.
START_WAIT = 180.0
#: How long what the run left may take to go once it is killed.
GONE_WAIT = 30.0
#: Files of the temporary directory that are not the run's.
SHARED = {'shelvefix-apt.lock'}


class _SigkillBase(base.TestCase):

    def setUp(self):
        super().setUp()
        self.runs_dir = self.useFixture(fixtures.TempDir()).path
        self.tmp = self.useFixture(fixtures.TempDir()).path
        # mariadbd runs as mysql and must reach its directory in it.
        os.chmod(self.tmp, 0o755)
        self.env = dict(os.environ, TMPDIR=self.tmp,
                        **{runs.DIR_VARIABLE: self.runs_dir})
        self.env.pop('SHELVEFIX_DEBUG', None)
        self.shared = set(SHARED)

    def shelvefix(self, *argv, timeout=START_WAIT):
        proc = subprocess.run(
            [sys.executable, '-m', 'shelvefix'] + list(argv),
            stdin=subprocess.DEVNULL, capture_output=True, text=True,
            env=self.env, timeout=timeout)
        return proc.returncode, proc.stdout, proc.stderr

    def start(self, *argv):
        marker = uuid.uuid4().hex
        env = dict(self.env, **{test_interrupt.MARKER: marker})
        proc = subprocess.Popen(
            [sys.executable, '-m', 'shelvefix', 'stress', '--servers', '2',
             '--cycles', '5000', '--server-workers', '1'] + list(argv),
            stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL,
            stderr=subprocess.PIPE, env=env, start_new_session=True)
        self.addCleanup(self._kill, proc, marker)
        return proc, marker

    def _kill(self, proc, marker):
        for pid in [proc.pid] + test_interrupt.processes_with(marker):
            try:
                os.kill(pid, signal.SIGKILL)
            except OSError:
                pass
        proc.wait()

    def listed(self):
        """What the one run file lists (once the servers are up)."""
        names = [n for n in os.listdir(self.runs_dir) if n.endswith('.json')]
        if len(names) != 1:
            return None
        try:
            with open(os.path.join(self.runs_dir, names[0])) as f:
                return json.load(f)
        except ValueError:
            return None

    def kill_mid_run(self, proc, marker, servers=1, also_watchdog=False):
        """SIGKILL the command once it serves; returns what it listed."""
        def serving():
            content = self.listed() or {}
            return len([p for p in content.get('processes', [])
                        if p['what'] == 'gunicorn']) >= servers

        test_interrupt.wait_for(
            lambda: serving() or proc.poll() is not None,
            'the servers to start', START_WAIT)
        self.assertIsNone(proc.poll(), proc.stderr.read().decode()
                          if proc.poll() is not None else '')
        # Cycling under way.
        time.sleep(1.0)
        listed = self.listed()
        if also_watchdog:
            for pid in test_interrupt.processes_with(marker):
                with open('/proc/%d/cmdline' % pid, 'rb') as f:
                    if b'shelvefix.backends.reap' in f.read():
                        os.kill(pid, signal.SIGKILL)
        proc.kill()
        proc.wait()
        self.killed_at = time.monotonic()
        return listed

    def assertNothingLeft(self, listed, marker):
        """Within GONE_WAIT: no process, port, directory of the run."""
        listed_ports = [port for p in listed['processes']
                        for port in p.get('ports', [])]

        def gone():
            return (not test_interrupt.processes_with(marker) and
                    not any(test_mariadb.listening(p)
                            for p in listed_ports) and
                    not set(os.listdir(self.tmp)) - self.shared and
                    not os.listdir(self.runs_dir))

        test_interrupt.wait_for(gone, 'what the run left to go', GONE_WAIT)
        self.addDetailUniqueName('seconds to go', content.text_content(
            '%.2f' % (time.monotonic() - self.killed_at)))
        self.assertEqual([], [d['path'] for d in listed['dirs']
                              if os.path.exists(d['path'])])
        rc, out, err = self.shelvefix('cleanup')
        self.assertEqual(0, rc, out + err)
        self.assertIn('Nothing left by dead runs', out)

    def sigkill(self, *argv, servers=1):
        proc, marker = self.start(*argv)
        listed = self.kill_mid_run(proc, marker, servers)
        self.assertTrue(listed['dirs'])
        self.assertNothingLeft(listed, marker)
        err = proc.stderr.read().decode()
        self.assertNotIn('Traceback', err)
        return listed, err


class SigkillTestCase(_SigkillBase):
    """Each database's servers, and the reaping by the next command."""

    def test_sqlite(self):
        test_server._require(self, 'sqlite')
        self.sigkill('--database', 'sqlite')

    def test_mariadb(self):
        test_server._require(self, 'mariadb')
        listed, _err = self.sigkill('--database', 'mariadb')
        self.assertEqual({'mariadbd', 'gunicorn'},
                         {p['what'] for p in listed['processes']})

    def test_watchdog_killed_too_the_next_run_reaps(self):
        # The OOM killer takes both: the next command (any) reaps, in
        # one line.
        test_server._require(self, 'mariadb')
        proc, marker = self.start('--database', 'mariadb')
        listed = self.kill_mid_run(proc, marker, also_watchdog=True)
        [mariadbd] = [p for p in listed['processes']
                      if p['what'] == 'mariadbd']
        # Started as root it changed user, which drops a parent-death
        # signal: only the reaping stops it.
        time.sleep(1.0)
        if os.geteuid() == 0:
            self.assertTrue(runs.alive(mariadbd['pid'], mariadbd['start']))
        rc, out, err = self.shelvefix('stress', '--backend', 'double',
                                      '--servers', '1', '--cycles', '1')
        self.assertEqual(0, rc, err)
        lines = err.splitlines()
        self.assertEqual(1, len(lines), err)
        self.assertIn('shelvefix: removed what 1 dead run left (pid %d '
                      '(shelvefix stress' % proc.pid, lines[0])
        self.assertIn('mariadbd', lines[0])
        self.assertNothingLeft(listed, marker)

    def test_galera(self):
        test_server._require(self, 'mariadb')
        self.sigkill('--database', 'galera', servers=3)


class SigkillPostgreSQLTestCase(_SigkillBase):
    """The default database, on a private cluster the command starts."""

    def setUp(self):
        super().setUp()
        test_server._require(self, 'postgresql')
        self.data = os.path.join(self.tmp, 'pg')
        self.shared.update({'pg', 'pg.leases', 'pg.lock'})
        self.env.update(SHELVEFIX_PG_DATA=self.data,
                        SHELVEFIX_PG_PORT=str(ports.free_port()))
        self.addCleanup(subprocess.run,
                        ['bash', postgresql.POSTGRESQL_SCRIPT, 'purge'],
                        env=self.env, capture_output=True, timeout=120)

    def test_the_cluster_it_started_is_stopped(self):
        listed, _err = self.sigkill()
        [cluster] = listed['clusters']
        self.assertEqual(self.data, cluster['data'])
        self.assertFalse(test_cluster_lease.postgres_running(self.data))

    def test_kept_with_keep_database(self):
        proc, marker = self.start('--keep-database')
        listed = self.kill_mid_run(proc, marker)
        self.assertEqual([], listed['clusters'])
        test_interrupt.wait_for(lambda: not os.listdir(self.runs_dir),
                                'the watchdog to reap', GONE_WAIT)
        self.assertTrue(test_cluster_lease.postgres_running(self.data))
