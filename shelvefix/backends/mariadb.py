"""A private MariaDB server on loopback for the placement server.

:class:`MariaDBServer` is one ``mariadbd`` of its own: Debian's
``mariadb-server`` installed first if it is missing (as root, with
apt-get), a data directory under a new temporary directory, listening on
127.0.0.1 only on a free port (and a socket in that directory), the role
``placement`` allowed to create databases. At cleanup the server is
stopped (SIGTERM; SIGKILL if it has not gone within
:data:`STOP_TIMEOUT`) and its directory removed, so nothing it started
outlives it. :class:`MariaDBDatabase` gives one placement server an empty
database of its own and drops it at cleanup.

Every tool gets ``--defaults-file`` first, so nothing reads ``/etc/mysql``
or ``~/.my.cnf``. Durability is relaxed as for the PostgreSQL cluster
(``innodb_flush_log_at_trx_commit = 2``): the data is disposable.
Placement connects through PyMySQL (``mysql+pymysql://``), as OpenStack's
services do.
"""

import fcntl
import os
import pwd
import shutil
import signal
import subprocess
import tempfile
import time

import fixtures

from shelvefix import backends
from shelvefix.backends import database
from shelvefix.backends import ports
from shelvefix.backends import runs

#: How long apt-get may take on a cold machine.
INSTALL_TIMEOUT = 900
#: Held while one process installs, so that others wait for it.
INSTALL_LOCK = os.path.join(tempfile.gettempdir(), 'shelvefix-apt.lock')
#: How long the server may take to answer after it was started.
START_TIMEOUT = 60.0
#: How long a SIGTERM may take before the server is killed.
STOP_TIMEOUT = 30.0
ROLE = 'placement'
PASSWORD = 'placement'
PACKAGE = 'mariadb-server'
GALERA_PACKAGE = 'galera-4'
GALERA_PROVIDER = '/usr/lib/galera/libgalera_smm.so'

_CONFIG = '''\
# Written by shelvefix.backends.mariadb for one private server.
[mariadbd]
{user}datadir = {datadir}
# Its own: servers sharing /tmp can remove each other's temporary tables
# (two mariadb-install-db at once then fail).
tmpdir = {tmpdir}
socket = {socket}
pid-file = {pid_file}
log-error = {log_error}
port = {port}
bind-address = 127.0.0.1
skip-name-resolve
innodb_buffer_pool_size = 32M
innodb_flush_log_at_trx_commit = 2
performance_schema = OFF
character-set-server = utf8mb4
collation-server = utf8mb4_general_ci
max_connections = 500

{extra}
[client]
socket = {socket}
port = {port}
'''


def _tool(name):
    """The path of a MariaDB program, or None (sbin may be off PATH)."""
    path = shutil.which(name)
    if path:
        return path
    for directory in ('/usr/sbin', '/usr/bin'):
        candidate = os.path.join(directory, name)
        if os.access(candidate, os.X_OK):
            return candidate
    return None


def _installed(packages):
    if not (_tool('mariadbd') and _tool('mariadb-install-db')):
        return False
    if GALERA_PACKAGE in packages:
        return os.path.exists(GALERA_PROVIDER) and bool(_tool('rsync'))
    return True


def ensure_installed(timeout=INSTALL_TIMEOUT, packages=(PACKAGE,)):
    """Install Debian's ``mariadb-server`` unless ``mariadbd`` is there.

    :param packages: what to install; with :data:`GALERA_PACKAGE` also
        ``rsync`` (the state transfers), unless Galera's provider library
        and rsync are there already
    :raises BackendUnavailable: not installed and it cannot be (not root,
        no apt-get, apt-get failed)
    """
    if _installed(packages):
        return
    wanted = list(packages)
    if GALERA_PACKAGE in wanted:
        wanted.append('rsync')
    if os.geteuid() != 0 or not shutil.which('apt-get'):
        raise backends.BackendUnavailable(
            'MariaDB is not installed: apt-get install %s (shelvefix '
            'installs it itself when run as root)' % ' '.join(wanted))
    # Test workers (or two commands) that find it missing at the same time
    # install it one after the other: dpkg takes one at a time and fails
    # the others at once. The second finds it installed.
    with open(INSTALL_LOCK, 'a') as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        try:
            if not _installed(packages):
                _apt_get_install(wanted, timeout)
        finally:
            fcntl.flock(lock, fcntl.LOCK_UN)
    if not _installed(packages):
        raise backends.BackendUnavailable(
            'apt-get installed %s but MariaDB is still missing'
            % ' '.join(wanted))


