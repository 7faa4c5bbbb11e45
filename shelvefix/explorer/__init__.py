"""A systematic concurrency explorer (stateless model checking).

Code under test runs in real threads, the *actors*; wherever it touches
shared state it calls :meth:`Controller.step`, which blocks until the
controller schedules that actor. One actor runs at a time, so each run is
deterministic given its schedule, and :func:`explore` re-executes the program
for every schedule, depth first, optionally skipping schedules equivalent to
one already run (sleep sets)::

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

* :mod:`shelvefix.explorer.controller` - running the actors of one run
  step by step;
* :mod:`shelvefix.explorer.runner` - :func:`explore` (every schedule) and
  :func:`replay` (one);
* :mod:`shelvefix.explorer.search` - the depth-first search book-keeping and
  why the reduction is sound;
* :mod:`shelvefix.explorer.model` - steps, the dependence relation, traces,
  results and records.
"""

from shelvefix.explorer.controller import Controller
from shelvefix.explorer.controller import StepHandle
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

__all__ = ['ActorResult', 'ChoicePoint', 'Controller', 'dependent',
           'Exploration', 'ExplorationError', 'explore', 'READ', 'replay',
           'RunRecord', 'RunSpec', 'Step', 'StepHandle', 'TraceEntry',
           'WRITE']
