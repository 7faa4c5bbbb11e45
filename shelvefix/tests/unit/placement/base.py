"""Shared helpers for the placement double's unit tests.

``PlacementTestCase`` runs each test against a fresh
:class:`~shelvefix.backends.fixture.PlacementFixture` and talks to it over
HTTP through the fixture's keystoneauth1 adapter, as a client would.
"""

import testtools

from shelvefix.backends import fixture

RP1 = '11111111-1111-1111-1111-111111111111'
RP2 = '22222222-2222-2222-2222-222222222222'
RP3 = '33333333-3333-3333-3333-333333333333'
MISSING = '99999999-9999-9999-9999-999999999999'
C1 = 'c1c1c1c1-0000-0000-0000-000000000001'
C2 = 'c2c2c2c2-0000-0000-0000-000000000002'
C3 = 'c3c3c3c3-0000-0000-0000-000000000003'
INVENTORY = {'VCPU': 8, 'MEMORY_MB': 4096, 'DISK_GB': 100}
FLAVOR = {'VCPU': 2, 'MEMORY_MB': 1024, 'DISK_GB': 10}


def alloc_body(allocations, generation=None, project_id='proj',
               user_id='user', **extra):
    """A PUT /allocations body in the 1.28+ format."""
    body = {'allocations': allocations, 'project_id': project_id,
            'user_id': user_id, 'consumer_generation': generation}
    body.update(extra)
    return body


class PlacementTestCase(testtools.TestCase):
    """A test with its own placement double, reached over HTTP."""

    def setUp(self):
        super(PlacementTestCase, self).setUp()
        self.placement = self.useFixture(fixture.PlacementFixture())
        self.state = self.placement.state
        self.adapter = self.placement.adapter

    def request(self, method, url, body=None, version=None, raw=None,
                headers=None):
        """Send a request; never raises for an HTTP error status."""
        kwargs = {}
        if version is not None:
            kwargs['microversion'] = version
        if raw is not None:
            kwargs['data'] = raw
        elif body is not None:
            kwargs['json'] = body
        if headers:
            kwargs['headers'] = headers
        return self.adapter.request(url, method, **kwargs)

    def get(self, url, version=None, **kwargs):
        return self.request('GET', url, version=version, **kwargs)

    def put(self, url, body=None, version=None, **kwargs):
        return self.request('PUT', url, body, version=version, **kwargs)

    def post(self, url, body=None, version=None, **kwargs):
        return self.request('POST', url, body, version=version, **kwargs)

    def delete(self, url, version=None, **kwargs):
        return self.request('DELETE', url, version=version, **kwargs)

    def make_provider(self, uuid=RP1, name=None, inventory=None):
        """Create a provider over HTTP (default inventory: INVENTORY)."""
        return self.placement.create_provider(
            name or 'rp-%s' % uuid[:4], uuid=uuid,
            inventory=INVENTORY if inventory is None else inventory)

    def put_allocations(self, consumer, allocations, generation=None,
                        version='1.28', **extra):
        return self.put('/allocations/%s' % consumer,
                        alloc_body(allocations, generation, **extra),
                        version=version)

    def provider_generation(self, uuid):
        return self.state.get_provider(uuid).generation

    def assertStatus(self, status, resp):
        self.assertEqual(status, resp.status_code, resp.text)

    def assertError(self, resp, status, detail=None, code=None):
        """Check a placement error document and return its only error."""
        self.assertStatus(status, resp)
        self.assertEqual('application/json', resp.headers['Content-Type'])
        errors = resp.json()['errors']
        self.assertEqual(1, len(errors))
        error = errors[0]
        self.assertEqual(status, error['status'])
        self.assertEqual(resp.headers['x-openstack-request-id'],
                         error['request_id'])
        if detail is not None:
            self.assertIn(detail, error['detail'])
        if code is not None:
            self.assertEqual(code, error['code'])
        return error
