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
answering is evicted in about 3 s instead of about 6).
"""

import functools
import os
import re
import signal
import time

import fixtures
from oslo_log import log as logging
from sqlalchemy.engine import url as sa_url

from shelvefix import backends
from shelvefix.backends import loadbalancer
from shelvefix.backends import mariadb
from shelvefix.backends import observe
from shelvefix.backends import ports
from shelvefix.backends import server

LOG = logging.getLogger(__name__)

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


#: The status counters the report reads, and their names there.
COUNTERS = {'Innodb_deadlocks': 'deadlocks',
            'Innodb_row_lock_waits': 'lock waits',
            'wsrep_local_cert_failures': 'certification failures',
            'wsrep_local_bf_aborts': 'brute-force aborts'}
#: Seconds a node's health check may take.
CHECK_TIMEOUT = 2
#: Bytes of the file system of a node whose disk is to fill.
SMALL_DISK = 512 << 20


def synced(server, timeout=mariadb.TIMEOUT):
    """True once a node has joined and caught up with the cluster."""
    status = dict(server._execute(
        "SHOW STATUS LIKE 'wsrep_local_state_comment'", timeout=timeout))
    return status.get('wsrep_local_state_comment') == 'Synced'


def clustercheck(server):
    """A load balancer's health check of a node: running and ``Synced``."""
    return server.process is not None and synced(server, CHECK_TIMEOUT)


