"""Tests for shelvefix.race.retry, and the scenario clean-up that uses it."""

from unittest import mock

import fixtures
import testtools

from shelvefix.backends import fixture as placement_fixture
from shelvefix.race import retry
from shelvefix.race import scenario


class TriedTestCase(testtools.TestCase):

    def test_until_it_answers(self):
        answers = [RuntimeError('lost'), RuntimeError('lost'), 'held']

        def call():
            answer = answers.pop(0)
            if isinstance(answer, Exception):
                raise answer
            return answer
        self.assertEqual('held', retry.tried(call, 3, 0))
        self.assertEqual([], answers)

    def test_bounded_by_attempts(self):
        call = mock.Mock(side_effect=RuntimeError('down'))
        e = self.assertRaises(RuntimeError, retry.tried, call, 4, 0)
        self.assertEqual('down', str(e))
        self.assertEqual(4, call.call_count)

    def test_bounded_by_the_deadline(self):
        call = mock.Mock(side_effect=RuntimeError('down'))
        with mock.patch.object(retry.time, 'monotonic', return_value=100.0), \
                mock.patch.object(retry.time, 'sleep') as sleep:
            self.assertRaises(RuntimeError, retry.tried, call, 10, 1.0,
                              deadline=100.5)
        # The first try is always made; the second would start too late.
        self.assertEqual(1, call.call_count)
        sleep.assert_not_called()


class SharedScenarioCleanUpTestCase(testtools.TestCase):
    """A refusal of the clean-up's requests is tried again, not raised."""

    def test_a_provider_refused_for_a_moment_is_still_removed(self):
        self.useFixture(fixtures.MockPatchObject(
            scenario, 'CLEANUP_RETRY_DELAY', 0))
        placement = self.useFixture(placement_fixture.PlacementFixture())
        scn = scenario.ShelveScenario(placement=placement, shared=True)
        scn.setUp()
        # As a Galera node that has not yet applied the allocations'
        # delete answers the provider's: it has allocations.
        refused = placement.inject_fault(
            method='DELETE', path='^/resource_providers/', status=409,
            times=2)
        scn.cleanUp()
        self.assertEqual(2, refused.fired)
        self.assertEqual({}, placement.state.providers)
        self.assertEqual({}, placement.state.consumers)
