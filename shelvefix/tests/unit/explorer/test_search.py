"""Tests for the depth-first search over schedules and its reduction."""

import itertools
import math
import random

import testtools

from shelvefix import explorer
from shelvefix.explorer import model
from shelvefix.explorer import search

LOST = 'lost update'


def counter_program(mode='racy'):
    """Two actors increment a shared counter.

    ``racy``: read in one step, write in the next; ``atomic``: one step;
    ``locked``: the read-modify-write inside a lock modelled by a guard.
    """
    def program(controller):
        state = {'x': 0, 'locked': False}

        def increment():
            if mode == 'atomic':
                controller.step('mem', 'x', 'write', label='x += 1')
                state['x'] += 1
                return
            if mode == 'locked':
                controller.step('lock', 'L', 'write', label='acquire',
                                guard=lambda: not state['locked'])
                state['locked'] = True
            value = controller.step('mem', 'x', 'read',
                                    label='read x').done(state['x'])
            controller.step('mem', 'x', 'write', label='write x')
            state['x'] = value + 1
            if mode == 'locked':
                controller.step('lock', 'L', 'write', label='release')
                state['locked'] = False

        def check(results):
            return 'ok' if state['x'] == 2 else LOST
        return explorer.RunSpec([('a', increment), ('b', increment)], check)
    return program


def independent_program(m, n, resource_b='b', access='write'):
    """Actor a does m steps on 'a', actor b n steps on ``resource_b``."""
    def program(controller):
        def actor(resource, count):
            def run():
                for _ in range(count):
                    controller.step('mem', resource, access)
            return run
        return [('a', actor('a', m)), ('b', actor(resource_b, n))]
    return program


class LostUpdateTestCase(testtools.TestCase):

    def test_racy_counter_loses_updates(self):
        for reduce, runs, lost in ((False, 6, 4), (True, 4, 2)):
            exploration = explorer.explore(counter_program(), reduce=reduce)
            self.assertTrue(exploration.complete)
            self.assertEqual(runs, len(exploration.runs))
            self.assertEqual({'ok': 2, LOST: lost},
                             exploration.outcome_counts())
            first = exploration.first(LOST)
            # DFS order: a runs alone first (ok), then the first
            # backtrack lets b read before a writes.
            self.assertEqual(1, first.index)
            self.assertEqual(('a', 'b', 'a', 'b'), first.schedule)
            self.assertEqual(['a: read x -> 0', 'b: read x -> 0',
                              'a: write x', 'b: write x'],
                             [str(entry) for entry in first.trace])
            self.assertEqual(('a', 'a', 'b', 'b'),
                             exploration.first('ok').schedule)

    def test_reduction_only_merges_the_two_reads(self):
        exploration = explorer.explore(counter_program(), reduce=True)
        self.assertEqual([('a', 'a', 'b', 'b'), ('a', 'b', 'a', 'b'),
                          ('a', 'b', 'b', 'a'), ('b', 'b', 'a', 'a')],
                         [run.schedule for run in exploration.runs])
        # After "b" at the root, a's read of x commutes with b's: only b
        # is taken there.
        self.assertEqual(1, exploration.pruned)

    def test_correct_versions_never_lose_updates(self):
        for mode, runs in (('atomic', 2), ('locked', 2)):
            for reduce in (False, True):
                exploration = explorer.explore(counter_program(mode),
                                               reduce=reduce)
                self.assertEqual({'ok': runs},
                                 exploration.outcome_counts())
                self.assertIsNone(exploration.first(LOST))

    def test_replay_reproduces_a_run(self):
        program = counter_program()
        found = explorer.explore(program).first(LOST)
        again = explorer.replay(program, found.schedule)
        self.assertEqual(LOST, again.outcome)
        self.assertEqual(found.trace, again.trace)
        # A prefix is enough: the rest takes the first enabled actor.
        self.assertEqual(found.schedule,
                         explorer.replay(program, ('a', 'b')).schedule)


