"""Explore each Mazurkiewicz trace of a program once: optimal DPOR.

This is stateless model checking: the program is re-executed from scratch
for every run, under a :class:`~shelvefix.explorer.controller.Controller`
that replays a prefix of recorded choices and then takes new ones. Nothing
is snapshotted, so the program must rebuild its shared state on every call
and be deterministic given the schedule; replay checks this and raises
:class:`~shelvefix.explorer.model.ExplorationError` ("nondeterministic
program") when a replayed choice point differs from the recorded one: other
enabled actors, or other pending steps. Steps are compared whole, resources
included: wakeup trees keep steps of earlier runs and the search compares
them with later runs' steps, so a resource must name the same thing the
same way in every run (``consumer:{instance}``, never the fresh UUID of a
run's server); replay says so when only resources differ. A divergence
after the replayed prefix is indistinguishable from a new branch and
cannot be detected.

Without reduction (``reduce=False``) the depth-first search releases every
enabled actor at every choice point: every interleaving is run. With it,
the search is optimal dynamic partial order reduction (Abdulla, Aronis,
Jonsson and Sagonas, "Optimal dynamic partial order reduction", POPL 2014):
source sets, wakeup trees and sleep sets.

Traces
    Two steps are *dependent* when they belong to the same actor, or the
    resources they touch intersect and one of them writes
    (:func:`~shelvefix.explorer.model.dependent`). Swapping two adjacent
    independent steps changes nothing: each reads only state the other does
    not write, so both observe the same values, leave the same state, and
    neither enables or disables the other (a guard reads only its step's
    resources). Runs that differ by such swaps form one Mazurkiewicz trace
    and have the same results, final state and outcome; a run is complete
    when no actor is enabled, and which actors are then stuck is the same
    in the whole trace. The aim is one complete run per trace.

The search
    Each choice point of the current path keeps the actors asleep there
    (inherited, plus those explored there, ``done``) and a wakeup tree of
    what is still to explore there (:mod:`~shelvefix.explorer.wakeup`). A
    new choice point takes the first branch of the subtree handed down to
    it, else the first enabled actor not asleep; it inherits asleep the
    parent's asleep actors whose steps are independent of the step taken.
    After a run, :mod:`~shelvefix.explorer.dpor` finds its races; each race
    reversal is a wakeup sequence, inserted into the tree of the choice
    point where it starts unless an actor asleep there is a weak initial of
    it. The search then backtracks to the deepest choice point with a
    branch left in its tree and replays the path to it.

At most once
    Suppose two complete runs explored are equivalent. At the choice point
    where they part, the earlier took ``p``, the later ``q``, so ``p`` was
    asleep in the later one from there. ``p``'s step is in both runs, and
    in the later one every step between that point and it is independent
    of it (nothing comes before it in the earlier one), so ``p`` stayed
    asleep until the later run released it: but asleep actors are never
    released, except in a run counted in :attr:`Exploration.repeated`.
    This holds whatever the branches taken.

No run is abandoned
    With sleep sets alone a run may reach a point where every enabled actor
    is asleep; every completion is then equivalent to a run already made.
    A wakeup sequence is inserted only if no actor asleep at its choice
    point is one of its weak initials, and below tree nodes whose earlier
    branches are not weak initials of what remains of it: each of those
    actors has a step that depends on an event of the sequence, which wakes
    it. So at the end of a branch nothing is asleep, the fresh choice
    points after it inherit nothing, and no run reaches such a point
    (except after a failed guess, below).

At least once
    Take a choice point ``E`` and a complete trace ``T`` extending it whose
    first steps no actor asleep at ``E`` could take. Compare ``T`` with the
    first run explored below ``E``, and take ``T``'s first event ``x`` whose
    causal past (the events before it in happens-before) differs there. ``x``'s
    actor has the same past up to ``x``, so it reached the same step
    (determinism), but ran it after an event outside ``T``'s past, or never ran
    it (it is stuck: its pending step counts as an event that never ran).

    The race between that event and ``x``'s step (or an event causing it) is
    reversed, and the wakeup sequence is compatible with ``T``; by induction
    ``T`` is explored below ``E``. The paper proves this: the actors explored
    at each choice point form a *source set* for the traces not covered by its
    sleep set, and wakeup trees keep that while avoiding the points above.

Guards
    The argument needs every reversal to be executable. Without guards it
    is: the events a reversal keeps have the same causal past, hence see the
    same state. A guarded step moved earlier may be disabled there; the
    search without guards would then run a schedule that does not exist and
    reverse the step's races in it.
    :meth:`~shelvefix.explorer.dpor.RunAnalysis.placements` computes those
    races instead, dropping writers one after another, until the guard is
    true. A guard reads only its step's resources, whose state follows from
    the writes on them; happens-before orders those writes, so the state a
    placement gives the step is named by the writes it keeps, in the run's
    order, and is the same in every run of the placement's trace.

    With a guard model (``guard_model``; :mod:`~shelvefix.explorer.guards`) the
    guard's value in every placement is the model's value on those writes. The
    placement ``T`` needs (its guard is true: ``T`` runs ``x`` there) is then
    reached by dropping writers, or a placement in between is feasible, is
    explored, and the argument goes on from that run as without guards: nothing
    is guessed and no trace is run twice. The controller evaluates the real
    guard at every choice point where the step is pending and raises
    :class:`~shelvefix.explorer.model.ExplorationError` if the model disagrees.

    A placement the model calls enabled is therefore checked when it is run
    (the run pauses the actor at the step in exactly that state); a model that
    calls disabled a placement that is enabled, in a state no run reaches with
    the actor waiting at the step, could hide traces without being caught: a
    model must be exact. The ready-made ones are, for the steps they describe
    (a lock whose acquires and releases are the only writes of its resource; a
    queue's puts and takes).

    Without a model, the guard's value is known where the run paused the step's
    actor at the step while the same writers were the last. When the state a
    placement needs was never seen, the placement is inserted as a guess (and
    also looked through, as if false). If the guard is false when a run gets
    there, the branch is dropped and the run goes on with an actor not asleep
    if any (a new trace) or else with one asleep: a complete run equivalent to
    an earlier one, counted in :attr:`Exploration.repeated`. So each trace is
    explored at least once, and exactly once unless a guess fails.

    No explorer knowing no more than the guard can avoid that: ``p`` writes
    ``r``; ``q`` writes ``y``, then waits on ``r``. If ``p`` was run first,
    nothing tells whether ``q``'s guard held before ``p``'s write but running
    ``q`` up to its wait first. Guesses never happen when every guarded step
    without a model names one resource and is its actor's first step, or its
    actor's previous step touched that resource (as after a lock's release):
    the actor then waits at the step in every state a placement can need.

Cost
    Replay re-runs the path's prefix; the rest of a run's bookkeeping (sleep
    sets, vector clocks, races) is linear in its steps for a bounded number
    of actors and resources per step, plus the length of each wakeup
    sequence built. Looking a guard through can branch when its step names
    several resources.

Assumptions (the explorer checks them only in part)
    Every access to shared state goes through a ``step()`` naming every
    resource the actor touches until its next step, with a ``'write'``
    access if it may change any of them. The program is deterministic
    under replay, resources named the same way in every run (checked on
    the replayed prefix). Guards only read their step's resources, and a
    guard model agrees with its guard in every state (checked wherever the
    guard is evaluated). The check depends only on the actors' results and
    the final state. If in doubt, ``reduce=False`` enumerates every
    interleaving.
"""

