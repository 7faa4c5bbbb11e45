"""The values an exploration produces and consumes.

A :class:`Step` is what an actor announces before touching shared state; the
:func:`dependent` relation between steps, defined here only, is what the
reduction relies on (see :mod:`shelvefix.explorer.search`). :class:`RunSpec`
is what a program hands the explorer for one run, :class:`RunRecord` what the
explorer keeps of it.
"""

import collections

READ = 'read'
WRITE = 'write'
ACCESSES = (READ, WRITE)


class ExplorationError(Exception):
    """The exploration cannot go on; this is not a finding about the program.

    Raised for a program that is not deterministic under replay, an actor
    that neither reaches a step nor finishes within the step timeout, a
    guard that raises, a helper thread that calls ``step()``, or a schedule
    that chooses an actor which is not enabled.
    """


class Step(collections.namedtuple('Step',
                                  'actor kind resource access label')):
    """What an actor is about to do: one scheduling unit.

    ``actor`` is the actor's name, ``kind`` a free-form category (``'http'``,
    ``'db'``), ``resource`` the shared state touched: one resource (any
    hashable but a tuple or list, usually a string) or a frozenset of them
    (see :func:`as_resource`), ``access`` is ``'read'`` or ``'write'`` and
    ``label`` the human text shown in traces (``"GET /allocations/<uuid>"``).
    """

    __slots__ = ()

    @property
    def resources(self):
        """The frozenset of resources the step touches."""
        if isinstance(self.resource, frozenset):
            return self.resource
        return frozenset((self.resource,))

    def __str__(self):
        return '%s: %s' % (self.actor, self.label)


def as_resource(resource):
    """Normalise what a step names as the shared state it touches.

    :param resource: one hashable resource, or a frozenset, set, tuple or
        list of hashable resources (the step touches all of them, with the
        same access)
    :returns: the resource itself, or a frozenset of the resources
    :raises TypeError: if a resource is not hashable
    """
    if isinstance(resource, (tuple, list, set, frozenset)):
        return frozenset(resource)
    hash(resource)
    return resource


def check_step_options(access, guard, guard_model):
    """Validate what a step says about its access and guard.

    :raises ValueError: for an unknown ``access``, or a ``guard_model``
        without a ``guard``
    :raises TypeError: if ``guard`` or ``guard_model`` is not callable
    """
    if access not in ACCESSES:
        raise ValueError('access must be one of %s, not %r'
                         % (', '.join(ACCESSES), access))
    if guard is not None and not callable(guard):
        raise TypeError('guard must be callable, not %r' % (guard,))
    if guard_model is not None:
        if not callable(guard_model):
            raise TypeError('guard_model must be callable, not %r'
                            % (guard_model,))
        if guard is None:
            raise ValueError('a guard_model needs a guard')


def describe_resource(resource):
    """The text naming a step's resource in its default label.

    :param resource: as normalised by :func:`as_resource`
    :returns: ``str(resource)`` for one resource, ``"{a, b}"`` for a set
    """
    if isinstance(resource, frozenset):
        return '{%s}' % ', '.join(sorted(str(item) for item in resource))
    return str(resource)


def dependent(first, second):
    """Tell whether the order of two steps can matter.

    Steps of the same actor are always dependent (program order). Steps of
    different actors are dependent iff the resources they touch intersect
    and at least one of the two steps writes.

    :param first: a :class:`Step`
    :param second: a :class:`Step`
    :returns: True if swapping the two steps may change what is observed
    """
    if first.actor == second.actor:
        return True
    if first.access != WRITE and second.access != WRITE:
        return False
    one, other = first.resource, second.resource
    if isinstance(one, frozenset):
        if isinstance(other, frozenset):
            return not one.isdisjoint(other)
        return other in one
    if isinstance(other, frozenset):
        return one in other
    return one == other


class TraceEntry(object):
    """One executed step and, if the actor reported it, its result.

    ``result`` is whatever the actor passed to
    :meth:`~shelvefix.explorer.controller.StepHandle.done` (an HTTP status,
    a returned row), or None.
    """

    __slots__ = ('step', 'result')

    def __init__(self, step, result=None):
        self.step = step
        self.result = result

    def __eq__(self, other):
        if not isinstance(other, TraceEntry):
            return NotImplemented
        return (self.step, self.result) == (other.step, other.result)

    __hash__ = None

    def __repr__(self):
        return 'TraceEntry(%r, result=%r)' % (self.step, self.result)

    def __str__(self):
        if self.result is None:
            return str(self.step)
        return '%s -> %s' % (self.step, self.result)


class ActorResult(collections.namedtuple('ActorResult',
                                         'value error stuck')):
    """How one actor ended in one run.

    ``value`` is what the actor's callable returned (None if it raised or
    got stuck), ``error`` the exception it raised or None, ``stuck`` True if
    the run ended with the actor waiting on a guard that never became true.
    """

    __slots__ = ()

    @property
    def ok(self):
        """True if the actor finished without raising."""
        return self.error is None and not self.stuck


