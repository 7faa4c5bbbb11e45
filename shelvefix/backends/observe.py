"""What a placement server's log and database say about a run.

The stress report's figures that come from placement itself rather than
from its clients: how often its workers retried a database call
(:func:`retries`, from the server's log) and how many ghost consumers its
tables hold (:func:`ghosts`).
"""

import time

#: How long :func:`ghosts` tries to read the tables.
GHOSTS_TIMEOUT = 30.0
#: oslo.db's retry decorator's logger, and what it logs.
RETRY_LOGGER = 'oslo_db.api'
RETRY_LINE = 'Performing DB retry for function'
GAVE_UP_LINE = 'DB exceeded retry limit'


def retries(log_path):
    """How many times placement retried a database call, and gave up.

    oslo.db's ``wrap_db_retry`` (on a deadlock, a lost connection) logs
    each retry at debug level, on :data:`RETRY_LOGGER`, which the server's
    configuration logs; and logs giving up as an error.

    :returns: ``{'placement retries': n, 'placement gave up': n}`` (zeros
        when the log cannot be read)
    """
    counts = {'placement retries': 0, 'placement gave up': 0}
    try:
        with open(log_path, errors='replace') as f:
            for line in f:
                if RETRY_LINE in line:
                    counts['placement retries'] += 1
                elif GAVE_UP_LINE in line:
                    counts['placement gave up'] += 1
    except OSError:
        pass
    return counts


def ghosts(db_url, timeout=GHOSTS_TIMEOUT, interval=0.5):
    """How many consumer records hold no allocation (ghosts), now.

    Read from placement's own tables (``consumers``, ``allocations``): a
    ``DELETE /allocations`` whose consumer clean-up did not commit leaves
    one until a later write of that consumer heals it.

    A database just back from a fault can refuse or drop a connection
    for a moment (a load balancer that has not yet marked its nodes up
    again): the read is tried again, every ``interval`` seconds, for
    ``timeout`` seconds.

    :raises sqlalchemy.exc.OperationalError: it could not be read within
        ``timeout``
    """
    import sqlalchemy

    deadline = time.monotonic() + timeout
    engine = sqlalchemy.create_engine(db_url)
    try:
        while True:
            try:
                with engine.connect() as conn:
                    return conn.execute(sqlalchemy.text(
                        'SELECT COUNT(*) FROM consumers c WHERE NOT EXISTS '
                        '(SELECT 1 FROM allocations a WHERE a.consumer_id = '
                        'c.uuid)')).scalar()
            except sqlalchemy.exc.OperationalError:
                if time.monotonic() >= deadline:
                    raise
                engine.dispose()
                time.sleep(interval)
    finally:
        engine.dispose()