def _apt_get_install(packages, timeout):
    env = dict(os.environ, DEBIAN_FRONTEND='noninteractive')
    # Another apt-get (not ours) holding dpkg's lock is waited for too.
    wait = ['-o', 'DPkg::Lock::Timeout=%d' % timeout]
    for words in (['update'],
                  ['install', '-y', '--no-install-recommends'] + packages):
        cmd = ['apt-get'] + words
        try:
            proc = subprocess.run(['apt-get'] + wait + words,
                                  stdin=subprocess.DEVNULL, env=env,
                                  capture_output=True, text=True,
                                  timeout=timeout)
        except subprocess.TimeoutExpired:
            raise backends.BackendUnavailable(
                '%s took more than %d s' % (' '.join(cmd), timeout))
        if proc.returncode != 0:
            raise backends.BackendUnavailable('%s failed (exit %d): %s' % (
                ' '.join(cmd), proc.returncode, proc.stderr.strip()[-2000:]))


#: Seconds an administrative connection may wait for the server.
TIMEOUT = 30


def _connect(timeout=TIMEOUT, **kwargs):
    # Bounded both ways: a paused (SIGSTOP) server accepts a connection
    # but never answers.
    import pymysql
    return pymysql.connect(connect_timeout=min(timeout, 10),
                           read_timeout=timeout, write_timeout=timeout,
                           autocommit=True, **kwargs)


