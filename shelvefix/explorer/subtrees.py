"""Searching the subtrees the search will reach, ahead of it.

The search (:mod:`shelvefix.explorer.search`) is sequential: what it runs
next follows from the analysis of every run before it. But a branch still
pending in a wakeup tree of the current stack is a subtree the search will
explore later, and that exploration is already determined. A worker (a
forked process of :mod:`~shelvefix.explorer.parallel`, or a Dask task of
:mod:`shelvefix.cluster.ahead`) takes such a subtree, the one furthest
ahead (:func:`pending_subtrees`), and searches it depth first as the
search would (:func:`subtree_runs`). The search goes on as it would
alone: when it reaches a run a worker has sent, it takes the result
(:func:`adopt`) instead of executing the run; when it reaches a run of a
worker's subtree the worker has not sent yet, it stops that worker and
goes on by itself.

Why a worker's run is the run the search will make
    Let ``b`` be a branch pending at choice point ``p``. The search reaches
    ``b`` after everything to its left. A run in ``b``'s subtree depends on
    the stack down to ``p`` (choices and pending steps, fixed: the program
    is deterministic), on what is asleep at ``p`` (its sleep set, fixed,
    and the actors done there, which are exactly the branches of ``p`` to
    the left of ``b``: insertion only ever appends a branch after the
    existing ones at a node, :func:`~shelvefix.explorer.wakeup.insert`), on
    ``b``'s wakeup subtree, and on the races found by the earlier runs of
    the subtree itself, which the worker inserts as the search would.

    Races that reverse at or above ``p`` only change wakeup trees outside
    the subtree, which its runs never read. The search's own runs may
    still append branches inside ``b``'s subtree before it gets there;
    appended last, they change no earlier run, and the worker simply does
    not make them: the search runs them itself.

    The search does not trust this argument blindly: it rebuilds each run
    it takes from what the worker observed (enabled actors and pending
    steps at each choice point) with its own functions on its own stack,
    and checks every choice; a difference stops the exploration with
    :class:`~shelvefix.explorer.model.ExplorationError`.

    So an exploration with workers makes the same runs, analyses them in
    the same order and returns the same
    :class:`~shelvefix.explorer.search.Exploration` as one without; only
    the wall time differs. Runs a worker made that the search never takes
    (a subtree stopped mid-run, ``max_runs``) are discarded.

Results
    Runs travel pickled (:func:`~shelvefix.explorer.pickling.portable`):
    an actor's result that does not pickle arrives as its ``repr``, and an
    exception is rebuilt without calling its constructor.
"""

import os
import pickle
import time

from shelvefix.explorer import choices
from shelvefix.explorer import controller as controller_mod
from shelvefix.explorer import model
from shelvefix.explorer import search


class Observed(object):
    """What a worker saw of one run (pickled back to the search)."""

    def __init__(self, controller, record, seconds=0.0):
        self.record = record
        self.seconds = seconds
        self.points = [(point.enabled, point.pending, point.guarded,
                        point.chosen)
                       for point in controller.choice_points]
        self.models = controller.models
        self.stuck = controller.stuck
        self.stuck_models = controller.stuck_models


def subtree_runs(program, points, reduce, step_timeout, pool):
    """Search one subtree depth first, as the search would, run by run.

    :param points: a choice-point stack whose last choice is the subtree's
        first branch (:func:`job` pickles one), or a continuation this
        generator yielded, with the subtree's own wakeup trees
    :param pool: the :class:`~shelvefix.explorer.threads.ActorThreads` to
        run the actors in
    :returns: a generator of ``(key, observed, points)``: the run's
        schedule prefix, what the search needs of it (an
        :class:`~shelvefix.explorer.model.ExplorationError` if it failed,
        the last item then) and the stack to go on from (None once the
        subtree is over). The races a run finds are inserted where they
        belong; those above the subtree are ignored.
    """
    floor = len(points)
    scratch = search.Exploration(reduce)
    while points is not None:
        key = tuple(point.chosen for point in points)
        started = time.monotonic()
        try:
            controller = controller_mod.Controller(
                schedule=key, reduce=reduce, step_timeout=step_timeout,
                _points=points, _threads=pool)
            record = controller.run(program(controller))
        except BaseException as exc:
            yield key, model.ExplorationError(
                'in worker %d: %s: %s' % (os.getpid(), type(exc).__name__,
                                          exc)), None
            return
        observed = Observed(controller, record, time.monotonic() - started)
        if reduce:
            search.add_races(
                controller.choice_points,
                [entry.step for entry in record.trace],
                controller.stuck, start=max(len(key) - 1, 0),
                models=controller.models,
                stuck_models=controller.stuck_models)
        points = search.backtrack(controller.choice_points, scratch,
                                  floor=floor)
        yield key, observed, points


