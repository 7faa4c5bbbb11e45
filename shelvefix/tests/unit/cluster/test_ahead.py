"""Subtree tasks: the same exploration as one process, whatever arrives.

The client here is a stand-in for ``distributed.Client`` that runs each
subtree task in this process (through
:func:`shelvefix.cluster.tasks.search_subtree`, on the test's program),
and makes its result ready only after the search has asked a few times:
the search meets results it can take, subtrees it catches up with (their
tasks cancelled) and continuations, as it does on a cluster.
"""

from unittest import mock

import fixtures
import testtools

from shelvefix.cluster import ahead
from shelvefix.cluster import tasks
from shelvefix import explorer
from shelvefix.explorer import runner
from shelvefix.race import scenarios
from shelvefix.tests.unit.explorer import programs
from shelvefix.tests.unit.explorer import test_optimality


class FakeFuture(object):

    def __init__(self, compute, delay):
        self._compute = compute
        self._polls = delay
        self.cancelled = False
        self._value = None

    def done(self):
        self._polls -= 1
        return self._polls < 0

    def result(self):
        if self.cancelled:
            raise RuntimeError('cancelled')
        if self._value is None:
            self._value = self._compute()
        return self._value

    def cancel(self):
        self.cancelled = True


class FakeClient(object):
    """Runs subtree tasks here, on ``program``, ``delay`` polls late."""

    def __init__(self, program, delay=2, fail=False):
        self.program = program
        self.delay = delay
        self.fail = fail
        self.submitted = []
        self.cancelled = []

    def submit(self, function, job, payload, reduce, step_timeout, budget,
               **kwargs):
        assert function is tasks.subtree
        assert kwargs['key'].startswith('subtree-library-lifecycle-')

        def compute():
            if self.fail:
                raise OSError('worker gone')
            # Budget 0: one run per task, so continuations are exercised.
            return tasks.search_subtree(self.program, payload, reduce,
                                        step_timeout, 0)
        future = FakeFuture(compute, self.delay)
        self.submitted.append(future)
        return future

    def cancel(self, futures):
        self.cancelled.extend(futures)


JOB = tasks.Job('library', 'lifecycle',
                scenarios.Cell('corrected', None, None), 'double')


class ClusterAheadTestCase(testtools.TestCase):

    def setUp(self):
        super().setUp()
        self.useFixture(fixtures.MockPatchObject(runner, 'WORKERS_AFTER', 0))

    def explore_both(self, program, client, **kwargs):
        alone = explorer.explore(program, **kwargs)
        together = explorer.explore(
            program, ahead=ahead.ClusterAhead.factory(client, JOB, 2),
            **kwargs)
        self.assertEqual(programs.summary(alone), programs.summary(together))
        return alone, together

    def test_hand_written_programs_run_for_run(self):
        taken = 0
        for name, plan in sorted(test_optimality.HAND_WRITTEN.items()):
            program = programs.plan_program(plan)
            client = FakeClient(program)
            _alone, together = self.explore_both(program, client)
            taken += together.ahead
            self.assertEqual(len(client.submitted), together.tasks, name)
        self.assertGreater(taken, 0)

    def test_random_programs_several_delays(self):
        taken = discarded = 0
        for seed in range(12):
            program = programs.plan_program(programs.random_plan(seed))
            for delay in (0, 1, 5):
                client = FakeClient(program, delay=delay)
                _alone, together = self.explore_both(program, client)
                taken += together.ahead
                discarded += together.discarded
        self.assertGreater(taken, 0)

    def test_failed_tasks_leave_the_search_to_itself(self):
        plan = test_optimality.HAND_WRITTEN['four actors']
        program = programs.plan_program(plan)
        client = FakeClient(program, delay=0, fail=True)
        _alone, together = self.explore_both(program, client)
        self.assertEqual(0, together.ahead)
        self.assertGreater(len(client.submitted), 0)

    def test_tasks_left_are_cancelled_at_the_end(self):
        program = programs.plan_program(programs.random_plan(3))
        client = FakeClient(program, delay=10 ** 6)
        _alone, together = self.explore_both(program, client, max_runs=3)
        self.assertEqual(0, together.ahead)
        self.assertTrue(client.cancelled or all(
            future.cancelled for future in client.submitted))

    def test_a_divergence_stops_the_exploration(self):
        program = programs.plan_program(programs.random_plan(5))
        client = FakeClient(program, delay=0)
        search = ahead.ClusterAhead(client, JOB, True, 10.0, 2)
        observed = mock.Mock(points=[(('a',), {'a': None}, frozenset(), 'b')])
        search._results[()] = observed
        self.assertRaises(explorer.ExplorationError, search.run, [], 0,
                          None)

    def test_a_caught_subtree_gets_no_further_task(self):
        # Dask cannot stop a running task: a subtree the search caught up
        # with may still end, with a stack to go on from. Here every task
        # ends only once cancelled. It is no longer the search's: its runs
        # are not taken, and it is not continued.
        program = programs.plan_program(programs.random_plan(3))

        class LateFuture(FakeFuture):
            def done(self):
                return self.cancelled

            def result(self):
                if self._value is None:
                    self._value = self._compute()
                return self._value
        client = FakeClient(program)
        submit = client.submit

        def submit_late(*args, **kwargs):
            future = submit(*args, **kwargs)
            client.submitted[-1] = LateFuture(future._compute, 0)
            return client.submitted[-1]
        client.submit = submit_late
        helpers = []

        def make_helper(reduce, step_timeout):
            helpers.append(ahead.ClusterAhead(client, JOB, reduce,
                                              step_timeout, 2))
            return helpers[-1]
        alone = explorer.explore(program)
        together = explorer.explore(program, ahead=make_helper)
        self.assertEqual(programs.summary(alone), programs.summary(together))
        caught = [future for future in client.submitted if future.cancelled]
        self.assertGreater(len(caught), 0)
        self.assertTrue(any(future.result()[1] is not None
                            for future in caught))
        # One task per subtree handed out: none was continued.
        self.assertEqual(len(helpers[0]._given), together.tasks)
        self.assertEqual(together.tasks, len(client.submitted))
        self.assertEqual((0, 0), (together.ahead, together.discarded))
