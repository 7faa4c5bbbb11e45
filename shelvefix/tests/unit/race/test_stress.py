"""Tests for shelvefix.race.stress: stopping a run, and its clean-up."""

import os
import random
import signal
import threading
import time
from unittest import mock

import fixtures
import testtools

from shelvefix import backends
from shelvefix.backends import observe
from shelvefix.cmd import interrupt
from shelvefix import exception
from shelvefix import race
from shelvefix.race import outcomes
from shelvefix.race import stress
from shelvefix.race import stress_harness
from shelvefix.tests import base
from shelvefix import utils

#: Every wait of these tests is bounded by this many seconds.
WAIT = 10.0


class _Base(base.TestCase):

    def setUp(self):
        super().setUp()
        self.placement = self.useFixture(backends.make_backend('double'))
        self.useFixture(fixtures.MockPatch(
            'shelvefix.race.stress_harness.CLEANUP_RETRY_DELAY', 0.0))

    def harness(self, servers=1):
        harness = stress_harness.Harness(self.placement, race.CORRECTED,
                                         race.DELETE)
        harness.set_up(servers)
        return harness

    def assertPlacementEmpty(self):
        self.assertEqual({}, self.placement.state.consumers)
        self.assertEqual({}, self.placement.state.providers)


class CycleStopTestCase(_Base):
    """A set stop event ends a cycle at once, and starts nothing."""

    def cycle_in_thread(self, server, stop):
        result = []
        thread = threading.Thread(
            target=lambda: result.append(server.cycle(0.001,
                                                      random.Random(0),
                                                      stop)),
            daemon=True)
        thread.start()
        return thread, result

    def test_stop_ends_a_cycle_waiting_for_a_slow_offload(self):
        harness = self.harness()
        server = harness.servers[0]
        src = server.host
        dst = [h for h in harness.hosts if h != src][0]
        # The compute host's offload hangs (placement far away); the client
        # polls for SHELVED_OFFLOADED, which does not come for 30 s.
        release = threading.Event()
        self.addCleanup(release.set)
        offload = harness.managers[src].shelve_offload_instance

        def slow_offload(*args, **kwargs):
            release.wait(WAIT * 3)
            return offload(*args, **kwargs)
        self.useFixture(fixtures.MockPatchObject(
            harness.managers[src], 'shelve_offload_instance',
            side_effect=slow_offload))
        unshelve = self.useFixture(fixtures.MockPatchObject(
            harness.managers[dst], 'unshelve_instance')).mock
        stop = threading.Event()
        thread, result = self.cycle_in_thread(server, stop)
        time.sleep(0.2)
        self.assertTrue(thread.is_alive())
        stopped = time.monotonic()
        stop.set()
        thread.join(WAIT)
        self.assertFalse(thread.is_alive(), 'the cycle still waits')
        self.assertLess(time.monotonic() - stopped, 2.0)
        self.assertEqual([None], result)
        unshelve.assert_not_called()
        release.set()
        harness.clean_up()
        self.assertPlacementEmpty()

    def test_no_destination_unshelve_after_stop(self):
        harness = self.harness()
        server = harness.servers[0]
        dst = [h for h in harness.hosts if h != server.host][0]
        stop = threading.Event()
        claim = stress_harness.scheduler_utils.claim_resources

        def claim_then_stop(*args, **kwargs):
            # The interrupt comes while the scheduler's claim is in flight.
            try:
                return claim(*args, **kwargs)
            finally:
                stop.set()
        self.useFixture(fixtures.MockPatchObject(
            stress_harness.scheduler_utils, 'claim_resources',
            side_effect=claim_then_stop))
        unshelve = self.useFixture(fixtures.MockPatchObject(
            harness.managers[dst], 'unshelve_instance')).mock
        thread, result = self.cycle_in_thread(server, stop)
        thread.join(WAIT)
        self.assertFalse(thread.is_alive())
        self.assertEqual([None], result)
        unshelve.assert_not_called()
        # The claim on the destination is placement's: clean_up removes it.
        self.assertEqual(
            [server.uuid], list(self.placement.state.consumers))
        harness.clean_up()
        self.assertPlacementEmpty()

    def test_no_set_up_after_stop(self):
        stop = threading.Event()
        stop.set()
        harness = stress_harness.Harness(self.placement, race.CORRECTED,
                                         race.DELETE)
        harness.set_up(3, stop=stop)
        self.assertEqual(([], {}), (harness.servers, harness.providers))
        self.assertPlacementEmpty()