def job(points):
    """The stack the search would hand a controller, lightened.

    A controller reads, of the recorded choice points, their enabled and
    pending actors and choices, and of the last one what is asleep there and
    the wakeup subtree handed down; the branches still to explore at each
    point are not needed.
    """
    light = []
    for point in points:
        twin = model.ChoicePoint(point.index, point.enabled, point.pending,
                                 sleep=point.sleep, done=point.done,
                                 chosen=point.chosen, guarded=point.guarded)
        light.append(twin)
    if points:
        light[-1].handoff = points[-1].handoff
    return pickle.dumps(light, protocol=pickle.HIGHEST_PROTOCOL)


def pending_subtrees(points, reduce):
    """The subtrees still pending on the search's stack, furthest first.

    At each choice point from the root down, the branches of its wakeup
    tree the search will take after the current choice, the last first.

    :returns: a generator of ``(key, stack)``: the subtree's schedule
        prefix, and the stack a worker searches it from (:func:`job`)
    """
    if not reduce:
        return
    for depth in range(len(points)):
        point = points[depth]
        done = list(point.done) + [point.chosen]
        asleep = point.sleep.union(done)
        chosen = []
        for branch in point.wakeup:
            if (branch.actor in point.enabled
                    and branch.actor not in asleep):
                chosen.append((branch, list(done)))
                done.append(branch.actor)
                asleep = asleep.union((branch.actor,))
        prefix = tuple(p.chosen for p in points[:depth])
        for branch, done_before in reversed(chosen):
            twin = model.ChoicePoint(
                point.index, point.enabled, point.pending,
                sleep=point.sleep, done=done_before,
                chosen=branch.actor, guarded=point.guarded)
            twin.handoff = branch.children
            yield prefix + (branch.actor,), points[:depth] + [twin]


def unclaimed(points, reduce, given, claimed):
    """The pending subtrees a helper may still hand out, furthest first.

    Those of :func:`pending_subtrees` that were not handed out before
    (``given``) and do not lie inside a subtree a worker has now
    (``claimed``, schedule prefixes) or inside one yielded before: a
    subtree's worker searches all of it.

    :returns: a generator of ``(key, stack)``; the caller adds each key it
        hands out to ``given``, and stops when it has no more room
    """
    claimed = list(claimed)
    for key, stack in pending_subtrees(points, reduce):
        if key in given or any(key[:len(root)] == root for root in claimed):
            continue
        claimed.append(key)
        yield key, stack


def adopt(points, observed, index, reduce):
    """Rebuild a run a worker made on the search's own stack.

    :param points: the search's stack, the last choice made
    :param observed: what the worker sent of the run
    :param index: the run's number in the search
    :returns: a :class:`~shelvefix.explorer.model.RunResult`
    :raises ExplorationError: the worker chose otherwise than the search
        would have
    """
    rebuilt = choices.Choices(
        tuple(point.chosen for point in points), reduce, points)
    for position, (enabled, pending, guarded, chosen) in enumerate(
            observed.points):
        point = rebuilt.add_point(enabled, pending, guarded)
        if point.chosen != chosen:
            raise model.ExplorationError(
                'parallel search diverged at choice point %d of '
                'schedule %s: the search chose %r, the worker %r'
                % (position, [p[3] for p in observed.points],
                   point.chosen, chosen))
    record = observed.record._replace(index=index)
    return model.RunResult(
        record, rebuilt.points, observed.models, observed.stuck,
        observed.stuck_models,
        any(point.forced for point in rebuilt.points[len(points):]),
        seconds=observed.seconds)
