"""The values an exploration produces and consumes.

A :class:`Step` is what an actor announces before touching shared state; the
:func:`dependent` relation between steps is what the reduction relies on (see
:mod:`shelvefix.explorer.search`). :class:`RunSpec` is what a program hands
the explorer for one run, :class:`RunRecord` what the explorer keeps of it.
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
    ``'db'``), ``resource`` the piece of shared state touched (any hashable,
    usually a string), ``access`` is ``'read'`` or ``'write'`` and ``label``
    the human text shown in traces (``"GET /allocations/<uuid>"``).
    """

    __slots__ = ()

    def __str__(self):
        return '%s: %s' % (self.actor, self.label)


def dependent(first, second):
    """Tell whether the order of two steps can matter.

    Steps of the same actor are always dependent (program order). Steps of
    different actors are dependent iff they touch the same resource and at
    least one of them writes it.

    :param first: a :class:`Step`
    :param second: a :class:`Step`
    :returns: True if swapping the two steps may change what is observed
    """
    if first.actor == second.actor:
        return True
    return (first.resource == second.resource
            and WRITE in (first.access, second.access))


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
    :func:`~shelvefix.explorer.search.replay`); ``trace`` the list of
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
    """A scheduling decision, as the depth-first search records it.

    ``enabled`` is the tuple of actor names that could be released (in the
    stable actor order), ``pending`` maps every paused actor (enabled or
    not) to its :class:`Step`, ``sleep`` is the frozenset of actors the
    reduction forbids here, ``done`` the actors already explored here before
    ``chosen``, and ``chosen`` the actor released (None when every enabled
    actor sleeps).
    """

    __slots__ = ('index', 'enabled', 'pending', 'sleep', 'done', 'chosen')

    def __init__(self, index, enabled, pending, sleep=frozenset(),
                 done=(), chosen=None):
        self.index = index
        self.enabled = enabled
        self.pending = pending
        self.sleep = sleep
        self.done = list(done)
        self.chosen = chosen

    def __repr__(self):
        return ('ChoicePoint(%d, enabled=%r, sleep=%r, done=%r, chosen=%r)'
                % (self.index, self.enabled, sorted(self.sleep), self.done,
                   self.chosen))


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