class CleanUpTestCase(_Base):
    """clean_up tries everything, again on failure, and says what is left."""

    def test_a_failed_request_is_tried_again(self):
        harness = self.harness(servers=2)
        first = harness.servers[0].uuid
        self.placement.inject_fault(method='DELETE',
                                    path='/allocations/%s' % first,
                                    status=500)
        harness.clean_up()
        self.assertPlacementEmpty()
        self.assertEqual(2, len(self.placement.calls_for(
            'DELETE', '/allocations/%s' % first)))

    def test_every_provider_is_tried_and_what_is_left_named(self):
        harness = self.harness(servers=2)
        stuck, freed = list(harness.providers.values())
        self.placement.inject_fault(method='DELETE',
                                    path='/resource_providers/%s' % stuck,
                                    status=503, times=1000)
        e = self.assertRaises(exception.StressCleanupFailed,
                              harness.clean_up)
        # The other provider went, and every server's allocations with it.
        self.assertEqual([stuck], list(self.placement.state.providers))
        self.assertEqual({}, self.placement.state.consumers)
        self.assertEqual([stuck], e.kwargs['providers'])
        self.assertEqual([], e.kwargs['consumers'])
        self.assertEqual(stress_harness.CLEANUP_ATTEMPTS, len(
            self.placement.calls_for('DELETE',
                                     '/resource_providers/%s$' % stuck)))
        self.assertIn('1 resource provider (%s) left' % stuck, str(e))
        self.assertIn('503', str(e))
        self.assertNotIn('\n', str(e))

    def test_servers_left_are_named_with_the_providers(self):
        harness = self.harness(servers=2)
        self.placement.inject_fault(method='DELETE', path='/allocations/',
                                    exception='timeout', times=1000)
        e = self.assertRaises(exception.StressCleanupFailed,
                              harness.clean_up)
        uuids = [s.uuid for s in harness.servers]
        self.assertEqual(sorted(uuids), sorted(e.kwargs['consumers']))
        self.assertEqual(sorted(harness.providers.values()),
                         sorted(e.kwargs['providers']))
        # Each server's delete was tried CLEANUP_ATTEMPTS times, then each
        # provider's (whose delete starts with its consumers').
        for uuid in uuids:
            self.assertGreaterEqual(len(self.placement.calls_for(
                'DELETE', '/allocations/%s' % uuid)),
                stress_harness.CLEANUP_ATTEMPTS)
        self.assertIn('2 resource providers (', str(e))
        self.assertIn('and the allocations of 2 servers (', str(e))
        self.assertIn(uuids[0], str(e))

    def test_long_lists_are_cut(self):
        uuids = ['u%d' % i for i in range(8)]
        self.assertEqual(
            '1 resource provider (p) and the allocations of 8 servers '
            '(u0, u1, u2, u3, u4 and 3 more)',
            stress_harness._describe_left(['p'], uuids))

    def test_no_retry_after_the_window(self):
        harness = self.harness(servers=1)
        uuid = harness.servers[0].uuid
        self.placement.inject_fault(method='DELETE',
                                    path='/allocations/%s' % uuid,
                                    status=500, times=1000)
        self.useFixture(fixtures.MockPatch(
            'shelvefix.race.stress_harness.CLEANUP_RETRY_WINDOW', 0.0))
        e = self.assertRaises(exception.StressCleanupFailed,
                              harness.clean_up)
        # Tried once by itself, once by its provider's delete; the other
        # provider was still tried, and deleted.
        self.assertEqual(2, len(self.placement.calls_for(
            'DELETE', '/allocations/%s' % uuid)))
        self.assertEqual([harness.providers[harness.servers[0].host]],
                         e.kwargs['providers'])
        self.assertEqual([uuid], e.kwargs['consumers'])
        self.assertEqual(1, len(self.placement.state.providers))


