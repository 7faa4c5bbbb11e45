"""Workers whose runs diverge from the search: the search refuses them.

The search takes a worker's run only after rebuilding it on its own stack
from what the worker observed, checking every choice and every replayed
choice point (:meth:`shelvefix.explorer.parallel.Workers._adopt`); a
worker's own failure reaches the search as an error. In each test below
but the control, something differs only in the forked worker processes
(``os.getpid()`` is not the test's), and the exploration must stop with
:class:`~shelvefix.explorer.model.ExplorationError` instead of returning
runs the search would not have made.

The search's own runs are slowed down so that the worker is well ahead
when the search reaches its subtree: the search then takes the worker's
runs instead of making them itself, which is what is being checked.
"""

import multiprocessing
import os
import time

import fixtures
import testtools

from shelvefix import explorer
from shelvefix.explorer import pickling
from shelvefix.explorer import runner
from shelvefix.explorer import search
from shelvefix.tests.unit.explorer import programs

#: Seconds each run the search makes itself takes longer: the worker, a
#: few milliseconds a run, is done with its subtree long before.
SLOWER = 0.05


def writers_program(label=lambda name: 'write x'):
    """Three actors writing ``x`` once: six traces, all racing.

    :param label: ``label(name)``, the label of the actor's step
    """
    def program(controller):
        state = {'x': ()}

        def writer(name):
            def run():
                controller.step('mem', 'x', 'write', label=label(name))
                state['x'] += (name,)
            return run

        def check(results):
            return ''.join(state['x'])
        return explorer.RunSpec([(name, writer(name)) for name in 'abc'],
                                check)
    return program


class DivergingWorkerTestCase(testtools.TestCase):

    def setUp(self):
        super().setUp()
        self.useFixture(fixtures.MockPatchObject(runner, 'WORKERS_AFTER', 0))
        self.parent = os.getpid()
        run_here = runner.run_here

        def slow_run_here(*args, **kwargs):
            time.sleep(SLOWER)
            return run_here(*args, **kwargs)
        # Only the search calls run_here; its workers run their own loop.
        self.useFixture(fixtures.MockPatchObject(runner, 'run_here',
                                                 slow_run_here))
        self.addCleanup(self._no_worker_left)

    def _no_worker_left(self):
        self.assertEqual([], multiprocessing.active_children())

    def in_worker(self):
        return os.getpid() != self.parent

    def explore(self, program):
        return explorer.explore(program, workers=2)

    def test_workers_take_part_when_nothing_diverges(self):
        # The control: this set-up does make the search take workers'
        # runs, and then it is the exploration made without workers.
        alone = explorer.explore(writers_program())
        together = self.explore(writers_program())
        self.assertEqual(6, len(alone.runs))
        self.assertEqual(programs.summary(alone), programs.summary(together))
        self.assertGreater(together.ahead, 0)

    def test_worker_choosing_differently_is_refused(self):
        # The worker's search picks, at each new choice point with several
        # actors enabled, another actor than the search would: its runs
        # are real runs of the program, but not the ones the search asked
        # for.
        new_point = search.new_point

        def other_choice(parent, index, enabled, *args, **kwargs):
            point = new_point(parent, index, enabled, *args, **kwargs)
            if self.in_worker() and len(enabled) > 1:
                others = [name for name in enabled if name != point.chosen]
                point.chosen = others[-1]
            return point
        self.useFixture(fixtures.MockPatchObject(search, 'new_point',
                                                 other_choice))
        error = self.assertRaises(explorer.ExplorationError, self.explore,
                                  writers_program())
        self.assertIn('parallel search diverged at choice point', str(error))
        self.assertIn('the search chose', str(error))

    def test_worker_misreporting_a_replayed_point_is_refused(self):
        # The worker makes the search's run but reports, at the first
        # choice point (inside the prefix the search replays), the enabled
        # actors in another order: the search's own recording says
        # otherwise.
        portable = pickling.portable

        def misreport(key, observed):
            if self.in_worker():
                enabled, pending, guarded, chosen = observed.points[0]
                observed.points[0] = (tuple(reversed(enabled)), pending,
                                      guarded, chosen)
            return portable(key, observed)
        self.useFixture(fixtures.MockPatchObject(pickling, 'portable',
                                                 misreport))
        error = self.assertRaises(explorer.ExplorationError, self.explore,
                                  writers_program())
        self.assertIn('nondeterministic program', str(error))

    def test_program_behaving_otherwise_in_a_worker_is_refused(self):
        # The program's steps differ in the forked process (state that did
        # not survive fork as it was): the worker's replay of the search's
        # prefix fails, and the search raises the worker's error when it
        # gets to that run instead of making the run itself.
        def label(name):
            return 'write x in %s' % (
                'worker' if self.in_worker() else 'search')
        error = self.assertRaises(explorer.ExplorationError, self.explore,
                                  writers_program(label))
        self.assertIn('in worker', str(error))
        self.assertIn('nondeterministic program', str(error))
