"""Tests for running one schedule: steps, guards and errors.

The runs that really block (a sleep, a step timeout) are in the functional
tests.
"""

import random
import threading

from oslo_utils import uuidutils
import testtools

from shelvefix import explorer

RunSpec = explorer.RunSpec


def _labels(record):
    return [str(entry.step) for entry in record.trace]


class StepOutsideActorsTestCase(testtools.TestCase):

    def test_main_thread_step_is_a_noop(self):
        controller = explorer.Controller()
        self.assertIsNone(controller.current_actor())
        handle = controller.step('mem', 'x', 'read', label='setup read')
        # Returns at once (it would block forever otherwise) and records
        # nothing.
        self.assertEqual(42, handle.done(42))
        self.assertEqual([], controller.trace)
        self.assertEqual([], controller.choice_points)

    def test_noop_before_and_after_the_run(self):
        seen = []

        def program(controller):
            controller.step('mem', 'x', label='in program()')

            def actor():
                seen.append(controller.current_actor())
                controller.step('mem', 'x', label='in actor')
                seen.append(controller.current_actor())
            return [('worker', actor)]

        controller = explorer.Controller()
        record = controller.run(program(controller))
        controller.step('mem', 'x', label='after the run').done('ignored')
        self.assertEqual(['worker', 'worker'], seen)
        self.assertEqual(['worker: in actor'], _labels(record))
        self.assertIsNone(controller.current_actor())
        self.assertIsNone(record.trace[0].result)

    def test_step_validates_access_and_guard(self):
        controller = explorer.Controller()
        self.assertRaises(ValueError, controller.step, 'mem', 'x', 'rw')
        self.assertRaises(TypeError, controller.step, 'mem', 'x',
                          guard=True)
        self.assertRaises(TypeError, controller.step, 'mem', [{}])

    def test_default_label(self):
        controller = explorer.Controller()
        record = controller.run(
            [('a', lambda: controller.step('db', 'row-1', 'read'))])
        self.assertEqual(explorer.Step('a', 'db', 'row-1', 'read',
                                       'db row-1'),
                         record.trace[0].step)


class RunTestCase(testtools.TestCase):

    def test_schedule_is_followed_then_first_enabled(self):
        def program(controller):
            def actor(name):
                def run():
                    for number in range(2):
                        controller.step('mem', name, label='%d' % number)
                return run
            return [('a', actor('a')), ('b', actor('b'))]

        controller = explorer.Controller(schedule=['b', 'a'])
        record = controller.run(program(controller), index=7)
        self.assertEqual(('b', 'a', 'a', 'b'), record.schedule)
        self.assertEqual(['b: 0', 'a: 0', 'a: 1', 'b: 1'], _labels(record))
        self.assertEqual(7, record.index)
        self.assertEqual('ok', record.outcome)
        self.assertEqual(4, len(controller.choice_points))
        self.assertEqual(('a', 'b'), controller.choice_points[0].enabled)

    def test_schedule_naming_disabled_actor(self):
        controller = explorer.Controller(schedule=['b'])
        spec = [('a', lambda: controller.step('mem', 'x')),
                ('b', lambda: None)]
        error = self.assertRaises(explorer.ExplorationError,
                                  controller.run, spec)
        self.assertIn("schedule[0] is 'b', which is not enabled", str(error))

    def test_controller_runs_once(self):
        controller = explorer.Controller()
        controller.run([('a', lambda: None)])
        self.assertRaises(ValueError, controller.run, [('a', lambda: None)])

    def test_invalid_specs(self):
        for spec, error in [([], ValueError),
                            ([('a', len), ('a', len)], ValueError),
                            ([('', len)], ValueError),
                            ([(1, len)], ValueError),
                            ([('a', 'not callable')], TypeError)]:
            self.assertRaises(error, explorer.Controller().run, spec)

    def test_actor_without_steps(self):
        controller = explorer.Controller()
        record = controller.run(RunSpec([('a', lambda: 'value')]))
        self.assertEqual((), record.schedule)
        self.assertEqual(explorer.ActorResult('value', None, False),
                         record.results['a'])


class ResultsTestCase(testtools.TestCase):

    def test_actor_exception_is_captured(self):
        def program(controller):
            def failing():
                controller.step('mem', 'x')
                raise KeyError('boom')

            def fine():
                controller.step('mem', 'y')
                return 'fine'
            return [('failing', failing), ('fine', fine)]

        exploration = explorer.explore(program, reduce=False)
        self.assertEqual(2, len(exploration.runs))
        for run in exploration.runs:
            self.assertIsInstance(run.results['failing'].error, KeyError)
            self.assertFalse(run.results['failing'].ok)
            self.assertEqual(explorer.ActorResult('fine', None, False),
                             run.results['fine'])
            self.assertEqual('error', run.outcome)

    def test_invalid_access_is_an_actor_error(self):
        controller = explorer.Controller()
        record = controller.run(
            [('a', lambda: controller.step('mem', 'x', 'modify'))])
        self.assertIsInstance(record.results['a'].error, ValueError)

    def test_done_results_in_trace(self):
        def program(controller):
            state = {'status': 200}

            def client():
                handle = controller.step('http', 'server', 'read',
                                         label='GET /thing')
                handle.done(state['status'])
                controller.step('http', 'server', 'write',
                                label='PUT /thing')
            return [('client', client)]

        controller = explorer.Controller()
        record = controller.run(program(controller))
        self.assertEqual([200, None],
                         [entry.result for entry in record.trace])
        self.assertEqual('  0 client: GET /thing -> 200\n'
                         '  1 client: PUT /thing', record.format_trace())


