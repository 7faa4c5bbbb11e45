"""Tests for shelvefix.placement.policy."""

import testtools

from shelvefix.backends import fixture
from shelvefix.placement import deploy
from shelvefix.placement import handler
from shelvefix.placement import policy
from shelvefix.placement import wsgi
from shelvefix.tests.unit.placement import base

ADMIN = policy.Credentials('admin', 'admin', ['admin'])
SERVICE = policy.Credentials('nova', 'service', ['service'])
READER = policy.Credentials('bob', 'proj', ['reader'])
NOBODY = policy.Credentials('bob', 'proj', [])


def request(token='bob', **headers):
    environ = {'REQUEST_METHOD': 'GET', 'PATH_INFO': '/usages'}
    if token is not None:
        environ['HTTP_X_AUTH_TOKEN'] = token
    for name, value in headers.items():
        environ['HTTP_' + name.upper()] = value
    return wsgi.Request(environ)


class CredentialsTestCase(testtools.TestCase):

    def test_token_is_user_and_project(self):
        creds = policy.credentials(request('bob:proj'))
        self.assertEqual(('bob', 'proj', [], 'project'), (
            creds.user_id, creds.project_id, creds.roles, creds.scope))
        creds = policy.credentials(request('bob'))
        self.assertEqual(('bob', 'bob'), (creds.user_id, creds.project_id))

    def test_only_the_admin_user_is_admin(self):
        self.assertEqual(['admin'],
                         policy.credentials(request('admin:p')).roles)
        self.assertEqual([], policy.credentials(request('Admin')).roles)
        self.assertEqual([], policy.credentials(request('')).roles)

    def test_roles_header_replaces_them(self):
        self.assertEqual(['reader', 'service'], policy.credentials(
            request('bob', x_roles='reader , service')).roles)
        self.assertEqual([''], policy.credentials(
            request('admin', x_roles='')).roles)

    def test_project_header_and_scopes(self):
        creds = policy.credentials(request('bob:p', x_project_id='q',
                                           x_tenant_id='r'))
        self.assertEqual('q', creds.project_id)
        creds = policy.credentials(request(
            'bob:p', openstack_system_scope='all', x_tenant_id='r'))
        self.assertEqual(('system', 'r'), (creds.scope, creds.project_id))
        creds = policy.credentials(request('bob:p',
                                           openstack_system_scope=''))
        self.assertEqual(('project', 'p'), (creds.scope, creds.project_id))
        self.assertEqual('domain', policy.credentials(
            request('bob', x_domain_id='d')).scope)


class CheckStringTestCase(testtools.TestCase):

    def allows(self, check, creds, target=None):
        enforcer = policy.Enforcer(overrides={'test': check})
        return enforcer.allows('test', creds, target)

    def test_roles_ignore_case(self):
        self.assertTrue(self.allows('role:ADMIN', ADMIN))
        self.assertFalse(self.allows('role:admin', SERVICE))

    def test_operators_and_precedence(self):
        check = 'role:reader or role:service and role:admin'
        self.assertTrue(self.allows(check, READER))
        self.assertFalse(self.allows(check, SERVICE))
        check = '(role:reader or role:service) and not role:admin'
        self.assertTrue(self.allows(check, SERVICE))
        self.assertFalse(self.allows(check, ADMIN))
        self.assertTrue(self.allows('@', NOBODY))
        self.assertFalse(self.allows('!', ADMIN))
        self.assertTrue(self.allows('NOT role:admin', NOBODY))

    def test_target_and_rules(self):
        check = 'project_id:%(project_id)s'
        self.assertTrue(self.allows(check, READER, {'project_id': 'proj'}))
        self.assertFalse(self.allows(check, READER, {'project_id': 'x'}))
        self.assertFalse(self.allows(check, READER, {}))
        # Compared as text, as oslo.policy does: None matches 'None'.
        none = policy.Credentials('bob', 'None', [])
        self.assertTrue(self.allows(check, none, {'project_id': None}))
        self.assertTrue(self.allows('rule:admin_api', ADMIN))
        self.assertFalse(self.allows('rule:no_such_rule', ADMIN))

    def test_malformed(self):
        for check in ('(role:a', 'role:a )', 'role:a or', 'role:a role:b'):
            self.assertRaises(ValueError, policy.Enforcer,
                              overrides={'test': check})


