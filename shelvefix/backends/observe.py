"""What a placement server's log and database say about a run.

The stress report's figures that come from placement itself rather than
from its clients: how often its workers retried a database call
(:func:`retries`, from the server's log); and :class:`Observer`, the
stress run's own path to placement's tables, apart from the code under
test, for everything it judges a cycle by and the ghost consumers the
tables hold.
"""

import time

from oslo_log import log as logging

LOG = logging.getLogger(__name__)

#: How long :meth:`Observer.ghosts` tries to read the tables.
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


#: Seconds an observer's connection or read on one node may take.
READ_TIMEOUT = 10
#: Seconds a node that failed a read is passed over.
PASS_OVER = 2.0

_ALLOCATIONS = (
    'SELECT rp.uuid, rc.name, a.used FROM allocations a '
    'JOIN resource_providers rp ON rp.id = a.resource_provider_id '
    'JOIN resource_classes rc ON rc.id = a.resource_class_id '
    'WHERE a.consumer_id = :consumer')
_USAGES = (
    'SELECT rp.uuid, rc.name, SUM(a.used) FROM allocations a '
    'JOIN resource_providers rp ON rp.id = a.resource_provider_id '
    'JOIN resource_classes rc ON rc.id = a.resource_class_id '
    'GROUP BY rp.uuid, rc.name')
_GHOSTS = ('SELECT c.uuid FROM consumers c WHERE NOT EXISTS '
           '(SELECT 1 FROM allocations a WHERE a.consumer_id = c.uuid)')


class ObserverError(Exception):
    """No node of the observer's answered; the message names each."""


def _grouped(rows):
    held = {}
    for provider, resource_class, used in rows:
        if used:
            held.setdefault(provider, {})[resource_class] = int(used)
    return held


def _engine(url, sync_wait):
    import sqlalchemy
    from sqlalchemy.engine import url as sa_url

    dialect = sa_url.make_url(url).get_backend_name()
    if dialect == 'mysql':
        connect_args = {'connect_timeout': READ_TIMEOUT,
                        'read_timeout': READ_TIMEOUT,
                        'write_timeout': READ_TIMEOUT}
    elif dialect == 'postgresql':
        connect_args = {'connect_timeout': READ_TIMEOUT,
                        'options': '-c statement_timeout=%d'
                                   % (READ_TIMEOUT * 1000)}
    else:
        # sqlite: a file, or memory; its own pool.
        return sqlalchemy.create_engine(url)
    engine = sqlalchemy.create_engine(url, connect_args=connect_args,
                                      pool_size=2, max_overflow=2)
    if sync_wait:
        def causal(dbapi_connection, _record):
            cursor = dbapi_connection.cursor()
            try:
                # Every read waits until this node has applied what the
                # cluster committed before it started.
                cursor.execute('SET SESSION wsrep_sync_wait = 1')
            finally:
                cursor.close()
        sqlalchemy.event.listen(engine, 'connect', causal)
    return engine