class MariaDBServer(fixtures.Fixture):
    """One private ``mariadbd`` on 127.0.0.1, stopped and removed at cleanup.

    :param port: the TCP port (default: a free one)
    :param extra_config: more ``[mariadbd]`` lines (a Galera node's)
    :param install_db: create the system tables (False for a Galera node
        that joins: its state transfer brings them)
    :param start_args: more ``mariadbd`` arguments (``--wsrep-new-cluster``)
    :param ready: None, or a callable the server must satisfy before setUp
        returns, given the server (polled until :data:`START_TIMEOUT`)
    :param create_role: create the ``placement`` role (False where another
        node of a cluster replicates it)
    :param disk_size: None, or the bytes of a file system of the server's
        own for its directory (root only)

    After setUp: ``port``, ``pid``, ``directory`` (the server's own
    temporary directory), ``defaults_file``, ``log_path`` (its error log)
    and ``admin_url``, the SQLAlchemy URL of the ``placement`` role, which
    may create databases.
    """

    def __init__(self, port=None, start_timeout=START_TIMEOUT,
                 extra_config='', install_db=True, start_args=(), ready=None,
                 create_role=True, packages=(PACKAGE,), disk_size=None):
        super().__init__()
        self._disk_size = disk_size
        self._port = port
        self._start_timeout = start_timeout
        self._extra_config = extra_config
        self._install_db = install_db
        self._start_args = tuple(start_args)
        self._ready = ready
        self._create_role = create_role
        self._packages = packages
        self.process = None

    @property
    def pid(self):
        return self.process.pid if self.process is not None else None

    def _setUp(self):
        ensure_installed(packages=self._packages)
        try:
            import pymysql  # noqa: F401
        except ImportError:
            raise backends.BackendUnavailable(
                'placement on MariaDB needs PyMySQL: pip install '
                '"shelvefix[placement]"')
        self.directory = runs.temp_dir(self, 'shelvefix-mariadb-')
        if self._disk_size:
            self._small_disk(self._disk_size)
        self.port = self._port or ports.free_port()
        self.socket = os.path.join(self.directory, 'mariadb.sock')
        self.log_path = os.path.join(self.directory, 'error.log')
        datadir = os.path.join(self.directory, 'data')
        tmpdir = os.path.join(self.directory, 'tmp')
        os.mkdir(datadir)
        os.mkdir(tmpdir)
        user = ''
        if os.geteuid() == 0:
            # mariadbd will not run as root; the package's user owns the
            # tree (and can reach it: mkdtemp makes it 0700).
            user = 'user = mysql\n'
            os.chmod(self.directory, 0o755)
            account = pwd.getpwnam('mysql')
            for path in (self.directory, datadir, tmpdir):
                os.chown(path, account.pw_uid, account.pw_gid)
        self.defaults_file = os.path.join(self.directory, 'my.cnf')
        with open(self.defaults_file, 'w') as f:
            f.write(_CONFIG.format(
                user=user, datadir=datadir, tmpdir=tmpdir,
                socket=self.socket,
                pid_file=os.path.join(self.directory, 'mariadb.pid'),
                log_error=self.log_path, port=self.port,
                extra=self._extra_config))
        if self._install_db:
            self._run([_tool('mariadb-install-db'),
                       '--defaults-file=%s' % self.defaults_file,
                       '--auth-root-authentication-method=normal',
                       '--skip-test-db'], 'mariadb-install-db')
        self.start()
        self.addCleanup(self.stop)
        if self._create_role:
            self._execute(
                "CREATE USER '{role}'@'127.0.0.1' IDENTIFIED BY '{pw}'"
                .format(role=ROLE, pw=PASSWORD),
                "GRANT ALL PRIVILEGES ON *.* TO '{role}'@'127.0.0.1' WITH "
                "GRANT OPTION".format(role=ROLE))
        self.admin_url = ('mysql+pymysql://%s:%s@127.0.0.1:%d/mysql'
                          % (ROLE, PASSWORD, self.port))

    def _small_disk(self, size):
        """Put the server's directory on a file system of ``size`` bytes.

        A ``tmpfs`` of its own, so that filling it (see
        :class:`~shelvefix.backends.galera_faults.DiskFull`) fills no
        other disk; unmounted at cleanup, before the directory goes.

        :raises BackendUnavailable: not root (only root mounts)
        """
        if os.geteuid() != 0:
            raise backends.BackendUnavailable(
                'a node whose disk fills needs a small file system of its '
                'own, and only root can mount one: run as root')
        self._run(['mount', '-t', 'tmpfs', '-o', 'size=%d,mode=0700' % size,
                   'shelvefix-mariadb', self.directory], 'mount')
        self.addCleanup(subprocess.run, ['umount', '--lazy', self.directory],
                        stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
                        timeout=STOP_TIMEOUT)

    def start(self, args=None):
        """Start ``mariadbd`` and wait until it is ready.

        :param args: its extra arguments this time (default: the
            ``start_args`` given)
        """
        self.process = subprocess.Popen(
            [_tool('mariadbd'), '--defaults-file=%s' % self.defaults_file] +
            list(self._start_args if args is None else args),
            stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL, start_new_session=True,
            preexec_fn=runs.death_signal_hook())
        runs.record_process(self.process, 'mariadbd', [self.port])
        self._wait_ready()

    def _run(self, cmd, what):
        try:
            proc = subprocess.run(cmd, stdin=subprocess.DEVNULL,
                                  capture_output=True, text=True,
                                  timeout=120)
        except subprocess.TimeoutExpired:
            raise backends.ServerStartError('%s took more than 120 s' % what)
        if proc.returncode != 0:
            raise backends.ServerStartError('%s failed (exit %d): %s%s' % (
                what, proc.returncode, (proc.stdout + proc.stderr)[-1000:],
                '\nits error log: %s' % self._error_log()))

    def _error_log(self):
        """The server's ``[ERROR]`` lines, else the end of its error log."""
        try:
            with open(self.log_path) as f:
                text = f.read()
        except OSError:
            return ''
        errors = [line for line in text.splitlines() if '[ERROR]' in line]
        return '\n'.join(errors)[-2000:] if errors else text[-2000:]

    def _wait_ready(self, poll_interval=0.1):
        deadline = time.monotonic() + self._start_timeout
        while True:
            if self.process.poll() is not None:
                raise backends.ServerStartError(
                    'mariadbd exited with status %d at start:\n%s'
                    % (self.process.returncode, self._error_log()))
            try:
                _connect(unix_socket=self.socket, user='root').close()
                if self._ready is None or self._ready(self):
                    return
                raise backends.ServerStartError('not ready yet')
            except Exception:
                if time.monotonic() >= deadline:
                    raise backends.ServerStartError(
                        'mariadbd did not answer within %.0f s:\n%s'
                        % (self._start_timeout, self._error_log()))
                time.sleep(poll_interval)

    def _execute(self, *statements, timeout=TIMEOUT):
        conn = _connect(unix_socket=self.socket, user='root',
                        timeout=timeout)
        try:
            with conn.cursor() as cur:
                for statement in statements:
                    cur.execute(statement)
                return cur.fetchall()
        finally:
            conn.close()

    def status(self, names):
        """Global status counters: ``{name: int}`` of those asked for."""
        rows = self._execute('SHOW GLOBAL STATUS')
        wanted = set(names)
        return {name: int(value) for name, value in rows if name in wanted}

    def kill(self, timeout=STOP_TIMEOUT):
        """SIGKILL the server, as a crash would; its data stays."""
        process, self.process = self.process, None
        if process is None:
            return
        if process.poll() is None:
            process.kill()
            process.wait(timeout=timeout)
        runs.forget('processes', pid=process.pid)

    def stop(self, timeout=STOP_TIMEOUT):
        """Stop the server: SIGTERM, then SIGKILL after ``timeout`` s."""
        process, self.process = self.process, None
        if process is None:
            return
        if process.poll() is None:
            process.send_signal(signal.SIGTERM)
            # A paused (SIGSTOP) server acts on its SIGTERM once continued.
            process.send_signal(signal.SIGCONT)
            try:
                process.wait(timeout=timeout)
            except subprocess.TimeoutExpired:
                process.kill()
                process.wait(timeout=timeout)
        # Unlisted only once it is gone: a wait that failed leaves it to
        # the run's watchdog.
        runs.forget('processes', pid=process.pid)


class MariaDBDatabase(database.ScratchDatabase):
    """An empty database of its own on the server at ``admin_url``.

    See :class:`~shelvefix.backends.database.ScratchDatabase`; its URL
    asks PyMySQL for ``utf8mb4``.
    """

    create = 'CREATE DATABASE {name} CHARACTER SET utf8mb4'
    query = {'charset': 'utf8mb4'}

    def connect(self, url):
        return _connect(host=url.host, port=url.port, user=url.username,
                        password=url.password)
