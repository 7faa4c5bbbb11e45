"""``--cluster`` on ``race`` and ``corpus``: what is refused, in one line.

Exploring on a real Dask cluster is in the functional tests
(``shelvefix/tests/functional/cluster``).
"""

import io
from unittest import mock

from shelvefix import cluster
from shelvefix.cmd import main
from shelvefix.tests import base


class ClusterOptionsTestCase(base.TestCase):

    def run_main(self, *argv):
        out, err = io.StringIO(), io.StringIO()
        with mock.patch('sys.stderr', err):
            rc = main.main(list(argv), out=out)
        return rc, out.getvalue(), err.getvalue()

    def assertRefused(self, words, *argv):
        rc, out, err = self.run_main(*argv)
        self.assertEqual(2, rc, err)
        self.assertEqual('', out)
        self.assertEqual(1, len(err.splitlines()), err)
        self.assertIn(words, err)
        self.assertNotIn('Traceback', err)

    def test_bad_values(self):
        for command in ('race', 'corpus'):
            self.assertRefused('--cluster local:0: local:N needs a number',
                               command, '--cluster', 'local:0')
            self.assertRefused('expected local, local:N',
                               command, '--cluster', 'dask://x:1')

    def test_engine_not_installed(self):
        with mock.patch.object(cluster, 'available', return_value=False):
            for command in ('race', 'corpus'):
                self.assertRefused(
                    "--cluster local:2 needs Dask's distributed engine, "
                    "which is not installed: pip install "
                    "'shelvefix[cluster]'", command, '--cluster', 'local:2')

    def test_local_needs_no_engine(self):
        with mock.patch.object(cluster, 'available', return_value=False):
            rc, out, _err = self.run_main('race', '--backend', 'double',
                                          '--workers', '1', '--cluster',
                                          'local')
        self.assertEqual(0, rc)
        self.assertIn('Corrected order: no bad outcome', out)

    def test_forked_workers_beside_a_cluster(self):
        self.assertRefused('--workers applies to --cluster local', 'race',
                           '--backend', 'double', '--workers', '2',
                           '--cluster', 'local:2')
        self.assertRefused('--workers applies to --cluster local', 'corpus',
                           '--workers', '2', '--cluster', 'local:2')

    def test_random_runs_are_not_distributed(self):
        self.assertRefused('--cluster applies to an exploration, not to '
                           '--random runs', 'race', '--random', '2',
                           '--cluster', 'local:2')

    def test_no_scheduler_there(self):
        from shelvefix.cluster import engine
        with mock.patch.object(engine, 'CONNECT_TIMEOUT', 0.5):
            with mock.patch('distributed.Client',
                            side_effect=OSError('Timed out trying to '
                                                'connect')):
                self.assertRefused(
                    '--cluster tcp://127.0.0.1:9: no Dask scheduler answers '
                    'there (Timed out trying to connect)', 'race',
                    '--backend', 'double', '--cluster', 'tcp://127.0.0.1:9')