from shelvefix.explorer import dpor
from shelvefix.explorer import model
from shelvefix.explorer import wakeup


class Exploration(object):
    """What :func:`~shelvefix.explorer.runner.explore` found.

    :ivar runs: list of :class:`~shelvefix.explorer.model.RunRecord`, in
        exploration order
    :ivar complete: False if ``max_runs`` or ``stop`` ended the search
        early
    :ivar stopped: True if ``stop`` ended it
    :ivar elapsed: wall-clock seconds spent
    :ivar pruned: actor choices never made: summed over the choice points
        finished, the enabled actors not explored there (0 without
        reduction)
    :ivar blocked: always 0 (no run is abandoned; kept for compatibility)
    :ivar repeated: runs equivalent to an earlier run, made because a
        guessed guard was false (see the module docstring; 0 when every
        guard that could need a guess has a guard model)
    :ivar reduce: whether the reduction was used
    :ivar workers: how many processes executed the runs
    :ivar ahead: how many of the runs worker processes made ahead of the
        search (:mod:`~shelvefix.explorer.parallel`)
    :ivar tasks: how many subtrees were handed to workers
    :ivar discarded: runs workers made that the search never took
    :ivar costs: each run's execution time, in seconds
    :ivar waits: per run, the indexes of the runs whose races put its
        choices in wakeup trees (:func:`~.count.critical_path`)
    """

    def __init__(self, reduce):
        self.runs = []
        self.complete = False
        self.stopped = False
        self.elapsed = 0.0
        self.pruned = 0
        self.blocked = 0
        self.repeated = 0
        self.reduce = reduce
        self.workers = 1
        self.ahead = 0
        self.costs, self.waits = [], []
        self.tasks = self.discarded = 0

    def outcome_counts(self):
        """Count runs per outcome.

        :returns: dict outcome -> number of runs, in order of first
            appearance
        """
        counts = {}
        for run in self.runs:
            counts[run.outcome] = counts.get(run.outcome, 0) + 1
        return counts

    def first(self, outcome):
        """The first :class:`~.model.RunRecord` of ``outcome``, or None."""
        for run in self.runs:
            if run.outcome == outcome:
                return run
        return None

    @property
    def runs_per_second(self):
        """Runs recorded per second of exploration."""
        return len(self.runs) / self.elapsed if self.elapsed else 0.0

    def __repr__(self):
        return ('<Exploration runs=%d complete=%s pruned=%d repeated=%d '
                'elapsed=%.3fs outcomes=%r>' % (
                    len(self.runs), self.complete, self.pruned,
                    self.repeated, self.elapsed, self.outcome_counts()))


