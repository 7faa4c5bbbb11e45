"""The targets of the race lab: whose code a scenario's actors run.

``library``
    shelvefix's own compute manager, resource tracker, conductor,
    scheduler and report client (``shelvefix.compute``, ...), in nova's
    corrected order, and the pre-fix variants derived from them
    (:mod:`~shelvefix.race.variants`); the programs are
    :mod:`~shelvefix.race.program`'s and
    :mod:`~shelvefix.race.move_program`'s, in the command's process.
``nova``
    nova's own, installed or from a tree the user names, in a process of
    its own (:mod:`shelvefix.nova`).

Both are labs with one interface (:class:`LibraryLab`,
:class:`shelvefix.nova.lab.NovaLab`): ``cells(scenario)``, then
``explore(scenario, cell, ...)`` or ``random(scenario, cell, ...)`` for
each, with the same results (:class:`~shelvefix.race.report.CellResult`,
:class:`~shelvefix.race.random_runs.RandomResult`), so that the command
reports either the same way and their tables compare cell for cell.
"""

from shelvefix import race
from shelvefix.race import build_program
from shelvefix.race import cross_cell
from shelvefix.race import live_migration
from shelvefix.race import live_migration_abort
from shelvefix.race import move_program
from shelvefix.race import node_programs
from shelvefix.race import program as program_mod
from shelvefix.race import random_runs
from shelvefix.race import report
from shelvefix.race import scenarios

LIBRARY = race.LIBRARY
NOVA = race.NOVA


#: The library's program class of the scenarios that have their own; the
#: others are shelve's (a start on compute-1 or offloaded) or the moves'.
PROGRAMS = {
    race.OFFLOAD_UNSHELVE: program_mod.ShelveRaceProgram,
    race.LIVE_MIGRATE: live_migration.LiveMigrationProgram,
    race.SERVICE_DISABLE: node_programs.ServiceDisableProgram,
    race.IRONIC_REBALANCE: node_programs.RebalanceProgram,
    race.LIVE_MIGRATE_ABORT: live_migration_abort.AbortProgram,
    race.BUILD: build_program.BuildProgram,
    race.BUILD_DELETE: build_program.BuildDeleteProgram,
    race.CROSS_CELL_REVERT: cross_cell.CrossCellProgram,
    race.CROSS_CELL_CONFIRM: cross_cell.CrossCellProgram,
}


def program(placement, scenario, cell):
    """The library's explorer program of one cell of ``scenario``."""
    cls = PROGRAMS.get(scenario.name)
    if cls is None and scenario.start in (scenarios.ON_SOURCE,
                                          scenarios.OFFLOADED):
        cls = program_mod.CloudRaceProgram
    elif cls is None:
        cls = move_program.MoveRaceProgram
    return cls(placement, cell, scenario)


def explore_cell(placement, cell, reduce=True, progress=None,
                 scenario_name=race.DEFAULT_SCENARIO, workers=1):
    """Explore every interleaving of one cell on the library.

    See :func:`shelvefix.race.scenarios.explore`.
    """
    scenario = scenarios.get_scenario(scenario_name)
    return scenarios.explore(program(placement, scenario, cell),
                             reduce=reduce, progress=progress,
                             workers=workers)


def run_random(placement, cell, runs, seed, poll_interval=0.0005,
               max_start_delay=0.002, progress=None,
               scenario_name=race.DEFAULT_SCENARIO):
    """Run one cell on the library ``runs`` times with real threads.

    See :func:`shelvefix.race.random_runs.run_random`.
    """
    scenario = scenarios.get_scenario(scenario_name)
    return random_runs.run_random(program(placement, scenario, cell), cell,
                                  runs, seed, poll_interval=poll_interval,
                                  max_start_delay=max_start_delay,
                                  progress=progress)


class LibraryLab(object):
    """The race lab's cells on the library, on a set-up placement.

    :param placement: the placement fixture, set up, shared by the cells
    """

    description = "the library's code"

    def __init__(self, placement):
        self.placement = placement

    def __enter__(self):
        return self

    def __exit__(self, *exc_info):
        pass

    @staticmethod
    def cells(scenario, ghost=False):
        """The cells of ``scenario`` on the library (none if it lacks it)."""
        if race.LIBRARY not in scenario.targets:
            return []
        # A program class listing its faults runs those cells only.
        faults = getattr(PROGRAMS.get(scenario.name), 'faults', None)
        return [cell for cell in scenario.cells(ghost=ghost)
                if faults is None or cell.fault in faults]

    def explore(self, scenario, cell, reduce=True, progress=None,
                workers=1):
        """Explore one cell; its :class:`~.report.CellResult`."""
        return report.summarise(cell, explore_cell(
            self.placement, cell, reduce=reduce, progress=progress,
            scenario_name=scenario.name, workers=workers))

    def random(self, scenario, cell, runs, seed, progress=None):
        """``runs`` random runs of one cell; a ``RandomResult``."""
        return run_random(self.placement, cell, runs, seed=seed,
                          progress=progress, scenario_name=scenario.name)
