"""Tests for resource sets, wakeup trees and the races of one run."""

import testtools

from shelvefix import explorer
from shelvefix.explorer import dpor
from shelvefix.explorer import model
from shelvefix.explorer import wakeup


def step(actor, resource, access='write'):
    return model.Step(actor, 'mem', model.as_resource(resource), access,
                      '%s %s' % (access, resource))


def event(actor, resource, access='write'):
    return (actor, step(actor, resource, access))


class ResourceTestCase(testtools.TestCase):

    def test_as_resource(self):
        self.assertEqual('x', model.as_resource('x'))
        self.assertEqual(7, model.as_resource(7))
        for value in (('x', 'y'), ['y', 'x'], {'x', 'y'},
                      frozenset(['x', 'y'])):
            self.assertEqual(frozenset(['x', 'y']),
                             model.as_resource(value))
        self.assertRaises(TypeError, model.as_resource, {'a': 1})
        self.assertRaises(TypeError, model.as_resource, [['x']])

    def test_resources_and_description(self):
        self.assertEqual(frozenset(['x']), step('a', 'x').resources)
        self.assertEqual(frozenset(['x', 'y']),
                         step('a', ('y', 'x')).resources)
        self.assertEqual('x', model.describe_resource('x'))
        self.assertEqual('{x, y}', model.describe_resource(
            frozenset(['y', 'x'])))

    def test_dependent(self):
        cases = [
            # Program order, whatever is touched.
            (step('a', 'x', 'read'), step('a', 'y', 'read'), True),
            (step('a', 'x', 'read'), step('b', 'x', 'read'), False),
            (step('a', 'x'), step('b', 'x', 'read'), True),
            (step('a', 'x'), step('b', 'y'), False),
            (step('a', ('x', 'y')), step('b', 'y', 'read'), True),
            (step('a', 'y', 'read'), step('b', ('x', 'y')), True),
            (step('a', ('x', 'y')), step('b', ('y', 'z'), 'read'), True),
            (step('a', ('x', 'y')), step('b', ('z', 'w')), False),
            (step('a', ('x', 'y'), 'read'), step('b', ('x', 'y'), 'read'),
             False),
        ]
        for first, second, expected in cases:
            self.assertEqual(expected, model.dependent(first, second),
                             (first, second))
            self.assertEqual(expected, model.dependent(second, first))

    def test_steps_name_resource_sets(self):
        def program(controller):
            def a():
                controller.step('mem', ['y', 'x'], 'write')
                controller.step('mem', 'x', 'read', label='one')
            return [('a', a)]

        controller = explorer.Controller()
        record = controller.run(program(controller))
        self.assertEqual(['a: mem {x, y}', 'a: one'],
                         [str(entry) for entry in record.trace])
        self.assertEqual(frozenset(['x', 'y']), record.trace[0].step.resource)
        self.assertEqual('x', record.trace[1].step.resource)


class WakeupTestCase(testtools.TestCase):

    def test_weak_initial(self):
        sequence = [event('b', 'x'), event('a', 'y', 'read')]
        # a's read of y comes after b's write of x: it commutes to the
        # front.
        self.assertEqual([event('b', 'x')], wakeup.weak_initial(
            'a', step('a', 'y', 'read'), sequence))
        self.assertIsNone(wakeup.weak_initial('a', step('a', 'x', 'read'),
                                              [event('b', 'x'),
                                               event('a', 'x', 'read')]))
        # Not in the sequence: an initial if independent of all of it, and
        # known to be enabled.
        self.assertEqual(sequence, wakeup.weak_initial(
            'c', step('c', 'z'), sequence))
        self.assertIsNone(wakeup.weak_initial('c', step('c', 'z'), sequence,
                                              enabled=False))
        self.assertIsNone(wakeup.weak_initial('c', step('c', 'y'), sequence))

    def test_insert(self):
        tree = []
        self.assertTrue(wakeup.insert(tree, [event('b', 'x'),
                                             event('c', 'x')]))
        # Covered: a leaf of the tree is a prefix, up to swaps.
        self.assertFalse(wakeup.insert(tree, [event('b', 'x'),
                                              event('c', 'x')]))
        self.assertFalse(wakeup.insert(tree, [event('b', 'x'),
                                              event('c', 'x'),
                                              event('d', 'x')]))
        # d's independent step could go first, but after the leaf the
        # search continues anyway: covered.
        self.assertFalse(wakeup.insert(tree, [event('d', 'y'),
                                              event('b', 'x'),
                                              event('c', 'x')]))
        # c before b: a new branch of its own.
        self.assertTrue(wakeup.insert(tree, [event('c', 'x')]))
        # b then d (dependent of c): below b, beside c.
        self.assertTrue(wakeup.insert(tree, [event('b', 'x'),
                                             event('d', 'x')]))
        self.assertEqual([('b', 'c'), ('b', 'd'), ('c',)],
                         [path for branch in tree
                          for path in branch.sequences()])

    def test_guess_covers_only_sequences_containing_it(self):
        tree = []
        wakeup.insert(tree, [event('b', 'x')], guess=True)
        self.assertTrue(tree[0].guess)
        # c is independent of b, but b may not be enabled: not covered.
        self.assertTrue(wakeup.insert(tree, [event('c', 'y')]))
        # A sequence starting with b's step is.
        self.assertFalse(wakeup.insert(tree, [event('b', 'x'),
                                              event('c', 'y')]))
        self.assertEqual([True, False], [branch.guess for branch in tree])

    def test_take_and_asleep(self):
        point = model.ChoicePoint(
            0, ('a', 'c'), {'a': step('a', 'x'), 'b': step('b', 'x'),
                            'c': step('c', 'y')}, sleep=frozenset(['c']))
        point.wakeup = [wakeup.Branch(name, point.pending[name])
                        for name in 'bca']
        # b is not enabled, c asleep: both dropped.
        self.assertEqual('a', wakeup.take(point).actor)
        self.assertEqual([], point.wakeup)
        self.assertIsNone(wakeup.take(point))
        self.assertEqual('c', wakeup.asleep_initial(
            point, [event('a', 'z'), event('c', 'y')]))
        self.assertIsNone(wakeup.asleep_initial(point, [event('a', 'y')]))


