"""Tests for the API contract scenarios talk to (on the double)."""

import uuid

import testtools

from shelvefix.backends import fixture
from shelvefix.contract import api as api_mod


class ContractAPITestCase(testtools.TestCase):

    def setUp(self):
        super(ContractAPITestCase, self).setUp()
        self.placement = self.useFixture(fixture.PlacementFixture())
        self.api = api_mod.ContractAPI(self.placement.adapter,
                                       self.placement.endpoint)

    def test_uuid_is_stable_and_named(self):
        rp1 = self.api.uuid('rp1')
        self.assertEqual(rp1, self.api.uuid('rp1'))
        self.assertEqual(rp1, str(uuid.UUID(rp1)))
        other = api_mod.ContractAPI(self.placement.adapter)
        self.assertEqual(rp1, other.uuid('rp1'))
        self.assertNotEqual(rp1, self.api.uuid('rp2'))
        self.assertEqual('<rp1>', self.api.normaliser.text(rp1))

    def test_request_is_recorded_normalised(self):
        consumer = self.api.uuid('c1')
        response = self.api.request('GET', '/allocations/%s' % consumer,
                                    version='1.28', note='look')
        self.assertEqual(200, response.status_code)
        (obs,) = self.api.observations
        self.assertEqual(
            (1, 'GET', '/allocations/<c1>', '1.28', None, 'look', 200,
             {'allocations': {}}),
            (obs.index, obs.method, obs.path, obs.version, obs.sent,
             obs.note, obs.status, obs.body))
        self.assertEqual('placement 1.28',
                         obs.headers['openstack-api-version'])
        self.assertEqual('<request-id>',
                         obs.headers['x-openstack-request-id'])
        self.assertNotIn('content-length', obs.headers)
        # It went through the fixture's adapter and transport.
        self.assertEqual('/allocations/%s' % consumer,
                         self.placement.calls[-1].path)

    def test_bodies_and_content_types(self):
        url = '/allocations/%s' % self.api.uuid('c1')
        self.api.request('PUT', url, {'allocations': {}}, version='1.28')
        self.api.request('PUT', url, raw_body='{"x": ', version='1.28')
        self.api.request('PUT', url, {'a': 1}, content_type='text/plain',
                         version='1.28')
        self.api.request('PUT', url, raw_body=b'{}', content_type=None,
                         version='1.28')
        sent = [(c.body, c.status) for c in self.placement.calls]
        self.assertEqual([({'allocations': {}}, 400), ('{"x": ', 400),
                          ({'a': 1}, 415), ({}, 400)], sent)
        self.assertEqual(
            [{'allocations': {}}, '{"x": ', '{"a": 1}', '{}'],
            [o.sent for o in self.api.observations])
        self.assertIn('Malformed JSON',
                      self.api.observations[1].body['errors'][0]['detail'])
        self.assertIn('content-type header required',
                      self.api.observations[3].body['errors'][0]['detail'])

    def test_hand_made_version_header_is_recorded(self):
        self.api.request('GET', '/', headers={
            'OpenStack-API-Version': 'placement 1.x'})
        obs = self.api.observations[0]
        self.assertEqual(('placement 1.x', 400), (obs.version, obs.status))

    def test_provider_setup_is_recorded(self):
        rp = self.api.provider('rp1', {'VCPU': 8, 'DISK_GB': {'total': 10,
                                                              'reserved': 1}})
        self.assertEqual(self.api.uuid('rp1'), rp)
        self.assertEqual(
            [('POST', '/resource_providers', 200, 'setup'),
             ('PUT', '/resource_providers/<rp1>/inventories', 200,
              'setup')],
            [(o.method, o.path, o.status, o.note)
             for o in self.api.observations])
        self.assertEqual(1, self.api.observations[1].body['inventories'][
            'DISK_GB']['reserved'])
        self.assertEqual('<endpoint>/resource_providers/<rp1>',
                         self.api.observations[0].headers['location'])
        self.assertEqual(self.api.uuid('rp2'), self.api.provider('rp2'))
        self.assertEqual(3, len(self.api.observations))

    def test_other_tokens(self):
        self.api.request('GET', '/resource_providers', token='bob:proj')
        self.api.request('GET', '/resource_providers', token='bob:proj',
                         headers={'X-Roles': 'service'}, note='service')
        self.api.request('GET', '/resource_providers',
                         token=api_mod.NO_TOKEN)
        self.api.request('GET', '/resource_providers')
        self.assertEqual(
            [(403, 'as bob:proj'), (200, 'as bob:proj: service'),
             (401, 'without a token'), (200, None)],
            [(o.status, o.note) for o in self.api.observations])
