"""Run a program under every schedule, or under one.

:func:`explore` is the stateless model checker's main loop: it re-executes
the program under a fresh :class:`~shelvefix.explorer.controller.Controller`
for every schedule the depth-first search of
:mod:`~shelvefix.explorer.search` asks for. :func:`replay` runs one
schedule, e.g. a counterexample the search found.
"""

import time

from shelvefix.explorer import controller as controller_mod
from shelvefix.explorer import search


def explore(program, reduce=True, max_runs=None, progress=None,
            step_timeout=10.0):
    """Run a program under every schedule, depth first.

    See :mod:`shelvefix.explorer.search` for the search and for why, with
    ``reduce``, the schedules skipped are equivalent to ones run.

    :param program: ``program(controller)`` builds fresh shared state whose
        instrumented code calls ``controller.step()``, and returns a
        :class:`RunSpec` (or a sequence of ``(name, callable)``). It is
        called once per execution; the spec's check is called after each
        execution, so it can also clean up.
    :param reduce: skip schedules equivalent to one already run (sleep sets)
    :param max_runs: stop after this many recorded runs (None: no limit)
    :param progress: None or ``progress(runs_done)``, called after each
        recorded run
    :param step_timeout: seconds an actor may take to reach its next step
    :returns: an :class:`~shelvefix.explorer.search.Exploration`
    :raises ExplorationError: for a nondeterministic program, an actor that
        neither reaches a step nor finishes in time, a guard that raises or
        a helper thread calling ``step()``
    :raises ValueError: for ``max_runs`` < 1 or an invalid run spec
    """
    if max_runs is not None and max_runs < 1:
        raise ValueError('max_runs must be positive, not %r' % (max_runs,))
    exploration = search.Exploration(reduce)
    started = time.monotonic()
    points = []
    try:
        while True:
            controller = controller_mod.Controller(
                schedule=[point.chosen for point in points], reduce=reduce,
                step_timeout=step_timeout, _points=points)
            record = controller.run(program(controller),
                                    index=len(exploration.runs))
            if controller.sleep_blocked:
                exploration.blocked += 1
            else:
                exploration.runs.append(record)
                if progress is not None:
                    progress(len(exploration.runs))
            points = search.backtrack(controller.choice_points, exploration)
            if points is None:
                exploration.complete = True
                break
            if max_runs is not None and len(exploration.runs) >= max_runs:
                break
    finally:
        exploration.elapsed = time.monotonic() - started
    return exploration


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
