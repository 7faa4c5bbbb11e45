"""Workers: the same exploration, executed in several processes.

An exploration with ``workers`` must equal the one without, run for run:
the same schedules in the same order, the same outcomes, and the same
counts of pruned and repeated runs (see
:mod:`shelvefix.explorer.parallel`).
"""

import multiprocessing
import pickle
from unittest import mock

import fixtures
import testtools

from shelvefix import explorer
from shelvefix.explorer import parallel
from shelvefix.explorer import pickling
from shelvefix.explorer import runner
from shelvefix.tests.unit.explorer import programs
from shelvefix.tests.unit.explorer import test_optimality


class KeywordOnlyError(Exception):
    """An exception whose constructor pickle cannot call."""

    def __init__(self, *, reason):
        super().__init__('failed: %s' % reason)
        self.reason = reason


class ParallelTestCase(testtools.TestCase):

    def setUp(self):
        super().setUp()
        # These searches are short: start the workers at once.
        self.useFixture(fixtures.MockPatchObject(runner, 'WORKERS_AFTER', 0))

    def assertSameExploration(self, program, what, **kwargs):
        alone = explorer.explore(program, **kwargs)
        together = explorer.explore(program, workers=2, **kwargs)
        self.assertEqual(programs.summary(alone), programs.summary(together),
                         what)
        self.assertEqual(2, together.workers)
        return together

    def test_hand_written_programs(self):
        for name, plan in sorted(test_optimality.HAND_WRITTEN.items()):
            for reduce in (True, False):
                self.assertSameExploration(programs.plan_program(plan),
                                           name, reduce=reduce)

    def test_random_programs_with_guards_and_locks(self):
        taken = 0
        for seed in range(40):
            plan = programs.random_plan(seed, locks=seed % 2 == 0)
            together = self.assertSameExploration(
                programs.plan_program(plan), 'seed %d' % seed)
            taken += together.ahead
        # The workers did take part.
        self.assertGreater(taken, 0)

    def test_unreduced_search(self):
        for seed in range(10):
            plan = programs.random_plan(seed)
            self.assertSameExploration(programs.plan_program(plan),
                                       'seed %d' % seed, reduce=False)

    def test_no_worker_outlives_the_search(self):
        plan = test_optimality.HAND_WRITTEN['four actors']
        explorer.explore(programs.plan_program(plan), workers=3)
        self.assertEqual([], multiprocessing.active_children())

    def test_max_runs(self):
        plan = test_optimality.HAND_WRITTEN['four actors']
        together = self.assertSameExploration(
            programs.plan_program(plan), 'max_runs', max_runs=3)
        self.assertEqual(3, len(together.runs))
        self.assertFalse(together.complete)

    def test_stop(self):
        plan = test_optimality.HAND_WRITTEN['four actors']
        together = self.assertSameExploration(
            programs.plan_program(plan), 'stop',
            stop=lambda record: record.index == 4)
        self.assertEqual(5, len(together.runs))
        self.assertTrue(together.stopped)
        self.assertEqual([], multiprocessing.active_children())

    def test_results_that_do_not_pickle_arrive(self):
        def program(controller):
            state = {'x': 0}

            def writer():
                controller.step('mem', 'x', 'write')
                state['x'] += 1
                if state['x'] == 1:
                    raise KeywordOnlyError(reason='first')
                return lambda: None     # does not pickle

            return explorer.RunSpec([('a', writer), ('b', writer)])

        together = self.assertSameExploration(program, 'errors')
        for run in together.runs:
            first = run.results[run.schedule[0]]
            self.assertIsInstance(first.error, KeywordOnlyError)
            self.assertEqual('first', first.error.reason)
            self.assertEqual('failed: first', str(first.error))

    def test_exception_pickling_skips_the_constructor(self):
        error = pickle.loads(pickling.dumps(KeywordOnlyError(reason='r')))
        self.assertEqual(('failed: r',), error.args)
        self.assertEqual('r', error.reason)

    def test_a_failing_run_fails_the_exploration(self):
        calls = []

        def program(controller):
            calls.append(1)

            def actor():
                controller.step('mem', 'x', 'write')
                # A different step each run: not deterministic.
                controller.step('mem', 'y%d' % len(calls), 'write')

            return [('a', actor), ('b', actor)]

        self.assertRaises(explorer.ExplorationError, explorer.explore,
                          program, workers=2)

    def test_short_searches_fork_nothing(self):
        self.useFixture(fixtures.MockPatchObject(runner, 'WORKERS_AFTER',
                                                 60))
        with mock.patch.object(parallel, 'Workers') as workers:
            explorer.explore(programs.plan_program(
                test_optimality.HAND_WRITTEN['three actors']), workers=2)
        workers.assert_not_called()

    def test_workers_must_be_positive(self):
        self.assertRaises(ValueError, explorer.explore,
                          programs.plan_program({'a': [programs.Op(
                              'x', 'write')]}), workers=0)
