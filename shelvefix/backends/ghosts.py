"""Ghost consumers in a real placement database: found, and healed safely.

A *ghost* is a row of placement's ``consumers`` table that no row of
``allocations`` names (``allocations.consumer_id`` holds the consumer's
``uuid``). A ``DELETE /allocations/{uuid}`` whose second transaction
failed leaves one (see the finding, ghost-consumers in the guide); every
later claim for that consumer with ``consumer_generation: null`` then
gets a 409.

:func:`find` lists them, with SELECTs only. :func:`heal` removes the ones
:func:`find` listed, a batch per transaction, each with one ``DELETE``
that re-checks everything in the database itself, so that a consumer that
changed after it was listed is never removed:

* it still has no allocation (``NOT EXISTS`` on ``allocations``);
* its ``generation`` is still the one listed: placement bumps it in the
  transaction that writes the consumer's allocations, so a write in
  flight (not yet visible to the ``NOT EXISTS``, or blocked on the row)
  either makes the ``DELETE`` skip the row, or finds the row gone and
  fails its own generation check (a 409 its client retries);
* it was last written more than ``min_age`` seconds ago: ``PUT
  /allocations`` for a new consumer creates the consumer in one
  transaction and writes its allocations in the next, so a consumer
  without allocations for a moment is normal.

The tables are described here (not imported from openstack-placement),
with placement's own table and column names, so that any release's
database can be read without installing placement. SQLAlchemy and the
database's driver are needed (the ``placement`` extra has them).
"""

import collections
import datetime
import os

from shelvefix.backends import database

#: Seconds since its last write under which :func:`heal` keeps a ghost.
DEFAULT_MIN_AGE = 300
#: Consumers deleted in one transaction.
DEFAULT_BATCH_SIZE = 100
#: Attempts of a batch that the database rolled back as a deadlock (or a
#: Galera certification failure, reported as one).
BATCH_ATTEMPTS = 3
#: The tables a placement database has, and which :func:`find` reads.
TABLES = ('consumers', 'allocations', 'projects', 'users')
INSTALL_HINT = ('shelvefix ghosts needs SQLAlchemy and the database\'s '
                'driver: pip install "shelvefix[placement]"')

Ghost = collections.namedtuple(
    'Ghost', ['id', 'uuid', 'project', 'user', 'generation', 'created_at',
              'updated_at'])
Ghost.__doc__ = """A consumer without allocations, as listed.

``project`` and ``user`` are the Keystone ids (placement's ``projects``
and ``users`` ``external_id``; None if the row is missing);
``created_at`` and ``updated_at`` naive UTC datetimes, or None.
"""

Healed = collections.namedtuple(
    'Healed', ['removed', 'gained_allocations', 'too_young', 'changed',
               'gone'])
Healed.__doc__ = """What :func:`heal` did, as lists of consumer uuids.

``removed``: deleted. Kept: ``gained_allocations`` (they have allocations
now), ``too_young`` (written less than ``min_age`` seconds ago),
``changed`` (still without allocations, but written since they were
listed: a later run decides). ``gone``: no longer there when their
batch ran (placement, or another heal, removed them).
"""


class GhostsError(Exception):
    """The database cannot be read as placement's; the message says why.

    The message never holds the URL's password.
    """


def _sqlalchemy():
    try:
        import sqlalchemy
    except ImportError as e:
        raise GhostsError('%s (%s)' % (INSTALL_HINT, e)) from e
    return sqlalchemy


def _tables(sa):
    # Only what is read or written; names as placement's models have them.
    meta = sa.MetaData()
    consumers = sa.Table(
        'consumers', meta,
        sa.Column('id', sa.Integer, primary_key=True),
        sa.Column('uuid', sa.String(36)),
        sa.Column('project_id', sa.Integer),
        sa.Column('user_id', sa.Integer),
        sa.Column('generation', sa.Integer),
        sa.Column('created_at', sa.DateTime),
        sa.Column('updated_at', sa.DateTime))
    allocations = sa.Table(
        'allocations', meta,
        sa.Column('id', sa.Integer, primary_key=True),
        sa.Column('consumer_id', sa.String(36)))
    projects = sa.Table(
        'projects', meta,
        sa.Column('id', sa.Integer, primary_key=True),
        sa.Column('external_id', sa.String(255)))
    users = sa.Table(
        'users', meta,
        sa.Column('id', sa.Integer, primary_key=True),
        sa.Column('external_id', sa.String(255)))
    return consumers, allocations, projects, users


