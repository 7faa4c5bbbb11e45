"""Real placement over real HTTP: gunicorn workers on 127.0.0.1.

:class:`PlacementServer` is the deployment-shaped backend for stress and
fault-injection runs: openstack-placement's own WSGI entry point
(``placement.wsgi.api:application``) served by gunicorn with several worker
processes, on a loopback port, backed by PostgreSQL, MariaDB or a sqlite file.
Unlike :class:`~shelvefix.backends.real.RealPlacementFixture` (one
in-process application, in-memory sqlite), concurrent requests here really
run in different processes against a database that arbitrates them, as in
a deployment.

PostgreSQL comes from :mod:`~shelvefix.backends.postgresql` (a throwaway
cluster on 127.0.0.1:5433, Debian's package installed if needed); every
fixture creates an empty database of its own in it and drops it at
cleanup, so fixtures are isolated, even in parallel test workers. The
cluster keeps running between fixtures, unless ``stop_cluster`` (a
user's command): the fixture that started it then stops it once no one
else uses it (:class:`~shelvefix.backends.postgresql.ClusterLease`).
MariaDB, where most deployments run placement, is a private server per
fixture (:mod:`~shelvefix.backends.mariadb`, Debian's package installed if
needed), reached through PyMySQL and stopped with the fixture. The sqlite
fallback is a file in the fixture's temporary directory: sqlite serialises
writers, so it shows far less of the concurrency a deployment has.

Clients use the ``[placement]`` file the fixture writes
(``shelvefix_config``) with :class:`~shelvefix.backends.remote.
RemotePlacementFixture` or ``--backend remote --config-file``. Needs the
``placement`` extra; ``python -m shelvefix.backends.server`` runs one in
the foreground until interrupted.
"""

import argparse
import importlib.util
import os
import signal
import subprocess
import sys
import threading
import time

import fixtures
from oslo_log import log

from shelvefix import backends
from shelvefix.backends import database
from shelvefix.backends import gunicorn
from shelvefix.backends import mariadb
from shelvefix.backends import observe
from shelvefix.backends import postgresql
from shelvefix.backends import runs

DATABASES = ('postgresql', 'mariadb', 'sqlite')
#: The database of each SQLAlchemy dialect a ``db_url`` may name.
DIALECTS = {'postgresql': 'postgresql', 'mysql': 'mariadb',
            'mariadb': 'mariadb', 'sqlite': 'sqlite'}
#: What gunicorn serves: placement's own application, prepared for forked
#: workers (see that module).
APPLICATION = 'shelvefix.backends.placement_wsgi:application'

#: Python packages each database needs, besides placement and gunicorn.
_MODULES = {
    'gunicorn': 'gunicorn',
    'placement': 'openstack-placement',
}
_DB_MODULES = {'postgresql': {'psycopg2': 'psycopg2-binary'},
               'mariadb': {'pymysql': 'PyMySQL'}, 'sqlite': {}}

# How long placement-manage (or loading placement) may take.
PLACEMENT_COMMAND_TIMEOUT = 300

_PLACEMENT_CONF = '''\
# Written by shelvefix.backends.server for one server.
[DEFAULT]
debug = {debug}
# oslo.db's retries of a deadlock (or a lost connection) are logged at
# debug only; counted in the log (shelvefix.backends.observe.retries).
default_log_levels = {log_levels}

[api]
auth_strategy = noauth2

[placement_database]
{connection}
# placement-manage db sync has migrated it before the workers start; a
# migration per worker would only race.
sync_on_startup = False
'''

_SHELVEFIX_CONF = '''\
# A placement with auth_strategy = noauth2: any token is accepted and
# "admin" gets the admin role.
[placement]
auth_type = admin_token
token = {token}
endpoint_override = {url}
'''


def missing_dependencies(database='sqlite'):
    """Distributions to install before a server with ``database`` can run.

    :returns: a list of PyPI names, empty when nothing is missing
    """
    needed = dict(_MODULES, **_DB_MODULES[database])
    return [dist for module, dist in sorted(needed.items())
            if importlib.util.find_spec(module) is None]


