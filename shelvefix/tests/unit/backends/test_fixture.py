"""Tests for shelvefix.backends.fixture."""

import sys
import types
from unittest import mock

import testtools

from shelvefix import backends
from shelvefix.backends import fixture
from shelvefix.backends import real
from shelvefix.backends import transport
from shelvefix.placement import deploy
from shelvefix.scheduler import client as client_pkg


def echo_app(environ, start_response):
    start_response('200 OK', [('Content-Type', 'text/plain')])
    return [('%s %s %s' % (environ.get('HTTP_X_AUTH_TOKEN'),
                           environ['SCRIPT_NAME'],
                           environ['PATH_INFO'])).encode()]


class FixtureTestCase(testtools.TestCase):

    def test_setup_builds_everything(self):
        placement = self.useFixture(fixture.PlacementFixture())
        self.assertIsInstance(placement.app, deploy.PlacementApp)
        self.assertIs(placement.app.state, placement.state)
        self.assertRegex(placement.endpoint,
                         r'^http://placement-[0-9a-f]{12}\.shelvefix\.test$')
        self.assertIsInstance(placement.transport, transport.WSGITransport)
        self.assertIs(placement.transport.calls, placement.calls)
        self.assertEqual('placement', placement.adapter.service_type)
        self.assertEqual(placement.endpoint,
                         placement.adapter.endpoint_override)
        resp = placement.adapter.get('/resource_providers/x')
        self.assertEqual(404, resp.status_code)  # no raise_exc

    def test_the_environment_means_nothing_in_process(self):
        # A dead proxy and a CA bundle that does not exist: requests would
        # use both for a real connection, and the in-process transport
        # ignores both, so the session need not look them up.
        env = {'http_proxy': 'http://127.0.0.1:9', 'HTTP_PROXY':
               'http://127.0.0.1:9', 'no_proxy': '', 'NO_PROXY': '',
               'REQUESTS_CA_BUNDLE': '/nonexistent/ca.pem'}
        answers = []
        with mock.patch.dict('os.environ', env):
            for trust_env in (True, False):
                placement = self.useFixture(fixture.PlacementFixture(
                    app=echo_app, token='tok'))
                if trust_env:
                    placement.session.session.trust_env = True
                resp = placement.adapter.get('/resource_providers')
                answers.append((resp.status_code, resp.text))
        self.assertEqual([(200, 'tok  /resource_providers')] * 2, answers)
        self.assertFalse(self.useFixture(
            fixture.PlacementFixture()).session.session.trust_env)

    def test_fixtures_are_independent(self):
        one = self.useFixture(fixture.PlacementFixture())
        two = self.useFixture(fixture.PlacementFixture())
        self.assertNotEqual(one.endpoint, two.endpoint)
        one.create_provider('rp')
        two.create_provider('rp')
        self.assertEqual(1, len(one.state.providers))
        self.assertEqual(1, len(one.calls))

    def test_custom_app_endpoint_and_token(self):
        placement = self.useFixture(fixture.PlacementFixture(
            app=echo_app, endpoint='http://p.test/placement/',
            token='secret'))
        self.assertIsNone(placement.state)
        self.assertEqual('http://p.test/placement', placement.endpoint)
        resp = placement.adapter.get('/usages')
        self.assertEqual('secret /placement /usages', resp.text)
        self.assertEqual('/usages', placement.calls[0].path)

    def test_non_admin_token_setup_as_admin(self):
        placement = self.useFixture(fixture.PlacementFixture(
            token='bob:proj'))
        uuid = placement.create_provider('rp', inventory={'VCPU': 1})
        self.assertEqual(2, placement.set_inventory(uuid, {'VCPU': 2}))
        resp = placement.adapter.get('/resource_providers/%s' % uuid)
        self.assertEqual(403, resp.status_code)
        self.assertEqual([200, 200, 200, 200, 403],
                         [call.status for call in placement.calls])
        self.assertIsNot(placement.adapter, placement.admin_adapter)
        admin = self.useFixture(fixture.PlacementFixture())
        self.assertIs(admin.adapter, admin.admin_adapter)

    def test_shared_state(self):
        app = deploy.PlacementApp()
        placement = self.useFixture(fixture.PlacementFixture(app=app))
        self.assertIs(app.state, placement.state)

    def test_cleanup_forgets(self):
        placement = fixture.PlacementFixture()
        placement.setUp()
        session = placement.session.session
        with mock.patch.object(session, 'close', autospec=True) as close:
            placement.cleanUp()
        close.assert_called_once_with()
        self.assertIsNone(placement.adapter)
        self.assertIsNone(placement.transport)
        self.assertIsNone(placement.state)

    def test_faults_and_log_passthroughs(self):
        placement = self.useFixture(fixture.PlacementFixture())
        fault = placement.inject_fault(method='GET', status=503)
        self.assertEqual(503, placement.adapter.get('/').status_code)
        self.assertEqual(1, fault.fired)
        placement.inject_fault(status=500)
        placement.clear_faults()
        self.assertEqual(200, placement.adapter.get('/').status_code)
        self.assertEqual([503, 200], [c.status for c in placement.calls])
        self.assertEqual(2, len(placement.calls_for('GET', '^/$')))
        placement.reset_calls()
        self.assertEqual([], placement.calls)

    def test_client_is_built_once_with_the_adapter(self):
        # A stand-in report module: this test is about the wiring only.
        report = types.ModuleType('shelvefix.scheduler.client.report')
        report.SchedulerReportClient = mock.Mock()
        for patcher in (
                mock.patch.dict(sys.modules, {report.__name__: report}),
                mock.patch.object(client_pkg, 'report', report,
                                  create=True)):
            patcher.start()
            self.addCleanup(patcher.stop)
        placement = self.useFixture(fixture.PlacementFixture())
        client = placement.client
        self.assertIs(client, placement.client)
        report.SchedulerReportClient.assert_called_once_with(
            adapter=placement.adapter, conf=None)