class InterruptTestCase(_Base):
    """``run`` interrupted: it ends promptly, cleaned up, and says so."""

    def run_interrupted(self, after=0.0, latency=0.0):
        """Run under the command's handlers; SIGTERM once set up.

        :param after: seconds after the set-up to send it
        """
        signalled = []

        def send():
            signalled.append(time.monotonic())
            os.kill(os.getpid(), signal.SIGTERM)

        def setup_progress(done):
            if done == 2:
                if after:
                    timer = threading.Timer(after, send)
                    timer.daemon = True
                    timer.start()
                else:
                    send()
        with interrupt.handled():
            e = self.assertRaises(
                interrupt.Interrupted, stress.run, self.placement,
                race.CORRECTED, race.DELETE, 2, 100000,
                poll_interval=0.001, latency=latency,
                setup_progress=setup_progress)
        self.assertEqual(1, len(signalled))
        return e, time.monotonic() - signalled[0]

    def test_cleaned_up(self):
        e, _took = self.run_interrupted()
        self.assertEqual(signal.SIGTERM, e.signum)
        self.assertIsNone(getattr(e, 'cleanup_failure', None))
        self.assertPlacementEmpty()

    def test_ends_promptly_with_cycles_under_way(self):
        self.addCleanup(_join_offloads)
        # Every compute request takes 2 s: the cycles under way wait for
        # their offload when the interrupt comes.
        _e, took = self.run_interrupted(after=0.5, latency=2.0)
        self.assertLess(took, 2.0)
        self.assertPlacementEmpty()

    def test_failing_clean_up_keeps_the_interrupt(self):
        self.placement.inject_fault(method='DELETE',
                                    path='/resource_providers/',
                                    exception='timeout', times=1000)
        e, _took = self.run_interrupted()
        self.assertEqual(signal.SIGTERM, e.signum)
        failure = e.cleanup_failure
        self.assertIsInstance(failure, exception.StressCleanupFailed)
        self.assertEqual(sorted(self.placement.state.providers),
                         sorted(failure.kwargs['providers']))
        self.assertIn('2 resource providers (', str(failure))

    def test_failing_clean_up_is_raised_without_an_interrupt(self):
        self.placement.inject_fault(method='DELETE',
                                    path='/resource_providers/',
                                    status=500, times=1000)
        self.assertRaises(exception.StressCleanupFailed, stress.run,
                          self.placement, race.CORRECTED, race.DELETE, 1, 1,
                          poll_interval=0.001)


def _join_offloads():
    # Offloads a stopped run no longer waited for end with their request.
    for thread in threading.enumerate():
        if thread.name.endswith('(offload)'):
            thread.join(WAIT)


class ObservedTestCase(base.TestCase):
    """The harness's own reads are tried again; the code's are not."""

    def test_tried_again_then_answered(self):
        answers = iter([RuntimeError('500'), RuntimeError('500'), 'held'])

        def call():
            answer = next(answers)
            if isinstance(answer, Exception):
                raise answer
            return answer
        self.useFixture(fixtures.MockPatchObject(
            stress_harness, 'CLEANUP_RETRY_DELAY', 0))
        self.assertEqual('held', stress_harness._observed(call))

    def test_the_last_error_is_raised(self):
        self.useFixture(fixtures.MockPatchObject(
            stress_harness, 'CLEANUP_RETRY_DELAY', 0))
        calls = []

        def call():
            calls.append(1)
            raise RuntimeError('down for good')
        self.assertRaises(RuntimeError, stress_harness._observed, call)
        self.assertEqual(stress_harness.CLEANUP_ATTEMPTS, len(calls))


class BackgroundTestCase(base.TestCase):
    """The run's waits end when the target is done, not the thread."""

    def test_a_thread_wrongly_marked_stopped_is_still_waited_for(self):
        # What an interrupted Thread.join can leave on Python 3.11: the
        # thread says it is not alive while its target still runs.
        release = threading.Event()
        runner = utils.Background(lambda: release.wait(10) and 'done',
                                  'test-run').start()
        self.addCleanup(release.set)
        with mock.patch.object(runner.thread, 'is_alive',
                               return_value=False):
            self.assertFalse(runner.wait(0.3))
            release.set()
            self.assertTrue(runner.wait(5))
        self.assertEqual('done', runner.outcome())


