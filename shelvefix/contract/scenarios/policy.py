"""Policy: what a token that is not an admin's may do.

Placement runs ``noauth2`` here: the token is ``user[:project]``, only the
user ``admin`` is an admin unless an ``X-Roles`` header names the roles.
Its default policy lets an admin or a ``service`` do everything and a
project ``reader`` only read the usages of its own project; everything
else is a 403 whose detail names the policy. Placement asks the policy
inside each handler, after the checks its decorators make (``Accept``,
``Content-Type``, the microversion the route appeared in) and before
anything else (the body, the query string, the database), so the
scenarios also pin which of two refusals a request gets.
"""

from shelvefix.contract import api as api_mod
from shelvefix.contract import registry
from shelvefix.contract.scenarios import common

scenario = registry.scenario

USER = 'bob:proj'
READER = {'X-Roles': 'reader'}
SERVICE = {'X-Roles': 'service'}


def _routes(api):
    """Every protected route and method: (method, path, version, body).

    The version is the lowest the route answers at (the policy applies
    from there on); bodies are valid but never read.
    """
    rp1, c1 = api.uuid('rp1'), api.uuid('c1')
    rp_url = '/resource_providers/%s' % rp1
    allocation = common.body({rp1: {'VCPU': 1}})
    inventories = {'resource_provider_generation': 1,
                   'inventories': {'VCPU': {'total': 1}}}
    return (
        ('GET', '/resource_classes', '1.2', None),
        ('POST', '/resource_classes', '1.2', {'name': 'CUSTOM_X'}),
        ('GET', '/resource_classes/VCPU', '1.2', None),
        ('PUT', '/resource_classes/CUSTOM_X', '1.2', {'name': 'CUSTOM_Y'}),
        ('PUT', '/resource_classes/CUSTOM_X', '1.7', None),
        ('DELETE', '/resource_classes/CUSTOM_X', '1.2', None),
        ('GET', '/resource_providers', '1.0', None),
        ('POST', '/resource_providers', '1.0', {'name': 'rp2'}),
        ('GET', rp_url, '1.0', None),
        ('PUT', rp_url, '1.0', {'name': 'renamed'}),
        ('DELETE', rp_url, '1.0', None),
        ('GET', rp_url + '/inventories', '1.0', None),
        ('POST', rp_url + '/inventories', '1.0',
         {'resource_class': 'DISK_GB', 'total': 1}),
        ('PUT', rp_url + '/inventories', '1.0', inventories),
        ('DELETE', rp_url + '/inventories', '1.5', None),
        ('GET', rp_url + '/inventories/VCPU', '1.0', None),
        ('PUT', rp_url + '/inventories/VCPU', '1.0',
         {'resource_provider_generation': 1, 'total': 2}),
        ('DELETE', rp_url + '/inventories/VCPU', '1.0', None),
        ('GET', rp_url + '/usages', '1.0', None),
        ('GET', rp_url + '/aggregates', '1.1', None),
        ('PUT', rp_url + '/aggregates', '1.1', [api.uuid('agg1')]),
        ('GET', rp_url + '/allocations', '1.0', None),
        ('POST', '/allocations', '1.13', {c1: allocation}),
        ('GET', '/allocations/%s' % c1, '1.0', None),
        ('PUT', '/allocations/%s' % c1, '1.0', allocation),
        ('DELETE', '/allocations/%s' % c1, '1.0', None),
        ('GET', '/allocation_candidates?resources=VCPU:1', '1.10', None),
        ('GET', '/traits', '1.6', None),
        ('GET', '/traits/HW_CPU_X86_AVX', '1.6', None),
        ('PUT', '/traits/CUSTOM_T', '1.6', None),
        ('DELETE', '/traits/CUSTOM_T', '1.6', None),
        ('GET', rp_url + '/traits', '1.6', None),
        ('PUT', rp_url + '/traits', '1.6',
         {'traits': [], 'resource_provider_generation': 1}),
        ('DELETE', rp_url + '/traits', '1.6', None),
        ('GET', '/usages?project_id=other', '1.9', None),
        ('POST', '/reshaper', '1.30', {'inventories': {}, 'allocations': {}}),
    )


def _untouched(api, rp1, c1):
    # What the refused writes would have changed, read as the admin.
    api.request('GET', '/resource_providers', version='1.20')
    api.request('GET', '/resource_providers/%s/inventories' % rp1,
                version='1.20')
    api.request('GET', '/resource_providers/%s/aggregates' % rp1,
                version='1.20')
    common.get(api, c1)


@scenario('policy_every_route',
          'a token without roles gets 403 from every protected route, at '
          'the route\'s first microversion and at the latest; nothing '
          'changes')
