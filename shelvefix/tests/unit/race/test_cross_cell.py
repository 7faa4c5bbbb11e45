"""``cross-cell-revert`` and ``cross-cell-confirm`` on the library.

(:mod:`shelvefix.race.cross_cell`.) Both targets run them (nova's:
``shelvefix/tests/nova/test_cross_cell``). The library is clean in every
run of both: the revert always ends with the server ``ACTIVE`` on
compute-1 in cell1, its copy in cell2 gone; the confirm with the server
``ACTIVE`` on compute-2 in cell2, its copy in cell1 gone. Where nova's
confirm leaves the scheduler's view of compute-1 holding the server, the
library's source deletes it; the test putting nova's behaviour back shows
the judge sees it.
"""

import logging
from unittest import mock

import fixtures

from shelvefix.backends import fixture
from shelvefix.compute import manager as manager_mod
from shelvefix.explorer import runner
from shelvefix.objects import cells as cells_obj
from shelvefix import race
from shelvefix.race import cross_cell
from shelvefix.race import cross_cell_cloud
from shelvefix.race import move_outcomes
from shelvefix.race import outcomes
from shelvefix.race import scenarios
from shelvefix.race import targets
from shelvefix.race import variants
from shelvefix.tests import base

#: Runs of each whole search on the library.
REVERT_RUNS = 195
CONFIRM_RUNS = 24
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


def scenario(name, *actors):
    """A cross-cell scenario, only ``actors`` (default: all)."""
    whole = scenarios.get_scenario(name)
    if not actors:
        return whole
    return whole._replace(actors=tuple(
        (actor, host) for actor, host in whole.actors if actor in actors))


def labels(trace, actor=None):
    """``label -> result`` of each step (of one actor)."""
    return ['%s -> %s' % (entry.step.label, entry.result)
            for entry in trace if actor in (None, entry.step.actor)]


class CrossCellTestBase(base.TestCase):

    def setUp(self):
        super(CrossCellTestBase, self).setUp()
        # Hundreds of runs: keep their logs out of the details.
        self.useFixture(fixtures.FakeLogger(level=logging.WARNING))
        self.placement = self.useFixture(fixture.PlacementFixture())

    def program(self, scn):
        prog = cross_cell.CrossCellProgram(
            self.placement, scenarios.Cell(race.CORRECTED, None), scn)
        # Each run's end, read before the run removes its allocations.
        prog.ends = []
        finish = prog._finish

        def _finish(cloud, results):
            prog.ends.append(cloud.end_state())
            return finish(cloud, results)
        prog._finish = _finish
        return prog

    def explore(self, prog):
        exploration = scenarios.explore(prog)
        self.assertTrue(exploration.complete)
        self.assertEqual(0, exploration.blocked)
        # Every run removed what it made, and the program its providers.
        self.assertEqual({}, self.placement.state.consumers)
        self.assertEqual({}, self.placement.state.providers)
        return exploration

    def in_order(self, steps, order):
        """Assert the ``order`` labels are among ``steps``, in that order."""
        for step in order:
            self.assertIn(step, steps)
        positions = [steps.index(step) for step in order]
        self.assertEqual(sorted(positions), positions, steps)


class ScenarioTestCase(CrossCellTestBase):

    def test_both_targets(self):
        for name in cross_cell.SCENARIOS:
            scn = scenario(name)
            self.assertEqual((race.LIBRARY, race.NOVA), scn.targets)
            self.assertEqual(scenarios.RESIZED, scn.start)
            self.assertEqual([scenarios.Cell(race.CORRECTED, None)],
                             targets.LibraryLab.cells(scn))
            prog = targets.program(self.placement, scn, scn.cells()[0])
            self.assertIsInstance(prog, cross_cell.CrossCellProgram)
            self.assertEqual(('conductor', 'periodic-1', 'periodic-2'),
                             prog.actors)
            # The conductor's calls run both hosts' code: their locks
            # are contended.
            self.assertEqual(['compute-1', 'compute-2', 'compute-1',
                              'compute-2'],
                             [h for h in prog._actor_hosts() if h])

    def test_not_a_cross_cell_scenario(self):
        self.assertRaises(ValueError, cross_cell.CrossCellProgram,
                          self.placement,
                          scenarios.Cell(race.CORRECTED, None),
                          scenarios.get_scenario(race.RESIZE_REVERT))

    def test_the_revert_in_order(self):
        prog = self.program(scenario(race.CROSS_CELL_REVERT))
        with scenarios.closing(prog):
            record = runner.replay(prog, ())
        self.assertEqual((outcomes.OK,), record.outcome)
        self.assertEqual([REVERTED], prog.ends)
        steps = labels(record.trace, 'conductor')
        # The API, then RevertResizeTask's order: the source cell updated,
        # the copy there shown, the mapping moved back, cell2's copy
        # hidden; compute-2's revert (its drop and status under its
        # tracker's lock); cell2's copy destroyed; compute-1's finish
        # moves the allocations back, then saves the server and the
        # migration.
        self.in_order(steps, [
            'save cell2 instance -> vm_state=resized '
            'task_state=resize_reverting host=compute-2',
            'save cell2 migration -> status=reverting',
            'save cell1 instance -> vm_state=active '
            'task_state=resize_reverting host=compute-1',
            'save cell1 migration -> status=reverting',
            'save cell1 instance -> hidden=False',
            'save instance mapping -> cell=cell1',
            'save cell2 instance -> hidden=True',
            'save cell2 migration -> status=reverted',
            'destroy cell2 instance -> hard-deleted',
            'POST /allocations -> 204',
            'save cell1 instance -> vm_state=active task_state=None '
            'host=compute-1',
            'save cell1 migration -> status=reverted'])

    def test_the_confirm_in_order(self):
        prog = self.program(scenario(race.CROSS_CELL_CONFIRM))
        with scenarios.closing(prog):
            record = runner.replay(prog, ())
        self.assertEqual((outcomes.OK,), record.outcome)
        self.assertEqual([CONFIRMED], prog.ends)
        self.in_order(labels(record.trace, 'conductor'), [
            'save cell2 migration -> status=confirming',
            'read cell1 instance -> vm_state=active '
            'task_state=resize_migrated host=compute-1',
            # compute-1's clean-up, then the migration's allocations
            'save cell1 migration -> status=confirmed',
            'PUT /allocations/{migration} (empty) gen=1 -> 204',
            'destroy cell1 instance -> hard-deleted',
            'save cell2 migration -> status=confirmed',
            'save cell2 instance -> vm_state=active task_state=None '
            'host=compute-2'])


