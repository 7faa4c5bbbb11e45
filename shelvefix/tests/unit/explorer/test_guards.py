"""Tests for guard models and the controller's check of them."""

import pickle

import testtools

from shelvefix import explorer
from shelvefix.explorer import guards
from shelvefix.explorer import model


def step(actor, label, resource='L', access='write'):
    return model.Step(actor, 'lock', model.as_resource(resource), access,
                      label)


class ModelsTestCase(testtools.TestCase):

    def test_lock(self):
        lock = explorer.LockModel(release='release')
        self.assertTrue(lock(()))
        self.assertFalse(lock((step('a', 'acquire L'),)))
        self.assertTrue(lock((step('a', 'acquire L'),
                              step('a', 'release L'))))
        self.assertFalse(lock((step('a', 'acquire L'), step('a', 'release L'),
                               step('b', 'acquire L'))))

    def test_queue(self):
        queue = explorer.QueueModel(put='cast', take='receive')
        cast, receive = step('a', 'cast to q'), step('b', 'receive on q')
        self.assertFalse(queue(()))
        self.assertTrue(queue((cast,)))
        self.assertFalse(queue((cast, receive)))
        self.assertTrue(queue((cast, cast, receive)))
        # Other writes count for neither.
        self.assertFalse(queue((step('c', 'purge q'),)))
        self.assertTrue(explorer.QueueModel(initial=1)(()))

    def test_predicates_and_pickling(self):
        lock = explorer.LockModel(release=lambda s: s.actor == 'releaser')
        self.assertTrue(lock((step('releaser', 'anything'),)))
        self.assertFalse(lock((step('other', 'release'),)))
        for original in (explorer.LockModel('release lock '),
                         explorer.QueueModel('cast to ', 'receive on ', 2)):
            copy = pickle.loads(pickle.dumps(original))
            self.assertEqual(repr(original), repr(copy))
        self.assertEqual([True, False], [
            copy(writes) for writes in ((), (step('a', 'receive on q'),) * 2)])


class WriteLogTestCase(testtools.TestCase):

    def test_writes_before_a_step_in_order(self):
        log = guards.WriteLog()
        first = step('a', 'x', 'x')
        both = step('b', 'both', ('x', 'y'))
        read = step('c', 'read y', 'y', 'read')
        last = step('a', 'y', 'y')
        for released in (first, both, read, last):
            log.add(released)
        self.assertEqual((first, both), log.before(step('d', '', 'x')))
        self.assertEqual((both, last), log.before(step('d', '', 'y')))
        # A write touching both resources is listed once.
        self.assertEqual((first, both, last),
                         log.before(step('d', '', ('y', 'x'))))
        self.assertEqual((), log.before(step('d', '', 'z')))

    def test_check(self):
        guards.check(explorer.LockModel(), True, step('a', 'acquire'), ())
        error = self.assertRaises(
            explorer.ExplorationError, guards.check, explorer.LockModel(),
            False, step('a', 'acquire'), ())
        self.assertEqual("the guard model LockModel(release='release') of "
                         "a: acquire says True but the guard is False, after "
                         "the writes none", str(error))
        error = self.assertRaises(
            explorer.ExplorationError, guards.evaluate,
            lambda writes: writes[0], step('a', 'acquire'), ())
        self.assertIn('raised IndexError', str(error))


def flag_program(guard_model):
    """A waiter waits for a flag a setter sets; the wait has a model."""
    def program(controller):
        state = {'flag': False}

        def waiter():
            controller.step('mem', 'flag', 'read', label='wait for flag',
                            guard=lambda: state['flag'],
                            guard_model=guard_model)

        def setter():
            controller.step('mem', 'flag', 'write', label='set flag')
            state['flag'] = True
        return [('waiter', waiter), ('setter', setter)]
    return program


class ControllerCheckTestCase(testtools.TestCase):

    def test_right_model(self):
        exploration = explorer.explore(flag_program(lambda writes: writes))
        self.assertEqual({'ok': 1}, exploration.outcome_counts())

    def test_wrong_model_names_the_step(self):
        # A lock model says the flag's wait is enabled before anything
        # was written; the guard says it is not.
        error = self.assertRaises(explorer.ExplorationError,
                                  explorer.explore,
                                  flag_program(explorer.LockModel()))
        self.assertIn("the guard model LockModel(release='release') of "
                      "waiter: wait for flag says True but the guard is "
                      "False", str(error))

    def test_model_checked_after_writes(self):
        # Right before anything is written, wrong after: caught once the
        # setter has run and the guard is evaluated again.
        error = self.assertRaises(
            explorer.ExplorationError, explorer.explore,
            flag_program(lambda writes: False))
        self.assertIn("after the writes ['setter: set flag']", str(error))

    def test_step_validates_the_model(self):
        controller = explorer.Controller()
        self.assertRaises(TypeError, controller.step, 'mem', 'x',
                          guard=bool, guard_model=True)
        self.assertRaises(ValueError, controller.step, 'mem', 'x',
                          guard_model=explorer.LockModel())
