"""Small programs for the explorer's tests, and the traces' normal form.

A *plan* maps each actor name to its list of :class:`Op`. The program it
builds keeps, for each resource, the tuple of the actors that wrote it, in
order; a read observes the resources it names, a write appends the writer
to each of them. The check returns everything observed: each actor's
observations, who is stuck, and the final state, so two runs have the same
outcome iff nothing tells them apart.
"""

import collections
import math
import random

from shelvefix import explorer
from shelvefix.explorer import model

RESOURCES = 'xyz'
LOCK = 'L'


class Op(collections.namedtuple('Op', 'resource access guard label model',
                                defaults=(None, None, None))):
    """One step of a plan.

    ``resource`` is one name or a tuple of names, ``access`` ``'read'`` or
    ``'write'``; ``guard`` is None or ``(minimum, parity)``: the step waits
    until its resources were written at least ``minimum`` times in all,
    and if ``parity`` is not None, an even (0) or odd (1) number of times.
    ``model`` is the guard's model, if any (see :func:`with_models`).
    """

    __slots__ = ()


class CountModel(object):
    """The plans' guard as a guard model: the writes, counted.

    A write touching two of the step's resources counts twice, as in the
    program's state.
    """

    def __init__(self, guard, resource):
        self.minimum, self.parity = guard
        self.resources = frozenset(_names(resource))

    def __call__(self, writes):
        count = sum(len(self.resources.intersection(step.resources))
                    for step in writes)
        return count >= self.minimum and (self.parity is None
                                          or count % 2 == self.parity)

    def __repr__(self):
        return 'CountModel(%r, %r)' % ((self.minimum, self.parity),
                                       sorted(self.resources))


def with_models(plan):
    """The same plan, each guard with its exact :class:`CountModel`."""
    return {name: [op._replace(model=CountModel(op.guard, op.resource))
                   if op.guard is not None and op.model is None else op
                   for op in ops]
            for name, ops in plan.items()}


def _names(resource):
    return resource if isinstance(resource, tuple) else (resource,)


def _guard_holds(op, state):
    minimum, parity = op.guard
    count = sum(len(state[name]) for name in _names(op.resource))
    return count >= minimum and (parity is None or count % 2 == parity)


def plan_program(plan):
    """Build the program a plan describes."""
    def program(controller):
        state = collections.defaultdict(tuple)
        seen = {name: [] for name in plan}

        def actor(name):
            def run():
                for number, op in enumerate(plan[name]):
                    guard = None
                    if op.guard is not None:
                        guard = (lambda op=op: _guard_holds(op, state))
                    controller.step('mem', op.resource, op.access,
                                    label=op.label or '%s %d' % (op.access,
                                                                 number),
                                    guard=guard, guard_model=op.model)
                    if op.access == model.READ or op.guard is not None:
                        seen[name].append(tuple(
                            state[res] for res in _names(op.resource)))
                    if op.access == model.WRITE:
                        for res in _names(op.resource):
                            state[res] += (name,)
            return run

        def check(results):
            return (tuple((name, tuple(seen[name]), results[name].stuck)
                          for name in sorted(plan)),
                    tuple(sorted(state.items())))
        return explorer.RunSpec([(name, actor(name)) for name in plan],
                                check)
    return program


def interleavings(plan):
    """How many interleavings the plan's steps have, ignoring guards."""
    counts = [len(ops) for ops in plan.values()]
    total = math.factorial(sum(counts))
    for count in counts:
        total //= math.factorial(count)
    return total


def random_plan(seed, guards=True, anywhere=False, max_interleavings=300,
                locks=False):
    """A small random plan: 2-4 actors, 1-4 steps, 1-3 resources.

    Some steps touch two resources. With ``guards``, some steps get a
    guard; unless ``anywhere``, only steps on one resource and only where
    the explorer never has to guess (the actor's first step, or its
    previous step touched that resource: see
    :mod:`shelvefix.explorer.search`). With ``locks``, some actors hold
    the lock ``L`` around some of their steps (its acquire anywhere, with
    a :class:`~shelvefix.explorer.guards.LockModel`).
    Plans with more than ``max_interleavings`` are drawn again.
    """
    rng = random.Random(seed)
    while True:
        resources = RESOURCES[:rng.randint(1, 3)]
        plan = {}
        for number in range(rng.randint(2, 4)):
            ops = []
            for _ in range(rng.randint(1, 4)):
                if len(resources) > 1 and rng.random() < 0.2:
                    resource = tuple(rng.sample(resources, 2))
                else:
                    resource = rng.choice(resources)
                ops.append(Op(resource, rng.choice(model.ACCESSES)))
            plan['a%d' % number] = ops
        if guards:
            _add_guards(rng, plan, anywhere)
        if locks:
            _add_locks(rng, plan)
        if interleavings(plan) <= max_interleavings:
            return plan


def lock_ops(model_it=True):
    """The acquire and release of the plans' lock ``L``."""
    guard_model = explorer.LockModel('release') if model_it else None
    return (Op(LOCK, model.WRITE, (0, 0), 'acquire', guard_model),
            Op(LOCK, model.WRITE, None, 'release'))


def _add_locks(rng, plan):
    acquire, release = lock_ops()
    for ops in plan.values():
        if rng.random() < 0.7:
            # Mostly after another step: where the explorer used to guess.
            start = rng.randint(min(1, len(ops) - 1), len(ops) - 1)
            end = rng.randint(start, len(ops) - 1)
            ops[start:end + 1] = [acquire] + ops[start:end + 1] + [release]


def _add_guards(rng, plan, anywhere):
    for ops in plan.values():
        for index, op in enumerate(ops):
            if rng.random() > 0.3:
                continue
            previous = _names(ops[index - 1].resource) if index else ()
            if not anywhere and (isinstance(op.resource, tuple) or index
                                 and op.resource not in previous):
                continue
            guard = (rng.randint(0, 2), rng.choice((None, 0, 1)))
            ops[index] = op._replace(guard=guard)


def events(run):
    """Name each executed step: actor, its number there, what it does."""
    counts = collections.Counter()
    named = []
    for entry in run.trace:
        step = entry.step
        counts[step.actor] += 1
        named.append(((step.actor, counts[step.actor], step.kind,
                       step.access, step.label,
                       tuple(sorted(map(str, step.resources)))), step))
    return named


def foata(run):
    """The Foata normal form of a run's Mazurkiewicz trace.

    Each step goes one level above the highest step before it that it
    depends on (:func:`~shelvefix.explorer.model.dependent`); the form is
    the tuple of levels, each the sorted tuple of its steps' names. Two
    runs are equivalent iff their forms are equal.
    """
    named = events(run)
    levels = []
    for index, (_, step) in enumerate(named):
        level = 0
        for earlier in range(index):
            if model.dependent(named[earlier][1], step):
                level = max(level, levels[earlier] + 1)
        levels.append(level)
    form = [[] for _ in range(max(levels, default=-1) + 1)]
    for (name, _), level in zip(named, levels):
        form[level].append(name)
    return tuple(tuple(sorted(level)) for level in form)


def summary(exploration):
    """What two explorations that made the same runs have in common.

    Every run's index, schedule and outcome, in order, and whether the
    exploration was complete, how many runs it pruned and repeated.
    """
    return ([(run.index, run.schedule, run.outcome)
             for run in exploration.runs],
            exploration.complete, exploration.pruned, exploration.repeated)
