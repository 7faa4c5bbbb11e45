"""Tests for counting the interleavings a run stands for.

Summed over a reduced exploration's runs, the counts must give the number
of runs of the full search: every interleaving belongs to one trace, and
each trace is explored once.
"""

import math

import testtools

from shelvefix import explorer
from shelvefix.explorer import count
from shelvefix.tests.unit.explorer import programs
from shelvefix.tests.unit.explorer import test_optimality

Op = programs.Op


class CountTestCase(test_optimality.OptimalityMixin, testtools.TestCase):

    def assertCountsMatch(self, program, message=None):
        full, reduced = self.explore_both(program)
        self.assertEqual(0, reduced.repeated, message)
        counted = [explorer.count_interleavings(run) for run in reduced.runs]
        self.assertEqual(len(full.runs), sum(counted), message)
        return counted

    def test_simple_runs(self):
        # Independent: every interleaving of 2 + 3 steps; dependent: one.
        independent = programs.plan_program({
            'a': [Op('x', 'write')] * 2, 'b': [Op('y', 'write')] * 3})
        self.assertEqual([math.comb(5, 2)],
                         self.assertCountsMatch(independent))
        dependent = programs.plan_program({
            'a': [Op('x', 'write')] * 2, 'b': [Op('x', 'write')] * 3})
        self.assertEqual([1] * math.comb(5, 2),
                         self.assertCountsMatch(dependent))
        record = explorer.Controller().run([('a', lambda: None)])
        self.assertEqual(1, explorer.count_interleavings(record))

    def test_readers_commute(self):
        # Three reads of x then a write: the reads in any order.
        program = programs.plan_program({
            'a': [Op('x', 'read')], 'b': [Op('x', 'read')],
            'c': [Op('x', 'read')], 'd': [Op('y', 'write')]})
        self.assertEqual([24], self.assertCountsMatch(program))

    def test_hand_written_plans(self):
        plans = dict(test_optimality.HAND_WRITTEN)
        plans.update(('modelled ' + name, test_optimality.modelled(plan))
                     for name, plan in test_optimality.LOCKED.items())
        for name, plan in sorted(plans.items()):
            self.assertCountsMatch(programs.plan_program(plan), name)

    def test_queues(self):
        for args in ((2, 'cd', 1), (3, 'cd', 2), (2, 'cde', 1)):
            self.assertCountsMatch(
                test_optimality.producer_consumer(*args), args)
            self.assertCountsMatch(test_optimality.producer_consumer(
                *args, busy=True, model_it=True), args)

    def test_random_programs(self):
        for seed in range(40):
            plan = programs.random_plan(seed, guards=seed % 2 == 0,
                                        max_interleavings=200)
            self.assertCountsMatch(programs.plan_program(plan), seed)
        for seed in range(250, 280):
            plan = programs.with_models(programs.random_plan(
                seed, anywhere=True, max_interleavings=200))
            self.assertCountsMatch(programs.plan_program(plan), seed)

    def test_a_repeated_trace_counts_twice(self):
        # The failed guess of test_optimality: one trace, run twice.
        program = test_optimality.GuessTestCase.program((1, None))
        full, reduced = self.explore_both(program)
        self.assertEqual(1, reduced.repeated)
        self.assertEqual(len(full.runs) * 2, sum(
            explorer.count_interleavings(run) for run in reduced.runs))


class CriticalPathTestCase(testtools.TestCase):

    def exploration(self, costs, waits):
        exploration = explorer.Exploration(True)
        exploration.costs, exploration.waits = costs, waits
        return exploration

    def test_the_longest_chain_of_waits(self):
        # 0 -> 1 -> 3 is 1 + 2 + 1; 0 -> 2 is 1 + 5.
        path = count.critical_path(self.exploration(
            [1.0, 2.0, 5.0, 1.0], [(), (0,), (0,), (1,)]))
        self.assertEqual((6.0, 2), path)
        path = count.critical_path(self.exploration(
            [1.0, 2.0, 0.5, 4.0], [(), (0,), (0,), (1, 2)]))
        self.assertEqual((7.0, 3), path)

    def test_nothing_explored(self):
        self.assertEqual((0.0, 0), count.critical_path(
            self.exploration([], [])))

    def test_every_run_waits_for_an_earlier_one(self):
        for seed in range(10):
            exploration = explorer.explore(programs.plan_program(
                programs.random_plan(seed)))
            self.assertEqual(len(exploration.runs), len(exploration.costs))
            self.assertEqual((), exploration.waits[0])
            for index, waits in enumerate(exploration.waits[1:], 1):
                # The reduced search only runs what a race put in a
                # wakeup tree: each run after the first waited for one.
                self.assertTrue(waits, (seed, index))
                self.assertTrue(all(w < index for w in waits))
            seconds, chain = count.critical_path(exploration)
            self.assertLessEqual(seconds, sum(exploration.costs) + 1e-9)
            self.assertLessEqual(chain, len(exploration.runs))