class HelpersTestCase(testtools.TestCase):

    def setUp(self):
        super(HelpersTestCase, self).setUp()
        self.placement = self.useFixture(fixture.PlacementFixture())

    def test_create_provider_with_inventory(self):
        uuid = self.placement.create_provider(
            'cn1', inventory={'VCPU': 8, 'MEMORY_MB': {
                'total': 4096, 'reserved': 512, 'allocation_ratio': 1.5}})
        provider = self.placement.state.providers[uuid]
        self.assertEqual(('cn1', 1), (provider.name, provider.generation))
        self.assertEqual(8, provider.inventories['VCPU'].total)
        self.assertEqual((512, 1.5), (
            provider.inventories['MEMORY_MB'].reserved,
            provider.inventories['MEMORY_MB'].allocation_ratio))
        # Through HTTP, as a client would.
        self.assertEqual(['POST', 'PUT'],
                         [c.method for c in self.placement.calls])

    def test_create_provider_given_uuid_without_inventory(self):
        uuid = '11111111-1111-1111-1111-111111111111'
        self.assertEqual(uuid, self.placement.create_provider('x', uuid))
        self.assertEqual(0, self.placement.state.providers[uuid].generation)

    def test_refusal_raises(self):
        self.placement.create_provider('cn1')
        exc = self.assertRaises(fixture.PlacementFixtureError,
                                self.placement.create_provider, 'cn1')
        self.assertEqual(409, exc.response.status_code)
        self.assertIn("Creating provider 'cn1' failed: placement answered "
                      "409", str(exc))
        uuid = self.placement.create_provider('cn2')
        exc = self.assertRaises(fixture.PlacementFixtureError,
                                self.placement.create_provider, 'cn3',
                                inventory={'FOO': 1})
        self.assertIn('No such resource class FOO', str(exc))
        self.assertRaises(fixture.PlacementFixtureError,
                          self.placement.set_inventory,
                          '99999999-9999-9999-9999-999999999999', {})
        self.assertEqual(0, self.placement.state.providers[uuid].generation)

    def test_set_inventory_reads_generation(self):
        uuid = self.placement.create_provider('cn1', inventory={'VCPU': 1})
        self.assertEqual(2, self.placement.set_inventory(uuid,
                                                         {'VCPU': 2}))
        self.assertEqual(2, self.placement.state.providers[uuid]
                         .inventories['VCPU'].total)


class PlacementConfigTestCase(testtools.TestCase):
    """``make_backend(..., placement_config=...)``: placement's own options."""

    CORS = {'cors': {'allowed_origin': ['http://valid.example.com']}}

    def test_double_is_built_with_it(self):
        placement = self.useFixture(backends.make_backend(
            'double', placement_config=self.CORS))
        resp = placement.adapter.get('/', headers={
            'Origin': 'http://valid.example.com'})
        self.assertEqual('http://valid.example.com',
                         resp.headers['access-control-allow-origin'])

    def test_factories_get_it_only_when_there_is_one(self):
        made = []

        def factory(conf, **kwargs):
            made.append(kwargs)
        with mock.patch.dict(backends.FACTORIES, {'mine': factory}):
            backends.make_backend('mine')
            backends.make_backend('mine', placement_config=self.CORS)
        self.assertEqual([{}, {'placement_config': self.CORS}], made)

    def test_remote_cannot_take_it(self):
        exc = self.assertRaises(backends.BackendUnavailable,
                                backends.make_backend, 'remote',
                                placement_config=self.CORS)
        self.assertIn('[cors]', str(exc))

    def test_real_placement_middleware_defaults(self):
        if not real.available():
            self.skipTest(real.INSTALL_HINT)
        from oslo_middleware import cors
        before = [opt.default for opt in cors.CORS_OPTS]
        defaults = real._middleware_defaults()['cors']
        self.assertEqual(deploy.CORS_DEFAULTS, defaults)
        self.assertEqual(before, [opt.default for opt in cors.CORS_OPTS])
