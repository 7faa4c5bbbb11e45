"""A three-node Galera cluster on loopback: it replicates, survives a crash
of one node, and leaves nothing behind.

Real ``mariadbd`` processes with Galera (Debian's ``mariadb-server``,
``galera-4`` and ``rsync``, installed by the fixture when run as root).
The tests skip, saying why, when they cannot be had;
``SHELVEFIX_REQUIRE_PLACEMENT_SERVER=1`` turns the skips into failures.
"""

import os
import time

import requests

from shelvefix import backends
from shelvefix.backends import galera
from shelvefix.backends import mariadb
from shelvefix.tests import base
from shelvefix.tests.functional.backends import test_mariadb
from shelvefix.tests.functional.backends import test_server


def require_galera(test):
    """Skip ``test`` (or fail it, see above) if Galera cannot be had."""
    test_server._require(test, 'mariadb')
    try:
        mariadb.ensure_installed(
            packages=(mariadb.PACKAGE, mariadb.GALERA_PACKAGE))
    except backends.BackendUnavailable as e:
        test_server._unavailable(test, 'no Galera: %s' % e)


class GaleraClusterTestCase(base.TestCase):

    def setUp(self):
        super(GaleraClusterTestCase, self).setUp()
        require_galera(self)

    def test_replicates_survives_a_crash_and_leaves_nothing(self):
        cluster = galera.GaleraCluster()
        cluster.setUp()
        try:
            self.assertEqual([3, 3, 3], [cluster.cluster_size(i)
                                         for i in range(3)])
            first, last = cluster.nodes[0], cluster.nodes[2]
            first._execute('CREATE DATABASE t',
                           'CREATE TABLE t.x (id INT PRIMARY KEY)',
                           'INSERT INTO t.x VALUES (1)')
            # A read that waits for what the cluster committed before it.
            self.assertEqual(((1,),), last._execute(
                'SET SESSION wsrep_sync_wait = 1', 'SELECT id FROM t.x'))
            cluster.kill(2)
            first._execute('INSERT INTO t.x VALUES (2)')
            cluster.restart(2)
            self.assertTrue(galera.synced(last))
            self.assertEqual(((1,), (2,)), last._execute(
                'SET SESSION wsrep_sync_wait = 1',
                'SELECT id FROM t.x ORDER BY id'))
            self.assertEqual(3, cluster.cluster_size(2))
            self.assertEqual(
                3, len(cluster.status(['wsrep_local_cert_failures'])))
            pids = [node.pid for node in cluster.nodes]
            directories = [node.directory for node in cluster.nodes]
        finally:
            cluster.cleanUp()
        for pid in pids:
            self.assertRaises(ProcessLookupError, os.kill, pid, 0)
        self.assertFalse(any(os.path.exists(d) for d in directories))
        for node in cluster.nodes:
            self.assertFalse(test_mariadb.listening(node.port))

    def test_placement_fails_over_from_a_dead_node(self):
        # Placement on each node, each through its database proxy: with
        # the last node killed, that node's placement server still answers
        # (its proxy marked the node down and reconnects elsewhere), and
        # the node comes back by an incremental state transfer.
        with galera.GaleraPlacement(workers=1) as placement:
            last = placement.servers[-1]
            session = requests.Session()
            session.trust_env = False
            self.addCleanup(session.close)

            def answer():
                return session.get(
                    last.url + '/resource_providers', timeout=10,
                    headers={'X-Auth-Token': 'admin',
                             'OpenStack-API-Version': 'placement 1.20'})
            self.assertEqual(200, answer().status_code)
            placement.cluster.kill(2)
            # A write while it is down: the node has something to catch
            # up with when it comes back.
            created = session.post(
                placement.servers[0].url + '/resource_providers',
                json={'name': 'while-node-3-was-down'}, timeout=10,
                headers={'X-Auth-Token': 'admin',
                         'OpenStack-API-Version': 'placement 1.20'})
            self.assertEqual(200, created.status_code, created.text)
            proxy = placement.proxies[-1]
            for _i in range(100):
                if 0 not in proxy.up:
                    break
                time.sleep(0.1)
            self.assertNotIn(0, proxy.up)
            statuses = [answer().status_code for _i in range(3)]
            self.assertEqual(200, statuses[-1], statuses)
            self.assertGreaterEqual(
                placement.counters()['nodes marked down'], 3)
            placement.cluster.restart(2)
            # It caught up incrementally, not by a full copy.
            with open(placement.cluster.nodes[2].log_path) as f:
                self.assertIn('rsync IST completed on joiner', f.read())
