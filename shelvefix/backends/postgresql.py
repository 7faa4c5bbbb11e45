"""A throwaway PostgreSQL on loopback for the placement server.

:func:`ensure_postgresql` starts (installing it first if needed) the
project's own cluster on 127.0.0.1 with ``postgresql.sh`` (beside this
module, so it ships with the package) and returns
the SQLAlchemy URL of a database whose role may create more;
:class:`PostgreSQLDatabase` gives one server an empty database of its own
in that cluster and drops it at cleanup.
"""

import os
import subprocess

from shelvefix import backends
from shelvefix.backends import database

#: The cluster script; it ships with the package (see its header).
POSTGRESQL_SCRIPT = os.path.join(os.path.dirname(os.path.abspath(__file__)),
                                 'postgresql.sh')

# The script may run apt-get, slow on a cold machine.
POSTGRESQL_TIMEOUT = 900


def ensure_postgresql(script=None, timeout=POSTGRESQL_TIMEOUT):
    """Start the project's PostgreSQL cluster (installing it if needed).

    :param script: the cluster script (default: ``$SHELVEFIX_POSTGRESQL_
        SCRIPT`` or :data:`POSTGRESQL_SCRIPT`)
    :returns: the SQLAlchemy URL of its ``placement`` database
    :raises BackendUnavailable: no script, or it failed (not root, no
        apt-get, port taken...), with the script's own error output
    """
    script = (script or os.environ.get('SHELVEFIX_POSTGRESQL_SCRIPT') or
              POSTGRESQL_SCRIPT)
    script = os.path.normpath(script)
    if not os.path.isfile(script):
        raise backends.BackendUnavailable(
            'no %s: PostgreSQL is started by the source checkout\'s script '
            '(or pass db_url)' % script)
    try:
        proc = subprocess.run(
            ['bash', script, 'start'], stdin=subprocess.DEVNULL,
            capture_output=True, text=True, timeout=timeout)
    except subprocess.TimeoutExpired:
        raise backends.BackendUnavailable('%s start took more than %d s'
                                          % (script, timeout))
    lines = proc.stdout.split()
    if proc.returncode != 0 or not lines:
        raise backends.BackendUnavailable('%s start failed (exit %d): %s' % (
            script, proc.returncode, proc.stderr.strip()[-2000:]))
    # The URL is the last thing it prints on stdout.
    return lines[-1]


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
