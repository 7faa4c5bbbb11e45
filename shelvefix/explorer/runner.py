"""Run a program under every schedule, or under one.

:func:`explore` is the stateless model checker's main loop: it re-executes
the program under a fresh :class:`~shelvefix.explorer.controller.Controller`
for every schedule the depth-first search of
:mod:`~shelvefix.explorer.search` asks for. :func:`replay` runs one
schedule, e.g. a counterexample the search found.
"""

import time

from shelvefix.explorer import controller as controller_mod
from shelvefix.explorer import model
from shelvefix.explorer import parallel
from shelvefix.explorer import search
from shelvefix.explorer import threads


#: Seconds a search runs alone before it starts its worker processes: a
#: search done sooner would only pay for forking them.
WORKERS_AFTER = 0.05


def explore(program, reduce=True, max_runs=None, progress=None,
            step_timeout=10.0, workers=1, stop=None, ahead=None):
    """Run a program under every schedule, depth first.

    See :mod:`shelvefix.explorer.search` for the search and for why, with
    ``reduce``, every trace is run once and the schedules skipped are
    equivalent to ones run.

    :param program: ``program(controller)`` builds fresh shared state whose
        instrumented code calls ``controller.step()``, and returns a
        :class:`RunSpec` (or a sequence of ``(name, callable)``). It is
        called once per execution; the spec's check is called after each
        execution, so it can also clean up.
    :param reduce: run one schedule per Mazurkiewicz trace (optimal DPOR)
        instead of every interleaving
    :param max_runs: stop after this many recorded runs (None: no limit)
    :param progress: None or ``progress(runs_done)``, called after each
        recorded run
    :param step_timeout: seconds an actor may take to reach its next step
    :param workers: how many processes execute runs; above 1, forked
        workers run the schedules the search will ask for ahead of it (see
        :mod:`shelvefix.explorer.parallel`: same runs, same order, same
        result), once the search has run for :data:`WORKERS_AFTER`
        seconds. The program's state must survive ``fork``.
    :param stop: None or ``stop(record)``: once it is true of a recorded
        run, the search ends there (its first counterexample, say); the
        runs before it are those of the whole search, in the same order
    :param ahead: None, or ``ahead(reduce, step_timeout)`` making what
        runs schedules ahead of the search instead of forked workers (an
        object like :class:`~shelvefix.explorer.parallel.Workers`: e.g.
        :class:`shelvefix.cluster.ahead.ClusterAhead`, whose workers build
        the program themselves); started after :data:`WORKERS_AFTER`
        seconds as the forked ones are
    :returns: an :class:`~shelvefix.explorer.search.Exploration`
    :raises ExplorationError: for a nondeterministic program, an actor that
        neither reaches a step nor finishes in time, a guard that raises or
        a helper thread calling ``step()``
    :raises ValueError: for ``max_runs`` or ``workers`` < 1 or an invalid
        run spec
    """
    if max_runs is not None and max_runs < 1:
        raise ValueError('max_runs must be positive, not %r' % (max_runs,))
    if workers < 1:
        raise ValueError('workers must be positive, not %r' % (workers,))
    exploration = search.Exploration(reduce)
    exploration.workers = workers
    started = time.monotonic()
    points = []
    helpers = None
    pool = threads.ActorThreads()

    def here(points, index):
        return run_here(program, points, reduce, step_timeout, pool, index)
    try:
        while True:
            index = len(exploration.runs)
            if (helpers is None and (workers > 1 or ahead is not None) and
                    time.monotonic() - started >= WORKERS_AFTER):
                # Between runs: the actor threads are all parked.
                helpers = (ahead(reduce, step_timeout) if ahead is not None
                           else parallel.Workers(program, workers, reduce,
                                                 step_timeout))
            begun = time.monotonic()
            if helpers is not None:
                result = helpers.run(points, index, here)
            else:
                result = here(points, index)
            exploration.runs.append(result.record)
            exploration.repeated += result.repeated
            exploration.costs.append(
                time.monotonic() - begun if result.seconds is None
                else result.seconds)
            exploration.waits.append(_waits(result.points, len(points)))
            if reduce:
                search.add_races(result.points,
                                 [entry.step for entry in result.record.trace],
                                 result.stuck,
                                 start=max(len(points) - 1, 0),
                                 models=result.models,
                                 stuck_models=result.stuck_models,
                                 origin=index)
            if progress is not None:
                progress(len(exploration.runs))
            points = search.backtrack(result.points, exploration)
            if points is None:
                exploration.complete = True
                break
            if max_runs is not None and len(exploration.runs) >= max_runs:
                break
            if stop is not None and stop(result.record):
                exploration.stopped = True
                break
    finally:
        pool.close()
        if helpers is not None:
            exploration.ahead = helpers.ahead
            exploration.tasks = helpers.tasks
            exploration.discarded = helpers.discarded
            helpers.close()
        exploration.elapsed = time.monotonic() - started
    return exploration


def _waits(points, replayed):
    """The runs a run waited for: the origins of its wakeup choices.

    The choice points before the last one replayed are the previous run's,
    whose own waits are counted there.
    """
    return tuple(sorted(set(
        point.origin for point in points[max(replayed - 1, 0):]
        if point.origin is not None)))


def run_here(program, points, reduce, step_timeout, pool, index):
    """Execute the run the search asks for, in this process.

    :returns: a :class:`~shelvefix.explorer.model.RunResult` on the
        search's own choice points
    """
    schedule = [point.chosen for point in points]
    controller = controller_mod.Controller(
        schedule=schedule, reduce=reduce, step_timeout=step_timeout,
        _points=points, _threads=pool)
    record = controller.run(program(controller), index=index)
    return model.RunResult(record, controller.choice_points,
                           controller.models, controller.stuck,
                           controller.stuck_models, controller.repeated)


def replay(program, schedule, step_timeout=10.0):
    """Execute one run following a schedule, e.g. one a search found.

    Once ``schedule`` is used up, the first enabled actor is released at
    each choice point.

    :param program: as for :func:`explore`
    :param schedule: the actor names to release, in order (a
        :attr:`RunRecord.schedule`)
    :param step_timeout: seconds an actor may take to reach its next step
    :returns: the :class:`RunRecord`
    :raises ExplorationError: if the schedule names an actor that is not
        enabled at its choice point, or as for :func:`explore`
    """
    controller = controller_mod.Controller(schedule=schedule, reduce=False,
                                           step_timeout=step_timeout)
    return controller.run(program(controller))