def _problem(exc, url):
    # The driver's first line, with no password in it.
    orig = getattr(exc, 'orig', None) or exc
    lines = [line.strip() for line in str(orig).splitlines()
             if line.strip()]
    return database.scrub(lines[0] if lines else type(orig).__name__, url)


def connect(url, connect_timeout=database.CONNECT_TIMEOUT):
    """An engine on placement's database at ``url``, checked.

    One connection is made at once: a URL that cannot be parsed, a
    driver that is missing, a database that cannot be reached (within
    ``connect_timeout`` seconds, PostgreSQL and MySQL; a URL's own
    ``connect_timeout`` wins), a sqlite file that does not exist, or a
    database without placement's tables (:data:`TABLES`) is refused here.

    :raises GhostsError: one line saying which, the URL's password masked
    """
    sa = _sqlalchemy()
    shown = database.mask_url(url)
    try:
        parsed = sa.engine.make_url(url)
    except (sa.exc.ArgumentError, ValueError) as e:
        raise GhostsError("cannot parse the database URL '%s' (a SQLAlchemy "
                          "URL, e.g. postgresql+psycopg2://user:password@"
                          "host/placement): %s" % (shown, e)) from e
    backend = parsed.get_backend_name()
    if backend == 'sqlite':
        path = parsed.database
        if not path or path == ':memory:':
            raise GhostsError('%s names no sqlite file' % shown)
        if not os.path.isfile(path):
            # sqlite would create an empty one.
            raise GhostsError('%s: no such file %s' % (shown, path))
    elif (backend in ('postgresql', 'mysql', 'mariadb') and
            'connect_timeout' not in parsed.query):
        parsed = parsed.update_query_dict(
            {'connect_timeout': str(connect_timeout)})
    try:
        engine = sa.create_engine(parsed, poolclass=sa.pool.NullPool)
    except (ImportError, sa.exc.NoSuchModuleError) as e:
        raise GhostsError('%s: its driver cannot be loaded (%s); %s'
                          % (shown, e, INSTALL_HINT)) from e
    except (sa.exc.ArgumentError, TypeError, ValueError) as e:
        raise GhostsError('%s: %s' % (shown, e)) from e
    try:
        with engine.connect() as conn:
            present = set(sa.inspect(conn).get_table_names())
    except sa.exc.DBAPIError as e:
        engine.dispose()
        raise GhostsError('cannot read the database at %s: %s'
                          % (shown, _problem(e, url))) from e
    missing = [name for name in TABLES if name not in present]
    if missing:
        engine.dispose()
        raise GhostsError(
            '%s is not a placement database: it has no %s table%s'
            % (shown, ', '.join(missing), 's' if len(missing) > 1 else ''))
    return engine


def find(engine):
    """The ghost consumers now, in the order they were created.

    Only SELECTs run.

    :param engine: from :func:`connect`
    :returns: a list of :class:`Ghost`
    :raises GhostsError: the tables could not be read
    """
    sa = _sqlalchemy()
    consumers, allocations, projects, users = _tables(sa)
    query = sa.select(
        consumers.c.id, consumers.c.uuid, projects.c.external_id,
        users.c.external_id, consumers.c.generation,
        consumers.c.created_at, consumers.c.updated_at,
    ).select_from(
        consumers.outerjoin(projects, projects.c.id == consumers.c.project_id)
        .outerjoin(users, users.c.id == consumers.c.user_id)
    ).where(~_has_allocations(sa, consumers, allocations)).order_by(
        consumers.c.id)
    try:
        with engine.connect() as conn:
            rows = conn.execute(query).all()
            conn.rollback()
    except sa.exc.DBAPIError as e:
        raise GhostsError("cannot read placement's consumers: %s"
                          % _problem(e, engine.url)) from e
    return [Ghost(*row) for row in rows]


def _has_allocations(sa, consumers, allocations):
    return sa.exists().where(allocations.c.consumer_id == consumers.c.uuid)


def _last_write(sa, consumers):
    return sa.func.coalesce(consumers.c.updated_at, consumers.c.created_at)


