"""benchmarks/bench_explorer.py knows every scenario of the race lab.

The benchmark lives beside the package, not in it: these tests run from a
checkout and skip elsewhere.
"""

import importlib.util
import io
import os
import sys
from unittest import mock

import fixtures

from shelvefix import race
from shelvefix.tests import base

PATH = os.path.join(os.path.dirname(os.path.dirname(race.__file__)),
                    os.pardir, 'benchmarks', 'bench_explorer.py')


class BenchExplorerTestCase(base.TestCase):

    def setUp(self):
        super(BenchExplorerTestCase, self).setUp()
        if not os.path.exists(PATH):
            self.skipTest('no checkout: %s is missing' % PATH)
        # As when run as a script: its directory first on sys.path, for
        # its sibling module (figures).
        self.useFixture(fixtures.MonkeyPatch(
            'sys.path', [os.path.dirname(PATH)] + sys.path))
        spec = importlib.util.spec_from_file_location('bench_explorer', PATH)
        self.bench = importlib.util.module_from_spec(spec)
        spec.loader.exec_module(self.bench)

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
