"""Tests for GET /allocation_candidates in the placement double (HTTP)."""

from shelvefix.placement import errors
from shelvefix.tests.unit.placement import base

PATH = '/allocation_candidates?'


class AllocationCandidatesTestCase(base.PlacementTestCase):

    def setUp(self):
        super(AllocationCandidatesTestCase, self).setUp()
        self.make_provider(base.RP1)
        self.make_provider(base.RP2, inventory={'VCPU': 1})
        self.put_allocations(base.C1, {base.RP1: {'resources': {'VCPU': 2}}})

    def candidates(self, query, version='1.39'):
        resp = self.get(PATH + query, version=version)
        self.assertStatus(200, resp)
        if version >= '1.15':
            self.assertEqual('no-cache', resp.headers['Cache-Control'])
        else:
            self.assertNotIn('Cache-Control', resp.headers)
        return resp.json()

    def test_answer_shapes_per_version(self):
        query = 'resources=VCPU:1'
        old = self.candidates(query, '1.10')
        self.assertEqual(
            sorted([{'allocations': [{'resource_provider': {'uuid': rp},
                                      'resources': {'VCPU': 1}}]}
                    for rp in (base.RP1, base.RP2)],
                   key=lambda r: r['allocations'][0]['resource_provider']
                   ['uuid']),
            sorted(old['allocation_requests'],
                   key=lambda r: r['allocations'][0]['resource_provider']
                   ['uuid']))
        self.assertEqual({'resources': {'VCPU': {'capacity': 8, 'used': 2}}},
                         old['provider_summaries'][base.RP1])
        new = self.candidates(query)
        self.assertIn({'allocations': {base.RP1: {'resources': {'VCPU': 1}}},
                       'mappings': {'': [base.RP1]}},
                      new['allocation_requests'])
        self.assertEqual(
            {'resources': {'VCPU': {'capacity': 8, 'used': 2},
                           'MEMORY_MB': {'capacity': 4096, 'used': 0},
                           'DISK_GB': {'capacity': 100, 'used': 0}},
             'traits': [], 'parent_provider_uuid': None,
             'root_provider_uuid': base.RP1},
            new['provider_summaries'][base.RP1])
        no_mappings = self.candidates(query, '1.33')
        self.assertNotIn('mappings', no_mappings['allocation_requests'][0])

    def test_limit_and_empty_answers(self):
        self.assertEqual(1, len(self.candidates(
            'resources=VCPU:1&limit=1')['allocation_requests']))
        self.assertEqual({'allocation_requests': [],
                          'provider_summaries': {}},
                         self.candidates('resources=VCPU:7'))

    def test_refusals(self):
        self.assertError(self.get(PATH + 'resources=VCPU:1', version='1.9'),
                         404)
        self.assertError(
            self.get(PATH + 'resources1=VCPU:1&resources2=VCPU:1',
                     version='1.39'), 400,
            detail='The "group_policy" parameter is required')
        self.assertError(
            self.get(PATH + 'resources=VCPU:1&root_required=A&'
                     'root_required=B', version='1.39'), 400,
            code=errors.QUERY_DUPLICATE_KEY)
        self.assertError(
            self.get(PATH + 'resources=VCPU:1&same_subtree=_A,',
                     version='1.39'), 400, code=errors.QUERY_BAD_VALUE)
        self.assertError(self.get(PATH + 'required_X=A', version='1.39'),
                         400, code=errors.QUERY_MISSING_VALUE)
        self.assertError(
            self.get(PATH + 'resources1=VCPU:1&member_of2=%s'
                     % base.MISSING, version='1.25'), 400,
            detail='orphaned member_of keys: member_of2')
        self.assertError(
            self.get(PATH + 'resources=VCPU:1&required=A,!A',
                     version='1.39'), 400,
            detail='following traits keys: required: (A)')
        self.assertError(
            self.get(PATH + 'resources=VCPU:1,NOPE:1', version='1.39'), 400,
            detail='Invalid resource class in resources parameter: No such '
                   'resource class NOPE.')
        self.assertError(
            self.get(PATH + 'resources=VCPU:1&required=CUSTOM_NOPE',
                     version='1.39'), 400,
            detail='No such trait(s): CUSTOM_NOPE.')
