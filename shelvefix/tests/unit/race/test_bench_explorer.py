"""benchmarks/bench_explorer.py knows every scenario of the race lab.

The benchmark lives beside the package, not in it: from a checkout, or
where the wheel installs it (:mod:`shelvefix.tests.shipped`).
"""

import io
from unittest import mock

from shelvefix import race
from shelvefix.tests import base
from shelvefix.tests import shipped


class BenchExplorerTestCase(base.TestCase):

    def setUp(self):
        super(BenchExplorerTestCase, self).setUp()
        self.bench = shipped.use_script(self, 'benchmarks',
                                        'bench_explorer.py')

    def test_every_scenario_says_whether_its_unreduced_search_runs(self):
        self.assertEqual(set(self.bench.LIBRARY_SCENARIOS),
                         set(self.bench.UNREDUCED_RUNS))
        self.assertLess(set(self.bench.LIBRARY_SCENARIOS),
                        set(race.SCENARIOS))

    def test_default_scenarios_are_scenarios(self):
        self.assertLessEqual(set(self.bench.DEFAULT_SCENARIOS),
                             set(race.SCENARIOS))

    def test_a_ratio_over_no_run_is_no_figure(self):
        # The search made no run: no time per run, no speed-up, and the
        # script says so instead of printing a figure.
        err = io.StringIO()
        with mock.patch.object(self.bench, 'explore_scenario',
                               return_value=([], 0.0)), \
                mock.patch.object(self.bench, 'machine_speedup',
                                  return_value=1.9), \
                mock.patch('sys.stderr', err), \
                mock.patch('sys.stdout', io.StringIO()) as out:
            rc = self.bench.figures.main(self.bench.main, [
                '--backend', 'double', '--scenario', race.OFFLOAD_UNSHELVE])
        self.assertEqual((1, ''), (rc, out.getvalue()))
        self.assertEqual('bench_explorer.py: no figure: offload-unshelve on '
                         'double s/run: the denominator is 0, nothing was '
                         'measured\n', err.getvalue())

    def run_bench(self, argv, same=True):
        row = {'backend': 'double', 'scenario': race.OFFLOAD_UNSHELVE,
               'reduced': 10, 'counted': 12, 'unreduced': 12,
               'seconds_1_worker': 2.0, 'run_ms': 200.0,
               'requests_ms': 100.0, 'cost_ratio': 2.0, 'blocked': 0,
               'bad': {}}

        def measure(backend, name, cluster_engine=None):
            if cluster_engine is not None:
                return dict(row, seconds_cluster=0.5, cluster_same=same,
                            cluster_speedup=4.0)
            return dict(row)
        engine = mock.MagicMock(width=2)
        engine.__enter__.return_value = engine
        with mock.patch.object(self.bench, 'measure', side_effect=measure), \
                mock.patch.object(self.bench, 'machine_speedup',
                                  return_value=1.9), \
                mock.patch('shelvefix.cluster.available',
                           return_value=True), \
                mock.patch('shelvefix.cluster.engine.Engine',
                           return_value=engine) as make_engine, \
                mock.patch('sys.stderr', io.StringIO()) as err, \
                mock.patch('sys.stdout', io.StringIO()) as out:
            try:
                rc = self.bench.main(argv)
            except SystemExit as e:
                rc = e.code
        return rc, out.getvalue(), err.getvalue(), make_engine

    def test_on_a_cluster_too(self):
        rc, out, _err, make_engine = self.run_bench(
            ['--backend', 'double', '--scenario', race.OFFLOAD_UNSHELVE,
             '--cluster', 'local:2'])
        self.assertEqual(0, rc)
        self.assertEqual('local:2', make_engine.call_args[0][0].text)
        self.assertIn('cluster s  speedup', out)
        self.assertIn('     0.50    4.00x', out)
        self.assertIn('cluster: the same cells on --cluster local:2 (2 '
                      'workers)', out)

    def test_other_runs_on_the_cluster_fail_the_benchmark(self):
        rc, out, _err, _engine = self.run_bench(
            ['--backend', 'double', '--scenario', race.OFFLOAD_UNSHELVE,
             '--cluster', 'tcp://127.0.0.1:8786'], same=False)
        self.assertEqual(1, rc)
        self.assertIn('MISMATCH: offload-unshelve on double: the cluster '
                      'did not make the same runs', out)

    def test_without_a_cluster_no_column(self):
        rc, out, _err, make_engine = self.run_bench(
            ['--backend', 'double', '--scenario', race.OFFLOAD_UNSHELVE])
        self.assertEqual(0, rc)
        self.assertNotIn('cluster', out)
        make_engine.assert_not_called()

    def test_a_bad_cluster_is_one_line(self):
        rc, out, err, _engine = self.run_bench(['--cluster', 'local:x'])
        self.assertEqual((2, ''), (rc, out))
        # argparse's usage, then one line naming what was wrong.
        self.assertIn('error: --cluster local:x',
                      err.strip().splitlines()[-1])

    def test_the_cluster_is_compared_run_for_run(self):
        from shelvefix.race import digest
        from shelvefix.race import scenarios
        cell = scenarios.Cell('corrected', 'delete', None)
        exploration = mock.Mock(runs=[])
        result = mock.Mock(cell=cell, digest=digest.digest(exploration))
        lab = mock.MagicMock()
        lab.__enter__.return_value = lab
        lab.explore_many.return_value = [result]
        with mock.patch('shelvefix.cluster.lab.ClusterLab',
                        return_value=lab):
            seconds, same = self.bench.on_cluster(
                mock.Mock(), 'double', race.OFFLOAD_UNSHELVE,
                [(cell, exploration)])
            self.assertTrue(same)
            self.assertGreaterEqual(seconds, 0)
            result.digest = 'other'
            self.assertFalse(self.bench.on_cluster(
                mock.Mock(), 'double', race.OFFLOAD_UNSHELVE,
                [(cell, exploration)])[1])