def every_route(api):
    rp1 = common.host(api, 'rp1', {'VCPU': 8})
    c1 = api.uuid('c1')
    common.put(api, c1, {rp1: {'VCPU': 1}})
    for method, path, version, body in _routes(api):
        for asked in (version, 'latest'):
            if (method, path, asked) == ('PUT', '/resource_classes/CUSTOM_X',
                                         'latest'):
                continue
            api.request(method, path, body, version=asked, token=USER)
    api.request('GET', '/', version='latest', token=USER,
                note='the root is not protected')
    _untouched(api, rp1, c1)


@scenario('policy_precedence',
          'before the 403: router errors, Accept, Content-Type, the '
          'route\'s microversion; after it: bodies, queries, providers')
def precedence(api):
    rp1 = common.host(api, 'rp1', {'VCPU': 8})
    rp_url = '/resource_providers/%s' % rp1
    missing = api.uuid('missing')
    html = {'Accept': 'text/html'}
    steps = (
        ('GET', '/resource_providers', None, {'OpenStack-API-Version':
                                              'placement 1.x'}),
        ('GET', '/resource_providers', None, {'OpenStack-API-Version':
                                              'placement 1.99'}),
        ('GET', '/nowhere', 'latest', None),
        ('PATCH', '/resource_providers', 'latest', None),
        ('GET', '/resource_providers', 'latest', html),
        ('GET', rp_url, 'latest', html),
        ('GET', rp_url + '/aggregates', '1.0', html),
        ('GET', rp_url + '/aggregates', '1.0', None),
        ('GET', rp_url + '/traits', '1.5', html),
        ('GET', rp_url + '/traits', '1.6', html),
        ('GET', '/traits/HW_CPU_X86_AVX', 'latest', html),
        ('GET', '/resource_classes', '1.1', html),
        ('GET', '/resource_classes/VCPU', '1.2', html),
        ('DELETE', '/resource_classes/VCPU', '1.1', None),
        ('GET', '/usages?project_id=proj', '1.8', html),
        ('GET', '/usages?project_id=proj', '1.9', html),
        ('GET', '/allocation_candidates', '1.9', html),
        ('GET', '/allocation_candidates', '1.10', html),
        ('DELETE', rp_url + '/inventories', '1.4', None),
        ('POST', '/allocations', '1.12', None),
        ('GET', '/resource_providers/%s' % missing, 'latest', None),
        ('DELETE', '/resource_providers/%s' % missing, 'latest', None),
        ('GET', '/resource_providers?colour=blue', 'latest', None),
        ('GET', '/resource_providers?member_of=x', 'latest', None),
        ('GET', '/allocation_candidates?colour=blue', 'latest', None),
        ('GET', '/usages', 'latest', None),
        ('GET', '/traits?name=x', 'latest', None),
    )
    for method, path, version, headers in steps:
        api.request(method, path, version=version, headers=headers,
                    token=USER)
    for method, path, version in (
            ('POST', '/resource_providers', 'latest'),
            ('PUT', rp_url, 'latest'),
            ('PUT', rp_url + '/aggregates', '1.0'),
            ('PUT', rp_url + '/aggregates', '1.1'),
            ('PUT', rp_url + '/traits', '1.5'),
            ('PUT', rp_url + '/traits', '1.6'),
            ('PUT', '/resource_classes/CUSTOM_X', '1.6'),
            ('PUT', '/resource_classes/CUSTOM_X', '1.7'),
            ('PUT', '/traits/CUSTOM_T', '1.6'),
            ('POST', '/allocations', '1.12'),
            ('POST', '/allocations', '1.13'),
            ('PUT', '/allocations/%s' % api.uuid('c1'), 'latest'),
            ('DELETE', '/allocations/%s' % api.uuid('c1'), 'latest'),
            ('POST', '/reshaper', '1.29'),
            ('POST', '/reshaper', '1.30')):
        api.request(method, path, {'x': 1}, version=version,
                    content_type='text/plain', token=USER,
                    note='text/plain')
    for method, path in (('POST', '/resource_providers'),
                         ('PUT', rp_url + '/inventories'),
                         ('POST', '/reshaper')):
        api.request(method, path, raw_body='{', version='latest',
                    token=USER, note='malformed JSON')
        api.request(method, path, {'colour': 'blue'}, version='latest',
                    token=USER, note='schema error')
    api.request('PUT', rp_url, raw_body='{}', version='latest',
                content_type=None, token=USER, note='no Content-Type')


@scenario('policy_roles',
          'X-Roles: service and admin may do anything, reader and member '
          'nothing (see usages); the header replaces the admin\'s role')