class RunSpec(collections.namedtuple('RunSpec', 'actors check',
                                     defaults=(None,))):
    """What a program returns for one run.

    ``actors`` is a sequence of ``(name, callable)``: names are unique
    strings and their order is the stable order in which the explorer tries
    actors. ``check`` is None or ``check(results) -> outcome`` where
    ``results`` maps each actor name to an :class:`ActorResult` and
    ``outcome`` is any hashable value classifying the run.
    """

    __slots__ = ()


class RunRecord(collections.namedtuple(
        'RunRecord', 'index schedule trace results outcome')):
    """One executed run.

    ``index`` counts runs from 0 in exploration order; ``schedule`` is the
    tuple of actor names released at each choice point (replayable with
    :func:`~shelvefix.explorer.runner.replay`); ``trace`` the list of
    :class:`TraceEntry` in execution order (one per ``schedule`` item);
    ``results`` maps actor name to :class:`ActorResult`; ``outcome`` is what
    the program's check returned.
    """

    __slots__ = ()

    def format_trace(self):
        """Return the trace as text, one numbered step per line."""
        return '\n'.join('%3d %s' % (number, entry)
                         for number, entry in enumerate(self.trace))


class ChoicePoint(object):
    """A scheduling decision, as the search records it.

    ``enabled`` is the tuple of actor names that could be released (in the
    stable actor order), ``pending`` maps every paused actor (enabled or
    not) to its :class:`Step`, ``guarded`` is the frozenset of paused
    actors whose step has a guard, and ``chosen`` the actor released.

    With the reduction (:mod:`shelvefix.explorer.search`), ``sleep`` is the
    frozenset of actors inherited asleep here, ``done`` the actors already
    explored here before ``chosen``, ``wakeup`` the wakeup tree of what is
    still to explore here (a list of
    :class:`~shelvefix.explorer.wakeup.Branch`, in order) and ``handoff``
    the wakeup subtree below ``chosen``, for the next choice point.
    ``forced`` is True if every enabled actor was asleep and one had to be
    released anyway (see :attr:`Exploration.repeated
    <shelvefix.explorer.search.Exploration.repeated>`). Without it, ``done``
    alone drives the search. ``origin`` is the index of the run whose race
    put ``chosen`` in a wakeup tree here (None for a free choice): the run
    this choice waited for.
    """

    __slots__ = ('index', 'enabled', 'pending', 'guarded', 'sleep', 'done',
                 'chosen', 'wakeup', 'handoff', 'forced', 'origin')

    def __init__(self, index, enabled, pending, sleep=frozenset(),
                 done=(), chosen=None, guarded=frozenset()):
        self.index = index
        self.enabled = enabled
        self.pending = pending
        self.guarded = guarded
        self.sleep = sleep
        self.done = list(done)
        self.chosen = chosen
        self.wakeup = []
        self.handoff = []
        self.forced = False
        self.origin = None

    def asleep(self):
        """The actors that must not be released here: inherited or done."""
        return self.sleep.union(self.done)

    def __repr__(self):
        return ('ChoicePoint(%d, enabled=%r, sleep=%r, done=%r, chosen=%r, '
                'wakeup=%r)' % (self.index, self.enabled, sorted(self.sleep),
                                self.done, self.chosen, self.wakeup))


class RunResult(object):
    """One run as the search analyses it.

    :ivar record: the :class:`RunRecord`
    :ivar points: the run's choice points (the search's own objects)
    :ivar models: the guard model (or None) of each step
    :ivar stuck: dict actor -> pending step of the actors stuck at the end
    :ivar stuck_models: dict actor -> guard model of those that have one
    :ivar repeated: True if the run had to release an asleep actor (see
        :attr:`~shelvefix.explorer.search.Exploration.repeated`)
    :ivar seconds: the run's execution time where it was made elsewhere
        (a worker), else None
    """

    def __init__(self, record, points, models, stuck, stuck_models,
                 repeated, seconds=None):
        self.record = record
        self.points = points
        self.models = models
        self.stuck = stuck
        self.stuck_models = stuck_models
        self.repeated = repeated
        self.seconds = seconds


def default_outcome(results):
    """Classify a run when the program gives no check.

    :param results: dict actor name -> :class:`ActorResult`
    :returns: ``'ok'`` if every actor finished without raising, else
        ``'error'``
    """
    if all(result.ok for result in results.values()):
        return 'ok'
    return 'error'


def as_run_spec(spec):
    """Normalise and validate what a program returned.

    :param spec: a :class:`RunSpec` or a sequence
        of ``(name, callable)``
    :returns: a :class:`RunSpec`
    :raises ValueError: for duplicate, empty or non-string names or no
        actors
    :raises TypeError: for an actor that is not callable
    """
    if not isinstance(spec, RunSpec):
        spec = RunSpec(spec)
    actors = [tuple(pair) for pair in spec.actors]
    if not actors:
        raise ValueError('a run needs at least one actor')
    names = set()
    for name, fn in actors:
        if not isinstance(name, str) or not name:
            raise ValueError('actor names must be non-empty strings, not %r'
                             % (name,))
        if name in names:
            raise ValueError('duplicate actor name %r' % name)
        if not callable(fn):
            raise TypeError('actor %r is not callable: %r' % (name, fn))
        names.add(name)
    return RunSpec(actors, spec.check)
