"""A three-node MariaDB Galera cluster on loopback, for placement.

:class:`GaleraCluster` starts :data:`NODES` private MariaDB servers
(:class:`~shelvefix.backends.mariadb.MariaDBServer`, Debian's
``mariadb-server``, ``galera-4`` and ``rsync`` installed when run as root
and missing), each with Galera's replication on, on ports of its own
(client, group communication, incremental and full state transfer), all
on 127.0.0.1. The first node creates the system tables and bootstraps the
cluster (``--wsrep-new-cluster``); the others join it one after the other,
each receiving a full state transfer (rsync) and ready once
``wsrep_local_state_comment`` says ``Synced``. Cleanup stops every node and
removes its data, as for one server.

The group communication timeouts are shortened (a node that stops
answering is evicted in about 3 s instead of about 6), since a commit on
the survivors waits until then.
"""

import itertools
import threading
import time

import fixtures

from shelvefix.backends import mariadb
from shelvefix.backends import server
from shelvefix.backends import transport

NODES = 3
CLUSTER_NAME = 'shelvefix'
#: Galera's group communication: eviction in about 3 s.
_EVS = ('evs.keepalive_period=PT0.5S;evs.suspect_timeout=PT1.5S;'
        'evs.inactive_timeout=PT3S;evs.inactive_check_period=PT0.5S')

_NODE_CONFIG = '''\
binlog_format = ROW
default_storage_engine = InnoDB
innodb_autoinc_lock_mode = 2
wsrep_on = ON
wsrep_provider = {provider}
wsrep_cluster_name = {cluster}
wsrep_cluster_address = gcomm://{members}
wsrep_node_name = node{index}
wsrep_node_address = 127.0.0.1:{gcomm}
wsrep_node_incoming_address = 127.0.0.1:{port}
wsrep_sst_method = rsync
wsrep_sst_receive_address = 127.0.0.1:{sst}
wsrep_provider_options = "{options}"
'''
_PROVIDER_OPTIONS = ('base_port={gcomm}', 'gmcast.listen_addr=tcp://127.0.0.1:'
                     '{gcomm}', 'ist.recv_addr=127.0.0.1:{ist}',
                     'gcache.size=32M')


def synced(server):
    """True once a node has joined and caught up with the cluster."""
    status = dict(server._execute(
        "SHOW STATUS LIKE 'wsrep_local_state_comment'"))
    return status.get('wsrep_local_state_comment') == 'Synced'


class GaleraCluster(fixtures.Fixture):
    """:data:`NODES` MariaDB Galera nodes on 127.0.0.1, one cluster.

    After setUp, ``nodes`` are the
    :class:`~shelvefix.backends.mariadb.MariaDBServer` of each node, in
    the order they joined, and ``admin_url(i)`` the ``placement`` role's
    URL on node ``i``.
    """

    def __init__(self, nodes=NODES):
        super().__init__()
        self.size = nodes
        self.nodes = []

    def _setUp(self):
        mariadb.ensure_installed(
            packages=(mariadb.PACKAGE, mariadb.GALERA_PACKAGE))
        ports = [dict(port=mariadb.free_port(), gcomm=mariadb.free_port(),
                      ist=mariadb.free_port(), sst=mariadb.free_port())
                 for _i in range(self.size)]
        members = ','.join('127.0.0.1:%d' % p['gcomm'] for p in ports)
        for index, node_ports in enumerate(ports):
            first = index == 0
            options = ';'.join(
                [option.format(**node_ports) for option in _PROVIDER_OPTIONS]
                + [_EVS])
            config = _NODE_CONFIG.format(
                provider=mariadb.GALERA_PROVIDER, cluster=CLUSTER_NAME,
                members=members, index=index + 1, options=options,
                **node_ports)
            # One after the other: two joining at once can make a node
            # flap.
            self.nodes.append(self.useFixture(mariadb.MariaDBServer(
                port=node_ports['port'], extra_config=config,
                install_db=first,
                start_args=['--wsrep-new-cluster'] if first else [],
                ready=synced, create_role=first,
                packages=(mariadb.PACKAGE, mariadb.GALERA_PACKAGE))))
            if not first:
                # The role came with the state transfer.
                self.nodes[-1].admin_url = self.nodes[0].admin_url.replace(
                    ':%d/' % self.nodes[0].port, ':%d/' % node_ports['port'])

    def admin_url(self, index):
        return self.nodes[index].admin_url

    def cluster_size(self, index=0):
        """What node ``index`` says the cluster's size is."""
        return int(dict(self.nodes[index]._execute(
            "SHOW STATUS LIKE 'wsrep_cluster_size'"))['wsrep_cluster_size'])

    def status(self, names):
        """The global status counters of each running node (dicts)."""
        return [node.status(names) for node in self.nodes
                if node.process is not None]

    def kill(self, index):
        """SIGKILL node ``index``, as a crash would (its data stays)."""
        self.nodes[index].kill()

    def restart(self, index):
        """Start node ``index`` again; returns once it is ``Synced``.

        Its data directory is as the crash left it; it rejoins with a state
        transfer from another node.
        """
        self.nodes[index].start(args=[])