class CountingTestCase(testtools.TestCase):

    SIZES = [(1, 1), (2, 2), (3, 2), (3, 3), (1, 4)]

    def test_independent_steps_all_interleavings(self):
        for m, n in self.SIZES:
            exploration = explorer.explore(independent_program(m, n),
                                           reduce=False)
            schedules = [run.schedule for run in exploration.runs]
            self.assertEqual(math.comb(m + n, m), len(schedules), (m, n))
            self.assertEqual(len(schedules), len(set(schedules)))
            expected = {schedule for schedule in itertools.permutations(
                'a' * m + 'b' * n)}
            self.assertEqual(expected, set(schedules))
            self.assertEqual(0, exploration.pruned)

    def test_independent_steps_reduce_to_one(self):
        for m, n in self.SIZES:
            for program in (independent_program(m, n),
                            independent_program(m, n, resource_b='a',
                                                access='read')):
                exploration = explorer.explore(program, reduce=True)
                self.assertEqual(1, len(exploration.runs), (m, n))
                self.assertTrue(exploration.complete)
                self.assertGreater(exploration.pruned, 0)

    def test_dependent_steps_are_not_reduced(self):
        for m, n in self.SIZES:
            exploration = explorer.explore(
                independent_program(m, n, resource_b='a'), reduce=True)
            self.assertEqual(math.comb(m + n, m), len(exploration.runs))
            self.assertEqual(0, exploration.pruned)
            self.assertEqual(0, exploration.blocked)

    def test_three_actors(self):
        def program(controller):
            def actor(resource):
                def run():
                    controller.step('mem', resource)
                    controller.step('mem', resource)
                return run
            return [(name, actor(name)) for name in 'abc']

        self.assertEqual(90, len(explorer.explore(program,
                                                  reduce=False).runs))
        self.assertEqual(1, len(explorer.explore(program).runs))


def random_program(seed):
    """A small random program whose outcome shows everything observed.

    The outcome is the final state (each resource records the order of its
    writes) and every value each actor read, so two runs have the same
    outcome iff they are indistinguishable.
    """
    rng = random.Random(seed)
    plan = {}
    actors = rng.randint(2, 3)
    # At most 90 interleavings, to keep the full search quick.
    max_steps = 3 if actors == 2 else 2
    for number in range(actors):
        plan['a%d' % number] = [
            (rng.choice('xyz'), rng.choice(model.ACCESSES))
            for _ in range(rng.randint(1, max_steps))]

    def program(controller):
        state = dict.fromkeys('xyz', ())
        seen = {name: [] for name in plan}

        def actor(name):
            def run():
                for resource, access in plan[name]:
                    controller.step('mem', resource, access)
                    if access == model.READ:
                        seen[name].append(state[resource])
                    else:
                        state[resource] += (name,)
            return run

        def check(results):
            return (tuple(sorted(state.items())),
                    tuple(sorted((k, tuple(v)) for k, v in seen.items())))
        return explorer.RunSpec([(name, actor(name)) for name in plan],
                                check)
    return program


def trace_class(run):
    """Identify a run's Mazurkiewicz trace: its ordered dependent pairs."""
    events, counts = [], {}
    for entry in run.trace:
        actor = entry.step.actor
        counts[actor] = counts.get(actor, 0) + 1
        events.append(((actor, counts[actor]), entry.step))
    return frozenset(
        (first[0], second[0])
        for first, second in itertools.combinations(events, 2)
        if model.dependent(first[1], second[1]))


