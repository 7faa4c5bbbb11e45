"""Enumerate every schedule of a program by stateless depth-first search.

This is stateless model checking in the style of CHESS: the program is
re-executed from scratch for every schedule, under a
:class:`~shelvefix.explorer.controller.Controller` that replays a prefix of
recorded choices and then takes new ones. Nothing is snapshotted, so the
program must rebuild its shared state on every call and be deterministic
given the schedule; replay checks this and raises
:class:`~shelvefix.explorer.model.ExplorationError` ("nondeterministic
program") when a replayed choice point differs from the recorded one: other
enabled actors, or pending steps with another kind, access or label.
Resources are not compared, so they may name per-run objects (a fresh UUID
per run); labels must be stable. A divergence after the replayed prefix is
indistinguishable from a new branch and cannot be detected.

Depth-first search
    Each run records its choice points (enabled actors, their pending steps,
    sleep set, actors explored so far). After a run the search backtracks
    to the deepest choice point that has an enabled actor neither explored
    there yet nor asleep, replays the choices above it, takes that actor,
    and continues with the first allowed actor at every later choice point.

Why the reduction is sound (``reduce=True``)
    Two steps are *dependent* when they belong to the same actor, or touch
    the same resource and at least one writes it
    (:func:`~shelvefix.explorer.model.dependent`); otherwise they are
    independent. Swapping two adjacent independent steps cannot change
    anything: each reads only state the other does not write, so both
    observe the same values, leave the same state behind, and neither
    enables or disables the other. Runs that differ only by such swaps
    form one Mazurkiewicz trace and give every actor the same observations
    and the same final state, hence the same results and outcome.

    Sleep sets (Godefroid, 1996) skip runs equivalent to one already
    explored: once actor ``a`` has been explored at a choice point, a later
    sibling choice ``b`` puts ``a`` to sleep in its subtree, and ``a`` stays
    asleep for as long as the steps taken are independent of ``a``'s
    pending step. A run that took ``a`` while it slept would only move
    ``a``'s step past independent steps, i.e. it would be equivalent to a
    run in ``a``'s subtree. Formally, a child's sleep set after choosing
    ``a`` at node ``n`` is ``{b in n.sleep | n.done : step(b) independent
    of step(a)}``. Every Mazurkiewicz trace of a complete run (including
    runs that end with stuck actors) is still explored at least once, and
    because every enabled actor that is not asleep is explored, no two
    complete runs explored are equivalent. A prefix in which every enabled
    actor sleeps can only complete into runs explored elsewhere: it is
    abandoned and counted in :attr:`Exploration.blocked`, not in
    :attr:`Exploration.runs`.

    This rests on two assumptions the explorer cannot check: every access
    to shared state goes through a ``step()`` whose ``resource`` and
    ``access`` tag it correctly (including everything the actor does until
    its next step), and guards only read their step's resource. The check
    must depend only on the actors' results and the final state. If in
    doubt, ``reduce=False`` enumerates every interleaving.
"""

from shelvefix.explorer import model


class Exploration(object):
    """What :func:`~shelvefix.explorer.controller.explore` found.

    :ivar runs: list of :class:`~shelvefix.explorer.model.RunRecord`, in
        exploration order
    :ivar complete: False if ``max_runs`` stopped the search early
    :ivar elapsed: wall-clock seconds spent
    :ivar pruned: branches (actor choices) skipped because the actor was
        in the sleep set
    :ivar blocked: executions abandoned because every enabled actor was
        asleep (not in ``runs``)
    :ivar reduce: whether sleep sets were used
    """

    def __init__(self, reduce):
        self.runs = []
        self.complete = False
        self.elapsed = 0.0
        self.pruned = 0
        self.blocked = 0
        self.reduce = reduce

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
        """Find the first run with an outcome.

        :param outcome: the outcome to look for
        :returns: the first :class:`~shelvefix.explorer.model.RunRecord`
            with it, or None
        """
        for run in self.runs:
            if run.outcome == outcome:
                return run
        return None

    @property
    def runs_per_second(self):
        """Runs recorded per second of exploration."""
        return len(self.runs) / self.elapsed if self.elapsed else 0.0

    def __repr__(self):
        return ('<Exploration runs=%d complete=%s pruned=%d blocked=%d '
                'elapsed=%.3fs outcomes=%r>'
                % (len(self.runs), self.complete, self.pruned, self.blocked,
                   self.elapsed, self.outcome_counts()))