def analyse(program, schedule=()):
    """Run a program once and analyse the run."""
    controller = explorer.Controller(schedule=schedule)
    record = controller.run(program(controller))
    return dpor.RunAnalysis(controller.choice_points,
                            [entry.step for entry in record.trace],
                            controller.stuck, controller.models,
                            controller.stuck_models)


def plan(**actors):
    """A program: each actor runs its (resource, access, guard) steps.

    A step may have a fourth item, its guard model.
    """
    def program(controller):
        state = {}

        def actor(steps):
            def run():
                for resource, access, guard, *guard_model in steps:
                    controller.step('mem', resource, access,
                                    label='%s %s' % (access, resource),
                                    guard=(guard and (lambda guard=guard:
                                                      guard(state))),
                                    guard_model=(guard_model or [None])[0])
                    if access == 'write':
                        state[resource] = state.get(resource, 0) + 1
            return run
        return [(name, actor(steps)) for name, steps in actors.items()]
    return program


def reversals(analysis, start=0):
    return [(index, [str(step) for _, step in sequence], guess)
            for index, sequence, guess in analysis.reversals(start)]


class RacesTestCase(testtools.TestCase):

    def test_reversal_keeps_what_does_not_follow(self):
        analysis = analyse(plan(a=[('x', 'write', None)],
                                b=[('y', 'read', None),
                                   ('x', 'write', None)]))
        self.assertEqual([(0, ['b: read y', 'b: write x'], False)],
                         reversals(analysis))
        self.assertTrue(analysis.before(0, 2))
        self.assertFalse(analysis.before(1, 0))

    def test_only_direct_races(self):
        writes = [('x', 'write', None)]
        analysis = analyse(plan(a=writes, b=writes, c=writes))
        # a's write reaches c's only through b's.
        self.assertEqual([(0, ['b: write x'], False),
                          (1, ['c: write x'], False)], reversals(analysis))
        self.assertEqual([(1, ['c: write x'], False)],
                         reversals(analysis, start=2))

    def test_a_write_races_with_every_read_since_the_last(self):
        read = [('x', 'read', None)]
        analysis = analyse(plan(a=read, b=read, c=[('x', 'write', None)]))
        self.assertEqual([(0, ['b: read x', 'c: write x'], False),
                          (1, ['c: write x'], False)], reversals(analysis))

    def test_stuck_step_races(self):
        # One item, two takers: the one left stuck could have taken it.
        def take(state):
            return state.get('q', 0) % 2 == 1
        analysis = analyse(plan(p=[('q', 'write', None)],
                                c1=[('q', 'write', take)],
                                c2=[('q', 'write', take)]))
        self.assertEqual([step('c2', 'q')], analysis.steps[analysis.size:])
        self.assertEqual([(1, ['c2: write q'], False)], reversals(analysis))

    def test_guard_looked_through_until_true(self):
        # A lock: a's release races with b's acquire, but b cannot acquire
        # while a holds the lock; it could before a acquired.
        def free(state):
            return state.get('L', 0) % 2 == 0
        lock = [('L', 'write', free), ('L', 'write', None)]
        analysis = analyse(plan(a=lock, b=lock))
        self.assertEqual([(0, ['b: write L'], False)], reversals(analysis))
        # The guard was seen false just before the release, true at the
        # start.
        self.assertFalse(analysis.observed(2, {'L': 0}))
        self.assertTrue(analysis.observed(2, {'L': -1}))

    def test_unseen_guard_is_a_guess(self):
        # b reaches its wait only after a's write: whether it could wait
        # before it was never seen.
        def written(state):
            return state.get('r', 0) > 0
        analysis = analyse(plan(a=[('r', 'write', None)],
                                b=[('y', 'write', None),
                                   ('r', 'read', written)]))
        self.assertIsNone(analysis.observed(2, {'r': -1}))
        self.assertEqual([(0, ['b: write y', 'b: read r'], True)],
                         reversals(analysis))

    def test_model_knows_an_unseen_guard(self):
        # The same, with a model: the wait before a's write is known
        # disabled, so nothing is guessed and nothing else races.
        def written(state):
            return state.get('r', 0) > 0
        analysis = analyse(plan(a=[('r', 'write', None)],
                                b=[('y', 'write', None),
                                   ('r', 'read', written, bool)]))
        self.assertIs(False, analysis.known(2, frozenset([0]), {'r': -1}))
        self.assertEqual((), analysis.kept_writes(2, frozenset([0])))
        self.assertEqual([step('a', 'r')],
                         list(analysis.kept_writes(2, frozenset())))
        self.assertEqual([], reversals(analysis))

    def test_model_finds_where_a_lock_is_free(self):
        # b takes and releases the lock, then c writes x and takes it. c's
        # acquire could go before b's acquire, not between b's acquire and
        # release; the run never showed c waiting at it before b released.
        def free(state):
            return state.get('L', 0) % 2 == 0
        acquire = ('L', 'write', free, lambda writes: len(writes) % 2 == 0)
        analysis = analyse(plan(
            b=[acquire, ('L', 'write', None)],
            c=[('x', 'write', None), acquire, ('L', 'write', None)]),
            schedule=['b', 'b', 'c'])
        self.assertEqual([(0, ['c: write x', 'c: write L'], False)],
                         reversals(analysis))
