"""Real placement under gunicorn on 127.0.0.1, over PostgreSQL and sqlite.

The servers are real: openstack-placement's WSGI entry point in gunicorn
worker processes, reached over HTTP by
:class:`~shelvefix.backends.remote.RemotePlacementFixture` configured from
the ``[placement]`` file the server fixture writes, exactly as ``shelvefix
race --backend remote --config-file`` would be.

The tests skip, saying why, when gunicorn, openstack-placement or psycopg2
are not installed or PostgreSQL cannot be installed or started (not root,
no apt-get). ``SHELVEFIX_REQUIRE_PLACEMENT_SERVER=1`` turns those skips
into failures, for a CI that must not lose these tests silently.
"""

import io
import os
import re
import signal
import socket
import threading
from unittest import mock
import urllib.request
import uuid

import fixtures
from testtools import content

from shelvefix import backends
from shelvefix.backends import gunicorn
from shelvefix.backends import mariadb
from shelvefix.backends import postgresql
from shelvefix.backends import remote
from shelvefix.backends import server
from shelvefix import conf as shelvefix_conf
from shelvefix.placement import deploy
from shelvefix.tests import base
from shelvefix.tests.functional import wsgi_server

INVENTORY = {'VCPU': 8, 'MEMORY_MB': 4096}
RESOURCES = {'VCPU': 2, 'MEMORY_MB': 512}
# placement's request log line: "<date> <time> <pid> INFO
# placement.requestlog ...".
REQUEST_LOG = re.compile(r' (\d+) INFO placement\.requestlog ')


def _unavailable(test, reason):
    if os.environ.get('SHELVEFIX_REQUIRE_PLACEMENT_SERVER') == '1':
        test.fail('placement server required but unavailable: %s' % reason)
    test.skipTest(reason)


def _require(test, database):
    missing = server.missing_dependencies(database)
    if missing:
        _unavailable(test, 'needs %s (pip install "shelvefix[placement]")'
                     % ', '.join(missing))
    if database == 'postgresql':
        try:
            return postgresql.ensure_postgresql()
        except backends.BackendUnavailable as e:
            _unavailable(test, 'no PostgreSQL: %s' % e)
    if database == 'mariadb':
        try:
            mariadb.ensure_installed()
        except backends.BackendUnavailable as e:
            _unavailable(test, 'no MariaDB: %s' % e)


def _first_error(multiple):
    # fixtures raises MultipleExceptions: (setUp's error, ..., SetupError).
    return multiple.args[0][1]


