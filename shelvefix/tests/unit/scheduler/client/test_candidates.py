"""Tests for SchedulerReportClient.get_allocation_candidates."""

from keystoneauth1 import exceptions as ks_exc

from shelvefix.backends import fixture as placement_fixture
from shelvefix import exception
from shelvefix.scheduler import utils
from shelvefix.tests import base


class CandidatesTestCase(base.TestCase):

    def setUp(self):
        super(CandidatesTestCase, self).setUp()
        self.placement = self.useFixture(placement_fixture.PlacementFixture())
        self.client = self.placement.client
        self.rp = self.placement.create_provider(
            'h1', inventory={'VCPU': 2, 'MEMORY_MB': 1024})

    def test_candidates_summaries_and_version(self):
        request = utils.ResourceRequest({'VCPU': 1, 'MEMORY_MB': 512,
                                         'DISK_GB': 0})
        reqs, summaries, version = self.client.get_allocation_candidates(
            self.context, request)
        self.assertEqual('1.36', version)
        self.assertEqual([{'allocations': {self.rp: {'resources': {
            'VCPU': 1, 'MEMORY_MB': 512}}}, 'mappings': {'': [self.rp]}}],
            reqs)
        self.assertEqual({'VCPU': {'capacity': 2, 'used': 0},
                          'MEMORY_MB': {'capacity': 1024, 'used': 0}},
                         summaries[self.rp]['resources'])
        call = self.placement.calls[-1]
        self.assertEqual(('GET', 200), (call.method, call.status))
        self.assertEqual('/allocation_candidates?limit=1000&resources='
                         'MEMORY_MB%3A512%2CVCPU%3A1', call.path)

    def test_nothing_fits(self):
        request = utils.ResourceRequest({'VCPU': 3})
        reqs, summaries, _version = self.client.get_allocation_candidates(
            self.context, request)
        self.assertEqual(([], {}), (reqs, summaries))

    def test_refused(self):
        request = utils.ResourceRequest({'VCPU': 1},
                                        required_traits=['NOT_A_TRAIT'])
        error = self.assertRaises(
            exception.AllocationCandidatesRetrievalFailed,
            self.client.get_allocation_candidates, self.context, request)
        self.assertIn('No such trait(s): NOT_A_TRAIT', str(error))
        self.assertEqual(400, error.kwargs['placement_error'].status)
        self.assertIn('Failed to retrieve allocation candidates',
                      self.log.output)

    def test_unreachable(self):
        self.placement.inject_fault('GET', '/allocation_candidates',
                                    exception='connect')
        error = self.assertRaises(
            exception.AllocationCandidatesRetrievalFailed,
            self.client.get_allocation_candidates, self.context,
            utils.ResourceRequest({'VCPU': 1}))
        self.assertIsInstance(error.__cause__, ks_exc.ConnectionError)
