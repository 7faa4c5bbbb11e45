"""``shelvefix faults --database galera`` leaves nothing it started running.

The command starts a three-node Galera cluster (real ``mariadbd``
processes, Debian's ``mariadb-server`` and ``galera-4``, installed when run
as root), a database proxy and a placement server (gunicorn) per node.
The matrix is cut to one kind of fault, so that the test takes the
cluster's start and stop, not the whole matrix. The processes the command
starts are found by a marker in their environment, which every child
inherits; the ports are those of the cluster it started. The test skips,
saying why, when MariaDB or Galera cannot be had;
``SHELVEFIX_REQUIRE_PLACEMENT_SERVER=1`` turns the skip into a failure.
"""

import io
import os
from unittest import mock
import uuid

import fixtures

from shelvefix.backends import galera
from shelvefix.cmd import main
from shelvefix.race import fault_matrix
from shelvefix.tests import base
from shelvefix.tests.functional.backends import test_galera
from shelvefix.tests.functional.backends import test_mariadb
from shelvefix.tests.functional.cmd import test_interrupt


class FaultsOnGaleraTestCase(base.TestCase):

    def setUp(self):
        super().setUp()
        test_galera.require_galera(self)

    def test_nothing_it_started_outlives_it(self):
        marker = uuid.uuid4().hex
        self.useFixture(fixtures.EnvironmentVariable(test_interrupt.MARKER,
                                                     marker))
        seen = {}
        real_run_matrix = fault_matrix.run_matrix
        real_spread = galera.GaleraPlacement.spread

        def spread(cluster, placement, *args, **kwargs):
            seen['cluster'] = cluster
            return real_spread(cluster, placement, *args, **kwargs)

        def run_matrix(placement, frees, progress=None):
            # What runs while the command runs: the nodes, the servers
            # (gunicorn's master and its workers), all marked.
            seen['processes'] = test_interrupt.processes_with(marker)
            return real_run_matrix(placement, frees=frees,
                                   progress=progress)

        out, err = io.StringIO(), io.StringIO()
        # One kind of fault: the matrix, and so the cases the command
        # must see run before it says clean, is that kind's.
        with mock.patch.object(galera.GaleraPlacement, 'spread', spread), \
                mock.patch.object(fault_matrix, 'KINDS',
                                  fault_matrix.KINDS[:1]), \
                mock.patch.object(fault_matrix, 'run_matrix', run_matrix), \
                mock.patch('sys.stderr', err):
            rc = main.main(['faults', '--database', 'galera', '--free',
                            'delete'], out=out)
        self.assertEqual(0, rc, err.getvalue())
        self.assertIn('Lost: 0 (must be 0)', out.getvalue())
        cluster = seen['cluster']
        # Three nodes, three gunicorn masters with their workers at least.
        self.assertGreaterEqual(len(seen['processes']), 3 + 3 * 2,
                                seen['processes'])
        test_interrupt.wait_for(
            lambda: not test_interrupt.processes_with(marker),
            'no process left', 10)
        ports = ([node.port for node in cluster.cluster.nodes] +
                 [proxy.port for proxy in cluster.proxies] +
                 [int(url.rsplit(':', 1)[1]) for url in cluster.urls])
        self.assertEqual(9, len(set(ports)))
        self.assertEqual([], [p for p in ports if test_mariadb.listening(p)])
        self.assertEqual(
            [], [node.directory for node in cluster.cluster.nodes
                 if os.path.exists(node.directory)])