class Observer(object):
    """Placement's tables, read on a path of the observer's own.

    Not through placement's API nor the transport the code under test
    uses: a read there can be served by a node that has not yet applied a
    write another node committed, or fail while the write it asks about
    committed. The observer reads the database itself, by SQLAlchemy:

    * one database (PostgreSQL, MariaDB, sqlite): its URL; a read made
      after the writer's answer came back sees what it committed;
    * a Galera cluster: a URL per node, each connection with
      ``wsrep_sync_wait = 1`` (a causal read: the node first applies what
      the cluster had committed). A read goes to the first node that
      answers (one that failed is passed over for :data:`PASS_OVER`
      seconds), and :meth:`cross_check` reads the others too.

    :param urls: one SQLAlchemy URL per node
    :param names: what the report calls each node (default ``node N``)
    :param sync_wait: set ``wsrep_sync_wait`` on every connection

    ``checked`` and ``disagreed`` count :meth:`cross_check`'s work.
    """

    def __init__(self, urls, names=None, sync_wait=False):
        self.urls = list(urls)
        self.names = list(names or ['node %d' % (i + 1)
                                    for i in range(len(self.urls))])
        self.sync_wait = sync_wait
        self._engines = [None] * len(self.urls)
        self._passed_over = {}
        self.checked = self.disagreed = 0

    def close(self):
        """Close every connection the observer holds."""
        for engine in self._engines:
            if engine is not None:
                engine.dispose()
        self._engines = [None] * len(self.urls)

    def _read(self, index, query, params=None):
        import sqlalchemy

        if self._engines[index] is None:
            self._engines[index] = _engine(self.urls[index], self.sync_wait)
        try:
            with self._engines[index].connect() as conn:
                return conn.execute(sqlalchemy.text(query),
                                    params or {}).fetchall()
        except Exception:
            self._passed_over[index] = time.monotonic() + PASS_OVER
            self._engines[index].dispose()
            raise

    def _order(self):
        now = time.monotonic()
        fresh = [i for i in range(len(self.urls))
                 if self._passed_over.get(i, 0) <= now]
        return fresh + [i for i in range(len(self.urls)) if i not in fresh]

    def read(self, query, params=None):
        """``(rows, index)``: the rows of the first node that answers.

        :raises ObserverError: no node answered (each one's error named)
        """
        failures = []
        for index in self._order():
            try:
                return self._read(index, query, params), index
            except Exception as e:
                failures.append('%s: %s' % (self.names[index],
                                            _one_line(e)))
        raise ObserverError('no database node answered the observer: %s'
                            % '; '.join(failures))

    def allocations(self, consumer):
        """``({provider: {resource class: used}}, node index)``."""
        rows, index = self.read(_ALLOCATIONS, {'consumer': consumer})
        return _grouped(rows), index

    def usages(self, providers):
        """``{provider: {resource class: used}}``, what is used only."""
        rows, _index = self.read(_USAGES)
        used = _grouped(rows)
        return {rp: used.get(rp, {}) for rp in providers}

    def ghosts(self, timeout=GHOSTS_TIMEOUT, interval=0.5):
        """The uuids of the consumers that hold no allocation, now.

        A ``DELETE /allocations`` whose consumer clean-up did not commit
        leaves one until a later write of that consumer heals it. A
        database just back from a fault can refuse connections for a
        moment: the read is tried again every ``interval`` seconds for
        ``timeout`` seconds.

        :raises ObserverError: not read within ``timeout``
        """
        deadline = time.monotonic() + timeout
        while True:
            try:
                rows, _index = self.read(_GHOSTS)
                return set(row[0] for row in rows)
            except ObserverError:
                if time.monotonic() >= deadline:
                    raise
                time.sleep(interval)

    def cross_check(self, consumer, seen, index, api=None):
        """Read ``consumer``'s allocations another way, and compare.

        On every other node; with one node, through ``api`` (placement's
        API, which one database cannot serve stale).

        :param seen: what the judgement read on node ``index``
        :param api: ``api(consumer)`` reads it through placement's API
        :returns: the names of the paths that read otherwise (a node that
            does not answer is not compared); ``checked`` counts the
            judgements compared, ``disagreed`` those read otherwise
        """
        reads = []
        for other in range(len(self.urls)):
            if other == index:
                continue
            try:
                reads.append((self.names[other], _grouped(self._read(
                    other, _ALLOCATIONS, {'consumer': consumer}))))
            except Exception as e:
                LOG.debug('Observer: %s not compared: %s',
                          self.names[other], e)
        if len(self.urls) == 1 and api is not None:
            reads.append(('placement\'s API', api(consumer)))
        return self._compare(consumer, seen, self.names[index], reads)

    def _compare(self, consumer, seen, where, reads):
        if not reads:
            return []
        others = [name for name, read in reads if read != seen]
        self.checked += 1
        if others:
            self.disagreed += 1
            LOG.warning('Consumer %(consumer)s: %(where)s read %(seen)s, '
                        '%(others)s otherwise',
                        {'consumer': consumer, 'where': where, 'seen': seen,
                         'others': ', '.join(others)})
        return others


class ClientObserver(Observer):
    """The observer of a placement without a database to read: the API.

    For the in-process backends (one process, nothing stale) and a remote
    placement: reads go through ``client`` (a report client) with
    ``context``; ghost consumers cannot be counted (:meth:`ghosts` gives
    None) and a judgement is compared with a second read.
    """

    def __init__(self, client, context):
        super(ClientObserver, self).__init__([], names=['placement\'s API'])
        self.client = client
        self.context = context

    def allocations(self, consumer):
        current = self.client.get_allocs_for_consumer(self.context, consumer)
        return {rp: dict(a['resources'])
                for rp, a in current['allocations'].items()}, 0

    def usages(self, providers):
        return {rp: {rc: used for rc, used in self.client.get_provider_usages(
            self.context, rp).items() if used} for rp in providers}

    def ghosts(self, timeout=None, interval=None):
        return None

    def cross_check(self, consumer, seen, index, api=None):
        again, _index = self.allocations(consumer)
        return self._compare(consumer, seen, self.names[0],
                             [('a second read', again)])


def _one_line(error):
    text = ' '.join(str(error).split())
    return '%s: %s' % (type(error).__name__, text[:200])
