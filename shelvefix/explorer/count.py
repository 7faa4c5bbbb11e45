"""How many interleavings one explored run stands for.

A run's Mazurkiewicz trace is the happens-before order of its events:
program order, plus every pair of dependent steps
(:func:`~shelvefix.explorer.model.dependent`) in the order the run took
them. The interleavings equivalent to the run are that order's linear
extensions, counted here by dynamic programming over how far each actor
has got: a state is the tuple of per-actor positions, and an actor may
take its next step once every step that must precede it is in.
"""

import collections

from shelvefix.explorer import model


def _requirements(steps):
    """Per actor, per step: how far each actor must have got first.

    :returns: ``(actors, needs)``: the actor names in order of first step,
        and for each actor the list, one per step, of per-actor counts of
        steps that happen before it
    """
    actors = []
    index = {}
    for step in steps:
        if step.actor not in index:
            index[step.actor] = len(actors)
            actors.append(step.actor)
    width = len(actors)
    clocks = []
    last = {}
    needs = [[] for _ in actors]
    for position, step in enumerate(steps):
        actor = index[step.actor]
        previous = last.get(actor)
        clock = list(clocks[previous]) if previous is not None else [0] * width
        for earlier in range(position):
            other = steps[earlier]
            if other.actor != step.actor and model.dependent(other, step):
                clock = [max(pair) for pair in zip(clock, clocks[earlier])]
        needs[actor].append(tuple(clock))
        clock[actor] += 1
        clocks.append(clock)
        last[actor] = position
    return actors, needs


def count_interleavings(run):
    """Count the interleavings equivalent to a run.

    These are the orderings of the run's steps that keep program order and
    the order of every pair of dependent steps: the linear extensions of
    its happens-before order. Each is a schedule of the same trace, with
    the same results and outcome.

    Summed over the runs of a complete reduced exploration, this is the
    number of runs the unreduced search (``reduce=False``) would make,
    provided each trace was explored once (``repeated`` is 0) and every
    guard reads only its own step's resources. Then every linear extension
    is a complete run: its events have the same causal pasts, so each
    actor announces the same steps (determinism); the writes on a guarded
    step's resources are all ordered with it, so it sees the same writes,
    in the same order, and its guard holds where the extension runs it;
    and the run ends in the same state, with the same actors stuck and none
    enabled. A guard reading other state could be false in some extensions
    (fewer runs than counted); a repeated run counts its trace twice.

    :param run: a :class:`~shelvefix.explorer.model.RunRecord`
    :returns: a positive int (1 for a run without steps)
    """
    steps = [entry.step for entry in run.trace]
    actors, needs = _requirements(steps)
    lengths = [len(actor_needs) for actor_needs in needs]
    layer = {(0,) * len(actors): 1}
    for _ in range(len(steps)):
        following = collections.defaultdict(int)
        for state, count in layer.items():
            for actor, position in enumerate(state):
                if position == lengths[actor]:
                    continue
                need = needs[actor][position]
                if all(have >= wanted for have, wanted in zip(state, need)):
                    following[state[:actor] + (position + 1,)
                              + state[actor + 1:]] += count
        layer = following
    return sum(layer.values())


def critical_path(exploration):
    """The longest chain of runs that must wait for each other, in seconds.

    A run can start once the runs whose races put its choices in wakeup
    trees have ended (:attr:`Exploration.waits
    <shelvefix.explorer.search.Exploration.waits>`): with as many workers
    as there are runs ready, an exploration takes at least this long, and
    the total of :attr:`~shelvefix.explorer.search.Exploration.costs`
    divided by it bounds the speed-up any number of workers gives.

    :returns: ``(seconds, runs)``: the chain's time and its length
    """
    finish, length = [], []
    for cost, waits in zip(exploration.costs, exploration.waits):
        before = max(waits, key=lambda run: finish[run], default=None)
        finish.append(cost + (finish[before] if before is not None else 0.0))
        length.append(1 + (length[before] if before is not None else 0))
    if not finish:
        return 0.0, 0
    last = max(range(len(finish)), key=finish.__getitem__)
    return finish[last], length[last]
