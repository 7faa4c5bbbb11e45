"""Tests for the double's CORS: ``[cors] allowed_origin`` set, or not."""

import logging
from unittest import mock

import fixtures
from oslo_config import cfg
from oslo_middleware import cors
import requests
import testtools

from shelvefix.backends import fixture
from shelvefix.backends import transport
from shelvefix.placement import deploy
from shelvefix.tests.unit.placement import base

ORIGIN = 'http://valid.example.com'
OTHER = 'http://invalid.example.com'
PREFLIGHT = {'Origin': ORIGIN, 'Access-Control-Request-Method': 'GET'}
EXPOSED = ('X-Auth-Token,X-Openstack-Request-Id,X-Subject-Token,'
           'X-Service-Token,OpenStack-API-Version')


def _cors_headers(resp):
    return {name.lower(): value for name, value in resp.headers.items()
            if name.lower().startswith('access-control-')}


class CORSTestCase(testtools.TestCase):
    """A double with ``[cors] allowed_origin`` set, over plain requests."""

    def setUp(self):
        super(CORSTestCase, self).setUp()
        self.app = deploy.PlacementApp(conf=deploy.make_conf(
            {'cors': {'allowed_origin': [ORIGIN]}}))
        self.session = requests.Session()
        self.session.mount('http://p', transport.WSGITransport(self.app))

    def options(self, path='/resource_providers', **headers):
        return self.session.options('http://p' + path, headers=headers)

    def get(self, path='/resource_providers', **headers):
        return self.session.get('http://p' + path, headers=headers)

    def test_preflight_needs_no_token(self):
        resp = self.options(**dict(PREFLIGHT, **{
            'Access-Control-Request-Headers':
                'X-Auth-Token, openstack-api-version'}))
        self.assertEqual(200, resp.status_code)
        self.assertEqual(b'', resp.content)
        self.assertNotIn('content-type', resp.headers)
        self.assertEqual('Origin', resp.headers['vary'])
        self.assertIn('x-openstack-request-id', resp.headers)
        self.assertEqual({
            'access-control-allow-origin': ORIGIN,
            'access-control-allow-credentials': 'true',
            'access-control-max-age': '3600',
            'access-control-allow-methods': 'GET',
            'access-control-allow-headers':
                'X-Auth-Token,openstack-api-version'}, _cors_headers(resp))

    def test_preflight_with_a_token_is_not_405(self):
        resp = self.options(**dict(PREFLIGHT, **{'X-Auth-Token': 'admin'}))
        self.assertEqual(200, resp.status_code)
        self.assertEqual(ORIGIN,
                         resp.headers['access-control-allow-origin'])
        self.assertNotIn('allow', resp.headers)

    def test_preflight_refused_is_a_bare_200(self):
        refused = [
            dict(PREFLIGHT, Origin=OTHER),
            {'Access-Control-Request-Method': 'GET'},
            {'Origin': ORIGIN},
            # Placement's defaults leave these out.
            dict(PREFLIGHT, **{'Access-Control-Request-Method': 'HEAD'}),
            dict(PREFLIGHT, **{'Access-Control-Request-Headers': 'X-Foo'}),
        ]
        for headers in refused:
            resp = self.options(**headers)
            self.assertEqual(200, resp.status_code, headers)
            self.assertEqual({}, _cors_headers(resp), headers)
            self.assertNotIn('vary', resp.headers)

    def test_simple_request_from_allowed_origin(self):
        resp = self.get('/', Origin=ORIGIN)
        self.assertEqual(200, resp.status_code)
        self.assertEqual('openstack-api-version,Origin',
                         resp.headers['vary'])
        self.assertEqual({
            'access-control-allow-origin': ORIGIN,
            'access-control-allow-credentials': 'true',
            'access-control-expose-headers': EXPOSED}, _cors_headers(resp))

    def test_401_carries_cors(self):
        resp = self.get(Origin=ORIGIN)
        self.assertEqual(401, resp.status_code)
        self.assertEqual(ORIGIN,
                         resp.headers['access-control-allow-origin'])
        self.assertEqual('Origin', resp.headers['vary'])

    def test_500_carries_cors_and_request_id(self):
        self.useFixture(fixtures.FakeLogger(
            name='shelvefix.placement.deploy', level=logging.ERROR))
        with mock.patch.object(self.app.state, 'get_provider',
                               side_effect=RuntimeError('kaboom')):
            resp = self.get('/resource_providers/%s' % base.RP1,
                            Origin=ORIGIN, **{'X-Auth-Token': 'admin'})
        self.assertEqual(500, resp.status_code)
        self.assertEqual(ORIGIN,
                         resp.headers['access-control-allow-origin'])
        self.assertIn('x-openstack-request-id', resp.headers)

    def test_no_cors_for_other_origins_or_none(self):
        for headers in ({'Origin': OTHER}, {'Origin': ORIGIN + '/'}, {}):
            resp = self.get('/', **headers)
            self.assertEqual(200, resp.status_code)
            self.assertEqual({}, _cors_headers(resp), headers)
            self.assertEqual('openstack-api-version', resp.headers['vary'])


