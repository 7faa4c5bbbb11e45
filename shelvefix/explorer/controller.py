"""Run real threads one step at a time, in a chosen order.

The code under test runs in real threads, the *actors*. Wherever it touches
shared state, instrumented code calls :meth:`Controller.step` from the actor
thread. The call blocks until the controller releases that actor; the actor
then performs the operation and runs on until its next ``step()`` call or
until it finishes. Only one actor runs at a time, so a run is a function of
the sequence of choices the controller makes (the *schedule*).

A run (:meth:`Controller.run`):

1. Each actor is started in turn, and the next one only when the previous
   one has paused at its first step or finished, so even the code before
   the first step never runs concurrently.
2. Then, repeatedly: the *enabled* actors are those paused at a step whose
   guard (if any) is true. If none is enabled the run ends, and the actors
   still paused are *stuck*. Otherwise one enabled actor is chosen (the
   next entry of the schedule being replayed, else what the search's
   wakeup tree asks for, else the first enabled actor in the order of
   :attr:`RunSpec.actors` that is not asleep), recorded in the trace and
   released.
3. Actors still paused when the run ends are unwound: their pending
   ``step()`` raises an internal ``BaseException``. Instrumented code must
   therefore not swallow ``BaseException``.
4. The run's check (or the default: ``'ok'`` unless an actor raised or is
   stuck) classifies the run.

The choices of step 2 (:mod:`~shelvefix.explorer.choices`) are made by the
thread that stops running: the actor that pauses (or finishes) chooses the
next one and releases it, and goes on if it chose itself. A step costs one
thread switch, or none; the thread that called :meth:`~Controller.run`
starts the actors, makes the first choice and times the steps. Actor
threads come from a pool (:mod:`~shelvefix.explorer.threads`), kept by
:func:`~shelvefix.explorer.runner.explore` for all its runs.

An actor's exception is captured in its
:class:`~shelvefix.explorer.model.ActorResult`; it never stops the explorer.

Limits:

* Everything an actor does between two ``step()`` calls belongs to the
  first of them: it must only touch the shared state named by that step's
  ``resource`` (one resource, or a set of them), with at most that step's
  ``access``.
* Actor identity is a thread-local set in the actor thread. Threads started
  by an actor are not supported: their ``step()`` calls would not be
  scheduled, so the controller fails the run with
  :class:`~shelvefix.explorer.model.ExplorationError` when it sees one.
* Guards are evaluated while every other actor is paused (by the actor
  that chooses, or by the thread that called :meth:`~Controller.run`); they
  must only read state, and only state belonging to their step's resources.
  Any ``step()`` a guard makes (e.g. through an instrumented getter) is a
  no-op.
* An actor that blocks on something other than ``step()`` (a real lock, a
  sleep) for longer than ``step_timeout`` fails the exploration, naming the
  actor; it cannot be told apart from a deadlock outside the model.
"""

import functools
import queue
import threading
import time

from shelvefix.explorer import choices
from shelvefix.explorer import model
from shelvefix.explorer import threads

_RUNNING = choices.RUNNING
_PAUSED = choices.PAUSED
_FINISHED = choices.FINISHED


class _Abort(BaseException):
    """Ends an actor paused when its run is over; not an Exception."""


#: What :meth:`Controller.step` returns.
StepHandle = choices.StepHandle
_NOOP_HANDLE = StepHandle(None)