def add_races(points, steps, stuck, start=0, models=None,
              stuck_models=None, origin=None):
    """Insert the reversals of a run's races into its wakeup trees.

    :param points: the run's choice points (one before each step)
    :param steps: the run's steps, in order
    :param stuck: dict actor name -> pending step of the actors stuck at
        the end
    :param start: the first step that the previous run did not have
    :param models: None, or the guard model (or None) of each step
    :param stuck_models: None, or dict actor name -> guard model of the
        stuck steps that have one
    :param origin: the run's index, kept on the branches it adds
    :returns: the number of wakeup sequences inserted
    """
    analysis = dpor.RunAnalysis(points, steps, stuck, models, stuck_models)
    return insert_races(points, analysis.reversals(start), origin)


def insert_races(points, reversals, origin=None):
    """Insert wakeup sequences into a run's wakeup trees.

    :param points: the run's choice points
    :param reversals: ``(index, sequence, guess)`` triples, as
        :meth:`~shelvefix.explorer.dpor.RunAnalysis.reversals` returns
        them for that run
    :param origin: the run's index, kept on the branches added
    :returns: the number of wakeup sequences inserted
    """
    # Below a choice point where every enabled actor was asleep, every run
    # is equivalent to one explored already: nothing is worth adding there.
    limit = next((point.index for point in points if point.forced),
                 len(points))
    inserted = 0
    for index, sequence, guess in reversals:
        point = points[index]
        if index < limit and wakeup.asleep_initial(point, sequence) is None:
            inserted += wakeup.insert(point.wakeup, sequence, guess,
                                      origin)
    return inserted


def backtrack(points, exploration, floor=0):
    """Turn the last run's choice points into the next prefix to replay.

    Finished choice points are popped (adding the enabled actors never
    explored there to ``exploration.pruned``); the deepest one with a
    branch left (with reduction) or an enabled actor not yet explored
    (without) gets it as its new choice.

    :param points: the last run's list of
        :class:`~shelvefix.explorer.model.ChoicePoint`; it is updated
    :param exploration: the :class:`Exploration` to count pruning in
    :param floor: keep the first ``floor`` choice points as they are: the
        search of a subtree (:mod:`~shelvefix.explorer.parallel`) is over
        when only they are left
    :returns: the choice points to replay, the last one with a new choice,
        or None when the search is over
    """
    while len(points) > floor:
        point = points[-1]
        point.done.append(point.chosen)
        point.handoff = []
        if exploration.reduce:
            branch = wakeup.take(point)
            if branch is not None:
                point.chosen = branch.actor
                point.handoff = branch.children
                point.origin = branch.origin
                return points
        else:
            for name in point.enabled:
                if name not in point.done:
                    point.chosen = name
                    return points
        exploration.pruned += len(set(point.enabled).difference(point.done))
        points.pop()
    return None


