"""The races of one run and the wakeup sequences that reverse them.

After each run the search looks for every *race*: two events ``d`` and
``e`` of different actors, ``d`` before ``e``, dependent
(:func:`~shelvefix.explorer.model.dependent`), with no event between them
ordered after ``d`` and before ``e`` by *happens-before* (the order that
program order and dependence force). Happens-before is kept as vector
clocks, computed once per run in a single pass.

Reversing a race gives a wakeup sequence for the choice point ``E`` just
before ``d``: the events between ``d`` and ``e`` that do not happen after
``d``, in their order, then ``e``. Every run starting ``E`` with it has
``e`` before ``d`` and is not equivalent to the run just made.

Guards
    An actor whose guarded step is disabled when the run ends is *stuck*;
    its pending step takes part as an event that never ran (it may race
    with the events that disabled it). A reversal that moves a guarded step
    ``g`` earlier also changes what its guard sees: the resources ``g``
    touches then hold what the writes kept by the sequence wrote. Those
    writes are ordered by happens-before, so the state ``g`` would see is
    named by the kept writes, in the run's order. With a :mod:`guard model
    <shelvefix.explorer.guards>` the guard's value there is the model's
    value on them (:meth:`RunAnalysis.known`). Without one it is known only
    where the run paused ``g``'s actor at ``g`` while the same writers were
    the last (:meth:`RunAnalysis.observed`). The reversal is then

    * known feasible: it is a wakeup sequence like any other;
    * known infeasible: no run has that order. Unguarded, the search would
      have run it and found ``g``'s races there; here the races of that
      hypothetical run are computed instead, dropping the next writer
      (:meth:`RunAnalysis.placements`), until a feasible placement;
    * unknown (no model, and ``g``'s actor reached ``g`` only after those
      writers were overwritten): it is inserted as a *guess*, and also
      treated as infeasible. A guess that fails is dropped when reached.
"""

import bisect

from shelvefix.explorer import guards
from shelvefix.explorer import model


