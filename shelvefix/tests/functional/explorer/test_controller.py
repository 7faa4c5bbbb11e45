"""Running one schedule with actors that really block.

A sleep between two steps, and actors blocked past the step timeout (the
exploration waits the timeout out). The rest of the controller is in the
unit tests.
"""

import threading

import testtools

from shelvefix import explorer

RunSpec = explorer.RunSpec


class RunTestCase(testtools.TestCase):

    def test_one_actor_at_a_time(self):
        # Without the controller, this read-sleep-write would lose updates
        # all the time; under it the window between steps is exclusive.
        def program(controller):
            state = {'x': 0, 'inside': 0, 'overlap': False}

            def actor():
                for _ in range(3):
                    controller.step('mem', 'x')
                    state['inside'] += 1
                    state['overlap'] |= state['inside'] > 1
                    value = state['x']
                    threading.Event().wait(0.001)
                    state['x'] = value + 1
                    state['inside'] -= 1
            return RunSpec([('a', actor), ('b', actor), ('c', actor)],
                           check=lambda results: (state['x'],
                                                  state['overlap']))

        controller = explorer.Controller(schedule='abcabcabc')
        self.assertEqual((9, False),
                         controller.run(program(controller)).outcome)


class FailureTestCase(testtools.TestCase):

    def _blocking_program(self, before_first_step):
        release = threading.Event()
        self.addCleanup(release.set)

        def program(controller):
            def sleeper():
                if not before_first_step:
                    controller.step('mem', 'x')
                release.wait(10)
                controller.step('mem', 'x', label='after the lock')
            return [('other', lambda: controller.step('mem', 'y')),
                    ('sleeper', sleeper)]
        return program

    def test_step_timeout_names_actor(self):
        for before_first_step in (True, False):
            error = self.assertRaises(
                explorer.ExplorationError, explorer.explore,
                self._blocking_program(before_first_step), step_timeout=0.2)
            self.assertIn("actor 'sleeper' neither reached a step nor "
                          "finished within 0.2s", str(error))
