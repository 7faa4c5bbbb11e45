"""The unshelve-periodic and lifecycle scenarios on the library's code.

Every cell is explored on the placement double and on the real placement
service. Each pre-fix variant must show its bug's documented symptom in
the cell that triggers it, and the corrected code none anywhere:

* pre-2025480: the periodic on compute-2 stops counting the server while
  it is spawned there (``usage untracked``);
* pre-1862633: a port binding failure on compute-2 keeps compute-2's
  allocations of a server that stays offloaded (``allocations leaked``);
* legacy (1798688): the conductor's claim loses the race with compute-1's
  free (``scheduler 409``, ``claim wiped``).
"""

import logging

import fixtures
import testscenarios

from shelvefix import backends
from shelvefix.backends import real
from shelvefix import race
from shelvefix.race import outcomes
from shelvefix.race import report
from shelvefix.race import scenarios
from shelvefix.race import targets
from shelvefix.tests import base

load_tests = testscenarios.load_tests_apply_scenarios

PB = race.PORT_BINDING
EXPECTED_BAD = {
    race.UNSHELVE_PERIODIC: {
        (race.CORRECTED, None): set(),
        (race.CORRECTED, PB): set(),
        (race.PRE_2025480, None): {outcomes.USAGE_UNTRACKED},
        (race.PRE_2025480, PB): set(),
        (race.PRE_1862633, None): set(),
        (race.PRE_1862633, PB): {outcomes.LEAKED},
    },
    race.LIFECYCLE: {
        (race.CORRECTED, None): set(),
        (race.CORRECTED, PB): set(),
        (race.LEGACY, None): {outcomes.SCHEDULER_409, outcomes.CLAIM_WIPED},
        (race.PRE_2025480, None): {outcomes.USAGE_UNTRACKED},
        (race.PRE_1862633, PB): {outcomes.LEAKED},
    },
}


def _cells():
    return [('%s_%s' % (name, '_'.join(p for p in cell if p)),
             {'scenario_name': name, 'cell': cell})
            for name in (race.UNSHELVE_PERIODIC, race.LIFECYCLE)
            for cell in scenarios.get_scenario(name).cells()]


class CloudScenarioTestCase(testscenarios.WithScenarios, base.TestCase):

    scenarios = testscenarios.multiply_scenarios(
        [('double', {'backend': 'double'}), ('real', {'backend': 'real'})],
        _cells())

    def setUp(self):
        super(CloudScenarioTestCase, self).setUp()
        # Hundreds of runs: their debug logs (every request and response)
        # would make a detail larger than a subunit packet may be.
        self.useFixture(fixtures.FakeLogger(
            level=logging.WARNING,
            format='%(levelname)s %(name)s %(message)s'))
        if self.backend == 'real' and not real.available():
            self.skipTest(real.INSTALL_HINT)
        self.placement = self.useFixture(backends.make_backend(self.backend))

    def test_each_bug_shows_where_it_should(self):
        exploration = targets.explore_cell(self.placement, self.cell,
                                           scenario_name=self.scenario_name)
        self.assertTrue(exploration.complete)
        self.assertEqual(0, exploration.blocked)
        result = report.summarise(self.cell, exploration)
        bad = set(result.counts) - {outcomes.OK}
        expected = EXPECTED_BAD[self.scenario_name][(self.cell.variant,
                                                     self.cell.fault)]
        self.assertEqual(expected, bad)
        if self.cell.variant != race.PRE_1862633 or not self.cell.fault:
            self.assertGreater(result.counts[outcomes.OK], 0)
        # The runs leave nothing in placement.
        if self.placement.state is not None:
            self.assertEqual({}, self.placement.state.consumers)
            self.assertEqual({}, self.placement.state.providers)
        for run in exploration.runs:
            self.assertEqual(set(scenarios.get_scenario(
                self.scenario_name).actor_names), set(run.results))
