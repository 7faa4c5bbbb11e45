"""Tests for shelvefix.placement.deploy: the request pipeline, over HTTP."""

import logging
import re
from unittest import mock

import fixtures
import requests
import testtools

from shelvefix.backends import transport
from shelvefix.placement import deploy
from shelvefix.placement import handler
from shelvefix.tests.unit.placement import base


class PipelineTestCase(base.PlacementTestCase):

    def test_root_document(self):
        resp = self.get('/')
        self.assertStatus(200, resp)
        self.assertEqual({'versions': [{
            'id': 'v1.0', 'max_version': '1.39', 'min_version': '1.0',
            'status': 'CURRENT', 'links': [{'rel': 'self', 'href': ''}]}]},
            resp.json())

    def test_microversion_headers(self):
        for asked, answered in ((None, '1.0'), ('1.28', '1.28'),
                                ('latest', '1.39')):
            resp = self.get('/', version=asked)
            self.assertEqual('placement %s' % answered,
                             resp.headers['openstack-api-version'])
            self.assertEqual('openstack-api-version', resp.headers['vary'])
            self.assertTrue(resp.headers['x-openstack-request-id']
                            .startswith('req-'))

    def test_unsupported_microversion_is_406(self):
        for version in ('1.40', '0.9'):
            resp = self.get('/allocations/%s' % base.C1, version=version)
            error = self.assertError(
                resp, 406,
                detail='Invalid microversion: Unacceptable version header: '
                       '%s' % version)
            self.assertEqual(('1.0', '1.39'),
                             (error['min_version'], error['max_version']))
            self.assertNotIn('code', error)
            self.assertNotIn('openstack-api-version', resp.headers)

    def test_garbage_microversion_is_400(self):
        resp = self.get('/', headers={
            'OpenStack-API-Version': 'placement 1.x'})
        error = self.assertError(
            resp, 400, detail="Invalid microversion: invalid version "
                              "string: 1.x; invalid literal for int() with "
                              "base 10: 'x'")
        self.assertNotIn('max_version', error)

    def test_request_id_is_fresh(self):
        resp = self.get('/', headers={
            'X-OpenStack-Request-ID': 'req-%s' % ('1' * 36)})
        self.assertNotEqual('req-%s' % ('1' * 36),
                            resp.headers['x-openstack-request-id'])

    def test_unknown_route_is_404_without_vary(self):
        for path in ('/nothing', '/resource_providers/',
                     '/allocations/a/b'):
            resp = self.get(path, version='1.28')
            error = self.assertError(
                resp, 404, code='placement.undefined_code')
            self.assertEqual('The resource could not be found.\n\n   ',
                             error['detail'])
            self.assertNotIn('vary', resp.headers)
            self.assertEqual('placement 1.28',
                             resp.headers['openstack-api-version'])

    def test_wrong_method_is_405_with_allow(self):
        cases = {'/allocations/%s' % base.C1: 'GET, PUT, DELETE',
                 '/allocations': 'POST',
                 '/resource_providers/%s/inventories' % base.RP1:
                     'GET, POST, PUT, DELETE'}
        for path, allow in cases.items():
            resp = self.request('PATCH', path, version='1.28')
            self.assertError(resp, 405, detail='The method PATCH is not '
                             'allowed for this resource. \n\n The method '
                             'specified is not allowed for this resource.')
            self.assertEqual(allow, resp.headers['allow'])
            self.assertIn('vary', resp.headers)

    def test_error_code_appears_at_1_23(self):
        error = self.assertError(self.get('/nothing', version='1.22'), 404)
        self.assertNotIn('code', error)
        self.assertError(self.get('/nothing', version='1.23'), 404,
                         code='placement.undefined_code')

    def test_every_route_of_placement_is_served(self):
        # Placement's own route table, when it is installed: the double
        # serves exactly those paths and methods, in placement's order.
        try:
            from placement import handler as placement_handler
        except ImportError:
            self.skipTest('openstack-placement is not installed')

        def shape(template):
            # Path variables are named differently ({consumer_uuid}).
            return re.sub(r'{\w+}', '{}', template)

        theirs = [(shape(template), list(methods)) for template, methods in
                  placement_handler.ROUTE_DECLARATIONS.items()]
        ours = [(shape(template), list(methods))
                for template, methods in handler.ROUTES]
        self.assertEqual(sorted(theirs), sorted(ours))
        for template, methods in theirs:
            self.assertEqual(methods, dict(ours)[template], template)

    def test_every_route_answers(self):
        # One request per route and method, at the latest microversion,
        # with an empty body for writes: each reaches a handler (no 405
        # from the router) and none fails (no 5xx).
        values = {'uuid': base.RP1, 'consumer': base.C1, 'name': 'VCPU',
                  'resource_class': 'VCPU'}
        for template, methods in handler.ROUTES:
            path = template.format(**values) or '/'
            for method in methods:
                body = {} if method in ('PUT', 'POST') else None
                resp = self.request(method, path, body, version='latest')
                self.assertLess(resp.status_code, 500,
                                '%s %s: %s' % (method, path, resp.text))
                self.assertNotEqual(405, resp.status_code, path)

    def test_body_without_content_type(self):
        resp = self.put('/allocations/%s' % base.C1, raw='{}',
                        version='1.28', headers={'Content-Type': ''})
        self.assertError(resp, 400, detail='content-type header required '
                                           'when content-length > 0')
        self.assertNotIn('vary', resp.headers)

    def test_accept_negotiation(self):
        resp = self.get('/resource_providers/%s' % base.RP1,
                        headers={'Accept': 'text/html'})
        self.assertStatus(406, resp)
        self.assertIn('Only application/json is provided', resp.text)
        self.assertTrue(resp.headers['Content-Type'].startswith('text/html'))
        resp = self.get('/resource_providers/%s' % base.RP1,
                        headers={'Accept': 'text/html;q=0.1, */*'})
        self.assertError(resp, 404)

    def test_head_has_no_body(self):
        resp = self.request('HEAD', '/allocations/%s' % base.C1)
        self.assertStatus(405, resp)
        self.assertEqual(b'', resp.content)

    def test_domain_bug_is_500(self):
        log = self.useFixture(fixtures.FakeLogger(
            name='shelvefix.placement.deploy', level=logging.ERROR))
        with mock.patch.object(self.state, 'get_provider', autospec=True,
                               side_effect=RuntimeError('kaboom')):
            resp = self.get('/resource_providers/%s' % base.RP1,
                            version='1.28')
        self.assertStatus(500, resp)
        error = resp.json()['errors'][0]
        self.assertIn('kaboom', error['detail'])
        # Placement's fault wrapper is inside its request log: the 500
        # has the request id, not the microversion headers.
        self.assertEqual(error['request_id'],
                         resp.headers['x-openstack-request-id'])
        self.assertNotIn('openstack-api-version', resp.headers)
        # Logged with its traceback: a bug in the double must not pass
        # silently for a 500 (which a client may take for a lost reply).
        self.assertIn('Placement API unexpected error: kaboom (GET '
                      '/resource_providers/%s)' % base.RP1, log.output)
        self.assertIn('Traceback (most recent call last)', log.output)
        self.assertIn('RuntimeError: kaboom', log.output)

    def test_calls_are_logged(self):
        self.put_allocations(base.C1, {}, version='1.28')
        self.assertEqual([transport.Call(
            'PUT', '/allocations/%s' % base.C1, '1.28',
            base.alloc_body({}), 204, None)], self.placement.calls)


class AuthTestCase(testtools.TestCase):
    """noauth2: a token is needed, even empty, except for the root.

    What the token may do is the policy's business (see test_policy).
    """

    def setUp(self):
        super(AuthTestCase, self).setUp()
        self.session = requests.Session()
        self.app = deploy.PlacementApp()
        self.session.mount('http://p', transport.WSGITransport(self.app))

    def test_token_required(self):
        resp = self.session.get('http://p/allocations/x')
        self.assertEqual(401, resp.status_code)
        self.assertEqual('401 Unauthorized', resp.json()['code'])
        self.assertIn('x-openstack-request-id', resp.headers)
        resp = self.session.get('http://p/allocations/x',
                                headers={'X-Auth-Token': 'admin'})
        self.assertEqual(200, resp.status_code)
        for token in ('anything', ''):
            resp = self.session.get('http://p/allocations/x',
                                    headers={'X-Auth-Token': token})
            self.assertEqual(403, resp.status_code)
        self.assertEqual(200, self.session.get('http://p/').status_code)

    def test_state_is_shared_or_given(self):
        self.assertIsNotNone(self.app.state)
        other = deploy.PlacementApp(self.app.state)
        self.assertIs(self.app.state, other.state)