def write_shelvefix_config(path, url, token='admin'):
    """Write the ``[placement]`` ``--config-file`` of a noauth2 placement.

    :returns: ``path``
    """
    with open(path, 'w') as f:
        f.write(_SHELVEFIX_CONF.format(token=token, url=url))
    return path


def _placement_manage():
    # The console script of the placement in this interpreter's
    # environment, found beside it so that PATH does not matter; the
    # interpreter itself when the script is not there (e.g. a --user
    # install).
    script = os.path.join(os.path.dirname(sys.executable), 'placement-manage')
    if os.access(script, os.X_OK):
        return [script]
    return [sys.executable, '-c',
            'import sys; from placement.cmd import manage; '
            'sys.exit(manage.main())']


class PlacementServer(fixtures.Fixture):
    """openstack-placement under gunicorn on 127.0.0.1.

    :param database: ``'postgresql'`` (the project's cluster, shared),
        ``'mariadb'`` (a private server of this one's, see
        :mod:`~shelvefix.backends.mariadb`) or ``'sqlite'`` (a file)
    :param workers: gunicorn worker processes
    :param port: the port to listen on; 0 picks a free one
    :param db_url: an existing SQLAlchemy URL to use instead (it is
        migrated but neither created nor dropped; ``database`` is ignored)
    :param threads: threads per worker (gunicorn's gthread worker when
        more than 1)
    :param timeout: gunicorn's worker timeout, seconds
    :param start_timeout: how long the server may take to answer
    :param debug: placement's debug logging, in :attr:`log_path`
    :param preload: load placement once in gunicorn's master and fork the
        workers from it (fast: one load, whatever the number of workers);
        False loads it in every worker, as devstack's uwsgi (lazy-apps)
        does, which takes a load per worker on the machine's cores. Either
        way every worker opens its own database connections.
    :param stop_cluster: PostgreSQL: if this server's set-up started the
        cluster, stop it once no one uses it (a user's command; the tests
        keep it warm)

    After setUp:

    :ivar url: the endpoint, ``http://127.0.0.1:PORT``
    :ivar port: the port
    :ivar database: ``'postgresql'``, ``'mariadb'`` or ``'sqlite'`` (from
        the dialect of ``db_url`` when one was given)
    :ivar mariadb: the :class:`~shelvefix.backends.mariadb.MariaDBServer`
        started for this server, or None
    :ivar db_url: the SQLAlchemy URL placement uses
    :ivar workers: the number of worker processes
    :ivar pid: the gunicorn master's pid
    :ivar config_dir: the temporary directory of the configuration files
    :ivar placement_config: placement's ``placement.conf``
    :ivar shelvefix_config: a shelvefix ``[placement]`` file for this server
    :ivar log_path: gunicorn's and placement's output
    :ivar timings: seconds taken by ``'database'`` (PostgreSQL start and
        database creation), ``'db_sync'`` and ``'server'`` (gunicorn start
        until every worker has loaded placement and ``GET /`` answers)

    setUp fails as every fixture's does, with ``fixtures.
    MultipleExceptions`` whose first exception is what went wrong:
    :class:`~shelvefix.backends.BackendUnavailable` when a dependency is
    missing or PostgreSQL cannot be had,
    :class:`~shelvefix.backends.ServerStartError` when db sync or gunicorn
    failed (with their output).
    """

    def __init__(self, database='postgresql', workers=2, port=0, db_url=None,
                 threads=1, timeout=60, start_timeout=60, debug=False,
                 preload=True, stop_cluster=False):
        super().__init__()
        if db_url is None and database not in DATABASES:
            raise ValueError('database must be one of %s, not %r'
                             % (', '.join(DATABASES), database))
        if workers < 1 or threads < 1:
            raise ValueError('workers and threads must be at least 1')
        self.database = database
        self.workers = workers
        self.threads = threads
        self._port = port
        self._db_url = db_url
        self._timeout = timeout
        self._start_timeout = start_timeout
        self._debug = debug
        self._preload = preload
        self.url = self.port = self.db_url = self._gunicorn = None
        self.mariadb = self.cluster = None
        self._stop_cluster = stop_cluster
        self.timings = {}

    def _setUp(self):
        if self._db_url is not None:
            dialect = self._db_url.split(':', 1)[0].split('+')[0]
            self.database = DIALECTS.get(dialect, dialect)
        missing = missing_dependencies(
            self.database if self.database in DATABASES else 'sqlite')
        if missing:
            raise backends.BackendUnavailable(
                'the placement server needs %s: pip install '
                '"shelvefix[placement]"' % ', '.join(missing))
        self.config_dir = runs.temp_dir(self, 'shelvefix-server-')
        self.log_path = os.path.join(self.config_dir, 'server.log')
        # Listening first: a port that is taken fails at once, not after
        # the database work.
        sock = gunicorn.listen(self._port)
        self.addCleanup(sock.close)
        self.port = sock.getsockname()[1]
        self.url = 'http://127.0.0.1:%d' % self.port

        started = time.monotonic()
        self.db_url = self._prepare_database()
        self.timings['database'] = time.monotonic() - started

        self.placement_config = os.path.join(self.config_dir,
                                             'placement.conf')
        with open(self.placement_config, 'w') as f:
            f.write(_PLACEMENT_CONF.format(
                connection=database.placement_options(self.db_url),
                debug=self._debug,
                log_levels=','.join(log.get_default_log_levels() +
                                    [observe.RETRY_LOGGER + '=DEBUG'])))

        started = time.monotonic()
        self._run_placement('placement-manage db sync', _placement_manage() + [
            '--config-file', self.placement_config, 'db', 'sync'])
        self.timings['db_sync'] = time.monotonic() - started

        started = time.monotonic()
        if self.database == 'sqlite' and not self._preload:
            # Every placement process fills the traits and resource classes
            # tables when it loads. Workers loading side by side make
            # sqlite fail one of them ("database is locked": both hold a
            # read lock and want to write); PostgreSQL makes one wait and
            # placement ignores the duplicate. Load it once here first so
            # that the workers find nothing to write.
            self._run_placement('loading placement', [
                sys.executable, '-c',
                'from placement import wsgi; wsgi.init_application()'])
        self._gunicorn = gunicorn.GunicornProcess(
            APPLICATION, sock, self.workers,
            self.threads, self._timeout, self._preload, self.config_dir,
            self._env(), self._start_timeout)
        self.addCleanup(self._gunicorn.stop)
        self._gunicorn.start()
        self.timings['server'] = time.monotonic() - started

        self.shelvefix_config = write_shelvefix_config(
            os.path.join(self.config_dir, 'shelvefix.conf'), self.url)

    @property
    def pid(self):
        """The gunicorn master's pid, once it was started."""
        return self._gunicorn.pid if self._gunicorn is not None else None

    def process(self):
        """The gunicorn master's ``Popen`` once started, else None."""
        return self._gunicorn and self._gunicorn.process

    def _prepare_database(self):
        if self._db_url is not None:
            return self._db_url
        if self.database == 'sqlite':
            # Four slashes: sqlite:/// and an absolute path.
            return 'sqlite:///%s' % os.path.join(self.config_dir,
                                                 'placement.db')
        if self.database == 'mariadb':
            # A server of its own, stopped when this one is.
            self.mariadb = self.useFixture(mariadb.MariaDBServer())
            return self.useFixture(mariadb.MariaDBDatabase(
                self.mariadb.admin_url)).url
        # Unavailable (skip) if the cluster cannot be had at all; once it
        # runs, failing to create a database is a real error.
        self.cluster = self.useFixture(postgresql.ClusterLease(
            stop_if_started=self._stop_cluster))
        return self.useFixture(postgresql.PostgreSQLDatabase(
            self.cluster.admin_url)).url

    def counters(self):
        """The database's own conflict counters, as it reports them now.

        ``{'deadlocks': n, 'lock waits': n}`` from MariaDB's global status
        (``Innodb_deadlocks``, ``Innodb_row_lock_waits``), ``{'deadlocks':
        n}`` from PostgreSQL's ``pg_stat_database`` for this server's
        database; none for sqlite and for a ``db_url`` given (its counters
        are not this run's alone); and always placement's own retries
        (:meth:`placement_retries`). Compare two readings.
        """
        counted = self.placement_retries()
        if self._db_url is not None:
            return counted
        if self.mariadb is not None:
            status = self.mariadb.status(['Innodb_deadlocks',
                                          'Innodb_row_lock_waits'])
            counted.update({
                'deadlocks': status.get('Innodb_deadlocks', 0),
                'lock waits': status.get('Innodb_row_lock_waits', 0)})
        elif self.database == 'postgresql':
            counted.update(postgresql.counters(self.db_url))
        return counted

    def placement_retries(self):
        """What placement's workers retried: see :func:`.observe.retries`."""
        return observe.retries(self.log_path)

    def observer(self):
        """An :class:`~.observe.Observer` of its database (close it)."""
        return observe.Observer([self.db_url], names=[self.database])

    def _env(self):
        env = dict(os.environ)
        # placement.wsgi reads <dir>/placement.conf, and nothing else.
        env['OS_PLACEMENT_CONFIG_DIR'] = self.config_dir
        return env

    def _run_placement(self, what, cmd):
        try:
            proc = subprocess.run(
                cmd, stdin=subprocess.DEVNULL, capture_output=True,
                text=True, env=self._env(), timeout=PLACEMENT_COMMAND_TIMEOUT)
        except subprocess.TimeoutExpired:
            raise backends.ServerStartError(
                '%s took more than %d s' % (what, PLACEMENT_COMMAND_TIMEOUT))
        if proc.returncode != 0:
            raise backends.ServerStartError(database.scrub(
                '%s failed (exit %d) on %s:\n%s'
                % (what, proc.returncode, self.db_url,
                   (proc.stdout + proc.stderr)[-3000:]), self.db_url))