def _result(ordering=race.CORRECTED, **kwargs):
    values = dict(ordering=ordering, free=race.DELETE, servers=2, cycles=4,
                  elapsed=1.0, counts={outcomes.OK: 4},
                  usage_expected={'a': {'VCPU': 2}},
                  usage_actual={'a': {'VCPU': 2}}, lost={}, completed=4)
    values.update(kwargs)
    return stress.StressResult(**values)


class VerdictTestCase(testtools.TestCase):
    """verdict: clean only when every cycle of every run completed."""

    def test_clean(self):
        v = stress.verdict([_result(),
                            _result(race.LEGACY,
                                    counts={outcomes.CLAIM_WIPED: 4})])
        self.assertEqual((0, True, []), tuple(v))

    def test_every_cycle_lost(self):
        v = stress.verdict([_result(counts={}, completed=0,
                                    lost={'ValueError': 2,
                                          'UnexpectedTaskStateError': 2})])
        self.assertEqual(1, v.status)
        self.assertIs(False, v.corrected_is_clean)
        self.assertEqual(['corrected/delete: 4 of 4 cycles lost '
                          '(UnexpectedTaskStateError 2, ValueError 2)'],
                         v.reasons)

    def test_one_lost_cycle_is_enough(self):
        v = stress.verdict([_result(counts={outcomes.OK: 3}, completed=3,
                                    lost={'RuntimeError': 1})])
        self.assertEqual(1, v.status)
        self.assertIn('1 of 4 cycles lost (RuntimeError 1)', v.reasons[0])

    def test_a_lost_legacy_cycle_is_not_clean_either(self):
        v = stress.verdict([_result(),
                            _result(race.LEGACY, completed=3,
                                    lost={'RuntimeError': 1})])
        self.assertEqual((1, False), (v.status, v.corrected_is_clean))
        self.assertEqual(['legacy/delete: 1 of 4 cycles lost '
                          '(RuntimeError 1)'], v.reasons)

    def test_cycles_that_never_ran(self):
        # A server's thread ended early: neither completed nor lost.
        v = stress.verdict([_result(counts={outcomes.OK: 1}, completed=1,
                                    lost={'ValueError': 1})])
        self.assertEqual(['corrected/delete: 1 of 4 cycles lost '
                          '(ValueError 1), 2 of 4 cycles never ran'],
                         v.reasons)

    def test_no_cycles(self):
        v = stress.verdict([_result(cycles=0, counts={}, completed=0)])
        self.assertEqual((1, False, ['corrected/delete: no cycle ran']),
                         tuple(v))
        v = stress.verdict([_result(counts={}, completed=0)])
        self.assertEqual(['corrected/delete: 4 of 4 cycles never ran'],
                         v.reasons)

    def test_nothing_ran(self):
        self.assertEqual((1, False, [stress.NOTHING_RAN]),
                         tuple(stress.verdict([])))

    def test_placement_failed_cycles_completed(self):
        # Placement failing by itself is reported, not judged: the cycle
        # was classified, so it completed.
        v = stress.verdict([_result(counts={outcomes.OK: 2,
                                            outcomes.PLACEMENT_FAILED: 2})])
        self.assertEqual(0, v.status)

    def test_placement_failed_in_every_cycle_shows_nothing(self):
        # Every cycle completed, none reached the steps the order is
        # about: no evidence for the corrected order (the legacy order's
        # runs are not judged).
        v = stress.verdict([_result(counts={outcomes.PLACEMENT_FAILED: 4}),
                            _result(race.LEGACY,
                                    counts={outcomes.PLACEMENT_FAILED: 4})])
        self.assertEqual((1, False), (v.status, v.corrected_is_clean))
        self.assertEqual(['corrected/delete: no cycle ended ok (placement '
                          'failed 4): nothing shows the order'], v.reasons)

    def test_bad_outcomes_first(self):
        v = stress.verdict([_result(counts={outcomes.SCHEDULER_409: 1,
                                            outcomes.OK: 2}, completed=3,
                                    lost={'RuntimeError': 1},
                                    usage_actual={'a': {}})])
        self.assertEqual(['corrected/delete: scheduler 409, usage mismatch',
                          'corrected/delete: 1 of 4 cycles lost '
                          '(RuntimeError 1)'], v.reasons)

    def test_legacy_only(self):
        v = stress.verdict([_result(race.LEGACY,
                                    counts={outcomes.CLAIM_WIPED: 4})])
        self.assertEqual((0, None, []), tuple(v))
        v = stress.verdict([_result(race.LEGACY, counts={}, completed=0,
                                    lost={'ValueError': 4})])
        self.assertEqual((1, None), (v.status, v.corrected_is_clean))

    def test_completed_not_counted(self):
        # A result made by hand: its cycles less the lost ones completed.
        self.assertEqual(3, stress.completed(
            _result(completed=None, lost={'RuntimeError': 1})))


