"""A cross-cell resize reverted or confirmed on nova's own code.

(:mod:`shelvefix.nova.cross_cell`.) What nova 34.0.0 shows: the revert
always ends with the server ``ACTIVE`` on compute-1 in cell1 with its old
flavor, holding compute-1 only, its copy in cell2 gone, whatever the
audits of both hosts do meanwhile. The audit of compute-2 that reads its
allocations once the conductor destroyed cell2's copy finds no record of
the server (nova hard-deletes it) and leaves the allocations to the
source's ``finish_revert_snapshot_based_resize_at_source``: the
re-introduction patch of the corpus's row ``cross-cell-revert``
(26da4418a9's check of ``hidden`` undone) changes nothing, since the
audit never reads a deleted, hidden copy; with a soft delete of cell2's
copy, a defect of our own, it wipes the server's claim.

The confirm always ends ``ACTIVE`` on compute-2 in cell2, holding
compute-2 only, and the scheduler's view of compute-1 still holds the
server (``scheduler instance info stale``): nova's cross-cell confirm at
the source does not tell the scheduler the server left, as the same-cell
confirm has done since bug 1869050's fix (738110db74).
"""

import logging
import os

import fixtures

from shelvefix import corpus
from shelvefix.corpus import runs
from shelvefix import race
from shelvefix.race import move_outcomes
from shelvefix.race import outcomes
from shelvefix.race import scenarios
from shelvefix.tests.nova import base
from shelvefix.tests.nova import test_moves

#: Runs of each whole search, and of the revert with one audit.
REVERT_RUNS = 231
REVERT_WITHOUT_SOURCE_AUDIT = 11
REVERT_WITHOUT_DESTINATION_AUDIT = 21
CONFIRM_RUNS = 25
PATCHES = os.path.join(os.path.dirname(os.path.abspath(__file__)),
                       'patches')
REVERTED = {
    'cell': 'cell1', 'copies': ['cell1'],
    'instance': ('active', None, 'compute-1'), 'hidden': False,
    'flavor': 'm1.small', 'migration': 'reverted', 'held': ['compute-1'],
    'migration_held': []}
CONFIRMED = {
    'cell': 'cell2', 'copies': ['cell2'],
    'instance': ('active', None, 'compute-2'), 'hidden': False,
    'flavor': 'm1.medium', 'migration': 'confirmed', 'held': ['compute-2'],
    'migration_held': []}
DESTROYED = ('conductor', 'destroy cell2 instance', 'hard-deleted')
MOVED_BACK = ('conductor', 'POST /allocations', '204')
LISTED = ('periodic-2', 'list cell2 instances on the node')
AUDITED = ('periodic-2', 'GET /resource_providers/{compute-2}/allocations')