class NoCORSTestCase(testtools.TestCase):
    """Without ``allowed_origin`` OPTIONS is a method like any other."""

    def test_no_cors_without_allowed_origin(self):
        for conf in (None, deploy.make_conf(),
                     deploy.make_conf({'cors': {'max_age': 5}})):
            session = requests.Session()
            session.mount('http://p', transport.WSGITransport(
                deploy.PlacementApp(conf=conf)))
            resp = session.options('http://p/', headers=PREFLIGHT)
            self.assertEqual(405, resp.status_code)
            self.assertEqual('GET', resp.headers['allow'])
            resp = session.options('http://p/resource_providers',
                                   headers=PREFLIGHT)
            self.assertEqual(401, resp.status_code)
            resp = session.get('http://p/', headers={'Origin': ORIGIN})
            self.assertEqual({}, _cors_headers(resp))


class OptionsTestCase(testtools.TestCase):

    def test_placement_defaults_on_this_conf_only(self):
        global_defaults = {opt.name: opt.default for opt in cors.CORS_OPTS}
        conf = deploy.register_opts(cfg.ConfigOpts())
        deploy.register_opts(conf)  # harmless twice
        self.assertEqual(['GET', 'PUT', 'POST', 'DELETE', 'PATCH'],
                         conf.cors.allow_methods)
        self.assertEqual(EXPOSED, ','.join(conf.cors.expose_headers))
        self.assertIn('OpenStack-API-Version', conf.cors.allow_headers)
        self.assertIsNone(conf.cors.allowed_origin)
        self.assertEqual(global_defaults,
                         {opt.name: opt.default for opt in cors.CORS_OPTS})

    def test_make_conf_overrides(self):
        conf = deploy.make_conf({'cors': {'allowed_origin': [ORIGIN],
                                          'allow_methods': ['GET']}})
        self.assertEqual([ORIGIN], conf.cors.allowed_origin)
        self.assertEqual(['GET'], conf.cors.allow_methods)
        self.assertRaises(cfg.NoSuchOptError, deploy.make_conf,
                          {'cors': {'no_such_option': 1}})

    def test_configured_options_are_served(self):
        app = deploy.PlacementApp(conf=deploy.make_conf({'cors': {
            'allowed_origin': ['*'], 'allow_credentials': False,
            'max_age': 60}}))
        session = requests.Session()
        session.mount('http://p', transport.WSGITransport(app))
        resp = session.options('http://p/', headers=dict(PREFLIGHT,
                                                         Origin=OTHER))
        self.assertEqual({'access-control-allow-origin': '*',
                          'access-control-max-age': '60',
                          'access-control-allow-methods': 'GET'},
                         _cors_headers(resp))


class FixtureConfigTestCase(testtools.TestCase):
    """``PlacementFixture(placement_config=...)`` reaches the double."""

    def test_fixture_serves_cors(self):
        placement = self.useFixture(fixture.PlacementFixture(
            placement_config={'cors': {'allowed_origin': [ORIGIN]}}))
        resp = placement.adapter.get('/resource_providers',
                                     headers={'Origin': ORIGIN})
        self.assertEqual(200, resp.status_code)
        self.assertEqual(ORIGIN,
                         resp.headers['access-control-allow-origin'])

    def test_not_with_an_app(self):
        self.assertRaises(ValueError, fixture.PlacementFixture,
                          app=deploy.PlacementApp(),
                          placement_config={'cors': {}})