def main(argv=None, out=None):
    """Run a server until SIGINT or SIGTERM; print its URL and config."""
    parser = argparse.ArgumentParser(
        prog='python -m shelvefix.backends.server',
        description='Serve openstack-placement with gunicorn on 127.0.0.1 '
                    'until SIGINT or SIGTERM.')
    parser.add_argument('--database', choices=DATABASES,
                        default='postgresql')
    parser.add_argument('--workers', type=int, default=2)
    parser.add_argument('--threads', type=int, default=1)
    parser.add_argument('--port', type=int, default=0,
                        help='default: a free port')
    parser.add_argument('--db-url', help='use this database instead')
    parser.add_argument('--no-preload', dest='preload', action='store_false',
                        help='load placement in every worker')
    parser.add_argument('--debug', action='store_true',
                        help="placement's debug logging, in its log")
    args = parser.parse_args(argv)
    out = out or sys.stdout
    server = PlacementServer(
        database=args.database, workers=args.workers, threads=args.threads,
        port=args.port, db_url=args.db_url, preload=args.preload,
        debug=args.debug, stop_cluster=True)
    stop = threading.Event()
    previous = {signum: signal.signal(signum, lambda *_: stop.set())
                for signum in (signal.SIGINT, signal.SIGTERM)}
    try:
        try:
            server.setUp()
        except fixtures.MultipleExceptions as e:
            # The first is what went wrong, the last fixtures' SetupError.
            sys.stderr.write('%s\n' % e.args[0][1])
            return 1
        try:
            out.write('url: %s\ndatabase: %s\nconfig-file: %s\nlog: %s\n'
                      'timings: %s\n' % (
                          server.url, database.mask_url(server.db_url),
                          server.shelvefix_config, server.log_path,
                          ', '.join('%s %.2f s' % item
                                    for item in server.timings.items())))
            out.flush()
            # A timeout keeps the wait short, so the signal is seen promptly.
            while not stop.wait(1):
                pass
        finally:
            server.cleanUp()
    finally:
        for signum, handler in previous.items():
            signal.signal(signum, handler)
    return 0


if __name__ == '__main__':
    sys.exit(main())
