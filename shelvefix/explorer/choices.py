"""The actors of one run and the choices between them.

:class:`Actor` is what the controller knows of an actor: its state, the step
it is paused at and the guard of that step; :class:`StepHandle` what
``step()`` returns to it. :class:`Choices` makes the
run's choices: which paused actors are enabled (evaluating their guards and
checking their :mod:`guard models <shelvefix.explorer.guards>`), the choice
point (replayed, or new from the search), and the trace of the steps
released. The controller (:mod:`shelvefix.explorer.controller`) runs the
threads around them.
"""

import threading

from shelvefix.explorer import guards
from shelvefix.explorer import model
from shelvefix.explorer import search

STARTING = 'starting'
RUNNING = 'running'
PAUSED = 'paused'
FINISHED = 'finished'


class StepHandle(object):
    """Returned by ``Controller.step()``; annotates the trace entry."""

    __slots__ = ('_entry',)

    def __init__(self, entry):
        self._entry = entry

    def done(self, result=None):
        """Record the result of the operation the step announced.

        :param result: shown with the step in the trace (e.g. the HTTP
            status); a no-op outside a run
        :returns: ``result``, so that ``return handle.done(resp)`` works
        """
        if self._entry is not None:
            self._entry.result = result
        return result


class Actor(object):
    """The controller's book-keeping for one actor."""

    def __init__(self, name, fn):
        self.name = name
        self.fn = fn
        self.state = STARTING
        self.step = None
        self.guard = None
        self.model = None
        # The guard's value, kept until a write its step depends on.
        self.enabled = None
        self.entry = None
        self.value = None
        self.error = None
        # Held while the actor may not run: a paused actor blocks acquiring
        # it, whoever releases the actor releases the lock.
        self.go = threading.Lock()
        self.go.acquire()

    def pause(self, step, guard, guard_model):
        """Note the step the actor waits at."""
        self.step = step
        self.guard = guard
        self.model = guard_model
        self.enabled = None
        self.state = PAUSED


class Choices(object):
    """The choice points of one run and the trace they make.

    :param schedule: actor names to release at the first choice points
    :param reduce: whether new choice points follow the reduction
    :param recorded: None, or the recorded choice points of ``schedule``
        (checked for determinism and reused)
    """

    def __init__(self, schedule, reduce, recorded):
        self.schedule = schedule
        self.reduce = reduce
        self.recorded = recorded
        self.points = []
        self.trace = []
        self.models = []
        self.stuck = ()
        self._writes = guards.WriteLog()

    def choose(self, actors):
        """The next choice point, or None when no actor is enabled.

        :param actors: every :class:`Actor` of the run
        :returns: a :class:`~shelvefix.explorer.model.ChoicePoint`, whose
            ``chosen`` is the actor to release; None when the run is over
            (the paused actors, all disabled, are left in :attr:`stuck`)
        :raises ExplorationError: for a guard that raises or disagrees with
            its model, a replay that differs from the recording, or a
            schedule naming an actor that is not enabled
        """
        paused = [actor for actor in actors if actor.state == PAUSED]
        enabled = tuple(actor.name for actor in paused
                        if self._enabled(actor))
        pending = {actor.name: actor.step for actor in paused}
        guarded = frozenset(actor.name for actor in paused
                            if actor.guard is not None)
        if not enabled and len(self.points) >= len(self.schedule):
            self.stuck = paused
            return None
        return self.add_point(enabled, pending, guarded)

    def add_point(self, enabled, pending, guarded):
        """The next choice point, given what is paused there.

        Within the schedule it is the recorded point, checked; after it, a
        new point from the search.

        :param enabled: tuple of the enabled actors' names (not empty)
        :param pending: dict name -> pending step of every paused actor
        :param guarded: frozenset of the paused actors whose step has a
            guard
        :returns: the :class:`~shelvefix.explorer.model.ChoicePoint`
        :raises ExplorationError: a replay that differs from the recording,
            or a schedule naming an actor that is not enabled
        """
        index = len(self.points)
        if index < len(self.schedule):
            point = self._replayed(index, enabled, pending, guarded)
        else:
            parent = self.points[-1] if self.points else None
            point = search.new_point(parent, index, enabled, pending,
                                     guarded, self.reduce)
        self.points.append(point)
        return point

    def release(self, actor, actors):
        """Record the step of the actor chosen; returns its trace entry."""
        step = actor.step
        entry = model.TraceEntry(step)
        self.trace.append(entry)
        self.models.append(actor.model)
        self._writes.add(step)
        if step.access == model.WRITE:
            # A guard reads only its step's resources: only a write to one
            # of them can change its value.
            for other in actors:
                if (other.enabled is not None and other is not actor
                        and model.dependent(other.step, step)):
                    other.enabled = None
        return entry

    def _enabled(self, actor):
        if actor.guard is None:
            return True
        if actor.enabled is not None:
            return actor.enabled
        try:
            value = bool(actor.guard())
        except Exception as exc:
            raise model.ExplorationError(
                'the guard of actor %r at %r raised %r'
                % (actor.name, actor.step.label, exc)) from exc
        if actor.model is not None:
            guards.check(actor.model, value, actor.step,
                         self._writes.before(actor.step))
        actor.enabled = value
        return value

    def _replayed(self, index, enabled, pending, guarded):
        if self.recorded is not None:
            return search.replayed_point(self.recorded, index, enabled,
                                         pending, guarded)
        chosen = self.schedule[index]
        if chosen not in enabled:
            raise model.ExplorationError(
                'schedule[%d] is %r, which is not enabled; enabled: %s'
                % (index, chosen, ', '.join(enabled) or 'none'))
        return model.ChoicePoint(index, enabled, pending, chosen=chosen,
                                 guarded=guarded)