class PlacementServerTestCase(base.TestCase):
    """A provider and an allocation through real HTTP and real workers."""

    def setUp(self):
        super(PlacementServerTestCase, self).setUp()
        self.running = []
        self.addCleanup(self._stop_all)

    def _stop_all(self):
        while self.running:
            self.running.pop().cleanUp()

    def _serve(self, database, **kwargs):
        _require(self, database)
        placement_server = server.PlacementServer(database=database,
                                                  workers=2, **kwargs)
        # Not useFixture: a fixture is cleaned up once only, and the tests
        # stop their server themselves to check that it stops.
        placement_server.setUp()
        self.running.append(placement_server)
        self.addDetail('timings', content.text_content(
            repr(placement_server.timings)))
        return placement_server

    def _ghosts(self, placement_server):
        observer = placement_server.observer()
        self.addCleanup(observer.close)
        return observer.ghosts()

    def _client(self, placement_server):
        conf = shelvefix_conf.load_config_files(
            [placement_server.shelvefix_config])
        return self.useFixture(remote.RemotePlacementFixture(conf))

    def _allocate(self, placement):
        rp = placement.create_provider('host-%s' % uuid.uuid4().hex[:8],
                                       inventory=INVENTORY)
        consumer = str(uuid.uuid4())
        resp = placement.adapter.put(
            '/allocations/%s' % consumer, microversion='1.28',
            json={'allocations': {rp: {'resources': RESOURCES}},
                  'consumer_generation': None,
                  'project_id': str(uuid.uuid4()),
                  'user_id': str(uuid.uuid4())})
        self.assertEqual(204, resp.status_code, resp.text)
        resp = placement.adapter.get('/allocations/%s' % consumer,
                                     microversion='1.28')
        self.assertEqual(200, resp.status_code, resp.text)
        body = resp.json()
        self.assertEqual(1, body['consumer_generation'])
        self.assertEqual({rp: {'generation': 2, 'resources': RESOURCES}},
                         body['allocations'])
        resp = placement.adapter.get('/resource_providers/%s/usages' % rp,
                                     microversion='1.28')
        self.assertEqual(RESOURCES, resp.json()['usages'])
        # The remote fixture's transport logs calls as for the double.
        self.assertEqual([204], [c.status for c in placement.calls_for(
            'PUT', '^/allocations/')])
        return rp

    def _assert_both_workers_serve(self, placement_server, placement):
        # Two requests in flight at once need two sync workers: one is
        # busy with the first. Both pids must show in placement's log.
        def get():
            placement.adapter.get('/resource_providers',
                                  microversion='1.28')

        pids = set()
        for _attempt in range(20):
            threads = [threading.Thread(target=get) for _i in range(4)]
            for thread in threads:
                thread.start()
            for thread in threads:
                thread.join()
            with open(placement_server.log_path) as f:
                pids = set(REQUEST_LOG.findall(f.read()))
            if len(pids) >= 2:
                break
        self.assertEqual(2, len(pids), 'requests served by %s' % pids)

    def _assert_stopped(self, placement_server):
        pid, url = placement_server.pid, placement_server.url
        self.running.remove(placement_server)
        placement_server.cleanUp()
        self.assertRaises(ProcessLookupError, os.kill, pid, 0)
        self.assertRaises(OSError, urllib.request.urlopen, url, timeout=5)
        self.assertFalse(os.path.exists(placement_server.config_dir))

    def test_sqlite(self):
        # Without preload, as devstack's uwsgi runs placement: each worker
        # loads it (after the fixture has loaded it once, see there).
        placement_server = self._serve('sqlite', preload=False)
        self.assertEqual('sqlite', placement_server.database)
        self.assertTrue(placement_server.db_url.startswith(
            'sqlite:///' + placement_server.config_dir))
        self.assertEqual(2, placement_server.workers)
        placement = self._client(placement_server)
        self._allocate(placement)
        self._assert_both_workers_serve(placement_server, placement)
        self._assert_stopped(placement_server)

    def test_postgresql(self):
        placement_server = self._serve('postgresql')
        self.assertEqual('postgresql', placement_server.database)
        self.assertRegex(
            placement_server.db_url,
            r'^postgresql\+psycopg2://placement:placement@127\.0\.0\.1:'
            r'\d+/placement_[0-9a-f]{16}$')
        placement = self._client(placement_server)
        self._allocate(placement)
        self._assert_both_workers_serve(placement_server, placement)
        self._assert_stopped(placement_server)

    def test_mariadb(self):
        # A MariaDB server of its own, stopped with it.
        placement_server = self._serve('mariadb')
        self.assertEqual('mariadb', placement_server.database)
        self.assertRegex(
            placement_server.db_url,
            r'^mysql\+pymysql://placement:placement@127\.0\.0\.1:'
            r'\d+/placement_[0-9a-f]{16}\?charset=utf8mb4$')
        before = placement_server.counters()
        self.assertEqual({'deadlocks', 'lock waits', 'placement retries',
                          'placement gave up'}, set(before))
        placement = self._client(placement_server)
        self._allocate(placement)
        self._assert_both_workers_serve(placement_server, placement)
        self.assertEqual(set(), self._ghosts(placement_server))
        database = placement_server.mariadb
        pid, directory = database.pid, database.directory
        self._assert_stopped(placement_server)
        self.assertRaises(ProcessLookupError, os.kill, pid, 0)
        self.assertFalse(os.path.exists(directory))

    def test_ghost_consumers_are_counted(self):
        placement_server = self._serve('sqlite')
        import sqlalchemy
        engine = sqlalchemy.create_engine(placement_server.db_url)
        self.addCleanup(engine.dispose)
        placement = self._client(placement_server)
        self._allocate(placement)
        self.assertEqual(set(), self._ghosts(placement_server))
        # A consumer record whose allocations went (a DELETE that did not
        # get to its consumer clean-up).
        with engine.begin() as conn:
            conn.execute(sqlalchemy.text('DELETE FROM allocations'))
        self.assertEqual(1, len(self._ghosts(placement_server)))
        # sqlite has no counters of its own; placement's retries are read
        # from the server's log, which logs oslo.db's.
        self.assertEqual({'placement retries': 0, 'placement gave up': 0},
                         placement_server.counters())
        with open(placement_server.placement_config) as f:
            self.assertIn('oslo_db.api=DEBUG', f.read())