class DefaultsTestCase(testtools.TestCase):

    def setUp(self):
        super(DefaultsTestCase, self).setUp()
        self.enforcer = policy.Enforcer()

    def test_admin_and_service_may_do_anything(self):
        for action in policy.API_RULES:
            for creds in (ADMIN, SERVICE):
                self.assertTrue(self.enforcer.allows(action, creds),
                                (action, creds.roles))

    def test_reader_may_read_its_project_usages(self):
        allowed = [action for action in policy.API_RULES
                   if self.enforcer.allows(action, READER,
                                           {'project_id': 'proj'})]
        self.assertEqual([policy.TOTAL_USAGES], allowed)
        self.assertFalse(self.enforcer.allows(
            policy.TOTAL_USAGES, READER, {'project_id': 'other'}))
        self.assertFalse(any(self.enforcer.allows(action, NOBODY)
                             for action in policy.API_RULES))

    def test_new_defaults_alone_keep_the_admin_from_reshaping(self):
        strict = policy.Enforcer(enforce_new_defaults=True)
        self.assertFalse(strict.allows(policy.RESHAPE, ADMIN))
        self.assertTrue(strict.allows(policy.RESHAPE, SERVICE))
        self.assertTrue(strict.allows(policy.RP_LIST, ADMIN))
        self.assertTrue(self.enforcer.allows(policy.RESHAPE, ADMIN))

    def test_rules_are_project_scoped(self):
        for scope in ({'system_scope': 'all'}, {'domain_id': 'default'}):
            creds = policy.Credentials('admin', None, ['admin'], **scope)
            self.assertFalse(self.enforcer.allows(policy.RP_LIST, creds))
            # A base rule has no scope of its own to enforce.
            self.assertTrue(self.enforcer.allows('admin_api', creds))

    def test_every_route_has_its_policy(self):
        routes = set((template, method)
                     for template, methods in handler.ROUTES
                     for method in methods if template not in ('/', ''))
        self.assertEqual(routes, set(policy.ROUTE_POLICIES))
        for action, _checks in policy.ROUTE_POLICIES.values():
            self.assertIn(action, policy.API_RULES)


class NonAdminTestCase(base.PlacementTestCase):
    """Requests of ``bob:proj`` (setup as admin), over HTTP."""

    def setUp(self):
        super(NonAdminTestCase, self).setUp()
        self.placement = self.useFixture(fixture.PlacementFixture(
            token='bob:proj'))
        self.state = self.placement.state
        self.adapter = self.placement.adapter
        self.make_provider(base.RP1)

    def test_refused_with_placement_detail(self):
        resp = self.get('/resource_providers', version='1.23')
        error = self.assertError(
            resp, 403, code='placement.undefined_code',
            detail='Policy does not allow placement:resource_providers:'
                   'list to be performed.')
        self.assertTrue(error['detail'].startswith(
            'Access was denied to this resource.'))
        self.assertNotIn('vary', resp.headers)
        self.assertEqual('placement 1.23',
                         resp.headers['openstack-api-version'])
        error = self.assertError(self.get('/resource_providers'), 403)
        self.assertNotIn('code', error)

    def test_roles_header(self):
        self.assertStatus(200, self.get('/resource_providers', headers={
            'X-Roles': 'service'}))
        self.assertStatus(403, self.get('/resource_providers', headers={
            'X-Roles': 'reader'}))
        self.assertStatus(200, self.get('/usages?project_id=proj',
                                        version='1.9',
                                        headers={'X-Roles': 'reader'}))

    def test_scope_detail_is_the_policy_name(self):
        resp = self.get('/resource_providers', version='1.23', headers={
            'OpenStack-System-Scope': 'all', 'X-Roles': 'admin'})
        error = self.assertError(resp, 403)
        self.assertEqual('Access was denied to this resource.\n\n '
                         'placement:resource_providers:list  ',
                         error['detail'])

    def test_checks_before_the_policy(self):
        self.assertStatus(406, self.get('/resource_providers', headers={
            'Accept': 'text/html'}))
        url = '/resource_providers/%s/aggregates' % base.RP1
        self.assertError(self.get(url, version='1.0'), 404)
        self.assertError(self.put(url, raw='[]', version='1.1',
                                  headers={'Content-Type': 'text/plain'}),
                         415)
        self.assertError(self.delete('/resource_providers/%s/inventories'
                                     % base.RP1, version='1.4'), 405)
        self.assertError(self.put('/resource_classes/CUSTOM_X', raw='{}',
                                  version='1.6',
                                  headers={'Content-Type': 'text/plain'}),
                         415)
        self.assertError(self.put('/resource_classes/CUSTOM_X', raw='{}',
                                  version='1.7',
                                  headers={'Content-Type': 'text/plain'}),
                         403)

    def test_checks_after_the_policy(self):
        for resp in (self.get('/resource_providers/%s' % base.MISSING),
                     self.get('/resource_providers?colour=blue'),
                     self.post('/resource_providers', {'colour': 'blue'}),
                     self.get('/usages', version='1.9')):
            self.assertError(resp, 403)
        self.assertEqual([base.RP1], list(self.state.providers))

    def test_root_is_open(self):
        self.assertStatus(200, self.get('/'))


class StrictDefaultsTestCase(base.PlacementTestCase):
    """An application given the new defaults alone."""

    def setUp(self):
        super(StrictDefaultsTestCase, self).setUp()
        self.placement = self.useFixture(fixture.PlacementFixture(
            app=deploy.PlacementApp(enforcer=policy.Enforcer(
                enforce_new_defaults=True))))
        self.adapter = self.placement.adapter

    def test_admin_may_not_reshape(self):
        self.assertError(self.post('/reshaper', {}, version='1.30'), 403,
                         detail='Policy does not allow placement:reshaper:'
                                'reshape to be performed.')
        self.assertStatus(200, self.get('/resource_providers'))
