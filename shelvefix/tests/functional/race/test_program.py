"""The explorer on the real shelve-offload and claim code.

Every cell of the matrix is explored on the placement double and on the
real placement service; the findings must be those of the bug doc: with
GET + PUT the legacy order shows the scheduler's 409, compute's 409 and the
silently wiped claim; with DELETE compute's 409 goes away; the corrected
order shows no bad outcome at all.
"""

import logging
import re

import fixtures
import testscenarios

from shelvefix import backends
from shelvefix.backends import real
from shelvefix.explorer import runner
from shelvefix import race
from shelvefix.race import outcomes
from shelvefix.race import report
from shelvefix.race import scenarios
from shelvefix.race import targets
from shelvefix.tests import base
from shelvefix.tests.unit.explorer import programs

load_tests = testscenarios.load_tests_apply_scenarios

EXPECTED_BAD = {
    scenarios.Cell(race.CORRECTED, race.GET_PUT): set(),
    scenarios.Cell(race.CORRECTED, race.DELETE): set(),
    scenarios.Cell(race.LEGACY, race.GET_PUT): {
        outcomes.SCHEDULER_409, outcomes.COMPUTE_409, outcomes.CLAIM_WIPED,
        outcomes.LEAKED},
    scenarios.Cell(race.LEGACY, race.DELETE): {
        outcomes.SCHEDULER_409, outcomes.CLAIM_WIPED},
    # Placement's DELETE leaves a ghost consumer in every run: the claim
    # heals it in every interleaving of the corrected order.
    scenarios.Cell(race.CORRECTED, race.DELETE, race.GHOST): set(),
    scenarios.Cell(race.LEGACY, race.DELETE, race.GHOST): {
        outcomes.CLAIM_WIPED, outcomes.LEAKED, outcomes.PLACEMENT_FAILED},
}


class ExploreCellTestCase(testscenarios.WithScenarios, base.TestCase):

    scenarios = testscenarios.multiply_scenarios(
        [('double', {'backend': 'double'}), ('real', {'backend': 'real'})],
        [('_'.join(part for part in cell if part), {'cell': cell})
         for cell in scenarios.get_scenario(
             race.OFFLOAD_UNSHELVE).cells(ghost=True)])

    def setUp(self):
        super(ExploreCellTestCase, self).setUp()
        if self.backend == 'real' and not real.available():
            self.skipTest(real.INSTALL_HINT)
        self.placement = self.useFixture(backends.make_backend(self.backend))

    def test_outcomes_match_the_bug_doc(self):
        exploration = targets.explore_cell(self.placement, self.cell)
        self._check_traces(exploration)
        result = report.summarise(self.cell, exploration)
        bad = set(result.counts) - {outcomes.OK}
        # Only the double can tell a ghost from no consumer at all.
        bad.discard(outcomes.CONSUMER_LEFT)
        self.assertEqual(EXPECTED_BAD[self.cell], bad)
        self.assertEqual(set(result.first) - {outcomes.CONSUMER_LEFT}, bad)
        self.assertGreater(result.counts[outcomes.OK], 0)
        # Nothing is left behind in placement by the runs themselves.
        if self.placement.state is not None:
            self.assertEqual({}, self.placement.state.consumers)
            self.assertEqual({}, self.placement.state.providers)

    def _check_traces(self, exploration):
        for run in exploration.runs:
            actors = {entry.step.actor for entry in run.trace}
            self.assertEqual({'compute', 'scheduler'}, actors)
            if outcomes.SCHEDULER_409 in run.outcome:
                put = [e for e in run.trace if e.step.actor == 'scheduler'
                       and e.step.label.startswith('PUT')][-1]
                self.assertIn('gen=1', put.step.label)
                self.assertIn('409 consumer generation conflict - expected '
                              'null but got 1', put.result)
            if outcomes.COMPUTE_409 in run.outcome:
                self.assertIn("expected 2 but got 1",
                              str(run.results['compute'].error))


