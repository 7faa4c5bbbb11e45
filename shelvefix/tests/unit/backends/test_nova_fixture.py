"""Tests for shelvefix.backends.nova_fixture (nova is not needed)."""

import sys
import types
from unittest import mock

import fixtures
from oslo_config import cfg
from oslo_config import fixture as config_fixture
import testtools

from shelvefix.backends import fixture as fixture_mod
from shelvefix.backends import nova_fixture
from shelvefix.placement import deploy

PROVIDER = {'name': 'cn1', 'uuid': '11111111-1111-1111-1111-111111111111'}


def nova_less(**kwargs):
    """The fixture as a test without nova uses it."""
    kwargs.setdefault('patch_report_client', False)
    return nova_fixture.PlacementFixture(**kwargs)


class FakeResponse(object):

    def __init__(self, content, content_type, status_code=200):
        self.status_code = status_code
        self.content = content
        self.text = content.decode()
        self.headers = {'content-type': content_type}

    def json(self):
        return {'json': self.text}


class NovaFixtureTestCase(testtools.TestCase):

    def config(self):
        """A configuration to start placement on more than once.

        Options can be registered once only (placement's CLI options
        cannot be after the first start parsed it): later starts pass
        ``register_opts=False``, as nova's tests do.
        """
        conf = self.useFixture(config_fixture.Config(cfg.ConfigOpts()))
        nova_fixture.register_opts(conf.conf)
        return conf

    def again(self, conf, **kwargs):
        """Start placement on a configuration of :meth:`config`."""
        return self.useFixture(nova_less(conf_fixture=conf,
                                         register_opts=False, **kwargs))

    def test_setup_serves_the_double(self):
        placement = self.useFixture(nova_less())
        self.assertRegex(placement.endpoint,
                         r'^http://[0-9a-f-]{36}/placement$')
        self.assertIsInstance(placement.app, deploy.PlacementApp)
        self.assertIs(placement.state, placement.app.state)
        self.assertIsInstance(placement.double, fixture_mod.PlacementFixture)
        self.assertEqual(placement.endpoint, placement.double.endpoint)
        self.assertFalse(placement._client.raise_exc)
        conf = placement.conf_fixture.conf
        self.assertEqual('noauth2', conf.api.auth_strategy)
        self.assertEqual('sqlite://', conf.placement_database.connection)
        resp = placement.api.get('/resource_providers')
        self.assertEqual((200, {'resource_providers': []}),
                         (resp.status, resp.body))
        self.assertEqual([('GET', '/resource_providers', None)], [
            (c.method, c.path, c.microversion)
            for c in placement.double.calls])

    def test_api_speaks_microversions_and_returns_errors(self):
        placement = self.useFixture(nova_less())
        api = placement.api
        self.assertEqual(400, api.post('/resource_providers', {},
                                       version='1.20').status)
        resp = api.post('/resource_providers', PROVIDER, version='1.20')
        self.assertEqual((200, 'cn1'), (resp.status, resp.body['name']))
        self.assertEqual('placement 1.20',
                         resp.headers['openstack-api-version'])
        self.assertIn(PROVIDER['uuid'], placement.state.providers)
        resp = api.put('/resource_providers/%s' % PROVIDER['uuid'],
                       {'name': 'cn2'}, version='1.20')
        self.assertEqual('cn2', resp.body['name'])
        resp = api.delete('/resource_providers/%s' % PROVIDER['uuid'])
        self.assertEqual((204, {}), (resp.status, resp.body))
        self.assertEqual(404, api.get('/resource_providers/%s'
                                      % PROVIDER['uuid']).status)

    def test_token(self):
        placement = self.useFixture(nova_less(token='bob:proj'))
        self.assertEqual(403, placement.api.get('/resource_providers').status)

    def test_each_db_is_fresh_even_on_one_configuration(self):
        conf = self.config()
        one = self.again(conf)
        one.api.post('/resource_providers', PROVIDER, version='1.20')
        two = self.again(conf)
        self.assertIsNot(one.state, two.state)
        self.assertEqual({}, two.state.providers)
        self.assertNotEqual(one.endpoint, two.endpoint)

    def test_second_start_on_one_database_sees_the_first(self):
        # nova's test_bug_1679750: the caller sets up the database, then
        # starts placement twice on it.
        conf = self.config()
        with nova_less(conf_fixture=conf, db=False,
                       register_opts=False) as first:
            first.api.post('/resource_providers', PROVIDER, version='1.20')
        with nova_less(conf_fixture=conf, db=False,
                       register_opts=False) as second:
            resp = second.api.get('/resource_providers')
            self.assertEqual([PROVIDER['uuid']], [
                rp['uuid'] for rp in resp.body['resource_providers']])
        other = self.again(self.config(), db=False)
        self.assertEqual({}, other.state.providers)

    def test_databases_are_keyed_on_the_connection_too(self):
        conf = self.config()
        one = self.again(conf, db=False)
        conf.config(connection='sqlite:////tmp/other.db',
                    group='placement_database')
        two = self.again(conf, db=False)
        self.assertIsNot(one.state, two.state)

    def test_a_fresh_database_is_dropped_at_cleanup(self):
        conf = self.config()
        first = nova_less(conf_fixture=conf, register_opts=False)
        with first:
            state = first.state
            again = self.again(conf, db=False)
            self.assertIs(state, again.state)
        later = self.again(conf, db=False)
        self.assertIsNot(state, later.state)

    def test_states_go_with_their_configuration(self):
        databases = nova_fixture._Databases()
        conf = cfg.ConfigOpts()
        state = databases.open(conf, 'sqlite://', fresh=False)
        self.assertIs(state, databases.open(conf, 'sqlite://', fresh=False))
        self.assertEqual(1, len(databases._by_conf))
        del conf
        self.assertEqual({}, databases._by_conf)

    def test_configure_placement_hook_runs_before_the_database(self):
        seen = []

        class Threading(nova_fixture.PlacementFixture):
            def _configure_placement(self, conf_fixture):
                seen.append(conf_fixture)
                conf_fixture.config(connection='sqlite:////tmp/p.db',
                                    group='placement_database')

        placement = self.useFixture(Threading(patch_report_client=False))
        self.assertEqual([placement.conf_fixture], seen)
        self.assertEqual('sqlite:////tmp/p.db', placement.conf_fixture.conf
                         .placement_database.connection)

    def test_tests_can_set_placement_options(self):
        placement = self.useFixture(nova_less())
        placement.conf_fixture.config(
            group='placement',
            allocation_candidates_generation_strategy='breadth-first')
        placement.conf_fixture.config(
            group='workarounds', optimize_for_wide_provider_trees=True)

    def test_policy_runs_with_the_old_defaults_as_with_placement(self):
        from oslo_policy import opts as policy_opts

        def new_defaults():
            conf = cfg.ConfigOpts()
            policy_opts._register(conf)
            conf([], default_config_files=[])
            return conf.oslo_policy.enforce_new_defaults

        before = new_defaults()
        self.addCleanup(policy_opts.set_defaults, cfg.ConfigOpts(),
                        enforce_new_defaults=before)
        policy_opts.set_defaults(cfg.ConfigOpts(), enforce_new_defaults=True)
        self.useFixture(nova_less())
        # Any configuration of the process, nova's among them.
        self.assertFalse(new_defaults())

    def test_options_without_openstack_placement(self):
        conf = cfg.ConfigOpts()
        with mock.patch.dict(sys.modules, {'placement': None,
                                           'placement.conf': None}):
            nova_fixture.register_opts(conf)
            nova_fixture.register_opts(conf)
        self.assertEqual('depth-first', conf.placement
                         .allocation_candidates_generation_strategy)
        self.assertFalse(conf.workarounds.optimize_for_wide_provider_trees)
        self.assertIsNone(conf.placement_database.connection)

    def test_without_intercept(self):
        placement = self.useFixture(nova_less(use_intercept=False))
        self.assertIsNone(placement.endpoint)
        self.assertIsNone(placement.double)
        self.assertIsNotNone(placement.state)

    def test_patches_nova_report_client(self):
        class SchedulerReportClient(object):
            def get(self, url, version=None, global_request_id=None):
                raise AssertionError('not patched')
            post = put = delete = get

        report = types.ModuleType('nova.scheduler.client.report')
        report.SchedulerReportClient = SchedulerReportClient
        self.useFixture(_FakeModules({report.__name__: report}))
        placement = nova_fixture.PlacementFixture()
        with placement:
            client = SchedulerReportClient()
            resp = client.post('/resource_providers', PROVIDER,
                               version='1.20')
            self.assertEqual(200, resp.status_code)
            resp = client.get('/resource_providers/%s' % PROVIDER['uuid'],
                              version='1.14', global_request_id='req-1')
            self.assertEqual('cn1', resp.json()['name'])
            resp = client.put('/resource_providers/%s' % PROVIDER['uuid'],
                              {'name': 'cn2'}, version='1.20')
            self.assertEqual(200, resp.status_code)
            self.assertEqual(204, client.delete(
                '/resource_providers/%s' % PROVIDER['uuid']).status_code)
            # mockable as nova's tests mock it
            with mock.patch.object(placement._client, 'request') as request:
                client.get('/traits')
            request.assert_called_once()
        self.assertRaises(AssertionError, SchedulerReportClient().get, '/')

    def test_use_in_nova(self):
        module = types.ModuleType(nova_fixture.NOVA_FIXTURES)
        module.PlacementFixture = original = object()
        self.useFixture(_FakeModules({module.__name__: module}))
        self.assertIs(original, nova_fixture.use_in_nova())
        self.assertIs(nova_fixture.PlacementFixture, module.PlacementFixture)


