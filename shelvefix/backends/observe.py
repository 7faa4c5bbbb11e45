"""What a placement server's log and database say about a run.

The stress report's figures that come from placement itself rather than
from its clients: how often its workers retried a database call
(:func:`retries`, from the server's log) and how many ghost consumers its
tables hold (:func:`ghosts`).
"""

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


def ghosts(db_url):
    """How many consumer records hold no allocation (ghosts), now.

    Read from placement's own tables (``consumers``, ``allocations``): a
    ``DELETE /allocations`` whose consumer clean-up did not commit leaves
    one until a later write of that consumer heals it.
    """
    import sqlalchemy

    engine = sqlalchemy.create_engine(db_url)
    try:
        with engine.connect() as conn:
            return conn.execute(sqlalchemy.text(
                'SELECT COUNT(*) FROM consumers c WHERE NOT EXISTS '
                '(SELECT 1 FROM allocations a WHERE a.consumer_id = '
                'c.uuid)')).scalar()
    finally:
        engine.dispose()
