"""A systematic concurrency explorer (stateless model checking).

Code under test runs in real threads, the *actors*; wherever it touches
shared state it calls :meth:`Controller.step`, which blocks until the
controller schedules that actor. One actor runs at a time, so each run is
deterministic given its schedule, and :func:`explore` re-executes the program
for every schedule, depth first. With ``reduce`` (the default) it runs one
schedule per Mazurkiewicz trace (optimal dynamic partial order reduction):
schedules that only reorder independent steps are run once::

    def program(controller):
        state = {'x': 0}

        def increment():
            controller.step('mem', 'x', 'read')
            value = state['x']
            controller.step('mem', 'x', 'write')
            state['x'] = value + 1

        return RunSpec([('a', increment), ('b', increment)],
                       check=lambda results: state['x'])

    exploration = explore(program)
    exploration.outcome_counts()        # {2: 2, 1: 2}
    exploration.first(1).schedule       # ('a', 'b', 'a', 'b')

Two steps of different actors are dependent when the resources they name
intersect and one of them writes; a step may name a set of resources
(``controller.step('db', {'row-1', 'row-2'}, 'write')``). A step with a
``guard`` waits until the guard is true; a ``guard_model``
(:class:`LockModel`, :class:`QueueModel`) tells the search how the guard
follows from the writes before it. Resources must name the same things
the same way in every run.

* :mod:`shelvefix.explorer.controller` - running the actors of one run
  step by step;
* :mod:`shelvefix.explorer.runner` - :func:`explore` (every schedule) and
  :func:`replay` (one);
* :mod:`shelvefix.explorer.search` - the depth-first search book-keeping and
  why the reduction explores every trace once;
* :mod:`shelvefix.explorer.dpor` - the races of a run and their reversals;
* :mod:`shelvefix.explorer.wakeup` - wakeup trees and sleep sets;
* :mod:`shelvefix.explorer.guards` - guard models;
* :mod:`shelvefix.explorer.count` - the interleavings a run stands for;
* :mod:`shelvefix.explorer.parallel` - workers searching subtrees ahead
  (``explore(..., workers=2)``), and :mod:`shelvefix.explorer.pickling`
  what they send back;
* :mod:`shelvefix.explorer.model` - steps, the dependence relation, traces,
  results and records.
"""

from shelvefix.explorer.controller import Controller
from shelvefix.explorer.controller import StepHandle
from shelvefix.explorer.count import count_interleavings
from shelvefix.explorer.guards import LockModel
from shelvefix.explorer.guards import QueueModel
from shelvefix.explorer.model import ActorResult
from shelvefix.explorer.model import ChoicePoint
from shelvefix.explorer.model import dependent
from shelvefix.explorer.model import ExplorationError
from shelvefix.explorer.model import READ
from shelvefix.explorer.model import RunRecord
from shelvefix.explorer.model import RunSpec
from shelvefix.explorer.model import Step
from shelvefix.explorer.model import TraceEntry
from shelvefix.explorer.model import WRITE
from shelvefix.explorer.runner import explore
from shelvefix.explorer.runner import replay
from shelvefix.explorer.search import Exploration

__all__ = ['ActorResult', 'ChoicePoint', 'Controller',
           'count_interleavings', 'dependent', 'Exploration',
           'ExplorationError', 'explore', 'LockModel',
           'QueueModel', 'READ', 'replay', 'RunRecord', 'RunSpec', 'Step',
           'StepHandle', 'TraceEntry', 'WRITE']