class GaleraCluster(fixtures.Fixture):
    """:data:`NODES` MariaDB Galera nodes on 127.0.0.1, one cluster.

    After setUp, ``nodes`` are the
    :class:`~shelvefix.backends.mariadb.MariaDBServer` of each node, in
    the order they joined, and ``admin_url(i)`` the ``placement`` role's
    URL on node ``i``.
    """

    def __init__(self, nodes=NODES, small_disk=None):
        super().__init__()
        self.size = nodes
        self.small_disk = small_disk
        self.nodes = []
        self._carried = [{} for _i in range(nodes)]
        self.unread = []

    def _setUp(self):
        mariadb.ensure_installed(
            packages=(mariadb.PACKAGE, mariadb.GALERA_PACKAGE))
        each = [dict(port=ports.free_port(), gcomm=ports.free_port(),
                     ist=ports.free_port(), sst=ports.free_port())
                for _i in range(self.size)]
        members = ','.join('127.0.0.1:%d' % p['gcomm'] for p in each)
        for index, node_ports in enumerate(each):
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
                packages=(mariadb.PACKAGE, mariadb.GALERA_PACKAGE),
                disk_size=SMALL_DISK if index == self.small_disk else None)))

    def admin_url(self, index):
        return self.nodes[index].admin_url

    def describe(self, index):
        """``node 3 (127.0.0.1:40123, pid 4567)``: a node, for a report."""
        node = self.nodes[index]
        return 'node %d (127.0.0.1:%d, pid %s)' % (index + 1, node.port,
                                                   node.pid)

    def alive(self, index):
        """Whether node ``index``'s process runs (it may be paused)."""
        process = self.nodes[index].process
        return process is not None and process.poll() is None

    def cluster_size(self, index=0):
        """What node ``index`` says the cluster's size is."""
        return int(dict(self.nodes[index]._execute(
            "SHOW STATUS LIKE 'wsrep_cluster_size'"))['wsrep_cluster_size'])

    def status(self, names):
        """The global status counters of each node (dicts).

        A node restarts its counters from 0: what it had counted when it
        was killed is carried over (see :meth:`kill`), so that the
        counters only grow; a node that is down, or died, or does not
        answer gives those alone, and is named in ``unread`` (a list of
        :meth:`describe` lines with the reason) until the next reading.
        """
        result = []
        self.unread = []
        for index, (node, carried) in enumerate(zip(self.nodes,
                                                    self._carried)):
            counted = {}
            if self.alive(index):
                try:
                    counted = node.status(names)
                except Exception as e:
                    self.unread.append('%s: %s' % (
                        self.describe(index), ' '.join(str(e).split())))
            elif node.process is not None:
                self.unread.append('%s: it died (exit status %s)' % (
                    self.describe(index), node.process.poll()))
            result.append({name: counted.get(name, 0) + carried.get(name, 0)
                           for name in names
                           if name in counted or name in carried})
        return result

    def kill(self, index):
        """SIGKILL node ``index``, as a crash would (its data stays).

        Its counters of :data:`COUNTERS` are read first, and carried over
        (what it counts between that read and the kill is not).
        """
        node = self.nodes[index]
        if node.process is not None:
            try:
                counted = node.status(COUNTERS)
            except Exception as e:
                LOG.warning('Node %d: counters not read before the kill: '
                            '%s', index + 1, e)
                counted = {}
            for name, value in counted.items():
                self._carried[index][name] = (
                    self._carried[index].get(name, 0) + value)
        node.kill()

    def pause(self, index):
        """SIGSTOP node ``index``: it stops answering, its sockets open."""
        self.nodes[index].process.send_signal(signal.SIGSTOP)

    def resume(self, index):
        """SIGCONT node ``index``; returns once the cluster is whole.

        The resumed node finds it was evicted and rejoins; on the way the
        whole cluster can lose its primary component for seconds (every
        node ``non-Primary``, seen here): see :meth:`wait_whole`.

        :raises ServerStartError: not whole within the node's start
            timeout
        """
        self.nodes[index].process.send_signal(signal.SIGCONT)
        self.wait_whole('node %d was resumed' % (index + 1))

    def whole(self):
        """Whether every node runs, is ``Synced`` and sees all the others.

        A node's own ``Synced`` is not enough after a fault: the others
        may still be in the view change its return causes.
        """
        for node in self.nodes:
            if node.process is None:
                return False
            status = dict(node._execute(
                "SHOW STATUS LIKE 'wsrep_%'", timeout=CHECK_TIMEOUT))
            if (status.get('wsrep_local_state_comment') != 'Synced' or
                    status.get('wsrep_cluster_status') != 'Primary' or
                    status.get('wsrep_cluster_size') != str(len(self.nodes))):
                return False
        return True

    def wait_whole(self, since, timeout=mariadb.START_TIMEOUT,
                   interval=0.2):
        """Return once :meth:`whole`, twice ``interval`` apart.

        :param since: what happened, for the error
        :raises ServerStartError: not whole within ``timeout`` seconds
        """
        deadline = time.monotonic() + timeout
        seen = 0
        while seen < 2:
            try:
                seen = seen + 1 if self.whole() else 0
            except Exception as e:
                LOG.debug('Cluster not answering yet: %s', e)
                seen = 0
            if seen < 2:
                if time.monotonic() >= deadline:
                    raise backends.ServerStartError(
                        'the cluster was not whole (every node Synced, in '
                        'one primary component) %.0f s after %s'
                        % (timeout, since))
                time.sleep(interval)

    def restart(self, index):
        """Start node ``index`` again; returns once the cluster is whole.

        Its data directory is as the crash left it. As the packaged
        service's start does (``galera_recovery``), the position the node
        had committed is first recovered from its storage engine
        (``--wsrep-recover``) and given to the start
        (``--wsrep-start-position``): the node then catches up with an
        incremental state transfer of what it missed, from a donor's
        write-set cache, instead of a full copy that blocks the donor.
        Without a position it could recover, it gets the full copy.
        """
        node = self.nodes[index]
        position = recovered_position(node)
        node.start(args=['--wsrep-start-position=%s' % position]
                   if position else [])
        self.wait_whole('node %d was started again' % (index + 1))


_RECOVERED = re.compile(r'WSREP: Recovered position:\s*(\S+:-?\d+)')


def recovered_position(node):
    """``uuid:seqno`` a stopped node last committed, or None.

    Runs ``mariadbd --wsrep-recover`` on its data, which writes the
    position to a log of its own and exits.
    """
    log = os.path.join(node.directory, 'recover.log')
    if os.path.exists(log):
        os.unlink(log)
    try:
        node._run([mariadb._tool('mariadbd'),
                   '--defaults-file=%s' % node.defaults_file,
                   '--wsrep-recover', '--log-error=%s' % log],
                  'mariadbd --wsrep-recover')
        with open(log) as f:
            found = _RECOVERED.findall(f.read())
    except (OSError, backends.ServerStartError) as e:
        LOG.warning('Node %s: no position recovered, it gets a full state '
                    'transfer: %s', node.port, e)
        return None
    if not found or found[-1].endswith(':-1'):
        return None
    return found[-1]


