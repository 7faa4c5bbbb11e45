"""Guard models: a guard's value as a function of the writes before it.

A guarded step waits until its guard is true. When a race reversal moves
such a step earlier, the search must know whether the guard holds there,
in a state no run may have shown it (see :mod:`shelvefix.explorer.dpor`).
A *guard model* tells it: ``model(writes)`` is the guard's value once the
write steps ``writes`` have run, where ``writes`` is the tuple of every
earlier :class:`~shelvefix.explorer.model.Step` with ``access`` ``'write'``
that touches one of the guarded step's resources, in the run's order (the
guarded actor's own writes included). A model reads only what a step says
of itself (``actor``, ``kind``, ``label``, ``resource``), never state.

The controller checks a model wherever it evaluates the real guard
(:meth:`~shelvefix.explorer.controller.Controller.step`): a disagreement
fails the exploration with
:class:`~shelvefix.explorer.model.ExplorationError` naming the step.

Two ready-made models cover the usual cases: :class:`LockModel` and
:class:`QueueModel`. Both match steps by a label prefix (or a predicate on
the step), so that they pickle and read the same in every process.
"""

from shelvefix.explorer import model


def _matcher(spec):
    if callable(spec):
        return spec
    return lambda step: step.label.startswith(spec)


class LockModel(object):
    """A lock: acquiring (the guarded step) waits until it is free.

    Acquire and release must both write the lock's resource, and nothing
    else may write it; the lock is free at the start of a run. The guard
    holds iff nothing wrote the resource yet or the last write was a
    release.

    :param release: the label prefix of a release step, or a predicate
        ``release(step) -> bool``
    """

    def __init__(self, release='release'):
        self.release = release
        self._is_release = _matcher(release)

    def __call__(self, writes):
        return not writes or bool(self._is_release(writes[-1]))

    def __getstate__(self):
        return {'release': self.release}

    def __setstate__(self, state):
        self.__init__(**state)

    def __repr__(self):
        return 'LockModel(release=%r)' % (self.release,)


class QueueModel(object):
    """A queue: taking (the guarded step) waits until an item is waiting.

    Putting and taking must both write the queue's resource. The guard
    holds iff the puts among the writes (plus ``initial``) outnumber the
    takes; other writes count for neither.

    :param put: the label prefix of a put, or a predicate on the step
    :param take: the label prefix of a take, or a predicate on the step
    :param initial: the number of items waiting at the start of a run
    """

    def __init__(self, put='put', take='take', initial=0):
        self.put = put
        self.take = take
        self.initial = initial
        self._is_put = _matcher(put)
        self._is_take = _matcher(take)

    def __call__(self, writes):
        waiting = self.initial
        for step in writes:
            if self._is_put(step):
                waiting += 1
            elif self._is_take(step):
                waiting -= 1
        return waiting > 0

    def __getstate__(self):
        return {'put': self.put, 'take': self.take, 'initial': self.initial}

    def __setstate__(self, state):
        self.__init__(**state)

    def __repr__(self):
        return 'QueueModel(put=%r, take=%r, initial=%r)' % (
            self.put, self.take, self.initial)


class WriteLog(object):
    """The write steps of one run so far, per resource, for the models."""

    __slots__ = ('_writes', '_count')

    def __init__(self):
        self._writes = {}
        self._count = 0

    def add(self, step):
        """Record a step that has just been released."""
        position = self._count
        self._count += 1
        if step.access != model.WRITE:
            return
        for resource in step.resources:
            self._writes.setdefault(resource, []).append((position, step))

    def before(self, step):
        """The writes so far touching one of ``step``'s resources, in order.

        :returns: a tuple of :class:`~shelvefix.explorer.model.Step`
        """
        resource = step.resource
        if not isinstance(resource, frozenset):
            return tuple(write for _position, write
                         in self._writes.get(resource, ()))
        merged = {}
        for item in resource:
            merged.update(self._writes.get(item, ()))
        return tuple(merged[position] for position in sorted(merged))


def evaluate(guard_model, step, writes):
    """A model's value for a step after some writes.

    :param guard_model: the step's guard model
    :param step: the guarded :class:`~shelvefix.explorer.model.Step`
    :param writes: the tuple of write steps before it
    :returns: a bool
    :raises ExplorationError: if the model raises
    """
    try:
        return bool(guard_model(writes))
    except Exception as exc:
        raise model.ExplorationError(
            'the guard model %r of %s raised %r' % (guard_model, step, exc)
        ) from exc


def check(guard_model, value, step, writes):
    """Fail unless a model agrees with the guard it describes.

    :param guard_model: the step's guard model
    :param value: what the real guard returned, as a bool
    :param step: the guarded :class:`~shelvefix.explorer.model.Step`
    :param writes: the tuple of write steps before it
    :raises ExplorationError: if the model says otherwise or raises
    """
    expected = evaluate(guard_model, step, writes)
    if expected != value:
        raise model.ExplorationError(
            'the guard model %r of %s says %s but the guard is %s, after '
            'the writes %s' % (guard_model, step, expected, value,
                               [str(write) for write in writes] or 'none'))
