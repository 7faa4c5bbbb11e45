"""A throwaway PostgreSQL on loopback for the placement server.

:func:`ensure_postgresql` starts (installing it first if needed) the
project's own cluster on 127.0.0.1 with ``postgresql.sh`` (beside this
module, so it ships with the package) and returns
the SQLAlchemy URL of a database whose role may create more;
:class:`PostgreSQLDatabase` gives one server an empty database of its own
in that cluster and drops it at cleanup.
"""

import contextlib
import fcntl
import os
import subprocess
import uuid

import fixtures

from shelvefix import backends
from shelvefix.backends import database
from shelvefix.backends import runs

#: The cluster script; it ships with the package (see its header).
POSTGRESQL_SCRIPT = os.path.join(os.path.dirname(os.path.abspath(__file__)),
                                 'postgresql.sh')

# The script may run apt-get, slow on a cold machine.
POSTGRESQL_TIMEOUT = 900
#: What the script says on stderr when it started the server.
STARTED_LINE = 'postgresql.sh: started on '


def script_path(script=None):
    """The path of the cluster script.

    ``script``, else ``$SHELVEFIX_POSTGRESQL_SCRIPT``, else
    :data:`POSTGRESQL_SCRIPT`.

    :raises BackendUnavailable: it is not there
    """
    from_env = os.environ.get('SHELVEFIX_POSTGRESQL_SCRIPT')
    chosen = os.path.normpath(script or from_env or POSTGRESQL_SCRIPT)
    if not os.path.isfile(chosen):
        if not script and from_env:
            # The user's setting is wrong, not the installation.
            raise backends.BackendUnavailable(
                'SHELVEFIX_POSTGRESQL_SCRIPT=%s: no such file (it names '
                'the postgresql.sh that starts the cluster; unset it to '
                'use the packaged one)' % from_env)
        raise backends.BackendUnavailable(
            'no %s: PostgreSQL is started by the source checkout\'s script '
            '(or pass db_url)' % chosen)
    return chosen


def _run(script, command, timeout):
    try:
        return subprocess.run(
            ['bash', script, command], stdin=subprocess.DEVNULL,
            capture_output=True, text=True, timeout=timeout)
    except subprocess.TimeoutExpired:
        raise backends.BackendUnavailable('%s %s took more than %d s'
                                          % (script, command, timeout))


def start(script=None, timeout=POSTGRESQL_TIMEOUT):
    """Start the project's cluster if it is not running (installing it).

    :returns: ``(url, started)``: the SQLAlchemy URL of its ``placement``
        database, and whether this call started the cluster
    :raises BackendUnavailable: no script, or it failed (not root, no
        apt-get, port taken...), with the script's own error output
    """
    script = script_path(script)
    proc = _run(script, 'start', timeout)
    lines = proc.stdout.split()
    if proc.returncode != 0 or not lines:
        raise backends.BackendUnavailable('%s start failed (exit %d): %s' % (
            script, proc.returncode, proc.stderr.strip()[-2000:]))
    # The URL is the last thing it prints on stdout; it says on stderr
    # when it started the server.
    return lines[-1], STARTED_LINE in proc.stderr


def ensure_postgresql(script=None, timeout=POSTGRESQL_TIMEOUT):
    """Start the project's PostgreSQL cluster (installing it if needed).

    :param script: the cluster script (see :func:`script_path`)
    :returns: the SQLAlchemy URL of its ``placement`` database
    :raises BackendUnavailable: see :func:`start`
    """
    return start(script, timeout)[0]


class PostgreSQLDatabase(database.ScratchDatabase):
    """An empty database of its own in the project's cluster.

    See :class:`~shelvefix.backends.database.ScratchDatabase`;
    ``admin_url`` is what :func:`ensure_postgresql` returns.
    """

    # WITH (FORCE): a server killed uncleanly may leave sessions behind.
    drop = 'DROP DATABASE IF EXISTS {name} WITH (FORCE)'

    def connect(self, url):
        conn = connect(url)
        conn.autocommit = True
        return conn


def connect(url):
    """A psycopg2 connection to the database at ``url`` (a SQLAlchemy URL).

    Bounded: it gives up after 10 s.
    """
    import psycopg2
    from sqlalchemy.engine import url as sa_url

    url = sa_url.make_url(url)
    return psycopg2.connect(
        host=url.host, port=url.port, user=url.username,
        password=url.password, dbname=url.database, connect_timeout=10)


def counters(url):
    """``{'deadlocks': n}`` of the database at ``url``.

    From ``pg_stat_database``: the deadlocks PostgreSQL detected in that
    database since its statistics were reset (at its creation, for a
    server's own database). Its rollback count is left out: every pooled
    connection's return is one.
    """
    conn = connect(url)
    try:
        with conn.cursor() as cur:
            cur.execute('SELECT deadlocks FROM pg_stat_database WHERE '
                        'datname = current_database()')
            return {'deadlocks': cur.fetchone()[0]}
    finally:
        conn.close()