def _utcnow():
    # Placement writes naive UTC times (oslo.utils' utcnow).
    return datetime.datetime.now(datetime.timezone.utc).replace(tzinfo=None)


def heal(engine, ghosts, min_age=DEFAULT_MIN_AGE,
         batch_size=DEFAULT_BATCH_SIZE, now=None):
    """Remove the ``ghosts`` that are still ghosts, and old enough.

    ``batch_size`` consumers per transaction; in it, one ``DELETE`` per
    consumer that removes the row only if, in the database, it still has
    no allocation, its generation is the one listed and its last write
    (``updated_at``, else ``created_at``) is more than ``min_age``
    seconds before ``now`` (a consumer with neither time is old: only
    placement's early data migrations wrote such rows). A consumer the
    ``DELETE`` kept is read again in the same transaction to say why.

    :param ghosts: what :func:`find` returned
    :param min_age: seconds
    :param now: the current UTC time (naive), by default this machine's
        clock: keep ``min_age`` well above its skew from placement's hosts
    :returns: :class:`Healed`
    :raises GhostsError: a batch failed (rolled back: nothing of it was
        removed); the message says how many earlier batches removed
    """
    sa = _sqlalchemy()
    consumers, allocations, _projects, _users = _tables(sa)
    cutoff = (now or _utcnow()) - datetime.timedelta(seconds=min_age)
    last_write = _last_write(sa, consumers)
    delete = consumers.delete().where(
        consumers.c.id == sa.bindparam('ghost_id'),
        consumers.c.uuid == sa.bindparam('ghost_uuid'),
        consumers.c.generation == sa.bindparam('ghost_generation'),
        sa.or_(last_write.is_(None), last_write < cutoff),
        ~_has_allocations(sa, consumers, allocations))
    # A locking read: InnoDB's repeatable read would otherwise answer
    # from the transaction's snapshot, not from what kept the row.
    reread = sa.select(
        consumers.c.generation, last_write,
        _has_allocations(sa, consumers, allocations),
    ).where(consumers.c.id == sa.bindparam('ghost_id')).with_for_update()
    result = Healed([], [], [], [], [])
    for start in range(0, len(ghosts), batch_size):
        batch = ghosts[start:start + batch_size]
        for attempt in range(1, BATCH_ATTEMPTS + 1):
            try:
                outcome = _heal_batch(engine, batch, delete, reread, cutoff)
                break
            except sa.exc.DBAPIError as e:
                if attempt < BATCH_ATTEMPTS and _rolled_back_as_conflict(e):
                    continue
                raise GhostsError(
                    'healing stopped, the batch of %d consumer(s) from %s '
                    'was rolled back (%d removed before it): %s'
                    % (len(batch), batch[0].uuid, len(result.removed),
                       _problem(e, engine.url))) from e
        for name, uuids in outcome.items():
            getattr(result, name).extend(uuids)
    return result


def _heal_batch(engine, batch, delete, reread, cutoff):
    outcome = collections.defaultdict(list)
    with engine.begin() as conn:
        for ghost in batch:
            params = {'ghost_id': ghost.id, 'ghost_uuid': ghost.uuid,
                      'ghost_generation': ghost.generation}
            if conn.execute(delete, params).rowcount == 1:
                outcome['removed'].append(ghost.uuid)
                continue
            row = conn.execute(reread, {'ghost_id': ghost.id}).first()
            if row is None:
                why = 'gone'
            elif row[2]:
                why = 'gained_allocations'
            elif (row[0] == ghost.generation and row[1] is not None and
                    row[1] >= cutoff):
                why = 'too_young'
            else:
                why = 'changed'
            outcome[why].append(ghost.uuid)
    return outcome


#: SQLSTATEs and MySQL error numbers of a transaction the database rolled
#: back to resolve a conflict: worth one more try.
_CONFLICT_SQLSTATES = ('40001', '40P01')
_CONFLICT_ERRNOS = (1213, 1205)


def _rolled_back_as_conflict(exc):
    orig = getattr(exc, 'orig', None)
    if getattr(orig, 'pgcode', None) in _CONFLICT_SQLSTATES:
        return True
    args = getattr(orig, 'args', ())
    return bool(args) and args[0] in _CONFLICT_ERRNOS