class ReductionTestCase(base.TestCase):
    """The reduction runs each trace once and loses no finding.

    For every cell of the scenarios small enough to run every interleaving
    (offload-unshelve with its ghost cells, unshelve-periodic): the reduced
    search finds exactly the outcomes of the unreduced one, abandons no run,
    and makes one run per trace: as many runs as there are distinct traces
    (Foata normal forms) among the unreduced runs, all distinct.
    """

    def test_one_run_per_trace_and_every_outcome(self):
        # Thousands of runs: their debug logs would make a detail larger
        # than a subunit packet may be.
        self.useFixture(fixtures.FakeLogger(level=logging.WARNING))
        placement = self.useFixture(backends.make_backend('double'))
        for name in (race.OFFLOAD_UNSHELVE, race.UNSHELVE_PERIODIC):
            for cell in scenarios.get_scenario(name).cells(ghost=True):
                full = targets.explore_cell(placement, cell, reduce=False,
                                            scenario_name=name)
                reduced = targets.explore_cell(placement, cell,
                                               scenario_name=name)
                what = '%s %s' % (name, cell)
                self.assertEqual(set(full.outcome_counts()),
                                 set(reduced.outcome_counts()), what)
                traces = {programs.foata(run) for run in full.runs}
                self.assertEqual(len(traces), len(reduced.runs), what)
                self.assertEqual(
                    traces, {programs.foata(run) for run in reduced.runs},
                    what)
                self.assertEqual((0, 0), (reduced.blocked,
                                          reduced.repeated), what)

    def test_corrected_offload_leaves_one_interleaving(self):
        # compute's last shared step is the save that makes the state
        # visible, and the API client can only start after it.
        placement = self.useFixture(backends.make_backend('double'))
        for cell in scenarios.get_scenario(race.OFFLOAD_UNSHELVE).cells()[:2]:
            self.assertEqual(1, len(targets.explore_cell(
                placement, cell, reduce=False).runs))


def errors(exploration):
    """What each actor raised in each run (instance uuids left out)."""
    return [sorted((name, type(result.error).__name__,
                    UUID.sub('{uuid}', str(result.error)))
                   for name, result in run.results.items())
            for run in exploration.runs]


UUID = re.compile('[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-'
                  '[0-9a-f]{12}')


class WorkersTestCase(base.TestCase):
    """Two processes explore a lifecycle cell exactly as one does."""

    def test_lifecycle_legacy_cell(self):
        self.useFixture(fixtures.MockPatchObject(runner, 'WORKERS_AFTER', 0))
        # Two searches of 264 runs: their debug logs would make a detail
        # larger than a subunit packet may be.
        self.useFixture(fixtures.FakeLogger(level=logging.WARNING))
        placement = self.useFixture(backends.make_backend('double'))
        cell = [cell for cell in scenarios.get_scenario(race.LIFECYCLE).cells()
                if cell.variant == race.LEGACY][0]
        alone = targets.explore_cell(placement, cell,
                                     scenario_name=race.LIFECYCLE)
        together = targets.explore_cell(placement, cell, workers=2,
                                        scenario_name=race.LIFECYCLE)
        self.assertEqual([(run.schedule, run.outcome) for run in alone.runs],
                         [(run.schedule, run.outcome)
                          for run in together.runs])
        self.assertGreater(together.ahead, 0)
        # Counterexamples read the same: the workers' errors came back.
        self.assertEqual(errors(alone), errors(together))


class RandomRunsTestCase(base.TestCase):

    def test_counts_add_up_and_corrected_is_clean(self):
        placement = self.useFixture(backends.make_backend('double'))
        for cell in scenarios.get_scenario(race.OFFLOAD_UNSHELVE).cells():
            result = targets.run_random(placement, cell, runs=10, seed=3)
            self.assertEqual(10, result.runs)
            self.assertGreaterEqual(sum(result.counts.values()), 10)
            if cell.ordering == race.CORRECTED:
                self.assertEqual({outcomes.OK: 10}, result.counts)
        self.assertEqual({}, placement.state.consumers)
