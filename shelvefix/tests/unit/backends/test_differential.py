"""Tests for shelvefix.backends.differential, on real placement.

Real placement is openstack-placement's own test fixture here, given the
methods nova's fixture adds to it (nova is not needed); the nova suite
runs the fixture on nova's own class.
"""

import json
import os

import fixtures
from keystoneauth1 import adapter as ks_adapter
from keystoneauth1 import session as ks_session
import requests
from requests import adapters
import testtools

from shelvefix.backends import differential
from shelvefix.backends import nova_fixture
from shelvefix.backends import real as real_backend

RP = '11111111-1111-1111-1111-111111111111'


def real_class():
    """openstack-placement's fixture with nova's client methods."""
    _deploy, pfix = real_backend._placement_modules()

    class RealPlacement(pfix.PlacementFixture):

        def setUp(self):
            super(RealPlacement, self).setUp()
            # As nova's fixture: wsgi-intercept and keystoneauth's
            # keep-alive socket options do not mix.
            self.useFixture(fixtures.MonkeyPatch(
                'keystoneauth1.session.TCPKeepAliveAdapter.'
                'init_poolmanager', adapters.HTTPAdapter.init_poolmanager))
            self._client = ks_adapter.Adapter(ks_session.Session(auth=None),
                                              raise_exc=False)

        def _call(self, method, url, version, **kwargs):
            headers = nova_fixture.request_headers(self.token, version)
            return self._client.request(url, method, headers=headers,
                                        endpoint_override=self.endpoint,
                                        **kwargs)

        def _fake_get(self, client, url, version=None,
                      global_request_id=None):
            return self._call('GET', url, version)

        def _fake_post(self, client, url, data, version=None,
                       global_request_id=None):
            return self._call('POST', url, version, json=data)

        def _fake_put(self, client, url, data, version=None,
                      global_request_id=None):
            return self._call('PUT', url, version, json=data)

        def _fake_delete(self, client, url, version=None,
                         global_request_id=None):
            return self._call('DELETE', url, version)

    return RealPlacement


@testtools.skipUnless(real_backend.available(),
                      'needs openstack-placement')
