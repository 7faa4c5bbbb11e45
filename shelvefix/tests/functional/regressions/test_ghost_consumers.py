"""Regression tests for ghost consumers: placement's DELETE is not atomic.

``DELETE /allocations/{uuid}`` in openstack-placement deletes the
consumer's allocations, then, in a transaction of its own, the consumers
left without allocations. When that second step fails (seen under sqlite
with two workers: "database is locked"; any database error between the
steps does the same), placement answers 500 with the allocations gone and
the consumer record kept at its generation: a *ghost*.

Compute's report client then reads the consumer back, finds no
allocations and rightly takes the free as done, so the offload saves
SHELVED_OFFLOADED in the corrected order. The unshelve's claim reads
``{"allocations": {}}`` (placement only reports a consumer generation when
there are allocations), sends ``consumer_generation: null`` and gets 409
"consumer generation conflict - expected 1 but got None": the unshelve
fails in the corrected order.

The fault is made deterministically, not by timing: the placement fixture
fails the consumer clean-up once (in the real service, its own ``DELETE
FROM consumers`` statement raises sqlite's error). The claim must heal the
ghost without ever overwriting someone else's claim (see
``SchedulerReportClient._claim_ghost``).
"""

from unittest import mock

import testscenarios

from shelvefix import backends
from shelvefix.backends import real
from shelvefix import exception
from shelvefix import race
from shelvefix.race import scenario
from shelvefix.scheduler.client import report
from shelvefix.tests import base

load_tests = testscenarios.load_tests_apply_scenarios


class GhostConsumerTestCase(testscenarios.WithScenarios, base.TestCase):

    scenarios = [('real', {'backend': 'real'}),
                 ('double', {'backend': 'double'})]

    def setUp(self):
        super().setUp()
        if self.backend == 'real' and not real.available():
            self.skipTest(real.INSTALL_HINT)
        self.scn = self.useFixture(scenario.ShelveScenario(
            free=race.DELETE,
            placement=backends.make_backend(self.backend)))
        self.placement = self.scn.placement
        self.url = '/allocations/%s' % self.scn.instance.uuid

    def offload_leaving_a_ghost(self):
        self.placement.fail_consumer_cleanup()
        self.scn.shelve_offload()
        delete = self.placement.calls_for('DELETE', self.url)
        self.assertEqual([500], [c.status for c in delete])
        # The offload went through: the allocations are gone.
        self.assertEqual(race.DELETE, self.scn.free)
        self.assertEqual('shelved_offloaded', self.scn.saved()['vm_state'])
        self.assertEqual({}, self.scn.held())
        self.placement.reset_calls()

    def test_the_claim_heals_the_ghost(self):
        self.offload_leaving_a_ghost()
        self.assertTrue(self.scn.api_unshelve())
        self.assertEqual({self.scn.dst: dict(scenario.FLAVOR.resources)},
                         self.scn.held())
        puts = self.placement.calls_for('PUT', self.url)
        # The scheduler's 409 placement gives for the ghost...
        self.assertEqual([(None, 409), (1, 204)],
                         [(c.body['consumer_generation'], c.status)
                          for c in puts])
        self.assertIn('Placement keeps consumer %s at generation 1 without '
                      'allocations (a ghost consumer)'
                      % self.scn.instance.uuid, self.log.output)
        saved = self.scn.saved()
        self.assertEqual(('shelved_offloaded', 'unshelving'),
                         (saved['vm_state'], saved['task_state']))

    def test_without_healing_the_unshelve_fails(self):
        # What nova's client (and this one before the fix) does.
        self.offload_leaving_a_ghost()

        def no_healing(self_, context, consumer_uuid, payload, version,
                       conflict):
            raise conflict
        with mock.patch.object(report.SchedulerReportClient, '_claim_ghost',
                               no_healing):
            e = self.assertRaises(exception.AllocationUpdateConflict,
                                  self.scn.api_unshelve)
        self.assertIn('consumer generation conflict - expected 1 but got '
                      'None', str(e))
        self.assertEqual({}, self.scn.held())

    def test_someone_elses_claim_is_never_overwritten(self):
        self.offload_leaving_a_ghost()
        # Another claim lands between the scheduler's 409 and its retry.
        other = report.SchedulerReportClient(adapter=self.placement.adapter)
        client = self.scn.client
        real_get = client.get_allocs_for_consumer
        reads = []

        def get_then_someone_claims(context, consumer):
            reads.append(consumer)
            if len(reads) == 2:
                other.put_allocations(
                    context, consumer,
                    {'allocations': {self.scn.src: {
                        'resources': {'VCPU': 1}}},
                     'consumer_generation': 1, 'project_id': 'p',
                     'user_id': 'u'})
            return real_get(context, consumer)
        client.get_allocs_for_consumer = get_then_someone_claims
        e = self.assertRaises(exception.AllocationUpdateConflict,
                              self.scn.unshelve_claim)
        self.assertIn('expected 1 but got None', str(e))
        # The other claim stands, untouched.
        self.assertEqual({self.scn.src: {'VCPU': 1}}, self.scn.held())

    def test_a_changed_ghost_refuses_the_retry(self):
        self.offload_leaving_a_ghost()
        client = self.scn.client
        real_put = client._put_allocations
        calls = []

        def put_then_race(context, consumer, payload, version='1.28'):
            calls.append(payload['consumer_generation'])
            if len(calls) == 2:
                # Between the re-read and the retry, the ghost is used and
                # emptied again: its generation moved on.
                self.placement.adapter.put(
                    self.url, json={
                        'allocations': {self.scn.src: {
                            'resources': {'VCPU': 1}}},
                        'consumer_generation': 1, 'project_id': 'p',
                        'user_id': 'u'}, microversion='1.28')
                self.placement.adapter.put(
                    self.url, json={'allocations': {},
                                    'consumer_generation': 2,
                                    'project_id': 'p', 'user_id': 'u'},
                    microversion='1.28')
            return real_put(context, consumer, payload, version=version)
        client._put_allocations = put_then_race
        e = self.assertRaises(exception.AllocationUpdateConflict,
                              self.scn.unshelve_claim)
        self.assertEqual([None, 1], calls)
        self.assertIn('consumer generation conflict - expected null but got '
                      '1', str(e))
        self.assertEqual({}, self.scn.held())
