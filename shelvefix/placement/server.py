"""Real placement over real HTTP: gunicorn workers on 127.0.0.1.

:class:`PlacementServer` is the deployment-shaped backend for stress and
fault-injection runs: openstack-placement's own WSGI entry point
(``placement.wsgi.api:application``) served by gunicorn with several worker
processes, on a loopback port, backed by PostgreSQL or by a sqlite file.
Unlike :class:`~shelvefix.placement.real.RealPlacementFixture` (one
in-process application, in-memory sqlite), concurrent requests here really
run in different processes against a database that arbitrates them, as in
a deployment.

PostgreSQL comes from ``tools/postgresql.sh start`` in a source checkout
(it installs Debian's package if needed and starts a throwaway cluster on
127.0.0.1:5433); the cluster keeps running between fixtures, and every
fixture creates an empty database of its own in it and drops it at cleanup,
so fixtures are isolated, even in parallel test workers. The sqlite
fallback is a file in the fixture's temporary directory: sqlite serialises
writers, so it shows far less of the concurrency a deployment has.

Clients reach the server with
:class:`~shelvefix.placement.remote.RemotePlacementFixture` and the
``[placement]`` file that the fixture writes (``shelvefix_config``), or
``shelvefix race --backend remote --config-file`` that file.

Needs the ``placement`` extra (openstack-placement, gunicorn, and
psycopg2-binary for PostgreSQL). ``python -m shelvefix.placement.server``
runs one in the foreground until interrupted.
"""

import argparse
import http.client
import importlib.util
import os
import signal
import socket
import subprocess
import sys
import threading
import time
import uuid

import fixtures

DATABASES = ('postgresql', 'sqlite')

#: The project's script for the PostgreSQL cluster; only in a checkout.
POSTGRESQL_SCRIPT = os.path.join(
    os.path.dirname(os.path.abspath(__file__)), os.pardir, os.pardir,
    'tools', 'postgresql.sh')

#: Python packages each database needs, besides placement and gunicorn.
_MODULES = {
    'gunicorn': 'gunicorn',
    'placement': 'openstack-placement',
}
_DB_MODULES = {'postgresql': {'psycopg2': 'psycopg2-binary'}, 'sqlite': {}}

# How long placement-manage (or loading placement) and the PostgreSQL
# script may take; the script may run apt-get, slow on a cold machine.
PLACEMENT_COMMAND_TIMEOUT = 300
POSTGRESQL_TIMEOUT = 900

_GUNICORN_CONF = '''\
# Written by shelvefix.placement.server for one server; see there.
import os

bind = [{bind!r}]
workers = {workers!r}
threads = {threads!r}
timeout = {timeout!r}
preload_app = {preload!r}
graceful_timeout = 5
proc_name = 'shelvefix-placement'
# gunicorn 25.1+ opens a control socket at one fixed path per user: two
# servers at once would fight over it, and nothing here uses it. Older
# versions ignore the unknown name.
control_socket_disable = True

_ready_dir = {ready_dir!r}


def post_worker_init(worker):
    # Without preload each worker loads placement itself, so one answer to
    # GET / proves one worker only: the fixture counts these.
    open(os.path.join(_ready_dir, str(worker.pid)), 'w').close()
'''

