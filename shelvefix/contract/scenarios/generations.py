"""Consumer and resource provider generations: when they move, when not.

Generations are what the shelve race is about: a client's write is only
accepted with the generation placement holds now.
"""

from shelvefix.contract import registry
from shelvefix.contract.scenarios import common

scenario = registry.scenario


@scenario('consumer_generation_bumps',
          'every successful write bumps the consumer generation by one; '
          'a refused one does not')
def consumer_generation_bumps(api):
    rp1 = common.host(api, 'rp1')
    consumer = api.uuid('c1')
    common.put(api, consumer, {rp1: {'VCPU': 1}}, generation=None)
    common.get(api, consumer)
    common.put(api, consumer, {rp1: {'VCPU': 2}}, generation=1)
    common.put(api, consumer, {rp1: {'VCPU': 2}}, generation=2,
               note='same allocations again')
    common.get(api, consumer)
    common.put(api, consumer, {rp1: {'VCPU': 99}}, generation=3,
               note='refused: capacity')
    common.put(api, consumer, {rp1: {'VCPU': 3, 'MEMORY_MB': 64}},
               generation=3)
    common.get(api, consumer)
    common.provider_allocations(api, rp1)


@scenario('provider_generation_allocation_write',
          'an allocation write bumps the generation of each provider it '
          'names, once per write')
def provider_generation_allocation_write(api):
    rp1 = common.host(api, 'rp1')
    rp2 = common.host(api, 'rp2')
    c1, c2 = api.uuid('c1'), api.uuid('c2')
    common.provider(api, rp1)
    common.put(api, c1, {rp1: {'VCPU': 1, 'MEMORY_MB': 512}})
    common.provider(api, rp1)
    common.provider(api, rp2)
    common.put(api, c2, {rp1: {'VCPU': 1}, rp2: {'DISK_GB': 5}})
    common.provider(api, rp1)
    common.provider(api, rp2)
    common.get(api, c2)


@scenario('provider_generation_move',
          'moving allocations to another provider bumps the new one; the '
          'provider left behind keeps its generation')
def provider_generation_move(api):
    src = common.host(api, 'src')
    dst = common.host(api, 'dst')
    consumer = api.uuid('instance')
    common.put(api, consumer, {src: common.FLAVOR})
    common.put(api, consumer, {src: common.FLAVOR, dst: common.FLAVOR},
               generation=1, note='doubled up')
    common.provider(api, src)
    common.provider(api, dst)
    common.put(api, consumer, {dst: common.FLAVOR}, generation=2,
               note='moved')
    common.provider(api, src)
    common.provider(api, dst)
    common.get(api, consumer)
    common.usages(api, src)
    common.usages(api, dst)


@scenario('provider_generation_empty_write',
          'an empty write bumps the providers whose allocations it '
          'removes; an empty write for nobody bumps nothing')
def provider_generation_empty_write(api):
    rp1 = common.host(api, 'rp1')
    rp2 = common.host(api, 'rp2')
    consumer = api.uuid('c1')
    common.put(api, consumer, {rp1: {'VCPU': 1}, rp2: {'VCPU': 1}})
    common.put(api, consumer, {}, generation=1)
    common.provider(api, rp1)
    common.provider(api, rp2)
    common.put(api, api.uuid('c2'), {}, generation=None,
               note='nothing to remove')
    common.provider(api, rp1)


@scenario('provider_generation_inventory_put',
          'PUT of inventories bumps the provider generation and checks '
          'the one sent')
def provider_generation_inventory_put(api):
    rp1 = common.host(api, 'rp1')
    url = '/resource_providers/%s/inventories' % rp1
    api.request('GET', url, version=common.V)
    api.request('PUT', url, {'resource_provider_generation': 1,
                             'inventories': {'VCPU': {'total': 16}}},
                version=common.V)
    api.request('PUT', url, {'resource_provider_generation': 1,
                             'inventories': {'VCPU': {'total': 32}}},
                version=common.V, note='stale generation')
    api.request('PUT', url + '/VCPU', {'resource_provider_generation': 2,
                                       'total': 24},
                version=common.V)
    common.provider(api, rp1)
    api.request('GET', url, version=common.V)
    api.request('PUT', url, {'resource_provider_generation': 3,
                             'inventories': {'VCPU': {'total': 24}}},
                version=common.V, note='the same inventory again')
    api.request('POST', url, {'resource_class': 'DISK_GB', 'total': 10},
                version=common.V)
    api.request('DELETE', url + '/DISK_GB', version=common.V)
    api.request('DELETE', url, version=common.V)
    common.provider(api, rp1)


@scenario('provider_create_generated_uuid',
          'providers created without a uuid get one from placement (1.0: '
          '201 and Location; 1.20: 200 and the provider)')
def provider_create_generated_uuid(api):
    api.request('POST', '/resource_providers', {'name': 'anon1'})
    response = api.request('POST', '/resource_providers', {'name': 'anon2'},
                           version='1.20')
    generated = response.json()['uuid']
    api.request('POST', '/resource_providers', {'name': 'anon2'},
                version='1.20', note='duplicate name')
    api.request('GET', '/resource_providers?name=anon1', version='1.20')
    api.request('PUT', '/resource_providers/%s/inventories' % generated,
                {'resource_provider_generation': 0,
                 'inventories': {'VCPU': {'total': 2}}}, version=common.V)
    consumer = api.uuid('c1')
    common.put(api, consumer, {generated: {'VCPU': 2}})
    common.get(api, consumer)
    common.provider(api, generated)


@scenario('provider_generation_delete_allocations',
          'DELETE /allocations/{c} moves no provider generation')
def provider_generation_delete_allocations(api):
    rp1 = common.host(api, 'rp1')
    consumer = api.uuid('c1')
    common.put(api, consumer, {rp1: common.FLAVOR})
    common.provider(api, rp1)
    common.delete(api, consumer)
    common.provider(api, rp1)
    common.put(api, consumer, {rp1: common.FLAVOR}, generation=None)
    common.provider(api, rp1)
    common.provider_allocations(api, rp1)
