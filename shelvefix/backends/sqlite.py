"""Several placement workers on one sqlite file, waiting instead of failing.

sqlite takes a transaction's write lock only when it first writes. Two
workers that both read and then want to write are a deadlock sqlite breaks
at once with "database is locked", whatever the busy timeout: the second
one cannot wait for a lock the first holds while it holds a read lock the
first needs. Placement's writes all read first, so under two gunicorn
workers some fail; one of them, the consumer clean-up of ``DELETE
/allocations``, leaves a ghost consumer behind (see the guide, "Ghost
consumers").

:func:`serialise_writers` makes every sqlite transaction of the process
take the write lock when it begins (``BEGIN IMMEDIATE``): a second worker
then waits at ``BEGIN`` (the busy timeout, :data:`BUSY_TIMEOUT` seconds)
instead of failing half-way. The database is in WAL mode, so its readers
never block on a writer's file lock. Everything is then serialised, which
is what sqlite can offer; PostgreSQL (the default of ``shelvefix stress``)
runs transactions side by side.
"""

import sqlite3
import threading

from sqlalchemy import engine as sa_engine
from sqlalchemy import event
from sqlalchemy import pool as sa_pool

#: Seconds a transaction waits for another's write lock.
BUSY_TIMEOUT = 30
_HOLDS_LOCK = 'shelvefix.sqlite.holds_lock'


def _connected(dbapi_connection, connection_record):
    if not isinstance(dbapi_connection, sqlite3.Connection):
        return
    cursor = dbapi_connection.cursor()
    try:
        cursor.execute('PRAGMA busy_timeout = %d' % (BUSY_TIMEOUT * 1000))
        cursor.execute('PRAGMA journal_mode = WAL')
    finally:
        cursor.close()


# Transactions this thread holds the write lock in.
_held = threading.local()


def _immediate(connection, cursor, statement, parameters, context,
               executemany):
    # oslo.db turns pysqlite's own transaction handling off and begins
    # each transaction with a plain (deferred) BEGIN: make it immediate.
    # Not a transaction this thread opens while it already holds the lock
    # in another (placement reads provider generations in an independent
    # transaction inside its allocation writes): that one would wait for
    # its own thread. Deferred, it reads WAL's snapshot without a lock.
    if (connection.dialect.name == 'sqlite' and
            statement.strip().upper() == 'BEGIN' and
            not getattr(_held, 'count', 0)):
        statement = 'BEGIN IMMEDIATE'
        connection.info[_HOLDS_LOCK] = True
        _held.count = getattr(_held, 'count', 0) + 1
    return statement, parameters


def _ended(connection):
    if connection.info.pop(_HOLDS_LOCK, False):
        _held.count -= 1


_LISTENERS = ((sa_pool.Pool, 'connect', _connected, {}),
              (sa_engine.Engine, 'before_cursor_execute', _immediate,
               {'retval': True}),
              (sa_engine.Engine, 'commit', _ended, {}),
              (sa_engine.Engine, 'rollback', _ended, {}))


def serialise_writers():
    """Apply the above to every sqlite connection this process opens.

    Call it before the engines connect (at process start).
    """
    for target, name, listener, kwargs in _LISTENERS:
        event.listen(target, name, listener, **kwargs)


def restore():
    """Undo :func:`serialise_writers` (for tests)."""
    for target, name, listener, _kwargs in _LISTENERS:
        event.remove(target, name, listener)