class DifferentialFixtureTestCase(testtools.TestCase):

    def start(self, **kwargs):
        kwargs.setdefault('patch_report_client', False)
        return self.useFixture(differential.DifferentialPlacementFixture(
            real_class=real_class(), **kwargs))

    def test_identical_answers_are_counted(self):
        placement = self.start()
        self.assertEqual(200, placement.api.post(
            '/resource_providers', {'name': 'cn1', 'uuid': RP},
            version='1.20').status)
        inventories = {'inventories': {'VCPU': {'total': 8}},
                       'resource_provider_generation': 0}
        self.assertEqual(200, placement.api.put(
            '/resource_providers/%s/inventories' % RP, inventories,
            version='1.20').status)
        self.assertEqual(409, placement.api.put(
            '/resource_providers/%s/inventories' % RP, inventories,
            version='1.20').status)
        placement.api.get('/resource_providers/%s/usages' % RP)
        placement.api.get('/allocation_candidates?resources=VCPU:1',
                          version='1.36')
        placement.api.delete('/resource_providers/%s' % RP)
        self.assertEqual([], placement.differences)
        self.assertEqual({'compared': 6, 'identical': 6, 'differing': 0,
                          'not_replayed': 0}, placement.counts)
        self.assertEqual(self.id(), placement.test_id)

    def test_the_database_refusing_a_row_is_the_same_answer(self):
        # The detail is sqlite's IntegrityError on both, with the insert's
        # own time; the rest of it must agree.
        placement = self.start()
        placement.api.post('/resource_providers', {'name': 'cn1',
                                                   'uuid': RP},
                           version='1.20')
        inventory = {'resource_class': 'VCPU', 'total': 8,
                     'allocation_ratio': 16}
        url = '/resource_providers/%s/inventories' % RP
        self.assertEqual(201, placement.api.post(url, inventory).status)
        refused = placement.api.post(url, dict(inventory, max_unit=4))
        self.assertEqual(409, refused.status)
        self.assertIn('[parameters: (1, 0, 8, 0, 1, 4, 1, 16.0, ',
                      refused.body['errors'][0]['detail'])
        self.assertEqual([], placement.differences)
        self.assertEqual(3, placement.counts['identical'])

    def test_a_made_up_uuid_is_read_as_the_doubles(self):
        placement = self.start()
        made = placement.api.post('/resource_providers', {'name': 'cn1'},
                                  version='1.20').body['uuid']
        self.assertEqual(200, placement.api.get(
            '/resource_providers/%s' % made, version='1.20').status)
        self.assertEqual(204, placement.api.delete(
            '/resource_providers/%s' % made).status)
        self.assertEqual([], placement.differences)
        self.assertEqual(3, placement.counts['identical'])

    def test_a_uuid_made_up_for_a_location_is_read_as_the_doubles(self):
        placement = self.start()
        created = placement.api.post('/resource_providers', {'name': 'cn1'})
        self.assertEqual(201, created.status)
        made = created.headers['location'].rsplit('/', 1)[-1]
        self.assertEqual(200, placement.api.get(
            '/resource_providers/%s' % made).status)
        self.assertEqual([], placement.differences)
        self.assertEqual(2, placement.counts['identical'])

    def test_a_different_answer_is_reported_with_its_test(self):
        log = self.useFixture(fixtures.TempDir()).join('log')
        self.useFixture(fixtures.EnvironmentVariable(
            differential.LOG_VARIABLE, log))
        placement = differential.DifferentialPlacementFixture(
            real_class=real_class(), patch_report_client=False)
        placement.setUp()
        # A provider real placement has and the double does not.
        placement.real._fake_post(None, '/resource_providers',
                                  {'name': 'cn1', 'uuid': RP},
                                  version='1.20')
        self.assertEqual(200, placement.api.get(
            '/resource_providers/%s' % RP).status)
        self.assertEqual(1, placement.counts['differing'])
        first = placement.differences[0]
        self.assertEqual(
            (self.id(), 'GET', '/resource_providers/%s' % RP, 'status',
             '200', '404'),
            (first['test'], first['method'], first['url'], first['field'],
             first['real'], first['double']))
        fields = [found['field'] for found in placement.differences]
        self.assertIn('body', fields)
        placement.cleanUp()
        counts, differences = differential.read_log(log)
        self.assertEqual(dict(fixtures=1, compared=1, identical=0,
                              differing=1, not_replayed=0), counts)
        self.assertEqual(fields, [found['field'] for found in differences])

    def test_strict_fails_at_cleanup(self):
        placement = differential.DifferentialPlacementFixture(
            real_class=real_class(), patch_report_client=False,
            strict=True)
        placement.setUp()
        placement.real._fake_post(None, '/resource_providers',
                                  {'name': 'cn1', 'uuid': RP},
                                  version='1.20')
        placement.api.get('/resource_providers/%s' % RP)
        error = self.assertRaises(AssertionError, placement.cleanUp)
        self.assertIn('answered 1 of 1 requests differently',
                      str(error))

    def test_a_mocked_client_is_not_replayed(self):
        placement = self.start()
        self.useFixture(fixtures.MockPatchObject(
            placement._client, 'request',
            side_effect=lambda *a, **k: 'mocked'))
        self.assertEqual('mocked', placement._fake_post(
            None, '/resource_providers', {'name': 'cn1', 'uuid': RP}))
        self.assertEqual({'compared': 0, 'identical': 0, 'differing': 0,
                          'not_replayed': 1}, placement.counts)

    def test_an_answer_placement_did_not_write_is_not_replayed(self):
        placement = self.start()
        # nova's tests mock keystoneauth's Adapter itself, for every
        # adapter: the answer has no request id.
        made_up = requests.Response()
        made_up.status_code = 409
        made_up._content = b'{"errors": []}'
        self.useFixture(fixtures.MockPatch(
            'keystoneauth1.adapter.Adapter.request', return_value=made_up))
        self.assertIs(made_up, placement._fake_post(
            None, '/resource_providers', {'name': 'cn1', 'uuid': RP}))
        self.assertEqual({'compared': 0, 'identical': 0, 'differing': 0,
                          'not_replayed': 1}, placement.counts)

    def test_a_double_that_raises_is_a_difference_not_an_error(self):
        placement = self.start()
        self.useFixture(fixtures.MockPatchObject(
            placement._double_client, 'request',
            side_effect=RuntimeError('boom')))
        self.assertEqual(200, placement.api.post(
            '/resource_providers', {'name': 'cn1', 'uuid': RP},
            version='1.20').status)
        self.assertEqual(
            [('replay', '200', 'RuntimeError: boom')],
            [(found['field'], found['real'], found['double'])
             for found in placement.differences])
        self.assertEqual(1, placement.counts['differing'])

    def test_real_placement_raising_is_not_replayed(self):
        placement = self.start()
        self.useFixture(fixtures.MockPatchObject(
            placement.real, '_fake_get', side_effect=ValueError('down')))
        self.assertRaises(ValueError, placement.api.get,
                          '/resource_providers')
        self.assertEqual({'compared': 0, 'identical': 0, 'differing': 0,
                          'not_replayed': 1}, placement.counts)

    def test_log_totals(self):
        path = self.useFixture(fixtures.TempDir()).join('log')
        with open(path, 'w') as log:
            for record in (
                    {'kind': 'fixture', 'compared': 3, 'identical': 3,
                     'differing': 0, 'not_replayed': 1},
                    {'kind': 'difference', 'field': 'status'},
                    {'kind': 'fixture', 'compared': 2, 'identical': 1,
                     'differing': 1, 'not_replayed': 0}):
                log.write(json.dumps(record) + '\n')
        counts, differences = differential.read_log(path)
        self.assertEqual(dict(fixtures=2, compared=5, identical=4,
                              differing=1, not_replayed=1), counts)
        self.assertEqual([{'kind': 'difference', 'field': 'status'}],
                         differences)
        self.assertTrue(os.path.exists(path))
