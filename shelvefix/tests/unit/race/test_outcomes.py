"""Tests for shelvefix.race.outcomes: labels from exception types."""

from keystoneauth1 import exceptions as ks_exc
import testtools

from shelvefix import exception
from shelvefix.race import outcomes
from shelvefix.scheduler.client import errors

DST = 'dst-provider'
SRC = 'src-provider'
CLAIMED = {DST: {'VCPU': 1}}


def _conflict(cls):
    return cls(consumer_uuid='c', error='anything at all')


class OutcomeLabelsTestCase(testtools.TestCase):

    def labels(self, compute=None, scheduler=None, claimed=False, held=None,
               must_hold_nothing=True):
        return outcomes.outcome_labels(compute, scheduler, claimed,
                                       held or {}, DST, must_hold_nothing)

    def test_clean_run(self):
        self.assertEqual([], self.labels(claimed=True, held=CLAIMED))
        self.assertEqual(('ok',), outcomes.as_outcome([]))

    def test_conflicts_are_known_by_their_type(self):
        self.assertEqual([outcomes.SCHEDULER_409], self.labels(
            scheduler=_conflict(exception.AllocationUpdateConflict)))
        self.assertEqual([outcomes.COMPUTE_409], self.labels(
            compute=_conflict(exception.AllocationDeleteConflict)))

    def test_placement_text_alone_is_not_a_conflict(self):
        # The words in a message prove nothing; only the type does.
        error = exception.AllocationUpdateFailed(
            consumer_uuid='c', error='consumer generation conflict - '
                                     'expected null but got 1')
        self.assertEqual(['scheduler error: AllocationUpdateFailed'],
                         self.labels(scheduler=error))

    def test_what_placement_holds(self):
        self.assertEqual([outcomes.CLAIM_WIPED],
                         self.labels(claimed=True, held={}))
        self.assertEqual([outcomes.LEAKED], self.labels(
            claimed=True, held=dict(CLAIMED, **{SRC: {'VCPU': 1}})))
        self.assertEqual([outcomes.LEAKED],
                         self.labels(held={SRC: {'VCPU': 1}}))
        self.assertEqual([], self.labels(held={SRC: {'VCPU': 1}},
                                         must_hold_nothing=False))

    def test_order_of_labels(self):
        self.assertEqual(
            ['ok', 'scheduler 409', 'claim wiped', 'a other', 'z other'],
            outcomes.ordered({'z other', 'claim wiped', 'ok', 'a other',
                              'scheduler 409'}))


class PlacementFailedTestCase(testtools.TestCase):
    """Placement failing is told apart from the ordering's outcomes."""

    def error(self, status, cls=exception.AllocationUpdateFailed):
        return cls(consumer_uuid='c', error='e',
                   placement_error=errors.PlacementError(status, None, 'x',
                                                         'x'))

    def test_server_errors_and_no_answer(self):
        self.assertTrue(outcomes.placement_failed(self.error(500)))
        self.assertFalse(outcomes.placement_failed(self.error(400)))
        lost = exception.AllocationDeleteFailed(consumer_uuid='c', error='e')
        lost.__cause__ = ks_exc.ConnectFailure('refused')
        self.assertTrue(outcomes.placement_failed(lost))
        self.assertFalse(outcomes.placement_failed(
            exception.AllocationDeleteFailed(consumer_uuid='c', error='e')))
        # Through a chain: a free that failed while reading the consumer.
        outer = exception.AllocationDeleteFailed(consumer_uuid='c',
                                                 error='e')
        outer.__cause__ = self.error(
            503, exception.ConsumerAllocationRetrievalFailed)
        self.assertTrue(outcomes.placement_failed(outer))

    def test_labels(self):
        labels = outcomes.outcome_labels(self.error(500), self.error(500),
                                         False, {}, DST, True)
        self.assertEqual([outcomes.PLACEMENT_FAILED], labels)
        self.assertFalse(outcomes.is_ordering_failure(
            outcomes.PLACEMENT_FAILED))
        self.assertTrue(outcomes.is_ordering_failure(outcomes.SCHEDULER_409))
        self.assertFalse(outcomes.is_ordering_failure(outcomes.OK))