def new_point(parent, index, enabled, pending, guarded=frozenset(),
              reduce=True):
    """Make a choice point after the replayed prefix, and choose.

    :param parent: the previous choice point, or None at the root
    :param index: the choice point's position in the run
    :param enabled: tuple of enabled actor names, in the stable order
        (not empty)
    :param pending: dict name -> :class:`~shelvefix.explorer.model.Step` of
        every paused actor
    :param guarded: frozenset of the paused actors whose step has a guard
    :param reduce: inherit sleep sets and follow the wakeup tree handed
        down; else take the first enabled actor
    :returns: a :class:`~shelvefix.explorer.model.ChoicePoint`: ``chosen``
        is the first branch of the wakeup subtree handed down whose actor
        is enabled, else the first enabled actor not asleep, else (and
        ``forced`` is set) the first enabled actor
    """
    point = model.ChoicePoint(index, enabled, pending, guarded=guarded)
    if reduce and parent is not None:
        # An actor asleep at the parent stays asleep while the step taken
        # is independent of its pending step: taking it now would only
        # reorder independent steps.
        taken = parent.pending[parent.chosen]
        point.sleep = frozenset(
            name for name in parent.asleep()
            if not model.dependent(parent.pending[name], taken))
        point.wakeup, parent.handoff = parent.handoff, []
    branch = wakeup.take(point)
    if branch is not None:
        point.chosen = branch.actor
        point.handoff = branch.children
        point.origin = branch.origin
        return point
    awake = [name for name in enabled if name not in point.sleep]
    point.chosen = awake[0] if awake else enabled[0]
    point.forced = not awake
    return point


def replayed_point(recorded, index, enabled, pending, guarded=frozenset()):
    """Check a replayed choice point against the recorded one.

    The enabled actors and every paused actor's pending step must be as
    recorded, resources included: steps kept from earlier runs (in wakeup
    trees) are compared with this run's, so a resource must name the same
    thing by the same name in every run.

    :param recorded: the list of recorded
        :class:`~shelvefix.explorer.model.ChoicePoint` being replayed
    :param index: the choice point's position in the run
    :param enabled: tuple of enabled actor names now
    :param pending: dict name -> :class:`~shelvefix.explorer.model.Step` of
        every paused actor now
    :param guarded: frozenset of the paused actors whose step has a guard
    :returns: the recorded choice point, to be reused, its ``guarded``
        updated to this run's
    :raises ExplorationError: if the program did not behave as when the
        point was recorded
    """
    point = recorded[index]
    if point.enabled != enabled or point.pending != pending:
        raise model.ExplorationError(
            'nondeterministic program: replaying schedule %s, choice point '
            '%d had enabled %s, pending %s; now enabled %s, pending %s%s' % (
                [p.chosen for p in recorded[:index]], index,
                list(point.enabled), _signature(point.pending),
                list(enabled), _signature(pending),
                _renamed(point.pending, pending)))
    point.guarded = guarded
    return point


def _signature(pending):
    return ['%s: %s %s %s' % (name, pending[name].kind, pending[name].access,
                              pending[name].label)
            for name in sorted(pending)]


def _renamed(recorded, pending):
    """Explain a difference in resources alone."""
    names = sorted(name for name in recorded.keys() & pending.keys()
                   if recorded[name] != pending[name]
                   and recorded[name]._replace(resource=None)
                   == pending[name]._replace(resource=None))
    if not names:
        return ''
    return ('; only resources differ (%s): resources must name the same '
            'things the same way in every run, never by per-run ids' % (
                ', '.join('%s touches %s, was %s' % (
                    name, model.describe_resource(pending[name].resource),
                    model.describe_resource(recorded[name].resource))
                    for name in names)))