class Controller(object):
    """Schedules the actors of one run.

    A controller is used for exactly one run: the program builds its shared
    state around it, then :meth:`run` executes the actors. The explorer
    (:func:`~shelvefix.explorer.runner.explore`) makes one per run.

    :param schedule: actor names to release at the first choice points, in
        order; after it, what the reduction asks for, else the first
        enabled actor
    :param reduce: keep sleep sets and follow wakeup trees (see
        :mod:`shelvefix.explorer.search`) at the choice points after
        ``schedule``
    :param step_timeout: seconds an actor may run (or block) before it
        reaches its next step or finishes
    :param _points: internal: the explorer's recorded
        :class:`~shelvefix.explorer.model.ChoicePoint` list for
        ``schedule``, checked for determinism and reused
    :param _threads: internal: the
        :class:`~shelvefix.explorer.threads.ActorThreads` to run actors in
        (default: a pool of this run's own)
    """

    def __init__(self, schedule=(), reduce=True, step_timeout=10.0,
                 _points=None, _threads=None):
        self.schedule = tuple(schedule)
        self.reduce = reduce
        self.step_timeout = step_timeout
        if _points is not None and len(_points) != len(self.schedule):
            raise ValueError('_points must match the schedule')
        self._choices = choices.Choices(self.schedule, reduce, _points)
        # The choice points, the trace and the guard model (or None) of
        # each step released; the pending steps (and models) left stuck.
        self.choice_points = self._choices.points
        self.trace = self._choices.trace
        self.models = self._choices.models
        self.stuck, self.stuck_models = {}, {}
        self.sleep_blocked = False  # the reduction never abandons a run
        self._threads = _threads
        # Guards the actors' states, the choices and the end of the run.
        self._lock = threading.Lock()
        # During start-up and shutdown an actor puts itself here when it
        # pauses or finishes (a helper thread, None): run() waits on it.
        self._settled = queue.SimpleQueue()
        # Released once, when the run is over (or failed).
        self._end = threading.Lock()
        self._end.acquire()
        self._local = threading.local()
        self._actors, self._by_name, self._foreign = (), {}, []
        self._used = self._running = self._scheduling = False
        self._aborting = self._ended = False
        self._error = self._current = self._guarding = self._owner = None
        self._deadline = 0.0

    def current_actor(self):
        """The calling actor's name (None outside this run's actors)."""
        actor = getattr(self._local, 'actor', None)
        return actor.name if actor is not None else None

    @property
    def repeated(self):
        """True if the run had to release an asleep actor.

        Such a run is equivalent to one explored earlier (see
        :attr:`~shelvefix.explorer.search.Exploration.repeated`).
        """
        return any(point.forced
                   for point in self.choice_points[len(self.schedule):])

    def step(self, kind, resource, access=model.WRITE, label=None,
             guard=None, guard_model=None):
        """Announce an operation on shared state and wait to be scheduled.

        Outside an actor thread (test setup, after the run, inside a guard)
        this returns at once and records nothing.

        :param kind: category of the operation, e.g. ``'http'``
        :param resource: the shared state it touches: one hashable
            resource, or a frozenset (set, tuple or list) of them, all
            touched with ``access``; steps of different actors are
            dependent iff their resources intersect and one writes. A
            resource must name the same thing the same way in every run.
        :param access: ``'read'`` or ``'write'`` (anything the step may
            change counts as a write)
        :param label: text for the trace; default ``"<kind> <resource>"``
            (``"<kind> {a, b}"`` for a set)
        :param guard: None or a zero-argument callable; the step is enabled
            only while it returns true. It is evaluated while all other
            actors are paused and must only read state.
        :param guard_model: None or a :mod:`guard model
            <shelvefix.explorer.guards>` of ``guard`` (e.g. a
            :class:`~shelvefix.explorer.guards.LockModel`), so that the
            search never has to guess; checked at every evaluation
        :returns: a :class:`StepHandle`
        :raises ValueError: for an unknown ``access``, or a
            ``guard_model`` without a ``guard``
        :raises TypeError: for a ``guard`` or ``guard_model`` that is not
            callable, or a resource that is not hashable
        """
        resource = model.as_resource(resource)
        model.check_step_options(access, guard, guard_model)
        actor = getattr(self._local, 'actor', None)
        if actor is None or self._guarding == threading.get_ident():
            self._note_foreign()
            return _NOOP_HANDLE
        if label is None:
            label = '%s %s' % (kind, model.describe_resource(resource))
        step = model.Step(actor.name, kind, resource, access, label)
        with self._lock:
            if self._aborting:
                raise _Abort()
            actor.pause(step, guard, guard_model)
            scheduling = self._scheduling
        if not scheduling:
            self._settled.put(actor)
        elif self._advance() is actor:
            return StepHandle(actor.entry)
        actor.go.acquire()
        if self._aborting:
            raise _Abort()
        return StepHandle(actor.entry)

    def _note_foreign(self):
        # A step() from neither an actor nor a thread running guards comes
        # from a helper thread the schedule cannot control.
        ident = threading.get_ident()
        if not self._running or ident in (self._owner, self._guarding):
            return
        self._foreign.append(threading.current_thread().name)
        self._settled.put(None)
        with self._lock:
            self._end_run(None)

    def run(self, spec, index=0):
        """Execute one run.

        :param spec: a :class:`~shelvefix.explorer.model.RunSpec` or a
            sequence of ``(name, callable)``
        :param index: the run's number, stored in the record
        :returns: a :class:`~shelvefix.explorer.model.RunRecord`; the
            pending steps of the actors stuck at the end are left in
            :attr:`stuck`
        :raises ExplorationError: see
            :class:`~shelvefix.explorer.model.ExplorationError`
        :raises ValueError: for an invalid spec or a reused controller
        """
        spec = model.as_run_spec(spec)
        if self._used:
            raise ValueError('a Controller executes one run; make another')
        self._used = True
        own_threads = self._threads is None
        if own_threads:
            self._threads = threads.ActorThreads()
        self._actors = [choices.Actor(name, fn) for name, fn in spec.actors]
        self._by_name = {actor.name: actor for actor in self._actors}
        self._owner = threading.get_ident()
        self._running = True
        interrupted = False  # by Ctrl-C in this thread: see _shutdown
        try:
            for actor in self._actors:
                self._start(actor)
            with self._lock:
                self._scheduling = True
            self._advance()
            self._await_end()
        except KeyboardInterrupt:
            interrupted = True
            raise
        finally:
            unfinished = self._shutdown(wait_running=interrupted)
            self._running = False
            if own_threads:
                self._threads.close()
        if unfinished:
            raise model.ExplorationError(
                'actor(s) %s did not finish within %gs once the run was '
                'over; does the code under test swallow BaseException?'
                % (', '.join(unfinished), self.step_timeout))
        stuck = self._choices.stuck
        results = {actor.name: model.ActorResult(
            actor.value, actor.error, actor in stuck)
            for actor in self._actors}
        self.stuck = {actor.name: actor.step for actor in stuck}
        self.stuck_models = {actor.name: actor.model for actor in stuck
                             if actor.model is not None}
        outcome = (spec.check or model.default_outcome)(results)
        schedule = tuple(point.chosen for point in self.choice_points)
        return model.RunRecord(index, schedule, self.trace, results, outcome)

    def _start(self, actor):
        actor.state = _RUNNING
        self._current = actor
        self._threads.submit(functools.partial(self._actor_main, actor),
                             'explorer:%s' % actor.name,
                             functools.partial(self._actor_after, actor))
        if not self._wait_settled(
                lambda: actor.state != _RUNNING or self._foreign):
            self._timed_out(actor)
        self._check_foreign()

    def _wait_settled(self, done):
        """Wait for actors to settle until ``done()``; False on timeout."""
        deadline = time.monotonic() + self.step_timeout
        while not done():
            remaining = deadline - time.monotonic()
            if remaining <= 0:
                return False
            try:
                self._settled.get(timeout=remaining)
            except queue.Empty:
                pass
        return True

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
            self._local.actor = None

    def _actor_after(self, actor):
        with self._lock:
            actor.state = _FINISHED
            choose = (self._scheduling and not self._aborting
                      and not self._ended)
        if choose:
            self._advance()
        else:
            self._settled.put(actor)

    def _advance(self):
        """Choose and release the next actor; returns it, or None.

        Called by the thread that holds the turn: the actor pausing or
        finishing, or :meth:`run` for the first choice. When no actor is
        enabled, or the choice fails, the run ends.
        """
        with self._lock:
            if self._aborting or self._ended:
                return None
            self._guarding = threading.get_ident()
            try:
                point = self._choices.choose(self._actors)
            except Exception as exc:
                # Raised by run(), in the thread that called it.
                self._end_run(exc)
                return None
            finally:
                self._guarding = None
            if point is None:
                self._end_run(None)
                return None
            actor = self._by_name[point.chosen]
            actor.entry = self._choices.release(actor, self._actors)
            actor.state = _RUNNING
            self._current = actor
            self._deadline = time.monotonic() + self.step_timeout
            if getattr(self._local, 'actor', None) is not actor:
                actor.go.release()
            return actor

    def _end_run(self, error):
        """Record how the run ended and wake :meth:`run`; under the lock."""
        if not self._ended:
            self._ended = True
            self._error = error
            self._end.release()

    def _await_end(self):
        """Wait for the end of the run, timing each step."""
        while not self._end.acquire(
                timeout=max(0.0, self._deadline - time.monotonic())):
            with self._lock:
                late = (not self._ended
                        and time.monotonic() >= self._deadline)
            if late:
                self._timed_out(self._current)
        self._check_foreign()
        if self._error is not None:
            raise self._error

    def _timed_out(self, actor):
        raise model.ExplorationError(
            'actor %r neither reached a step nor finished within %gs: is '
            'it blocked on a real lock, sleeping, or waiting for a thread '
            'the explorer does not schedule?'
            % (actor.name, self.step_timeout))

    def _check_foreign(self):
        if self._foreign:
            raise model.ExplorationError(
                'step() called from thread(s) %s, which are not actors '
                '(while actor %r ran); threads started by actors are not '
                'supported' % (', '.join(self._foreign), self._current.name))

    def _shutdown(self, wait_running=False):
        """Unwind paused actors (and the running one if ``wait_running``)."""
        with self._lock:
            self._aborting = True
            # A running actor has timed out (its error is being raised),
            # unless the run was interrupted: then it is waited for too,
            # so that nothing of the run acts while the caller cleans up.
            waited = [actor for actor in self._actors
                      if actor.state == _PAUSED or
                      (wait_running and actor.state == _RUNNING)]
        for actor in waited:
            if actor.state == _PAUSED:
                actor.go.release()
        self._wait_settled(lambda: all(actor.state == _FINISHED
                                       for actor in waited))
        return [actor.name for actor in waited if actor.state != _FINISHED]