class ReductionTestCase(testtools.TestCase):

    def test_one_run_per_trace_and_same_outcomes(self):
        for seed in range(30):
            program = random_program(seed)
            full = explorer.explore(program, reduce=False)
            reduced = explorer.explore(program, reduce=True)
            classes = [trace_class(run) for run in reduced.runs]
            # No two reduced runs are equivalent...
            self.assertEqual(len(classes), len(set(classes)), seed)
            # ... and every trace of the full search is covered.
            self.assertEqual({trace_class(run) for run in full.runs},
                             set(classes), seed)
            self.assertEqual({run.outcome for run in full.runs},
                             {run.outcome for run in reduced.runs}, seed)
            self.assertEqual(0, reduced.blocked, seed)

    def test_no_execution_is_abandoned(self):
        # a: read y, write z; b: read x. One trace, three interleavings.
        # Sleep sets alone ran a a b, then abandoned a b a and b a a with
        # a asleep; b never races with a, so the reduction never tries it.
        checks = []

        def program(controller):
            def a():
                controller.step('mem', 'y', 'read')
                controller.step('mem', 'z', 'write')

            def check(results):
                checks.append(None)
                return 'ok'
            return explorer.RunSpec(
                [('a', a), ('b', lambda: controller.step('mem', 'x', 'read'))],
                check)

        exploration = explorer.explore(program)
        self.assertEqual([('a', 'a', 'b')],
                         [run.schedule for run in exploration.runs])
        self.assertEqual(0, exploration.blocked)
        # b is never taken at the first two choice points.
        self.assertEqual(2, exploration.pruned)
        self.assertEqual(1, len(checks))

    def test_new_point_sleep_set(self):
        step = model.Step
        parent = model.ChoicePoint(
            0, ('a', 'b', 'c'),
            {'a': step('a', 'mem', 'x', 'write', ''),
             'b': step('b', 'mem', 'y', 'write', ''),
             'c': step('c', 'mem', 'x', 'read', '')},
            done=['a'], chosen='b')
        point = search.new_point(parent, 1, ('a', 'c'), {})
        self.assertEqual(frozenset(['a']), point.sleep)
        self.assertEqual('c', point.chosen)
        parent.chosen = 'c'
        parent.done = ['a', 'b']
        point = search.new_point(parent, 1, ('a', 'b'), {})
        # a writes x, which c reads: a wakes up; b (on y) stays asleep.
        self.assertEqual(frozenset(['b']), point.sleep)
        self.assertEqual('a', point.chosen)


class ExplorationTestCase(testtools.TestCase):

    def test_max_runs_and_progress(self):
        calls = []
        exploration = explorer.explore(independent_program(3, 3),
                                       reduce=False, max_runs=3,
                                       progress=calls.append)
        self.assertEqual(3, len(exploration.runs))
        self.assertFalse(exploration.complete)
        self.assertEqual([1, 2, 3], calls)
        self.assertEqual([0, 1, 2], [run.index for run in exploration.runs])

    def test_max_runs_reached_exactly_is_complete(self):
        exploration = explorer.explore(independent_program(1, 1),
                                       reduce=False, max_runs=2)
        self.assertTrue(exploration.complete)
        self.assertRaises(ValueError, explorer.explore,
                          independent_program(1, 1), max_runs=0)

    def test_stop_at_first_counterexample(self):
        whole = explorer.explore(counter_program(), reduce=True)
        first_lost = whole.first(LOST).index
        exploration = explorer.explore(
            counter_program(), reduce=True,
            stop=lambda record: record.outcome == LOST)
        self.assertTrue(exploration.stopped)
        self.assertFalse(exploration.complete)
        self.assertEqual(first_lost + 1, len(exploration.runs))
        self.assertLess(len(exploration.runs), len(whole.runs))
        # The same runs as the whole search, in its order.
        self.assertEqual([run.schedule for run in whole.runs[:first_lost + 1]],
                         [run.schedule for run in exploration.runs])

    def test_stop_never_true_is_the_whole_search(self):
        whole = explorer.explore(counter_program('locked'))
        exploration = explorer.explore(counter_program('locked'),
                                       stop=lambda record: False)
        self.assertFalse(exploration.stopped)
        self.assertTrue(exploration.complete)
        self.assertEqual(len(whole.runs), len(exploration.runs))

    def test_outcome_counts_and_first(self):
        exploration = explorer.explore(counter_program(), reduce=False)
        self.assertEqual(['ok', LOST], list(exploration.outcome_counts()))
        self.assertEqual(0, exploration.first('ok').index)
        self.assertIsNone(exploration.first('nothing like this'))
        self.assertGreater(exploration.elapsed, 0)
        self.assertGreater(exploration.runs_per_second, 0)
        self.assertIn('runs=6 complete=True', repr(exploration))

    def test_default_outcome(self):
        def program(controller):
            def fail():
                controller.step('mem', 'x')
                raise RuntimeError()
            return [('a', fail)]

        self.assertEqual({'error': 1},
                         explorer.explore(program).outcome_counts())
