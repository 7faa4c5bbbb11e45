"""The race lab's scenarios, each written once, and how a cell of one runs.

A :class:`Scenario` names its table, its cells (code variant, way of
freeing, fault) and the symptoms its table always shows, and makes the
program of a cell (:mod:`shelvefix.race.program` for the shelve
scenarios, :mod:`shelvefix.race.move_program` for the moves). This module
is the one that knows them all: :func:`explore_cell` runs a cell through
every interleaving, :func:`run_random` with real threads. The programs'
modules do not import it, so that the lab has no import circle.
"""

import collections
import contextlib
import random
import time

from shelvefix import explorer
from shelvefix import race
from shelvefix.race import move_program
from shelvefix.race import outcomes
from shelvefix.race import program
from shelvefix.race import random_runs


class Scenario(collections.namedtuple(
        'Scenario', ['name', 'title', 'first_column', 'cells', 'program',
                     'symptoms'], defaults=((outcomes.OK,),))):
    """A scenario of the race lab.

    ``title`` heads its table, ``first_column`` names the table's first
    column, ``cells(ghost)`` lists its matrix and ``program(placement,
    cell)`` makes the explorer program of one cell. ``symptoms`` are the
    outcomes its table always has a column for (with ``ok``): what its
    bugs show, so that a table of random runs has the same columns
    whichever runs happened to show them.
    """

    __slots__ = ()


def _cloud_scenario(name, title, lifecycle, variant_faults, symptoms):
    """A scenario of :class:`~.program.CloudRaceProgram` cells."""
    return Scenario(
        name, title, 'variant',
        lambda ghost=False: [program.Cell(variant, None, fault)
                             for variant, fault in variant_faults],
        lambda placement, cell: program.CloudRaceProgram(
            placement, cell, lifecycle=lifecycle),
        (outcomes.OK,) + symptoms)


def _move_scenario(name, title):
    """A scenario of :class:`~.move_program.MoveRaceProgram` cells."""
    return Scenario(
        name, title, 'variant',
        lambda ghost=False: [program.Cell(variant, None, fault)
                             for variant, fault in move_program.CELLS[name]],
        lambda placement, cell: move_program.MoveRaceProgram(placement, cell,
                                                             name))


SCENARIOS = collections.OrderedDict((s.name, s) for s in [
    Scenario(race.OFFLOAD_UNSHELVE,
             'shelve-offload (compute) against unshelve (API + scheduler)',
             'ordering', program.all_cells,
             program.ShelveRaceProgram,
             (outcomes.OK, outcomes.SCHEDULER_409, outcomes.COMPUTE_409,
              outcomes.CLAIM_WIPED, outcomes.LEAKED)),
    _cloud_scenario(race.UNSHELVE_PERIODIC,
                    'unshelve (API + conductor + scheduler, compute-2) '
                    "against compute-2's update_available_resource",
                    False,
                    [(race.CORRECTED, None),
                     (race.CORRECTED, race.PORT_BINDING),
                     (race.PRE_2025480, None),
                     (race.PRE_2025480, race.PORT_BINDING),
                     (race.PRE_1862633, None),
                     (race.PRE_1862633, race.PORT_BINDING)],
                    (outcomes.LEAKED, outcomes.USAGE_UNTRACKED)),
    _cloud_scenario(race.LIFECYCLE,
                    'shelve-offload on compute-1, unshelve to compute-2, '
                    'the periodic audit on both hosts',
                    True,
                    [(race.CORRECTED, None),
                     (race.CORRECTED, race.PORT_BINDING),
                     (race.LEGACY, None), (race.PRE_2025480, None),
                     (race.PRE_1862633, race.PORT_BINDING)],
                    (outcomes.SCHEDULER_409, outcomes.CLAIM_WIPED,
                     outcomes.LEAKED, outcomes.USAGE_UNTRACKED)),
    _move_scenario(race.RESIZE_CONFIRM,
                   "confirm a resize (compute-1) against compute-1's "
                   'update_available_resource'),
    _move_scenario(race.RESIZE_REVERT,
                   'revert a resize (compute-2, then compute-1) against '
                   'the periodic audit on both hosts'),
    _move_scenario(race.EVACUATE,
                   "evacuate to compute-2 against compute-1's service "
                   "starting again and compute-2's periodic audit"),
    _move_scenario(race.RESIZE_DELETE,
                   'delete a resized server (API, compute-2) while its '
                   "resize is confirmed (compute-1), compute-1's audit"),
    _move_scenario(race.RESIZE_MIGRATE,
                   'migrate a resized server back to compute-1 as soon as '
                   "its resize is confirmed there, compute-1's audit"),
])


def get_scenario(name):
    """The :class:`Scenario` called ``name``.

    :raises ValueError: no such scenario
    """
    try:
        return SCENARIOS[name]
    except KeyError:
        raise ValueError('unknown scenario %r; choose one of %s'
                         % (name, ', '.join(SCENARIOS)))


def explore_cell(placement, cell, reduce=True, progress=None,
                 scenario_name=race.DEFAULT_SCENARIO, workers=1):
    """Explore every interleaving of one cell of a scenario.

    ``workers`` above 1 runs the explorer's executions in that many forked
    processes (the double only: see :mod:`shelvefix.explorer.parallel`).

    :returns: a :class:`~shelvefix.explorer.controller.Exploration` whose
        run outcomes are label tuples (see :mod:`shelvefix.race.outcomes`)
    """
    prog = get_scenario(scenario_name).program(placement, cell)
    with closing(prog):
        return explorer.explore(prog, reduce=reduce, progress=progress,
                                workers=workers)


@contextlib.contextmanager
def closing(prog):
    """Close the program ``prog`` on the way out, interrupted or not."""
    interrupted = False
    try:
        yield prog
    except KeyboardInterrupt:
        interrupted = True
        raise
    finally:
        prog.close(interrupted=interrupted)


def run_random(placement, cell, runs, seed, poll_interval=0.0005,
               max_start_delay=0.002, progress=None,
               scenario_name=race.DEFAULT_SCENARIO):
    """Run a cell ``runs`` times with real threads and real timing.

    Nothing is paused: the actors start after small random delays (seeded)
    and the API client polls the saved state every ``poll_interval``
    seconds, as a client polling the API would. This is what an ordinary
    test run sees.

    :returns: a :class:`~.random_runs.RandomResult` with per-label counts
    """
    rng = random.Random(seed)
    prog = get_scenario(scenario_name).program(placement, cell)
    counts = collections.Counter()
    start = time.monotonic()
    with closing(prog):
        for index in range(runs):
            for label in prog.random_run(rng, poll_interval,
                                         max_start_delay):
                counts[label] += 1
            if progress:
                progress(index + 1)
    return random_runs.RandomResult(cell, runs, dict(counts),
                                    time.monotonic() - start)
