"""Run real threads one step at a time, in a chosen order.

The code under test runs in real threads, the *actors*. Wherever it touches
shared state, instrumented code calls :meth:`Controller.step` from the actor
thread. The call blocks until the controller releases that actor; the actor
then performs the operation and runs on until its next ``step()`` call or
until it finishes. Only one actor runs at a time, so a run is a function of
the sequence of choices the controller makes (the *schedule*).

A run (:meth:`Controller.run`):

1. Each actor thread is started in turn, and the next one only when the
   previous one has paused at its first step or finished, so even the code
   before the first step never runs concurrently.
2. Then, repeatedly: the *enabled* actors are those paused at a step whose
   guard (if any) is true. If none is enabled the run ends, and the actors
   still paused are *stuck*. Otherwise one enabled actor is chosen (the
   next entry of the schedule being replayed, else the first enabled actor
   in the order of :attr:`RunSpec.actors` that the sleep set allows),
   recorded in the trace, released, and awaited until it pauses again or
   finishes.
3. Actors still paused when the run ends are unwound: their pending
   ``step()`` raises an internal ``BaseException``. Instrumented code must
   therefore not swallow ``BaseException``.
4. The run's check (or the default: ``'ok'`` unless an actor raised or is
   stuck) classifies the run.

An actor's exception is captured in its
:class:`~shelvefix.explorer.model.ActorResult`; it never stops the explorer.

Limits:

* Everything an actor does between two ``step()`` calls belongs to the
  first of them: it must only touch the shared state named by that step's
  ``resource``, with at most that step's ``access``.
* Actor identity is a thread-local set in the actor thread. Threads started
  by an actor are not supported: their ``step()`` calls would not be
  scheduled, so the controller fails the run with
  :class:`~shelvefix.explorer.model.ExplorationError` when it sees one.
* Guards are evaluated by the controller while every actor is paused; they
  must only read state, and only state belonging to their step's resource.
  Any ``step()`` a guard makes (e.g. through an instrumented getter) is a
  no-op.
* An actor that blocks on something other than ``step()`` (a real lock, a
  sleep) for longer than ``step_timeout`` fails the exploration, naming the
  actor; it cannot be told apart from a deadlock outside the model.
"""

import threading
import time

from shelvefix.explorer import model
from shelvefix.explorer import search

_STARTING = 'starting'
_RUNNING = 'running'
_PAUSED = 'paused'
_FINISHED = 'finished'


class _Abort(BaseException):
    """Unwinds an actor still paused when its run is over.

    A BaseException, so that the ``except Exception`` handlers common in the
    code under test do not mistake the end of the run for a failure.
    """


class StepHandle(object):
    """Returned by :meth:`Controller.step`; annotates the trace entry."""

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


_NOOP_HANDLE = StepHandle(None)


class _Actor(object):
    """The controller's book-keeping for one actor thread."""

    def __init__(self, name, fn, lock):
        self.name = name
        self.fn = fn
        self.thread = None
        self.state = _STARTING
        self.step = None
        self.guard = None
        self.released = False
        self.entry = None
        self.value = None
        self.error = None
        # Shares the controller's lock so that pausing and releasing are
        # atomic with the state changes the controller inspects.
        self.wakeup = threading.Condition(lock)