MULTI = 'multi'
SINGLE = 'single'
WRITERS = (MULTI, SINGLE)
#: Seconds a server that failed a request is left out of the rotation.
HEALTH_INTERVAL = 2.0


class SpreadTransport(transport.HTTPTransport):
    """Real HTTP to several placement servers, one request after another.

    Mounted at the first server's endpoint, it sends each request to the
    next server in turn (``multi``: every node is written through, the
    worst case for Galera's certification), or every one to the first
    (``single``, as operators who fear it configure HAProxy, the others
    standing by). Like a load balancer's health check, a server that
    failed a request (no answer, or a 5xx) is left out for
    :data:`HEALTH_INTERVAL` seconds: requests fail over to the others. The
    call log is one, in order, as for one server.

    :param urls: the servers' endpoints; the first is the one mounted
    """

    def __init__(self, urls, writers=MULTI):
        super(SpreadTransport, self).__init__()
        self.urls = [url.rstrip('/') for url in urls]
        self.writers = writers
        self._next = itertools.count()
        self._lock = threading.Lock()
        #: ``{url: time}`` until which a failed server is left out.
        self.down = {}
        #: ``{url: count}`` of the requests that failed there.
        self.failures = {}

    def _forward(self, request, data, options):
        target = self._choose()
        request.url = target + request.url[len(self.urls[0]):]
        try:
            response = super(SpreadTransport, self)._forward(request, data,
                                                             options)
        except Exception:
            self._failed(target)
            raise
        if response.status_code >= 500:
            self._failed(target)
        return response

    def _choose(self, clock=time.monotonic):
        # As a load balancer's health check: a server that failed is left
        # out for HEALTH_INTERVAL seconds; a failed request is not sent
        # again (the client sees it fail).
        with self._lock:
            now = clock()
            healthy = [url for url in self.urls
                       if self.down.get(url, 0) <= now] or self.urls
            if self.writers == SINGLE:
                # The first healthy one: the others are the standbys.
                return healthy[0]
            return healthy[next(self._next) % len(healthy)]

    def _failed(self, url, clock=time.monotonic):
        with self._lock:
            self.down[url] = clock() + HEALTH_INTERVAL
            self.failures[url] = self.failures.get(url, 0) + 1