class CrossCellTestCase(base.NovaTestCase):

    def setUp(self):
        super(CrossCellTestCase, self).setUp()
        # Hundreds of runs of nova's code: see test_lifecycle.
        self.useFixture(fixtures.LogHandler(logging.NullHandler(),
                                            level=logging.CRITICAL))
        self.target = base.load('shelvefix.nova.target')
        self.module = base.load('shelvefix.nova.cross_cell')

    def explore(self, name, without=()):
        scenario = scenarios.get_scenario(name)
        prog = self.target.program('double', scenario,
                                   scenarios.Cell(race.CORRECTED, None),
                                   without)
        exploration = scenarios.explore(prog)
        self.assertExplored(exploration)
        self.assertTrue(exploration.complete)
        return exploration, prog.inner.ends

    def test_both_targets(self):
        # The library's: shelvefix.race.cross_cell.
        for name in (race.CROSS_CELL_REVERT, race.CROSS_CELL_CONFIRM):
            scenario = scenarios.get_scenario(name)
            self.assertEqual((race.LIBRARY, race.NOVA), scenario.targets)
            self.assertEqual(scenarios.RESIZED, scenario.start)
            prog = self.target.program('double', scenario,
                                       scenarios.Cell(race.CORRECTED, None))
            self.addCleanup(prog.close)
            self.assertIsInstance(prog.inner, self.module.CrossCellProgram)
            self.assertEqual(('conductor', 'periodic-1', 'periodic-2'),
                             prog.actors)

    def test_the_revert(self):
        exploration, ends = self.explore(race.CROSS_CELL_REVERT,
                                         ('periodic-1', 'periodic-2'))
        self.assertEqual([REVERTED], ends)
        run = exploration.runs[0]
        self.assertEqual((outcomes.OK,), run.outcome)
        steps = [(entry.step.label, entry.result) for entry in run.trace]
        # RevertResizeTask's order: the source cell updated, the mapping
        # moved back, the target cell's copy hidden; compute-2's revert;
        # the copy destroyed; compute-1's finish moves the allocations.
        order = [
            ('save cell1 instance',
             'vm_state=active task_state=resize_reverting host=compute-1'),
            ('save cell1 migration', 'status=reverting'),
            ('save instance mapping', 'cell=cell1'),
            ('save cell2 migration', 'status=reverted'),
            DESTROYED[1:],
            MOVED_BACK[1:],
            ('save cell1 migration', 'status=reverted')]
        self.assertEqual(sorted(steps.index(step) for step in order),
                         [steps.index(step) for step in order])

    def test_revert_with_one_audit(self):
        for without, count in (
                ('periodic-1', REVERT_WITHOUT_SOURCE_AUDIT),
                ('periodic-2', REVERT_WITHOUT_DESTINATION_AUDIT)):
            exploration, ends = self.explore(race.CROSS_CELL_REVERT,
                                             (without,))
            self.assertEqual(count, len(exploration.runs))
            self.assertEqual({outcomes.OK}, test_moves.labels(exploration))
            self.assertEqual([REVERTED] * count, ends)

    def test_revert_whole_search(self):
        exploration, ends = self.explore(race.CROSS_CELL_REVERT)
        self.assertEqual(REVERT_RUNS, len(exploration.runs))
        self.assertEqual({outcomes.OK}, test_moves.labels(exploration))
        self.assertEqual([REVERTED] * REVERT_RUNS, ends)
        # The window of 26da4418a9 is explored: compute-2's audit lists
        # its instances once the copy in cell2 is gone and reads its
        # allocations before compute-1 moves the server's back: it finds
        # no record of the server (its read of it has no row).
        window = [run for run in exploration.runs if test_moves.between(
            test_moves.position(run, *DESTROYED),
            test_moves.position(run, *LISTED),
            test_moves.position(run, *MOVED_BACK)) and test_moves.between(
                test_moves.position(run, *LISTED),
                test_moves.position(run, *AUDITED),
                test_moves.position(run, *MOVED_BACK))]
        self.assertTrue(window)
        for run in window:
            read = test_moves.position(run, 'periodic-2',
                                       'read cell2 instance')
            self.assertIsNotNone(read, run.format_trace())
            self.assertIsNone(run.trace[read].result)

    def test_confirm_whole_search(self):
        exploration, ends = self.explore(race.CROSS_CELL_CONFIRM)
        self.assertEqual(CONFIRM_RUNS, len(exploration.runs))
        # A finding: compute-1 never tells the scheduler the server left.
        self.assertEqual({move_outcomes.SCHEDULER_INFO_STALE},
                         test_moves.labels(exploration))
        self.assertEqual([CONFIRMED] * CONFIRM_RUNS, ends)

    def test_confirm_leaves_the_scheduler_stale(self):
        exploration, _ends = self.explore(race.CROSS_CELL_CONFIRM,
                                          ('periodic-1', 'periodic-2'))
        self.assertEqual([(move_outcomes.SCHEDULER_INFO_STALE,)],
                         [run.outcome for run in exploration.runs])


class CrossCellRowTestCase(base.NovaTestCase):
    """The corpus's row on patched trees (each in a runner process)."""

    def row(self, patch, symptom):
        found = [row for row in corpus.load()
                 if row.bug == race.CROSS_CELL_REVERT]
        self.assertEqual(1, len(found))
        return found[0]._replace(scenario=race.CROSS_CELL_REVERT,
                                 symptoms=(symptom,), patch=patch)

    def test_not_reproduced_but_a_soft_delete_shows_it(self):
        # One self-test (one whole search of the tree as it is, shared):
        # the row's patch, and the patch of a soft delete of our own.
        rows = [self.row(os.path.join(corpus.PATCHES,
                                      'cross-cell-revert.patch'),
                         outcomes.CLAIM_WIPED),
                self.row(os.path.join(PATCHES,
                                      'cross-cell-soft-delete.patch'),
                         outcomes.CLAIM_WIPED)._replace(
                             bug='cross-cell-soft-delete')]
        _description, (row, soft) = runs.self_test(rows)
        self.assertEqual(runs.NOT_REPRODUCED, row.status)
        # Both trees explored whole, every run ok.
        for explored in (row.patched, row.explored):
            self.assertTrue(explored.complete)
            self.assertEqual(REVERT_RUNS, explored.runs)
            self.assertEqual({outcomes.OK: REVERT_RUNS},
                             dict(explored.counts))
        self.assertEqual(runs.REPRODUCED, soft.status)
        self.assertIn(outcomes.CLAIM_WIPED, soft.first().outcome)
