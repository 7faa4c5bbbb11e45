"""benchmarks/bench_explorer.py knows every scenario of the race lab.

The benchmark lives beside the package, not in it: these tests run from a
checkout and skip elsewhere.
"""

import importlib.util
import os

from shelvefix import race
from shelvefix.tests import base

PATH = os.path.join(os.path.dirname(os.path.dirname(race.__file__)),
                    os.pardir, 'benchmarks', 'bench_explorer.py')


class BenchExplorerTestCase(base.TestCase):

    def setUp(self):
        super(BenchExplorerTestCase, self).setUp()
        if not os.path.exists(PATH):
            self.skipTest('no checkout: %s is missing' % PATH)
        spec = importlib.util.spec_from_file_location('bench_explorer', PATH)
        self.bench = importlib.util.module_from_spec(spec)
        spec.loader.exec_module(self.bench)

    def test_every_scenario_says_whether_its_unreduced_search_runs(self):
        self.assertEqual(set(race.SCENARIOS), set(self.bench.UNREDUCED_RUNS))

    def test_default_scenarios_are_scenarios(self):
        self.assertLessEqual(set(self.bench.DEFAULT_SCENARIOS),
                             set(race.SCENARIOS))