class GaleraPlacement(fixtures.Fixture):
    """Placement on a Galera cluster: a placement server on each node.

    One database (created on the first node, replicated to the others);
    one :class:`~shelvefix.backends.server.PlacementServer` per node,
    connected to that node alone, as a deployment's API servers each
    behind their local database. Cleanup stops the servers, drops the
    database and stops the cluster.

    After setUp: ``cluster``, ``servers``, ``urls``, ``shelvefix_config``
    (the first server's ``[placement]`` file), and ``database``
    (``'galera'``).
    """

    database = 'galera'

    def __init__(self, workers=2):
        super().__init__()
        self.workers = workers

    def _setUp(self):
        self.cluster = self.useFixture(GaleraCluster())
        database = self.useFixture(
            mariadb.MariaDBDatabase(self.cluster.admin_url(0)))
        self.servers = []
        for node in self.cluster.nodes:
            # One after the other: the first migrates, the others find it
            # done.
            url = database.url.replace(':%d/' % self.cluster.nodes[0].port,
                                       ':%d/' % node.port)
            self.servers.append(self.useFixture(server.PlacementServer(
                db_url=url, workers=self.workers)))
        self.urls = [srv.url for srv in self.servers]
        self.shelvefix_config = self.servers[0].shelvefix_config

    def counters(self):
        """The cluster's conflict counters, summed over its nodes.

        Deadlocks and row lock waits (InnoDB), certification failures
        (``wsrep_local_cert_failures``: a commit refused because another
        node committed a conflicting write set first) and brute-force
        aborts (``wsrep_local_bf_aborts``: a local transaction killed by a
        replicated one).
        """
        names = {'Innodb_deadlocks': 'deadlocks',
                 'Innodb_row_lock_waits': 'lock waits',
                 'wsrep_local_cert_failures': 'certification failures',
                 'wsrep_local_bf_aborts': 'brute-force aborts'}
        total = dict.fromkeys(names.values(), 0)
        for status in self.cluster.status(names):
            for name, value in status.items():
                total[names[name]] += value
        return total

    def ghost_consumers(self):
        return self.servers[0].ghost_consumers()

    def spread(self, placement, writers=MULTI):
        """Make ``placement`` (a remote fixture on the first server) spread.

        :returns: the :class:`SpreadTransport` mounted in its session
        """
        spread = SpreadTransport(self.urls, writers)
        placement.session.session.mount(placement.endpoint, spread)
        placement.transport = spread
        placement.addCleanup(spread.close)
        return spread


class NodeCrash(threading.Thread):
    """Kill one node mid-run, then start it again: a crash and a recovery.

    Started before a run: after ``after`` seconds node ``index`` gets
    SIGKILL; ``down_for`` seconds later it is started again, and the
    thread ends once it is ``Synced`` (a full state transfer), or failed
    to be (bounded by the node's start timeout). Unless ``cancel`` is set
    before the kill, which then does not happen.

    After :meth:`join`: ``killed_at`` and ``synced_at`` (seconds since
    start, or None) and ``error`` (why the node did not come back).
    """

    def __init__(self, cluster, index, after=2.0, down_for=5.0):
        super(NodeCrash, self).__init__(name='galera-node-crash',
                                        daemon=True)
        self.cluster = cluster
        self.index = index
        self.after = after
        self.down_for = down_for
        self.cancel = threading.Event()
        self.killed_at = self.synced_at = self.error = None

    @property
    def timeout(self):
        """How long :meth:`join` may have to wait, at most."""
        return (self.after + self.down_for + mariadb.START_TIMEOUT +
                mariadb.STOP_TIMEOUT)

    def run(self):
        started = time.monotonic()
        if self.cancel.wait(self.after):
            return
        self.cluster.kill(self.index)
        self.killed_at = time.monotonic() - started
        time.sleep(self.down_for)
        try:
            self.cluster.restart(self.index)
            self.synced_at = time.monotonic() - started
        except Exception as e:
            self.error = '%s: %s' % (type(e).__name__, e)

    def describe(self):
        """One line: what happened to the node."""
        node = 'node %d' % (self.index + 1)
        if self.killed_at is None:
            return '%s not killed: the run ended first' % node
        if self.error is not None:
            return '%s killed at %.1f s, did not come back: %s' % (
                node, self.killed_at, self.error)
        return ('%s killed (SIGKILL) at %.1f s, started again %.1f s '
                'later, Synced at %.1f s' % (node, self.killed_at,
                                             self.down_for, self.synced_at))