def backtrack(points, exploration):
    """Turn the last run's choice points into the next prefix to replay.

    Finished choice points are popped (adding what their sleep sets saved
    to ``exploration.pruned``); the deepest one with an actor left to try
    gets it as its new choice.

    :param points: the last run's list of
        :class:`~shelvefix.explorer.model.ChoicePoint`; it is updated
    :param exploration: the :class:`Exploration` to count pruning in
    :returns: the choice points to replay, the last one with a new choice,
        or None when the search is over
    """
    while points:
        point = points[-1]
        tried = set(point.done)
        tried.add(point.chosen)
        for name in point.enabled:
            if name not in tried and name not in point.sleep:
                point.done.append(point.chosen)
                point.chosen = name
                return points
        # The node is finished: what the sleep set saved is counted once.
        exploration.pruned += len(point.sleep.intersection(point.enabled))
        points.pop()
    return None


def new_point(parent, index, enabled, pending):
    """Make the choice point after the replayed prefix.

    :param parent: the previous choice point, or None at the root or
        without reduction (then nothing sleeps)
    :param index: the choice point's position in the run
    :param enabled: tuple of enabled actor names, in the stable order
    :param pending: dict name -> :class:`~shelvefix.explorer.model.Step` of
        every paused actor
    :returns: a :class:`~shelvefix.explorer.model.ChoicePoint` whose
        ``chosen`` is the first enabled actor not asleep, or None if all are
    """
    sleep = frozenset()
    if parent is not None:
        # An actor explored at the parent (or asleep there) stays asleep
        # while the step taken is independent of its pending step: taking
        # it now would only reorder independent steps.
        taken = parent.pending[parent.chosen]
        sleep = frozenset(
            name for name in parent.sleep.union(parent.done)
            if not model.dependent(parent.pending[name], taken))
    chosen = next((name for name in enabled if name not in sleep), None)
    return model.ChoicePoint(index, enabled, pending, sleep, chosen=chosen)


def replayed_point(recorded, index, enabled, pending):
    """Check a replayed choice point against the recorded one.

    The enabled actors and, for every paused actor, the ``kind``,
    ``access`` and ``label`` of its pending step must be as recorded.
    Resources are not compared: they may name per-run objects (a fresh
    UUID each run); labels are what a program must keep stable.

    :param recorded: the list of recorded
        :class:`~shelvefix.explorer.model.ChoicePoint` being replayed
    :param index: the choice point's position in the run
    :param enabled: tuple of enabled actor names now
    :param pending: dict name -> :class:`~shelvefix.explorer.model.Step` of
        every paused actor now
    :returns: the recorded choice point, to be reused, its ``pending``
        updated to this run's steps
    :raises ExplorationError: if the program did not behave as when the
        point was recorded
    """
    point = recorded[index]
    if (point.enabled != enabled
            or _signature(point.pending) != _signature(pending)):
        raise model.ExplorationError(
            'nondeterministic program: replaying schedule %s, choice point '
            '%d had enabled %s, pending %s; now enabled %s, pending %s' % (
                [p.chosen for p in recorded[:index]], index,
                list(point.enabled), _signature(point.pending),
                list(enabled), _signature(pending)))
    point.pending = pending
    return point


def _signature(pending):
    return ['%s: %s %s %s' % (name, pending[name].kind, pending[name].access,
                              pending[name].label)
            for name in sorted(pending)]