#: The file, among the leases, saying that the last user is to stop the
#: cluster: a command started it.
STOP_MARK = 'stop-when-unused'


class ClusterLease(fixtures.Fixture):
    """The project's cluster, held while in use; a command stops its own.

    setUp starts the cluster if it is not running (:func:`start`) and
    takes a lease: a file named after this process, beside the cluster's
    data directory (``postgresql.sh data`` + ``.leases``). Cleanup gives
    the lease back. If the cluster was started by a lease taken with
    ``stop_if_started`` (a user's command), the last lease given back
    stops it; a cluster that was running before, or that a test fixture
    started (the suite keeps it warm), stays running. The stop mark names
    the server process the command started: if that command died and the
    cluster was started again by someone else, the mark is stale and
    stops nothing. Leases of processes that no longer run do not count.
    Taking a lease and stopping are serialised with a lock, so a cluster
    is never stopped under a user.

    :param stop_if_started: the command's policy: stop the cluster at the
        end if this lease started it

    After setUp: ``admin_url``, ``started`` (this lease started the
    cluster), ``script``. After cleanup, ``outcome``: ``'stopped'``,
    ``'in use'`` (another lease holds it; the last one stops it),
    ``'left running'`` (it was not this command's to stop) or an error
    text.
    """

    def __init__(self, stop_if_started=False, script=None):
        super().__init__()
        self.stop_if_started = stop_if_started
        self._script = script
        self.outcome = None

    def _setUp(self):
        self.script = script_path(self._script)
        proc = _run(self.script, 'data', 30)
        self.data = proc.stdout.strip()
        self.leases = self.data + '.leases'
        self.mark = os.path.join(self.leases, STOP_MARK)
        os.makedirs(self.leases, exist_ok=True)
        with self._locked():
            self.admin_url, self.started = start(self.script)
            self.path = os.path.join(self.leases, '%d-%s' % (
                os.getpid(), uuid.uuid4().hex[:8]))
            with open(self.path, 'w'):
                pass
            if self.started and self.stop_if_started:
                # The mark names the server it is for: a later server of
                # the same cluster (the marking command died, someone else
                # started it again) is not the command's to stop.
                with open(self.mark, 'w') as f:
                    f.write(self._postmaster() or '')
                self._record()
        self.addCleanup(self._give_back)

    @classmethod
    def of(cls, data):
        """A lease not taken, on the cluster in ``data``.

        To judge, with its lock held, whether a dead command's cluster is
        to be stopped (:mod:`~shelvefix.backends.reap`).
        """
        lease = cls()
        lease.data, lease.leases = data, data + '.leases'
        lease.mark = os.path.join(lease.leases, STOP_MARK)
        return lease

    def _record(self):
        # Listed for the run: if the command dies, its watchdog (or the
        # next command) stops the server as this lease's give-back would.
        pid = self._postmaster()
        if pid and pid.isdigit():
            runs.record('clusters', data=self.data, leases=self.leases,
                        pid=int(pid), start=runs.start_time(int(pid)))

    def _postmaster(self):
        """The running server's pid (``postmaster.pid``), or None."""
        try:
            with open(os.path.join(self.data, 'postmaster.pid')) as f:
                return f.readline().strip() or None
        except OSError:
            return None

    def _marked(self):
        """Whether a command marked the server now running to stop."""
        try:
            with open(self.mark) as f:
                marked = f.read().strip()
        except FileNotFoundError:
            return False
        return bool(marked) and marked == self._postmaster()

    def _unmark(self):
        try:
            os.unlink(self.mark)
        except FileNotFoundError:
            pass

    @contextlib.contextmanager
    def _locked(self):
        with open(os.path.join(self.leases, '.lock'), 'w') as lock:
            fcntl.flock(lock, fcntl.LOCK_EX)
            try:
                yield
            finally:
                fcntl.flock(lock, fcntl.LOCK_UN)

    def _others(self):
        """The leases still held by running processes, but ours."""
        held = []
        for name in os.listdir(self.leases):
            pid = name.split('-', 1)[0]
            if not pid.isdigit():
                continue
            try:
                os.kill(int(pid), 0)
            except ProcessLookupError:
                # Its process is gone: the lease is stale.
                os.unlink(os.path.join(self.leases, name))
                continue
            except PermissionError:
                pass
            held.append(name)
        return held

    def _give_back(self):
        with self._locked():
            os.unlink(self.path)
            runs.forget('clusters', data=self.data)
            if not self._marked():
                self._unmark()
                self.outcome = 'left running'
            elif self._others():
                self.outcome = 'in use'
            else:
                proc = _run(self.script, 'stop', 120)
                if proc.returncode == 0:
                    self._unmark()
                    self.outcome = 'stopped'
                else:
                    self.outcome = '%s stop failed (exit %d): %s' % (
                        self.script, proc.returncode,
                        proc.stderr.strip()[-500:])
