"""benchmarks/bench_targets.py: each scenario measured where it runs.

The benchmark lives beside the package, not in it: from a checkout, or
where the wheel installs it (:mod:`shelvefix.tests.shipped`).
"""

import io
from unittest import mock

from shelvefix import race
from shelvefix.race import scenarios
from shelvefix.tests import base
from shelvefix.tests import shipped


class BenchTargetsTestCase(base.TestCase):

    def setUp(self):
        super(BenchTargetsTestCase, self).setUp()
        self.bench = shipped.use_script(self, 'benchmarks',
                                        'bench_targets.py')

    def test_the_new_scenarios_are_scenarios(self):
        self.assertLessEqual(set(self.bench.NEW_SCENARIOS),
                             set(scenarios.SCENARIOS))
        for name, actors in self.bench.NOVA_WITHOUT.items():
            self.assertLessEqual(
                set(actors), set(scenarios.get_scenario(name).actor_names))

    def test_nova_leaves_out_the_actors_named_and_the_library_none(self):
        name = race.LIVE_MIGRATE_ABORT
        nova = self.bench.race_argv(race.NOVA, name, 2)
        library = self.bench.race_argv(race.LIBRARY, name, 2)
        self.assertEqual(['--without', 'periodic-1', '--without',
                          'periodic-2'], nova[-4:])
        self.assertNotIn('--without', library)
        self.assertEqual(['--workers', '2', '--json'], library[-3:])

    def rows(self, name, lib_runs=10, nova_runs=20):
        def row(target, runs):
            return dict(target=target, scenario=name, workers=1, runs=runs,
                        search=runs / 10.0, wall=runs / 5.0, cells=1,
                        status=0)
        return [row(race.LIBRARY, lib_runs), row(race.NOVA, nova_runs)]

    def printed(self, func, *args):
        with mock.patch('sys.stdout', io.StringIO()) as out:
            func(*args)
        return out.getvalue().splitlines()

    def test_ratios_of_the_same_search(self):
        rows = self.rows(race.LIVE_MIGRATE)
        self.printed(self.bench.print_rows, rows)
        lines = self.printed(self.bench.print_ratios, rows,
                             [race.LIVE_MIGRATE], [1])
        self.assertEqual(['live-migrate', '1', '2.00x', '1.00x', '2.00x'],
                         lines[-1].split())

    def test_no_ratio_where_the_searches_differ_or_one_target_lacks_it(self):
        differ = self.rows(race.LIVE_MIGRATE_ABORT)
        absent = [dict(target=race.LIBRARY, scenario=race.RESIZE, workers=1,
                       absent=True),
                  self.rows(race.RESIZE)[1]]
        lines = self.printed(self.bench.print_rows, differ + absent)
        self.assertEqual(['resize', 'library', '1'] + ['-'] * 6,
                         lines[3].split())
        lines = self.printed(self.bench.print_ratios, differ + absent,
                             [race.LIVE_MIGRATE_ABORT, race.RESIZE], [1])
        self.assertEqual(['live-migrate-abort', '1', '-', '-', '-'],
                         lines[-2].split())
        self.assertEqual(['resize', '1', '-', '-', '-'], lines[-1].split())