class SearchTestCase(CrossCellTestBase):

    def test_revert_whole_search(self):
        prog = self.program(scenario(race.CROSS_CELL_REVERT))
        exploration = self.explore(prog)
        self.assertEqual({(outcomes.OK,): REVERT_RUNS},
                         exploration.outcome_counts())
        self.assertEqual([REVERTED] * REVERT_RUNS, prog.ends)
        # compute-2's audit lists its cell's copy before the conductor
        # destroys it in some classes of runs, after in others; the
        # library's audit never touches placement, whichever it is.
        listed = {step for run in exploration.runs
                  for step in labels(run.trace, 'periodic-2')
                  if step.startswith('list cell2 instances')}
        self.assertEqual({'list cell2 instances on the node -> 0 row(s)',
                          'list cell2 instances on the node -> 1 row(s)'},
                         listed)
        for run in exploration.runs:
            self.assertFalse([step for step in labels(run.trace,
                                                      'periodic-2')
                              if '/allocations' in step])

    def test_revert_with_one_audit(self):
        for audit in ('periodic-1', 'periodic-2'):
            prog = self.program(scenario(race.CROSS_CELL_REVERT,
                                         'conductor', audit))
            exploration = self.explore(prog)
            self.assertEqual({outcomes.OK}, {
                label for run in exploration.runs for label in run.outcome})
            self.assertEqual([REVERTED] * len(exploration.runs), prog.ends)

    def test_confirm_whole_search(self):
        prog = self.program(scenario(race.CROSS_CELL_CONFIRM))
        exploration = self.explore(prog)
        self.assertEqual({(outcomes.OK,): CONFIRM_RUNS},
                         exploration.outcome_counts())
        self.assertEqual([CONFIRMED] * CONFIRM_RUNS, prog.ends)


class JudgeTestCase(CrossCellTestBase):
    """What the judge sees when the library does what it must not."""

    def test_nova_confirm_leaves_the_scheduler_stale(self):
        # nova's confirm at the source never tells the scheduler the
        # server left compute-1: in every run its view still holds it.
        class NovaSource(manager_mod.ComputeManager):
            def _delete_scheduler_instance_info(self, context,
                                                instance_uuid):
                pass

        code = variants.code(race.CORRECTED)
        with mock.patch.object(variants, 'code', lambda variant: code._replace(
                manager_cls=NovaSource)):
            counts = self.explore(self.program(scenario(
                race.CROSS_CELL_CONFIRM))).outcome_counts()
        self.assertEqual({(move_outcomes.SCHEDULER_INFO_STALE,):
                          CONFIRM_RUNS}, counts)

    def test_a_copy_left_in_the_cell_the_server_left(self):
        # The revert not destroying cell2's copy: both cells have it.
        prog = self.program(scenario(race.CROSS_CELL_REVERT, 'conductor'))
        with mock.patch.object(cells_obj.CellInstanceStore, 'hard_delete',
                               lambda store, uuid: None):
            with scenarios.closing(prog):
                record = runner.replay(prog, ())
        self.assertEqual((cross_cell_cloud.COPY_LEFT,), record.outcome)
        self.assertEqual(['cell1', 'cell2'], prog.ends[0]['copies'])