class GaleraPlacement(fixtures.Fixture):
    """Placement on a Galera cluster: a placement server on each node.

    One database; a :class:`~shelvefix.backends.server.PlacementServer`
    per node, each through a :class:`~shelvefix.backends.loadbalancer.
    DatabaseProxy` of its own as through HAProxy (its node first, the
    others as backups). ``small_disk``: the last node's data on a small
    file system of its own. After setUp: ``cluster``, ``proxies``,
    ``servers``, ``urls``, ``shelvefix_config`` (the first server's
    ``[placement]`` file), ``database_name``.
    """

    database = 'galera'

    def __init__(self, workers=2, small_disk=False):
        super().__init__()
        self.workers = workers
        self.small_disk = small_disk

    def _setUp(self):
        self.cluster = self.useFixture(GaleraCluster(
            small_disk=NODES - 1 if self.small_disk else None))
        database = self.useFixture(
            mariadb.MariaDBDatabase(self.cluster.admin_url(0)))
        self.servers, self.proxies = [], []
        url = sa_url.make_url(database.url)
        self.database_name = url.database
        self._node_urls = [
            url.set(port=node.port).render_as_string(hide_password=False)
            for node in self.cluster.nodes]
        for index in range(len(self.cluster.nodes)):
            order = [index] + [i for i in range(len(self.cluster.nodes))
                               if i != index]
            proxy = self.useFixture(loadbalancer.DatabaseProxy(
                [(self.cluster.nodes[i].port,
                  functools.partial(clustercheck, self.cluster.nodes[i]))
                 for i in order]))
            self.proxies.append(proxy)
            # One after the other: the first migrates, the others find it
            # done.
            self.servers.append(self.useFixture(server.PlacementServer(
                db_url=url.set(port=proxy.port).render_as_string(
                    hide_password=False),
                workers=self.workers)))
        self.urls = [srv.url for srv in self.servers]
        self.shelvefix_config = self.servers[0].shelvefix_config

    def counters(self):
        """The cluster's conflict counters, summed over its nodes.

        Deadlocks and row lock waits (InnoDB), certification failures
        (``wsrep_local_cert_failures``: a commit refused because another
        node committed a conflicting write set first) and brute-force
        aborts (``wsrep_local_bf_aborts``: a local transaction killed by a
        replicated one); what the database proxies did: nodes they
        marked down, sessions they shut; and what placement's servers
        retried (see :meth:`~shelvefix.backends.server.PlacementServer.
        placement_retries`).
        """
        total = dict.fromkeys(COUNTERS.values(), 0)
        for status in self.cluster.status(COUNTERS):
            for name, value in status.items():
                total[COUNTERS[name]] += value
        total.update(self.failover())
        for srv in self.servers:
            for name, value in srv.placement_retries().items():
                total[name] = total.get(name, 0) + value
        return total

    def observer(self):
        """An :class:`~.observe.Observer` of each node, reads causal.

        Its own connections (not the proxies', not placement's); close it.
        """
        return observe.Observer(
            self._node_urls, names=[self.cluster.describe(i) for i in range(
                len(self.cluster.nodes))], sync_wait=True)

    def describe_server(self, index):
        """``placement server 3 (http://127.0.0.1:40125, pid 4567)``."""
        srv = self.servers[index]
        return 'placement server %d (%s, pid %s)' % (index + 1, srv.url,
                                                     srv.pid)

    def failover(self):
        """What the proxies did: nodes marked down, sessions shut."""
        return {'nodes marked down': sum(p.marked_down for p in self.proxies),
                'sessions shut': sum(p.sessions_shut for p in self.proxies)}

    def spread(self, placement, writers=loadbalancer.MULTI):
        """Make ``placement`` (a remote fixture on the first server) spread.

        :returns: the :class:`~shelvefix.backends.loadbalancer.
            SpreadTransport` mounted in its session
        """
        spread = loadbalancer.SpreadTransport(self.urls, writers)
        spread.names = dict((u, self.describe_server(i))
                            for i, u in enumerate(self.urls))
        placement.session.session.mount(placement.endpoint, spread)
        placement.transport = spread
        placement.addCleanup(spread.close)
        return spread