class PostgreSQLDatabaseTestCase(base.TestCase):
    """Each server gets an empty database of its own, dropped after."""

    def test_isolated_and_dropped(self):
        admin_url = _require(self, 'postgresql')
        # Imported here: without the placement extra, the other tests of
        # this module must still load, and skip.
        import psycopg2
        from sqlalchemy.engine import url as sa_url

        admin = sa_url.make_url(admin_url)

        def connect(dbname):
            return psycopg2.connect(
                host=admin.host, port=admin.port, user=admin.username,
                password=admin.password, dbname=dbname)

        def databases():
            conn = connect(admin.database)
            try:
                with conn.cursor() as cur:
                    cur.execute('SELECT datname FROM pg_database')
                    return {row[0] for row in cur.fetchall()}
            finally:
                conn.close()

        first = postgresql.PostgreSQLDatabase(admin_url)
        second = postgresql.PostgreSQLDatabase(admin_url)
        with first, second:
            self.assertNotEqual(first.name, second.name)
            self.assertLessEqual({first.name, second.name}, databases())
            # An open connection does not keep a database from going.
            self.addCleanup(connect(first.name).close)
        self.assertEqual(set(), {first.name, second.name} & databases())


class PlacementServerErrorsTestCase(base.TestCase):
    """What the fixture says when it cannot serve."""

    def test_unknown_database(self):
        self.assertRaises(ValueError, server.PlacementServer,
                          database='mysql')

    def test_missing_dependency(self):
        with mock.patch('importlib.util.find_spec', return_value=None):
            self.assertEqual(
                ['gunicorn', 'openstack-placement', 'psycopg2-binary'],
                server.missing_dependencies('postgresql'))
            e = self.assertRaises(fixtures.MultipleExceptions, self.useFixture,
                                  server.PlacementServer(database='sqlite'))
        self.assertIsInstance(_first_error(e), backends.BackendUnavailable)
        self.assertIn('gunicorn, openstack-placement', str(_first_error(e)))

    def test_postgresql_script_fails(self):
        script = os.path.join(self.useFixture(fixtures.TempDir()).path,
                              'postgresql.sh')
        with open(script, 'w') as f:
            f.write('echo "only root can install it" >&2\nexit 1\n')
        e = self.assertRaises(backends.BackendUnavailable,
                              postgresql.ensure_postgresql, script)
        self.assertIn('failed (exit 1): only root can install it', str(e))
        e = self.assertRaises(backends.BackendUnavailable,
                              postgresql.ensure_postgresql,
                              script + '.missing')
        self.assertIn('postgresql.sh.missing', str(e))

    def test_port_in_use(self):
        _require(self, 'sqlite')
        taken = socket.socket()
        self.addCleanup(taken.close)
        taken.bind(('127.0.0.1', 0))
        taken.listen(1)
        port = taken.getsockname()[1]
        e = self.assertRaises(
            fixtures.MultipleExceptions, self.useFixture,
            server.PlacementServer(database='sqlite', port=port))
        self.assertIsInstance(_first_error(e), backends.ServerStartError)
        self.assertIn('cannot listen on 127.0.0.1:%d' % port,
                      str(_first_error(e)))

    def test_gunicorn_fails(self):
        _require(self, 'sqlite')
        # No database work, and a gunicorn configuration that cannot load.
        self.useFixture(fixtures.MockPatchObject(
            server.PlacementServer, '_run_placement'))
        self.useFixture(fixtures.MockPatchObject(
            gunicorn, '_CONFIG', 'raise RuntimeError("broken conf")\n'))
        e = self.assertRaises(
            fixtures.MultipleExceptions, self.useFixture,
            server.PlacementServer(database='sqlite'))
        error = _first_error(e)
        self.assertIsInstance(error, backends.ServerStartError)
        self.assertIn('gunicorn exited with', str(error))
        self.assertIn('broken conf', str(error))

    def test_start_timeout(self):
        _require(self, 'sqlite')
        self.useFixture(fixtures.MockPatchObject(
            server.PlacementServer, '_run_placement'))
        placement_server = server.PlacementServer(database='sqlite',
                                                  start_timeout=0)
        e = self.assertRaises(fixtures.MultipleExceptions, self.useFixture,
                              placement_server)
        self.assertIsInstance(_first_error(e), backends.ServerStartError)
        self.assertIn('did not answer GET', str(_first_error(e)))
        # setUp's failure cleaned up: gunicorn is gone.
        self.assertRaises(ProcessLookupError, os.kill, placement_server.pid,
                          0)

    def test_db_sync_fails(self):
        _require(self, 'sqlite')
        e = self.assertRaises(
            fixtures.MultipleExceptions, self.useFixture,
            server.PlacementServer(
                db_url='sqlite:////nonexistent-%s/placement.db'
                % uuid.uuid4().hex))
        error = _first_error(e)
        self.assertIsInstance(error, backends.ServerStartError)
        self.assertIn('placement-manage db sync failed', str(error))
        self.assertIn('unable to open database file', str(error))

    def test_shelvefix_config(self):
        path = os.path.join(self.useFixture(fixtures.TempDir()).path,
                            'shelvefix.conf')
        double = self.useFixture(
            wsgi_server.WSGIServerFixture(deploy.PlacementApp()))
        server.write_shelvefix_config(path, double.url)
        conf = shelvefix_conf.load_config_files([path])
        self.assertEqual('admin_token', conf.placement.auth_type)
        self.assertEqual(double.url, conf.placement.endpoint_override)
        with remote.RemotePlacementFixture(conf) as placement:
            self.assertEqual(double.url, placement.endpoint)
            self.assertEqual(200, placement.adapter.get('/').status_code)


class MainTestCase(base.TestCase):
    """``python -m shelvefix.backends.server`` serves until SIGTERM."""

    def test_serves_until_sigterm(self):
        _require(self, 'sqlite')
        out = io.StringIO()
        answered = []
        returned = threading.Event()

        def client():
            while 'timings:' not in out.getvalue():
                if returned.wait(0.1):
                    return
            try:
                url = re.search(r'^url: (\S+)$', out.getvalue(),
                                re.M).group(1)
                with urllib.request.urlopen(url, timeout=10) as resp:
                    answered.append(resp.status)
            finally:
                # main() has its own handler installed by now; this is what
                # stops it, whatever happened above.
                os.kill(os.getpid(), signal.SIGTERM)

        thread = threading.Thread(target=client)
        thread.start()
        try:
            rc = server.main(['--database', 'sqlite', '--workers', '1'], out)
        finally:
            returned.set()
            thread.join()
        self.assertEqual(0, rc, out.getvalue())
        self.assertEqual([200], answered)
        self.assertIn('config-file: ', out.getvalue())
