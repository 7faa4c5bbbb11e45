"""Regression tests for the wide-trees pruning that forgets usage.

openstack-placement 15.0.0 added ``[workarounds]
optimize_for_wide_provider_trees``: the product of the request groups'
candidates is pruned as soon as a partial product does not fit, and the
final capacity check of each merged candidate is skipped. The pruning
compares what a partial product takes from a provider with the
provider's capacity, not with what its usage leaves of it, so two
groups landing on a provider with usage are offered more than is free,
and the claim of that candidate is refused (see
``doc/source/findings/wide-trees-capacity.rst``).

The double answers as placement without the option does (it has no such
option: a search strategy, not a semantics); the differential mode of
nova's functional tests found the difference.
"""

import uuid

import testscenarios

from shelvefix import backends
from shelvefix.backends import real
from shelvefix.tests import base

load_tests = testscenarios.load_tests_apply_scenarios

VERSION = '1.38'
OPTIMIZED = {'workarounds': {'optimize_for_wide_provider_trees': True}}
TWO_GROUPS = ('/allocation_candidates?resources1=CUSTOM_VF:1'
              '&resources2=CUSTOM_VF:1&group_policy=none')


class WideTreesCapacityTestCase(testscenarios.WithScenarios, base.TestCase):

    scenarios = [
        ('real', {'backend': 'real', 'config': None, 'bug': False}),
        ('real-optimized', {'backend': 'real', 'config': OPTIMIZED,
                            'bug': True}),
        ('double', {'backend': 'double', 'config': None, 'bug': False}),
    ]

    def setUp(self):
        super().setUp()
        if self.backend == 'real' and not real.available():
            self.skipTest(real.INSTALL_HINT)
        self.placement = self.useFixture(backends.make_backend(
            self.backend, placement_config=self.config))
        self.api = self.placement.admin_adapter
        # A compute with a device provider of two VFs, one of them used.
        self.root = self.placement.create_provider('cn1')
        resp = self.api.post('/resource_providers', microversion=VERSION,
                             json={'name': 'cn1_pf',
                                   'parent_provider_uuid': self.root})
        self.assertEqual(200, resp.status_code)
        self.pf = resp.json()['uuid']
        resp = self.api.put('/resource_classes/CUSTOM_VF',
                            microversion=VERSION)
        self.assertEqual(201, resp.status_code)
        self.placement.set_inventory(self.pf, {'CUSTOM_VF': 2})
        self.assertEqual(204, self.claim({self.pf: 1}).status_code)

    def claim(self, amounts):
        return self.api.put('/allocations/%s' % uuid.uuid4(),
                            microversion=VERSION, json={
                                'allocations': {
                                    rp: {'resources': {'CUSTOM_VF': amount}}
                                    for rp, amount in amounts.items()},
                                'project_id': 'project',
                                'user_id': 'user',
                                'consumer_generation': None,
                                'consumer_type': 'INSTANCE'})

    def candidates(self):
        resp = self.api.get(TWO_GROUPS, microversion=VERSION)
        self.assertEqual(200, resp.status_code)
        return [{rp: alloc['resources']['CUSTOM_VF']
                 for rp, alloc in areq['allocations'].items()}
                for areq in resp.json()['allocation_requests']]

    def test_two_groups_on_the_one_free_vf(self):
        candidates = self.candidates()
        if not self.bug:
            # One VF is free: two groups of one do not fit.
            self.assertEqual([], candidates)
            return
        # Placement with the option offers the provider's two VFs, and
        # refuses to claim them.
        self.assertEqual([{self.pf: 2}], candidates)
        resp = self.claim(candidates[0])
        self.assertEqual(409, resp.status_code)
        self.assertIn('The requested amount would exceed the capacity.',
                      resp.json()['errors'][0]['detail'])

    def test_one_group_is_offered_the_free_vf(self):
        resp = self.api.get('/allocation_candidates?resources1=CUSTOM_VF:1',
                            microversion=VERSION)
        self.assertEqual(200, resp.status_code)
        self.assertEqual(
            [{self.pf: {'resources': {'CUSTOM_VF': 1}}}],
            [areq['allocations']
             for areq in resp.json()['allocation_requests']])
