"""The explorer on the real shelve-offload and claim code.

Every cell of the matrix is explored on the placement double and on the
real placement service; the findings must be those of the bug doc: with
GET + PUT the legacy order shows the scheduler's 409, compute's 409 and the
silently wiped claim; with DELETE compute's 409 goes away; the corrected
order shows no bad outcome at all.
"""

import testscenarios

from shelvefix import backends
from shelvefix.backends import real
from shelvefix import race
from shelvefix.race import outcomes
from shelvefix.race import program
from shelvefix.race import report
from shelvefix.tests import base

load_tests = testscenarios.load_tests_apply_scenarios

EXPECTED_BAD = {
    program.Cell(race.CORRECTED, race.GET_PUT): set(),
    program.Cell(race.CORRECTED, race.DELETE): set(),
    program.Cell(race.LEGACY, race.GET_PUT): {
        outcomes.SCHEDULER_409, outcomes.COMPUTE_409, outcomes.CLAIM_WIPED,
        outcomes.LEAKED},
    program.Cell(race.LEGACY, race.DELETE): {
        outcomes.SCHEDULER_409, outcomes.CLAIM_WIPED},
    # Placement's DELETE leaves a ghost consumer in every run: the claim
    # heals it in every interleaving of the corrected order.
    program.Cell(race.CORRECTED, race.DELETE, program.GHOST): set(),
    program.Cell(race.LEGACY, race.DELETE, program.GHOST): {
        outcomes.CLAIM_WIPED, outcomes.LEAKED, outcomes.PLACEMENT_FAILED},
}


class ExploreCellTestCase(testscenarios.WithScenarios, base.TestCase):

    scenarios = testscenarios.multiply_scenarios(
        [('double', {'backend': 'double'}), ('real', {'backend': 'real'})],
        [('_'.join(part for part in cell if part), {'cell': cell})
         for cell in program.all_cells(ghost=True)])

    def setUp(self):
        super(ExploreCellTestCase, self).setUp()
        if self.backend == 'real' and not real.available():
            self.skipTest(real.INSTALL_HINT)
        self.placement = self.useFixture(backends.make_backend(self.backend))

    def test_outcomes_match_the_bug_doc(self):
        exploration = program.explore_cell(self.placement, self.cell)
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
    """Sleep sets skip orderings, never findings."""

    def test_reduction_keeps_every_outcome(self):
        placement = self.useFixture(backends.make_backend('double'))
        for cell in program.all_cells():
            full = report.summarise(cell, program.explore_cell(
                placement, cell, reduce=False))
            reduced = report.summarise(cell, program.explore_cell(
                placement, cell, reduce=True))
            self.assertEqual(set(full.counts), set(reduced.counts), cell)
            self.assertLess(reduced.runs, full.runs, cell)
            self.assertEqual(0, full.pruned)
            self.assertGreater(reduced.pruned, 0)
        # The corrected order: compute's last save can land before, between
        # or after the API's six steps... all counted without reduction.
        corrected = report.summarise(
            program.all_cells()[0],
            program.explore_cell(placement, program.all_cells()[0],
                                 reduce=False))
        self.assertEqual(6, corrected.runs)


class RandomRunsTestCase(base.TestCase):

    def test_counts_add_up_and_corrected_is_clean(self):
        placement = self.useFixture(backends.make_backend('double'))
        for cell in program.all_cells():
            result = program.run_random(placement, cell, runs=10, seed=3)
            self.assertEqual(10, result.runs)
            self.assertGreaterEqual(sum(result.counts.values()), 10)
            if cell.ordering == race.CORRECTED:
                self.assertEqual({outcomes.OK: 10}, result.counts)
        self.assertEqual({}, placement.state.consumers)