_PLACEMENT_CONF = '''\
# Written by shelvefix.placement.server for one server.
[DEFAULT]
debug = {debug}

[api]
auth_strategy = noauth2

[placement_database]
connection = {connection}
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


class ServerUnavailable(Exception):
    """This machine cannot run the server.

    A dependency is missing, or PostgreSQL cannot be installed or started.
    Tests skip on it.
    """


class ServerStartError(RuntimeError):
    """The server was started and failed; the message has its log tail."""


def missing_dependencies(database='sqlite'):
    """Distributions to install before a server with ``database`` can run.

    :returns: a list of PyPI names, empty when nothing is missing
    """
    needed = dict(_MODULES, **_DB_MODULES[database])
    return [dist for module, dist in sorted(needed.items())
            if importlib.util.find_spec(module) is None]


def write_shelvefix_config(path, url, token='admin'):
    """Write a shelvefix ``[placement]`` section for a noauth2 placement.

    The file is what ``--config-file`` expects, e.g. ``shelvefix race
    --backend remote --config-file PATH``.

    :returns: ``path``
    """
    with open(path, 'w') as f:
        f.write(_SHELVEFIX_CONF.format(token=token, url=url))
    return path


def ensure_postgresql(script=None, timeout=POSTGRESQL_TIMEOUT):
    """Start the project's PostgreSQL cluster (installing it if needed).

    :param script: the cluster script (default: ``$SHELVEFIX_POSTGRESQL_
        SCRIPT`` or the checkout's ``tools/postgresql.sh``)
    :returns: the SQLAlchemy URL of its ``placement`` database
    :raises ServerUnavailable: no script, or it failed (not root, no
        apt-get, port taken...), with the script's own error output
    """
    script = (script or os.environ.get('SHELVEFIX_POSTGRESQL_SCRIPT') or
              POSTGRESQL_SCRIPT)
    script = os.path.normpath(script)
    if not os.path.isfile(script):
        raise ServerUnavailable(
            'no %s: PostgreSQL is started by the source checkout\'s script '
            '(or pass db_url)' % script)
    try:
        proc = subprocess.run(
            ['bash', script, 'start'], stdin=subprocess.DEVNULL,
            capture_output=True, text=True, timeout=timeout)
    except subprocess.TimeoutExpired:
        raise ServerUnavailable('%s start took more than %d s'
                                % (script, timeout))
    lines = proc.stdout.split()
    if proc.returncode != 0 or not lines:
        raise ServerUnavailable('%s start failed (exit %d): %s' % (
            script, proc.returncode, proc.stderr.strip()[-2000:]))
    # The URL is the last thing it prints on stdout.
    return lines[-1]


class PostgreSQLDatabase(fixtures.Fixture):
    """An empty database of its own in the cluster at ``admin_url``.

    Creating one per server (rather than emptying a shared one) lets
    servers run side by side, from parallel test workers too; it is dropped
    at cleanup, connections and all.

    :param admin_url: the SQLAlchemy URL of a database whose role may
        create databases (what :func:`ensure_postgresql` returns)

    After setUp, ``name`` is the new database's name and ``url`` its URL.
    """

    def __init__(self, admin_url):
        super().__init__()
        self.admin_url = admin_url

    def _connect(self):
        import psycopg2
        from sqlalchemy.engine import url as sa_url

        url = sa_url.make_url(self.admin_url)
        conn = psycopg2.connect(
            host=url.host, port=url.port, user=url.username,
            password=url.password, dbname=url.database, connect_timeout=10)
        # CREATE/DROP DATABASE cannot run inside a transaction.
        conn.autocommit = True
        return conn, url

    def _execute(self, sql):
        conn, url = self._connect()
        try:
            with conn.cursor() as cur:
                cur.execute(sql)
        finally:
            conn.close()
        return url

    def _setUp(self):
        # Random, so never quoted wrongly nor shared.
        self.name = 'placement_%s' % uuid.uuid4().hex[:16]
        url = self._execute('CREATE DATABASE %s' % self.name)
        # WITH (FORCE): a server killed uncleanly may leave sessions behind.
        self.addCleanup(self._execute,
                        'DROP DATABASE IF EXISTS %s WITH (FORCE)' % self.name)
        self.url = url.set(database=self.name).render_as_string(
            hide_password=False)


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


def _tail(path, lines=30):
    try:
        with open(path, errors='replace') as f:
            return ''.join(f.readlines()[-lines:])
    except OSError:
        return ''


class PlacementServer(fixtures.Fixture):
    """openstack-placement under gunicorn on 127.0.0.1.

    :param database: ``'postgresql'`` or ``'sqlite'`` (a file)
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

    After setUp:

    :ivar url: the endpoint, ``http://127.0.0.1:PORT``
    :ivar port: the port
    :ivar database: ``'postgresql'`` or ``'sqlite'`` (the dialect of
        ``db_url`` when one was given)
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
    :class:`ServerUnavailable` when a dependency is missing or PostgreSQL
    cannot be had, :class:`ServerStartError` when db sync or gunicorn
    failed (with their output).
    """

    def __init__(self, database='postgresql', workers=2, port=0, db_url=None,
                 threads=1, timeout=60, start_timeout=60, debug=False,
                 preload=True):
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
        self.url = self.port = self.db_url = self.pid = None
        self.timings = {}

    def _setUp(self):
        if self._db_url is not None:
            self.database = self._db_url.split(':', 1)[0].split('+')[0]
        missing = missing_dependencies(
            self.database if self.database in DATABASES else 'sqlite')
        if missing:
            raise ServerUnavailable(
                'the placement server needs %s: pip install '
                '"shelvefix[placement]"' % ', '.join(missing))
        self.config_dir = self.useFixture(fixtures.TempDir()).path
        self.log_path = os.path.join(self.config_dir, 'server.log')
        # Listening first: a port that is taken fails at once, not after
        # the database work.
        sock = self._listen()
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
                connection=self.db_url, debug=self._debug))

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
        self._start_gunicorn(sock)
        self.timings['server'] = time.monotonic() - started

        self.shelvefix_config = write_shelvefix_config(
            os.path.join(self.config_dir, 'shelvefix.conf'), self.url)

    def _prepare_database(self):
        if self._db_url is not None:
            return self._db_url
        if self.database == 'sqlite':
            # Four slashes: sqlite:/// and an absolute path.
            return 'sqlite:///%s' % os.path.join(self.config_dir,
                                                 'placement.db')
        # Unavailable (skip) if the cluster cannot be had at all; once it
        # runs, failing to create a database is a real error.
        admin_url = ensure_postgresql()
        return self.useFixture(PostgreSQLDatabase(admin_url)).url

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
            raise ServerStartError('%s took more than %d s'
                                   % (what, PLACEMENT_COMMAND_TIMEOUT))
        if proc.returncode != 0:
            raise ServerStartError(
                '%s failed (exit %d) on %s:\n%s'
                % (what, proc.returncode, self.db_url,
                   (proc.stdout + proc.stderr)[-3000:]))

    def _listen(self):
        # The fixture binds the socket and hands gunicorn its descriptor
        # (fd://): a free port found by binding and closing could be taken
        # by someone else before gunicorn binds it again.
        sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
        try:
            sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
            sock.bind(('127.0.0.1', self._port))
            sock.listen(128)
        except OSError as e:
            sock.close()
            raise ServerStartError('cannot listen on 127.0.0.1:%d: %s'
                                   % (self._port, e)) from e
        return sock

    def _start_gunicorn(self, sock):
        ready_dir = os.path.join(self.config_dir, 'ready')
        os.mkdir(ready_dir)
        try:
            gunicorn_config = os.path.join(self.config_dir,
                                           'gunicorn.conf.py')
            with open(gunicorn_config, 'w') as f:
                f.write(_GUNICORN_CONF.format(
                    bind='fd://%d' % sock.fileno(), workers=self.workers,
                    threads=self.threads, timeout=self._timeout,
                    preload=self._preload, ready_dir=ready_dir))
            with open(self.log_path, 'ab') as log:
                # The interpreter's own gunicorn: PATH does not matter.
                # A session of its own, so that cleanup can kill the
                # workers too if the master does not stop them.
                self._proc = subprocess.Popen(
                    [sys.executable, '-m', 'gunicorn', '--config',
                     gunicorn_config, 'placement.wsgi.api:application'],
                    stdin=subprocess.DEVNULL, stdout=log,
                    stderr=subprocess.STDOUT, env=self._env(),
                    cwd=self.config_dir,
                    pass_fds=[sock.fileno()], start_new_session=True)
        finally:
            # gunicorn has its own copy; ours would keep the port open
            # after gunicorn has stopped.
            sock.close()
        self.pid = self._proc.pid
        self.addCleanup(self._stop)
        self._wait_ready(ready_dir)

    def _wait_ready(self, ready_dir):
        deadline = time.monotonic() + self._start_timeout
        while True:
            code = self._proc.poll()
            if code is not None:
                raise ServerStartError(
                    'gunicorn exited with %d before placement answered on '
                    '%s; its log (%s) ends:\n%s'
                    % (code, self.url, self.log_path, _tail(self.log_path)))
            if (len(os.listdir(ready_dir)) >= self.workers and
                    self._root_status() == 200):
                return
            if time.monotonic() > deadline:
                raise ServerStartError(
                    'placement did not answer GET %s/ with 200 from %d '
                    'workers within %d s; the log (%s) ends:\n%s'
                    % (self.url, self.workers, self._start_timeout,
                       self.log_path, _tail(self.log_path)))
            time.sleep(0.05)

    def _root_status(self):
        # http.client: no proxy settings, no retries, just this request.
        conn = http.client.HTTPConnection('127.0.0.1', self.port, timeout=5)
        try:
            conn.request('GET', '/')
            return conn.getresponse().status
        except (OSError, http.client.HTTPException):
            return None
        finally:
            conn.close()

    def _stop(self):
        if self._proc.poll() is None:
            # SIGINT is gunicorn's quick shutdown: workers are told to quit
            # at once rather than finish what they are doing.
            self._proc.send_signal(signal.SIGINT)
            try:
                self._proc.wait(10)
            except subprocess.TimeoutExpired:
                pass
        try:
            # Whatever is left of the session, workers included.
            os.killpg(self._proc.pid, signal.SIGKILL)
        except OSError:
            pass
        self._proc.wait()


def main(argv=None, out=None):
    """Run a server until SIGINT or SIGTERM; print its URL and config."""
    parser = argparse.ArgumentParser(
        prog='python -m shelvefix.placement.server',
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
        debug=args.debug)
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
                          server.url, server.db_url, server.shelvefix_config,
                          server.log_path,
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