class GuardTestCase(testtools.TestCase):

    @staticmethod
    def _program(set_flag=True):
        def program(controller):
            state = {'flag': False, 'seen': None}

            def setter():
                controller.step('mem', 'flag', 'write', label='set flag')
                state['flag'] = set_flag

            def waiter():
                controller.step('mem', 'flag', 'read', label='wait for flag',
                                guard=lambda: state['flag'])
                state['seen'] = state['flag']
                return 'woken'

            def bystander():
                for number in range(2):
                    controller.step('mem', 'other', label='other %d' % number)
            return RunSpec([('waiter', waiter), ('setter', setter),
                            ('bystander', bystander)])
        return program

    def test_waiter_runs_only_after_setter(self):
        for reduce, expected in ((False, 6), (True, 1)):
            exploration = explorer.explore(self._program(),
                                           reduce=reduce)
            self.assertEqual(expected, len(exploration.runs))
            for run in exploration.runs:
                labels = _labels(run)
                self.assertLess(labels.index('setter: set flag'),
                                labels.index('waiter: wait for flag'))
                self.assertEqual('ok', run.outcome)
                self.assertEqual('woken', run.results['waiter'].value)

    def test_guard_never_true_is_stuck(self):
        exploration = explorer.explore(self._program(set_flag=False),
                                       reduce=False)
        # The waiter never gets a choice, so only the others interleave.
        self.assertEqual(3, len(exploration.runs))
        for run in exploration.runs:
            self.assertEqual(explorer.ActorResult(None, None, True),
                             run.results['waiter'])
            self.assertTrue(run.results['setter'].ok)
            self.assertTrue(run.results['bystander'].ok)
            self.assertEqual('error', run.outcome)
            self.assertNotIn('waiter: wait for flag', _labels(run))

    def test_stuck_actor_unwinds_past_except_exception(self):
        caught, unwound = [], []

        def program(controller):
            def waiter():
                try:
                    controller.step('mem', 'x', guard=lambda: False)
                except Exception:
                    caught.append(True)
                finally:
                    unwound.append(True)
            return [('waiter', waiter)]

        controller = explorer.Controller()
        record = controller.run(program(controller))
        self.assertTrue(record.results['waiter'].stuck)
        self.assertEqual([], caught)
        self.assertEqual([True], unwound)

    def test_guard_may_call_instrumented_code(self):
        def program(controller):
            state = {'ready': False}

            def read_ready():
                # Instrumented getter: a no-op step when a guard calls it.
                controller.step('mem', 'ready', 'read')
                return state['ready']

            def waiter():
                controller.step('mem', 'ready', 'read', guard=read_ready)

            def setter():
                controller.step('mem', 'ready', 'write')
                state['ready'] = True
            return [('waiter', waiter), ('setter', setter)]

        exploration = explorer.explore(program, reduce=False)
        self.assertEqual({'ok': 1}, exploration.outcome_counts())

    def test_guard_raising(self):
        def program(controller):
            return [('a', lambda: controller.step('mem', 'x',
                                                  guard=lambda: 1 / 0))]

        error = self.assertRaises(explorer.ExplorationError,
                                  explorer.explore, program)
        self.assertIn("guard of actor 'a'", str(error))
        self.assertIsInstance(error.__cause__, ZeroDivisionError)


class FailureTestCase(testtools.TestCase):

    def test_nondeterministic_program(self):
        rng = random.Random()

        def program(controller):
            label = 'read %f' % rng.random()
            return [('a', lambda: controller.step('mem', 'x', 'read',
                                                  label=label)),
                    ('b', lambda: controller.step('mem', 'x'))]

        error = self.assertRaises(explorer.ExplorationError,
                                  explorer.explore, program)
        self.assertIn('nondeterministic program', str(error))

    def test_per_run_resource_names_are_rejected(self):
        # Wakeup trees keep steps of earlier runs and compare them with
        # later runs' steps: a resource named by a fresh id in every run
        # would make them look independent. Replay catches it.
        def program(controller):
            uuid = uuidutils.generate_uuid()
            state = {uuid: ()}

            def actor(name):
                def run():
                    controller.step('mem', uuid, 'read', label='read')
                    controller.step('mem', uuid, 'write', label='append')
                    state[uuid] += (name,)
                return run
            return RunSpec([('a', actor('a')), ('b', actor('b'))],
                           check=lambda results: state[uuid])

        error = self.assertRaises(explorer.ExplorationError,
                                  explorer.explore, program)
        self.assertIn('nondeterministic program', str(error))
        self.assertIn('only resources differ (a touches ', str(error))
        self.assertIn('never by per-run ids', str(error))

    def test_nondeterministic_number_of_steps(self):
        runs = []

        def program(controller):
            runs.append(None)
            second_step = len(runs) == 1

            def a():
                controller.step('mem', 'x', label='first')
                if second_step:
                    controller.step('mem', 'x', label='second')
            return [('a', a), ('b', lambda: controller.step('mem', 'x'))]

        # Run 2 replays "a" then chooses "b" where a's second step was
        # pending; now a has finished instead.
        error = self.assertRaises(explorer.ExplorationError,
                                  explorer.explore, program,
                                  reduce=False)
        self.assertIn("choice point 1 had enabled ['a', 'b'], pending "
                      "['a: mem write second', 'b: mem write mem x']; now "
                      "enabled ['b'], pending ['b: mem write mem x']",
                      str(error))
        self.assertEqual(2, len(runs))

    def test_helper_thread_is_rejected(self):
        def program(controller):
            def spawner():
                controller.step('mem', 'x')
                helper = threading.Thread(
                    target=controller.step, args=('mem', 'x'),
                    name='helper')
                helper.start()
                helper.join()
            return [('spawner', spawner)]

        error = self.assertRaises(explorer.ExplorationError,
                                  explorer.explore, program)
        self.assertIn('step() called from thread(s) helper', str(error))