class LostRunTestCase(_Base):
    """A run whose every cycle raises: counted lost, and not clean."""

    def test_every_cycle_raises(self):
        with mock.patch.object(stress_harness._Server, 'cycle',
                               side_effect=ValueError('sleep length')):
            result = stress.run(self.placement, race.CORRECTED, race.DELETE,
                                servers=2, cycles=3, poll_interval=0.001)
        self.assertEqual(({'ValueError': 6}, 0, {}),
                         (result.lost, result.completed, result.counts))
        self.assertEqual(set(), stress.bad(result))
        self.assertEqual((1, False, ['corrected/delete: 6 of 6 cycles lost '
                                     '(ValueError 6)']),
                         tuple(stress.verdict([result])))
        self.assertPlacementEmpty()

    def test_completed_counts_cycles_not_labels(self):
        # A cycle may have several labels; it is one completed cycle.
        with mock.patch.object(stress_harness._Server, 'cycle',
                               return_value=(outcomes.SCHEDULER_409,
                                             outcomes.CLAIM_WIPED)):
            result = stress.run(self.placement, race.CORRECTED,
                                race.DELETE, servers=2, cycles=2,
                                poll_interval=0.001)
        self.assertEqual(4, result.completed)
        self.assertEqual([], stress.shortfall(result))


class ObserverJudgesTestCase(base.TestCase):
    """The observer judges, counts usages and ghosts, apart from the code."""

    def setUp(self):
        super().setUp()
        self.placement = self.useFixture(backends.make_backend('double'))

    def test_a_stale_judgement_is_not_clean(self):
        v = stress.verdict([_result(checked=4, disagreed=1)])
        self.assertEqual((1, False), (v.status, v.corrected_is_clean))
        self.assertEqual(['corrected/delete: 1 of 4 cycle judgements read '
                          'otherwise on another path (a stale read)'],
                         v.reasons)

    def test_ghosts_before_the_clean_up_and_after_counted_apart(self):
        client = self.placement.client

        class Observer(observe.ClientObserver):
            # Read before the run, at its end, after the clean-up.
            sets = iter([{'old'}, {'old', 'run-1', 'run-2'},
                         {'old', 'run-1', 'run-2', 'clean-up-1'}])

            def ghosts(self):
                return next(self.sets)
        observer = Observer(client, stress_harness.context.RequestContext())
        result = stress.run(self.placement, race.CORRECTED, race.DELETE, 2, 2,
                            observer=observer)
        self.assertEqual((2, 1), (result.ghosts_left,
                                  result.ghosts_left_by_cleanup))
        # Every cycle judged by the observer, and compared with a re-read.
        self.assertEqual((4, 0), (result.checked, result.disagreed))
        self.assertEqual(0, stress.verdict([result]).status)

    def test_the_judgement_is_the_observers(self):
        # What the observer reads decides the cycle, not what placement's
        # API gives the code under test: here the observer sees a stray
        # allocation the API does not.
        observer = observe.ClientObserver(
            self.placement.client, stress_harness.context.RequestContext())
        real = observer.allocations

        def allocations(consumer):
            held, index = real(consumer)
            held['stray-provider'] = {'VCPU': 1}
            return held, index
        observer.allocations = allocations
        result = stress.run(self.placement, race.CORRECTED, race.DELETE, 1, 2,
                            observer=observer)
        self.assertEqual({outcomes.LEAKED: 2}, result.counts)
        self.assertIsNone(result.ghosts_left)
