"""The scenario registry: declarations every target reads the same way."""

from shelvefix import backends
from shelvefix import race
from shelvefix.race import build_program
from shelvefix.race import cross_cell
from shelvefix.race import live_migration
from shelvefix.race import live_migration_abort
from shelvefix.race import move_program
from shelvefix.race import node_programs
from shelvefix.race import outcomes
from shelvefix.race import program
from shelvefix.race import scenarios
from shelvefix.race import targets
from shelvefix.tests import base

STARTS = (scenarios.ON_SOURCE, scenarios.OFFLOADED, scenarios.RESIZED,
          scenarios.EVACUATING, scenarios.ACTIVE_ON_SOURCE,
          scenarios.EVACUATED, scenarios.BUILD_REQUESTED,
          scenarios.NODE_ON_SOURCE)


class ScenarioTestCase(base.TestCase):

    def test_the_registry_is_every_scenario_by_name(self):
        self.assertEqual(race.SCENARIOS, tuple(scenarios.SCENARIOS))
        for name, scenario in scenarios.SCENARIOS.items():
            self.assertEqual(name, scenario.name)
            self.assertIs(scenario, scenarios.get_scenario(name))
        error = self.assertRaises(ValueError, scenarios.get_scenario,
                                  'nope')
        self.assertIn("unknown scenario 'nope'", str(error))

    def test_declarations_are_well_formed(self):
        for scenario in scenarios.SCENARIOS.values():
            names = scenario.actor_names
            self.assertEqual(len(names), len(set(names)), scenario.name)
            self.assertEqual(tuple(a[0] for a in scenario.actors), names)
            for name, host in scenario.actors:
                self.assertIn(host, scenarios.HOSTS + (scenarios.THIRD, None),
                              '%s: %s' % (scenario.name, name))
            self.assertIn(scenario.start, STARTS, scenario.name)
            self.assertEqual(outcomes.OK, scenario.symptoms[0],
                             scenario.name)
            for variant, fault in scenario.variant_faults:
                self.assertIn(variant, race.VARIANTS, scenario.name)
                self.assertIn(fault, (None,) + race.FAULTS, scenario.name)
                self.assertNotEqual(race.GHOST, fault, scenario.name)
            self.assertTrue(scenario.title)
            self.assertIn(scenario.first_column, ('ordering', 'variant'))

    def test_a_scenario_s_cells_are_its_variant_faults(self):
        for scenario in scenarios.SCENARIOS.values():
            if scenario.name == race.OFFLOAD_UNSHELVE:
                continue
            self.assertEqual(
                [scenarios.Cell(variant, None, fault)
                 for variant, fault in scenario.variant_faults],
                scenario.cells(), scenario.name)

    def test_offload_unshelve_crosses_orderings_with_ways_of_freeing(self):
        scenario = scenarios.get_scenario(race.OFFLOAD_UNSHELVE)
        crossed = [scenarios.Cell(variant, free)
                   for variant in (race.CORRECTED, race.LEGACY)
                   for free in race.FREE_METHODS]
        self.assertEqual(crossed, scenario.cells())
        self.assertEqual(
            crossed + [scenarios.Cell(race.CORRECTED, race.DELETE,
                                      race.GHOST),
                       scenarios.Cell(race.LEGACY, race.DELETE, race.GHOST)],
            scenario.cells(ghost=True))
        self.assertEqual(race.LEGACY, scenario.cells()[2].ordering)

    def test_ghost_adds_nothing_to_another_scenario(self):
        scenario = scenarios.get_scenario(race.LIFECYCLE)
        self.assertEqual(scenario.cells(), scenario.cells(ghost=True))


class LibraryProgramTestCase(base.TestCase):
    """``targets.program``: the library's program of a scenario's cell."""

    def test_each_scenario_has_its_program(self):
        expected = {
            race.OFFLOAD_UNSHELVE: program.ShelveRaceProgram,
            race.UNSHELVE_PERIODIC: program.CloudRaceProgram,
            race.LIFECYCLE: program.CloudRaceProgram,
            race.RESIZE_CONFIRM: move_program.MoveRaceProgram,
            race.RESIZE_REVERT: move_program.MoveRaceProgram,
            race.EVACUATE: move_program.MoveRaceProgram,
            race.RESIZE_DELETE: move_program.MoveRaceProgram,
            race.RESIZE_MIGRATE: move_program.MoveRaceProgram,
            race.LIVE_MIGRATE: live_migration.LiveMigrationProgram,
            race.LIVE_MIGRATE_ABORT: live_migration_abort.AbortProgram,
            race.CROSS_CELL_REVERT: cross_cell.CrossCellProgram,
            race.CROSS_CELL_CONFIRM: cross_cell.CrossCellProgram,
            race.BUILD: build_program.BuildProgram,
            race.BUILD_DELETE: build_program.BuildDeleteProgram,
            race.SERVICE_DISABLE: node_programs.ServiceDisableProgram,
            race.IRONIC_REBALANCE: node_programs.RebalanceProgram,
        }
        library = {name for name, scenario in scenarios.SCENARIOS.items()
                   if race.LIBRARY in scenario.targets}
        self.assertEqual(library, set(expected))
        for name, cls in expected.items():
            scenario = scenarios.get_scenario(name)
            cell = scenario.cells()[0]
            prog = targets.program(None, scenario, cell)
            self.assertIs(cls, type(prog), name)
            self.assertEqual(scenario.actor_names, tuple(prog.actors), name)
            self.assertIs(cell, prog.cell)

    def test_the_library_lab_offers_the_ghost_cells(self):
        scenario = scenarios.get_scenario(race.OFFLOAD_UNSHELVE)
        self.assertEqual(scenario.cells(ghost=True),
                         targets.LibraryLab.cells(scenario, ghost=True))


class StopAtTestCase(base.TestCase):
    """``explore(..., stop_at=...)``: a search that ends at a symptom."""

    def test_shows(self):
        self.assertTrue(scenarios.shows(('ok', 'usage untracked'),
                                        ('usage untracked',)))
        self.assertTrue(scenarios.shows(
            ('periodic-1 error: TypeError: x',), ('periodic-1 error',)))
        self.assertFalse(scenarios.shows(('ok',), ('usage untracked',)))
        self.assertFalse(scenarios.shows(('usage',), ('usage untracked',)))

    def test_stop_at_the_first_counterexample(self):
        scenario = scenarios.get_scenario(race.OFFLOAD_UNSHELVE)
        cell = scenarios.Cell(race.LEGACY, race.DELETE)
        placement = self.useFixture(backends.make_backend('double'))
        whole = scenarios.explore(targets.program(placement, scenario, cell))
        first = min(run.index for run in whole.runs
                    if outcomes.SCHEDULER_409 in run.outcome)
        stopped = scenarios.explore(
            targets.program(placement, scenario, cell),
            stop_at=(outcomes.SCHEDULER_409,))
        self.assertTrue(stopped.stopped)
        self.assertEqual(first + 1, len(stopped.runs))
        self.assertLess(len(stopped.runs), len(whole.runs))
        self.assertIn(outcomes.SCHEDULER_409, stopped.runs[-1].outcome)