class Controller(object):
    """Schedules the actors of one run.

    A controller is used for exactly one run: the program builds its shared
    state around it, then :meth:`run` executes the actors. The explorer
    (:func:`~shelvefix.explorer.search.explore`) makes one per run.

    :param schedule: actor names to release at the first choice points, in
        order; after it, the first enabled actor not in the sleep set is
        released
    :param reduce: compute sleep sets (see :mod:`shelvefix.explorer.search`)
        for the choice points after ``schedule``
    :param step_timeout: seconds an actor may run (or block) before it
        reaches its next step or finishes
    :param _points: internal: the explorer's recorded
        :class:`~shelvefix.explorer.model.ChoicePoint` list for
        ``schedule``, checked for determinism and reused
    """

    def __init__(self, schedule=(), reduce=True, step_timeout=10.0,
                 _points=None):
        self.schedule = tuple(schedule)
        self.reduce = reduce
        self.step_timeout = step_timeout
        self.choice_points = []
        self.trace = []
        self.sleep_blocked = False
        self._recorded = _points
        if _points is not None and len(_points) != len(self.schedule):
            raise ValueError('_points must match the schedule')
        self._lock = threading.Lock()
        self._settled = threading.Condition(self._lock)
        self._local = threading.local()
        self._used = False
        self._running = False
        self._aborting = False
        self._owner = None
        self._foreign = []

    def current_actor(self):
        """Name the actor calling.

        :returns: the actor name if called from an actor thread of this
            controller, else None
        """
        actor = getattr(self._local, 'actor', None)
        return actor.name if actor is not None else None

    def step(self, kind, resource, access=model.WRITE, label=None,
             guard=None):
        """Announce an operation on shared state and wait to be scheduled.

        Outside an actor thread (test setup, after the run, inside a guard)
        this returns at once and records nothing.

        :param kind: category of the operation, e.g. ``'http'``
        :param resource: the shared state it touches (hashable)
        :param access: ``'read'`` or ``'write'`` (anything the step may
            change counts as a write)
        :param label: text for the trace; default ``"<kind> <resource>"``
        :param guard: None or a zero-argument callable; the step is enabled
            only while it returns true. It is evaluated by the controller
            while all actors are paused and must only read state.
        :returns: a :class:`StepHandle`
        :raises ValueError: for an unknown ``access``
        :raises TypeError: if ``guard`` is not callable
        """
        if access not in model.ACCESSES:
            raise ValueError('access must be one of %s, not %r'
                             % (', '.join(model.ACCESSES), access))
        if guard is not None and not callable(guard):
            raise TypeError('guard must be callable, not %r' % (guard,))
        actor = getattr(self._local, 'actor', None)
        if actor is None:
            self._note_foreign()
            return _NOOP_HANDLE
        if label is None:
            label = '%s %s' % (kind, resource)
        step = model.Step(actor.name, kind, resource, access, label)
        with self._lock:
            if self._aborting:
                raise _Abort()
            actor.step = step
            actor.guard = guard
            actor.released = False
            actor.state = _PAUSED
            self._settled.notify()
            while not actor.released:
                if self._aborting:
                    raise _Abort()
                actor.wakeup.wait()
            return StepHandle(actor.entry)

    def _note_foreign(self):
        # A step() from neither an actor nor the controller's own thread
        # (which runs guards) during a run comes from a helper thread the
        # schedule cannot control: the run is no longer deterministic.
        if not self._running or threading.get_ident() == self._owner:
            return
        with self._lock:
            self._foreign.append(threading.current_thread().name)
            self._settled.notify()

    def run(self, spec, index=0):
        """Execute one run.

        :param spec: a :class:`~shelvefix.explorer.model.RunSpec` or a
            sequence of ``(name, callable)``
        :param index: the run's number, stored in the record
        :returns: a :class:`~shelvefix.explorer.model.RunRecord`; its
            outcome is None if the run was abandoned because every enabled
            actor was in the sleep set (then :attr:`sleep_blocked` is True)
        :raises ExplorationError: see
            :class:`~shelvefix.explorer.model.ExplorationError`
        :raises ValueError: for an invalid spec or a reused controller
        """
        spec = model.as_run_spec(spec)
        if self._used:
            raise ValueError('a Controller executes one run; make another')
        self._used = True
        actors = [_Actor(name, fn, self._lock) for name, fn in spec.actors]
        self._owner = threading.get_ident()
        self._running = True
        stuck = ()
        try:
            with self._lock:
                for actor in actors:
                    self._start(actor)
                stuck = self._schedule(actors)
        finally:
            unfinished = self._shutdown(actors)
            self._running = False
        if unfinished:
            raise model.ExplorationError(
                'actor(s) %s did not finish within %gs once the run was '
                'over; does the code under test swallow BaseException?'
                % (', '.join(unfinished), self.step_timeout))
        results = {actor.name: model.ActorResult(
            actor.value, actor.error, actor in stuck) for actor in actors}
        # The check runs even for an abandoned run: programs use it to
        # clean up the run's state.
        outcome = (spec.check or model.default_outcome)(results)
        if self.sleep_blocked:
            outcome = None
        schedule = tuple(point.chosen for point in self.choice_points)
        return model.RunRecord(index, schedule, self.trace, results, outcome)

    def _start(self, actor):
        actor.state = _RUNNING
        actor.thread = threading.Thread(
            target=self._actor_main, args=(actor,),
            name='explorer:%s' % actor.name, daemon=True)
        actor.thread.start()
        self._wait_settled(actor)

    def _actor_main(self, actor):
        self._local.actor = actor
        try:
            actor.value = actor.fn()
        except _Abort:
            pass
        except BaseException as exc:
            # Whatever the actor raises is a result of the run, not a
            # failure of the explorer.
            actor.error = exc
        finally:
            with self._lock:
                actor.state = _FINISHED
                self._settled.notify()

    def _wait_settled(self, actor):
        """Wait, lock held, until the released actor pauses or finishes."""
        deadline = time.monotonic() + self.step_timeout
        while actor.state == _RUNNING and not self._foreign:
            remaining = deadline - time.monotonic()
            if remaining <= 0:
                raise model.ExplorationError(
                    'actor %r neither reached a step nor finished within '
                    '%gs: is it blocked on a real lock, sleeping, or '
                    'waiting for a thread the explorer does not schedule?'
                    % (actor.name, self.step_timeout))
            self._settled.wait(remaining)
        if self._foreign:
            raise model.ExplorationError(
                'step() called from thread(s) %s, which are not actors '
                '(while actor %r ran); threads started by actors are not '
                'supported' % (', '.join(self._foreign), actor.name))

    def _schedule(self, actors):
        """Release actors until none is enabled; return the stuck ones."""
        by_name = {actor.name: actor for actor in actors}
        while True:
            paused = [actor for actor in actors if actor.state == _PAUSED]
            enabled = tuple(actor.name for actor in paused
                            if self._enabled(actor))
            pending = {actor.name: actor.step for actor in paused}
            index = len(self.choice_points)
            if index < len(self.schedule):
                point = self._replayed_point(index, enabled, pending)
            elif not enabled:
                return paused
            else:
                parent = None
                if self.reduce and self.choice_points:
                    parent = self.choice_points[-1]
                point = search.new_point(parent, index, enabled, pending)
                if point.chosen is None:
                    # Every enabled actor sleeps: every completion of this
                    # prefix is equivalent to a run explored elsewhere.
                    self.choice_points.append(point)
                    self.sleep_blocked = True
                    return paused
            self.choice_points.append(point)
            actor = by_name[point.chosen]
            entry = model.TraceEntry(actor.step)
            self.trace.append(entry)
            actor.entry = entry
            actor.state = _RUNNING
            actor.released = True
            actor.wakeup.notify()
            self._wait_settled(actor)

    def _enabled(self, actor):
        if actor.guard is None:
            return True
        try:
            return bool(actor.guard())
        except Exception as exc:
            raise model.ExplorationError(
                'the guard of actor %r at %r raised %r'
                % (actor.name, actor.step.label, exc)) from exc

    def _replayed_point(self, index, enabled, pending):
        if self._recorded is not None:
            return search.replayed_point(self._recorded, index, enabled,
                                         pending)
        chosen = self.schedule[index]
        if chosen not in enabled:
            raise model.ExplorationError(
                'schedule[%d] is %r, which is not enabled; enabled: %s'
                % (index, chosen, ', '.join(enabled) or 'none'))
        return model.ChoicePoint(index, enabled, pending, chosen=chosen)

    def _shutdown(self, actors):
        """Unwind paused actors and join; return those that did not end."""
        with self._lock:
            self._aborting = True
            for actor in actors:
                actor.wakeup.notify()
        deadline = time.monotonic() + self.step_timeout
        unfinished = []
        for actor in actors:
            # An actor still running has already timed out (and that error
            # is being raised): waiting for it again would only add delay.
            if actor.thread is None or actor.state == _RUNNING:
                continue
            actor.thread.join(max(0.0, deadline - time.monotonic()))
            if actor.thread.is_alive():
                unfinished.append(actor.name)
        return unfinished