def roles(api):
    rp1 = common.host(api, 'rp1', {'VCPU': 8})
    common.put(api, api.uuid('c1'), {rp1: {'VCPU': 1}})
    rp_url = '/resource_providers/%s' % rp1
    for token, roles, note in ((USER, 'service', None),
                               (USER, 'admin', None),
                               (USER, 'ADMIN', 'roles ignore case'),
                               (USER, 'reader , service', None),
                               (USER, 'reader', None),
                               (USER, 'member', None),
                               ('admin', 'reader', 'roles as given'),
                               ('admin', '', 'no role at all')):
        note = 'X-Roles %r%s' % (roles, ': %s' % note if note else '')
        headers = {'X-Roles': roles}
        api.request('GET', '/resource_providers', version='latest',
                    headers=headers, token=token, note=note)
        api.request('GET', rp_url + '/usages', version='latest',
                    headers=headers, token=token, note=note)
        api.request('GET', '/usages?project_id=proj', version='latest',
                    headers=headers, token=token, note=note)
    agg1 = api.uuid('agg1')
    api.request('PUT', rp_url + '/aggregates', [agg1], version='1.1',
                headers=SERVICE, token=USER)
    api.request('POST', '/resource_providers',
                {'name': 'rp2', 'uuid': api.uuid('rp2')}, version='latest',
                headers=SERVICE, token='nova:service')
    api.request('POST', '/reshaper', {'colour': 'blue'}, version='latest',
                headers=SERVICE, token=USER, note='the service reshapes')
    api.request('POST', '/reshaper', {'colour': 'blue'}, version='latest',
                note='the admin too (deprecated rule in force)')
    api.request('GET', '/resource_providers', version='latest')
    for token in ('admin:proj', 'Admin', 'administrator', ''):
        api.request('GET', '/resource_providers', version='latest',
                    token=token)
    api.request('GET', '/resource_providers', version='latest',
                token=api_mod.NO_TOKEN)
    api.request('GET', '/', version='latest', token=api_mod.NO_TOKEN)


@scenario('policy_reader_usages',
          'GET /usages for a reader: its own project (the token\'s, or '
          'X-Project-Id), not another; the 403 comes before the query '
          'string is validated')
def reader_usages(api):
    rp1 = common.host(api, 'rp1', {'VCPU': 8})
    common.put(api, api.uuid('c1'), {rp1: {'VCPU': 1}})
    common.put(api, api.uuid('c2'), {rp1: {'VCPU': 2}}, project_id='bob')
    for token, query, headers in (
            (USER, 'project_id=proj', READER),
            (USER, 'project_id=proj&user_id=user', READER),
            (USER, 'project_id=bob', READER),
            ('bob', 'project_id=bob', READER),
            ('bob', 'project_id=proj', READER),
            (USER, 'project_id=bob', dict(READER, **{'X-Project-Id':
                                                     'bob'})),
            (USER, 'project_id=proj', dict(READER, **{'X-Project-Id':
                                                      'bob'})),
            (USER, 'project_id=proj', dict(READER, **{'X-Tenant-Id':
                                                      'bob'})),
            (USER, 'project_id=other&project_id=proj', READER),
            (USER, 'project_id=proj&project_id=other', READER),
            (USER, 'project_id=proj&colour=blue', READER),
            (USER, 'project_id=bob&colour=blue', READER),
            (USER, '', READER),
            ('bob:None', '', READER),
            (USER, 'project_id=proj', None)):
        api.request('GET', '/usages?%s' % query, version='1.9',
                    headers=headers, token=token,
                    note=', '.join('%s %s' % item
                                   for item in (headers or {}).items()))
    api.request('GET', '/usages?project_id=proj', version='1.8',
                headers=READER, token=USER)
    api.request('GET', '/usages?project_id=proj', version='latest',
                headers=READER, token=USER)
    api.request('GET', '/usages?project_id=proj&consumer_type=all',
                version='latest', headers=READER, token=USER)


@scenario('policy_scope',
          'every rule is project scoped: a system or domain scoped token '
          'is refused whatever its roles, with only the policy name as '
          'detail')
def scope(api):
    rp1 = common.host(api, 'rp1', {'VCPU': 8})
    for token, headers in (
            ('admin', {'OpenStack-System-Scope': 'all'}),
            ('admin', {'OpenStack-System-Scope': ''}),
            ('admin', {'X-Domain-Id': 'default'}),
            ('admin', {'X-Domain-Id': ''}),
            (USER, {'OpenStack-System-Scope': 'all',
                    'X-Roles': 'service'}),
            (USER, {'OpenStack-System-Scope': 'all'}),
            (USER, {'X-Domain-Id': 'default', 'X-Roles': 'reader'})):
        note = ', '.join('%s %s' % item for item in headers.items())
        api.request('GET', '/resource_providers', version='latest',
                    headers=headers, token=token, note=note)
        api.request('PUT', '/resource_providers/%s/aggregates' % rp1,
                    [api.uuid('agg1')], version='1.1', headers=headers,
                    token=token, note=note)
        api.request('GET', '/usages?project_id=proj', version='latest',
                    headers=headers, token=token, note=note)
    api.request('GET', '/resource_providers/%s/aggregates' % rp1,
                version='1.0', headers={'OpenStack-System-Scope': 'all'},
                note='the microversion first')
