"""Usages: per provider and per project, after each kind of write."""

from shelvefix.contract import registry
from shelvefix.contract.scenarios import common

scenario = registry.scenario


def _all_usages(api, providers, project_id=common.PROJECT):
    for rp in providers:
        common.usages(api, rp)
    common.project_usages(api, project_id)


@scenario('usages_after_writes',
          'provider and project usages after a claim, a move, an empty '
          'write and a DELETE')
def usages_after_writes(api):
    src = common.host(api, 'src')
    dst = common.host(api, 'dst')
    c1, c2 = api.uuid('c1'), api.uuid('c2')
    _all_usages(api, (src, dst))
    common.put(api, c1, {src: common.FLAVOR})
    _all_usages(api, (src, dst))
    common.put(api, c2, {src: {'VCPU': 1}, dst: {'DISK_GB': 1}})
    _all_usages(api, (src, dst))
    common.put(api, c1, {dst: common.FLAVOR}, generation=1)
    _all_usages(api, (src, dst))
    common.put(api, c2, {}, generation=1)
    _all_usages(api, (src, dst))
    common.delete(api, c1)
    _all_usages(api, (src, dst))


@scenario('usages_filters',
          'GET /usages by project and user, an unknown project, and a '
          'missing or extra query parameter')
def usages_filters(api):
    rp1 = common.host(api, 'rp1')
    common.put(api, api.uuid('c1'), {rp1: {'VCPU': 1}}, user_id='alice')
    common.put(api, api.uuid('c2'), {rp1: {'VCPU': 2}}, user_id='bob')
    common.put(api, api.uuid('c3'), {rp1: {'VCPU': 4}}, project_id='other',
               user_id='alice')
    common.project_usages(api)
    common.project_usages(api, query='&user_id=alice')
    common.project_usages(api, project_id='other', query='&user_id=bob')
    common.project_usages(api, project_id='nobody')
    common.put(api, api.uuid('c4'), {rp1: {'VCPU': 1}},
               project_id='proj\u00e9 x', user_id='\u00fcser')
    common.project_usages(api, project_id='proj%C3%A9%20x')
    common.project_usages(api, project_id='proj%C3%A9+x',
                          query='&user_id=%C3%BCser')
    common.project_usages(api, project_id='nobody', query='&project_id=proj')
    common.project_usages(api, query='&user_id=')
    api.request('GET', '/usages', version=common.V)
    api.request('GET', '/usages?project_id=proj&foo=1', version=common.V)
    common.project_usages(api, version='1.8')


@scenario('usages_consumer_type',
          'GET /usages grouped by consumer type at 1.38, with the '
          'consumer_type filter (a type, all, unknown, invalid)')
def usages_consumer_type(api):
    rp1 = common.host(api, 'rp1')
    common.put(api, api.uuid('c1'), {rp1: {'VCPU': 1}}, version='1.38',
               consumer_type='INSTANCE')
    common.put(api, api.uuid('c2'), {rp1: {'VCPU': 2}}, version='1.38',
               consumer_type='MIGRATION')
    common.put(api, api.uuid('c3'), {rp1: {'MEMORY_MB': 64}})
    common.put(api, api.uuid('ghost'), {}, version='1.38',
               consumer_type='GHOST', note='leaves a consumer record')
    common.put(api, api.uuid('c4'), {rp1: {'VCPU': 1}}, version='1.38',
               consumer_type='INSTANCE')
    common.put(api, api.uuid('c4'), {}, generation=1, version='1.38',
               consumer_type='INSTANCE', note='emptied: consumer gone')
    for query in ('', '&consumer_type=INSTANCE', '&consumer_type=all',
                  '&consumer_type=unknown', '&consumer_type=MIGRATION',
                  '&consumer_type=instance', '&consumer_type=GHOST'):
        common.project_usages(api, version='1.38', query=query)
    common.project_usages(api, version='1.37',
                          query='&consumer_type=INSTANCE')
    common.project_usages(api, version=common.V)


@scenario('consumer_project_user_change',
          'rewriting a consumer with another project and user moves its '
          'usage to them')
def project_user_change(api):
    rp1 = common.host(api, 'rp1')
    consumer = api.uuid('c1')
    common.put(api, consumer, {rp1: common.FLAVOR})
    common.put(api, consumer, {rp1: common.FLAVOR}, generation=1,
               project_id='proj2', user_id='user2')
    common.get(api, consumer)
    common.project_usages(api)
    common.project_usages(api, project_id='proj2')
    common.project_usages(api, project_id='proj2', query='&user_id=user')
    common.provider_allocations(api, rp1)


@scenario('provider_reads_unknown',
          'usages, allocations and inventories of a provider that does '
          'not exist: 404')
def provider_reads_unknown(api):
    missing = api.uuid('missing')
    common.usages(api, missing)
    common.provider_allocations(api, missing)
    common.provider(api, missing)
    api.request('GET', '/resource_providers/%s/inventories' % missing,
                version=common.V)
    api.request('GET', '/resource_providers/%s/inventories/VCPU' % missing,
                version=common.V)
    common.usages(api, 'not-a-uuid')