class RunAnalysis(object):
    """Happens-before and races of one run.

    :param points: the run's :class:`~shelvefix.explorer.model.ChoicePoint`
        list, one before each event
    :param steps: the :class:`~shelvefix.explorer.model.Step` of each event
    :param stuck: dict actor name -> pending step of every actor paused
        when the run ended (none of them enabled)
    :param models: None, or the guard model (or None) of each event's step,
        in order
    :param stuck_models: None, or dict actor name -> guard model of the
        stuck actors' steps that have one
    """

    def __init__(self, points, steps, stuck, models=None, stuck_models=None):
        self.points = points
        self.size = len(steps)
        self.steps = list(steps) + [stuck[name] for name in sorted(stuck)]
        stuck_models = stuck_models or {}
        self.models = (list(models or [None] * self.size)
                       + [stuck_models.get(name) for name in sorted(stuck)])
        names = {}
        for step in self.steps:
            names.setdefault(step.actor, len(names))
        self.actor = [names[step.actor] for step in self.steps]
        self.prev = []
        self.seq = []
        self.clocks = []
        self.writes = {}
        self.reads = {}
        self._forward(len(names))

    def _forward(self, width):
        last_event = {}
        last_write = {}
        reads_since = {}
        for position, step in enumerate(self.steps):
            actor = self.actor[position]
            prev = last_event.get(actor, -1)
            clock = list(self.clocks[prev]) if prev >= 0 else [0] * width
            deps = set()
            for resource in step.resources:
                writer = last_write.get(resource)
                if writer is not None:
                    deps.add(writer)
                if step.access == model.WRITE:
                    deps.update(reads_since.get(resource, {}).values())
            deps = [dep for dep in deps if self.actor[dep] != actor]
            for dep in deps:
                clock = list(map(max, clock, self.clocks[dep]))
            self.prev.append(prev)
            self.seq.append(clock[actor] + 1)
            clock[actor] += 1
            self.clocks.append(clock)
            if position >= self.size:
                continue        # a stuck step: it never ran
            last_event[actor] = position
            for resource in step.resources:
                if step.access == model.WRITE:
                    last_write[resource] = position
                    reads_since[resource] = {}
                    self.writes.setdefault(resource, []).append(position)
                else:
                    reads_since.setdefault(resource, {})[actor] = position
                    self.reads.setdefault(resource, []).append(position)

    def before(self, first, second):
        """Tell whether event ``first`` happens before event ``second``."""
        return self.clocks[second][self.actor[first]] >= self.seq[first]

    def dropped(self, position, dropped):
        """Tell whether an event happens after one of the dropped ones."""
        return any(self.before(root, position) for root in dropped)

    def _direct(self, event, candidates):
        """Keep the candidates that race with the event directly."""
        prev = self.prev[event]
        return sorted(
            candidate for candidate in candidates
            if not (prev >= 0 and self.before(candidate, prev))
            and not any(other != candidate and self.before(candidate, other)
                        for other in candidates))

    def _limit(self, event):
        return min(event, self.size)

    def racers(self, event, dropped=frozenset()):
        """Find what an event races with once some events are dropped.

        :param event: the event's position (``>= size`` for a stuck step)
        :param dropped: positions of events removed from the run, with
            every event that happens after them
        :returns: ``(version, racers)``: the last kept writer's position
            (-1 for none) of each resource the event touches, and the sorted
            positions of the kept events racing with it
        """
        step = self.steps[event]
        limit = self._limit(event)
        version = {}
        candidates = set()
        for resource in step.resources:
            writes = self.writes.get(resource, [])
            index = bisect.bisect_left(writes, limit) - 1
            while index >= 0 and self.dropped(writes[index], dropped):
                index -= 1
            writer = writes[index] if index >= 0 else -1
            version[resource] = writer
            if writer >= 0:
                candidates.add(writer)
            if step.access == model.WRITE:
                reads = self.reads.get(resource, [])
                last = {}
                for position in reads[bisect.bisect_right(reads, writer):
                                      bisect.bisect_left(reads, limit)]:
                    if not self.dropped(position, dropped):
                        last[self.actor[position]] = position
                candidates.update(last.values())
        actor = self.actor[event]
        candidates = {candidate for candidate in candidates
                      if self.actor[candidate] != actor}
        return version, self._direct(event, candidates)

    def observed(self, event, version):
        """Tell whether a guarded step was seen enabled in a state.

        :param event: the step's position (``>= size`` if stuck)
        :param version: the last writer of each of its resources, as
            :meth:`racers` names them
        :returns: True or False if the run paused the step's actor at that
            step while exactly those writers were the last, with the guard
            true or false; None if it never did
        """
        low = self.prev[event] + 1
        high = self._limit(event)
        for resource, writer in version.items():
            writes = self.writes.get(resource, [])
            later = bisect.bisect_right(writes, writer)
            low = max(low, writer + 1)
            high = min(high, writes[later] if later < len(writes)
                       else self.size)
        if low > high:
            return None
        if low >= self.size:
            return False        # when the run ended nothing was enabled
        return self.steps[event].actor in self.points[low].enabled

    def kept_writes(self, event, dropped):
        """The writes an event's step would see once some are dropped.

        :returns: the tuple of the kept write steps on its resources before
            it, in the run's order
        """
        limit = self._limit(event)
        positions = set()
        for resource in self.steps[event].resources:
            for position in self.writes.get(resource, ()):
                if position >= limit:
                    break
                if not self.dropped(position, dropped):
                    positions.add(position)
        return tuple(self.steps[position] for position in sorted(positions))

    def known(self, event, dropped, version):
        """A guarded step's guard once some events are dropped.

        :param event: the step's position (``>= size`` if stuck)
        :param dropped: as for :meth:`racers`
        :param version: the last kept writers, as :meth:`racers` names them
        :returns: True or False if its model says so, or (without a model)
            as :meth:`observed`; None if unknown
        """
        guard_model = self.models[event]
        if guard_model is not None:
            return guards.evaluate(guard_model, self.steps[event],
                                   self.kept_writes(event, dropped))
        return self.observed(event, version)

    def sequence(self, event, dropped):
        """The wakeup sequence placing an event before the dropped ones.

        :returns: ``(index, events)``: the choice point where it starts
            (the first dropped event's) and the list of ``(actor, step)``
        """
        start = min(dropped)
        events = [(self.steps[position].actor, self.steps[position])
                  for position in range(start + 1, self._limit(event))
                  if not self.dropped(position, dropped)]
        events.append((self.steps[event].actor, self.steps[event]))
        return start, events

    def guarded(self, event):
        """Tell whether an event's step has a guard."""
        if event >= self.size:
            return True         # only a guard can keep an actor stuck
        return self.steps[event].actor in self.points[event].guarded

    def reversals(self, start=0):
        """Every wakeup sequence this run asks for.

        :param start: events before this position were analysed in an
            earlier run (same prefix); only stuck steps and later events
            are
        :returns: list of ``(index, events, guess)``
        """
        found = []
        for event in range(start, len(self.steps)):
            if self.guarded(event):
                found.extend(self.placements(event))
                continue
            for racer in self.racers(event)[1]:
                found.append(self.sequence(event, {racer}) + (False,))
        return found

    def placements(self, event):
        """The wakeup sequences moving a guarded step before its writers.

        Starting from the run, drop each event the step races with (and
        what happens after it); a placement whose guard is known true is a
        reversal, one known false is looked through: the step's races in
        that hypothetical run are dropped next; an unknown one (possible
        only without a guard model) is both a guessed reversal and looked
        through.

        :param event: the step's position (``>= size`` if stuck)
        :returns: list of ``(index, events, guess)``
        """
        found = []
        seen = set()
        todo = [(frozenset(), self.racers(event)[1])]
        while todo:
            dropped, racers = todo.pop()
            for racer in racers:
                more = dropped.union((racer,))
                key = frozenset(
                    position
                    for position in range(min(more), self._limit(event))
                    if self.dropped(position, more))
                if key in seen:
                    continue
                seen.add(key)
                version, next_racers = self.racers(event, more)
                known = self.known(event, more, version)
                if known is not False:
                    found.append(self.sequence(event, more)
                                 + (known is None,))
                if known is not True:
                    todo.append((more, next_racers))
        return found