class _FakeModules(fixtures.Fixture):
    """Stand-in modules (with their parent packages) in sys.modules."""

    def __init__(self, modules):
        super(_FakeModules, self).__init__()
        self.modules = modules

    def _setUp(self):
        everything = dict(self.modules)
        for name in self.modules:
            parts = name.split('.')
            for end in range(len(parts) - 1, 0, -1):
                parent = '.'.join(parts[:end])
                package = everything.setdefault(parent,
                                                types.ModuleType(parent))
                child = everything['.'.join(parts[:end + 1])]
                setattr(package, parts[end], child)
        patcher = mock.patch.dict(sys.modules, everything)
        patcher.start()
        self.addCleanup(patcher.stop)


class APIResponseTestCase(testtools.TestCase):

    def test_bodies(self):
        resp = nova_fixture.APIResponse(FakeResponse(b'{}',
                                                     'application/json'))
        self.assertEqual({'json': '{}'}, resp.body)
        resp = nova_fixture.APIResponse(FakeResponse(b'<p/>', 'text/html'))
        self.assertEqual('<p/>', resp.body)
        self.assertIn("body:'<p/>'", str(resp))
        resp = nova_fixture.APIResponse(FakeResponse(b'', 'text/plain', 204))
        self.assertEqual((204, {}), (resp.status, resp.body))
        self.assertRaises(ValueError, nova_fixture.APIResponse,
                          FakeResponse(b'x', 'text/plain'))

    def test_nova_class_when_nova_is_there(self):
        client = types.ModuleType('nova.tests.functional.api.client')
        client.APIResponse = object()
        api = types.ModuleType('nova.tests.functional.api')
        api.client = client
        with mock.patch.dict(sys.modules, {api.__name__: api,
                                           client.__name__: client}):
            self.assertIs(client.APIResponse,
                          nova_fixture._response_class())
        self.assertIs(nova_fixture.APIResponse,
                      nova_fixture._response_class())
