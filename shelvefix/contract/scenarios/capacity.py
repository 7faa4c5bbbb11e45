"""Capacity and inventory constraints an allocation write must respect."""

from shelvefix.contract import registry
from shelvefix.contract.scenarios import common

scenario = registry.scenario


@scenario('capacity_exceeded',
          'asking for more than (total - reserved) * allocation_ratio: 409 '
          'Unable to allocate inventory')
def capacity_exceeded(api):
    rp1 = common.host(api, 'rp1', {
        'VCPU': {'total': 4, 'allocation_ratio': 2.0},
        'MEMORY_MB': {'total': 2048, 'reserved': 512}})
    c1, c2 = api.uuid('c1'), api.uuid('c2')
    common.put(api, c1, {rp1: {'VCPU': 6, 'MEMORY_MB': 1024}})
    common.put(api, c2, {rp1: {'VCPU': 3}}, note='over the ratio')
    common.put(api, c2, {rp1: {'VCPU': 2, 'MEMORY_MB': 1024}},
               note='over the reserved memory')
    common.put(api, c2, {rp1: {'VCPU': 2, 'MEMORY_MB': 512}},
               note='exactly full')
    common.put(api, c1, {rp1: {'VCPU': 7}}, generation=1,
               note='rewrite counts its own usage out')
    common.get(api, c2)
    common.usages(api, rp1)
    rp2 = common.host(api, 'rp2', {'VCPU': {'total': 3,
                                            'allocation_ratio': 1.5},
                                   'MEMORY_MB': {'total': 10,
                                                 'allocation_ratio': 0.7}})
    common.put(api, c1, {rp2: {'VCPU': 4, 'MEMORY_MB': 7}}, generation=1,
               note='fractional capacity 4.5 and 7.000000000000001')
    common.put(api, c2, {rp2: {'VCPU': 1}}, generation=1,
               note='4 + 1 > 4.5')


@scenario('capacity_reserved_total',
          'reserved equal to total: refused before 1.26, accepted from '
          '1.26 and then nothing fits')
def reserved_total(api):
    rp1 = common.host(api, 'rp1', {'VCPU': 4})
    url = '/resource_providers/%s/inventories' % rp1
    data = {'resource_provider_generation': 1,
            'inventories': {'VCPU': {'total': 4, 'reserved': 4}}}
    api.request('PUT', url, data, version='1.25')
    api.request('PUT', url, data, version='1.26')
    common.put(api, api.uuid('c1'), {rp1: {'VCPU': 1}})
    common.usages(api, rp1)


@scenario('capacity_unit_constraints',
          'min_unit, max_unit and step_size violations: 409 Unable to '
          'allocate inventory')
def unit_constraints(api):
    rp1 = common.host(api, 'rp1', {
        'VCPU': {'total': 16, 'min_unit': 2, 'max_unit': 8,
                 'step_size': 2},
        'MEMORY_MB': {'total': 4096, 'min_unit': 256, 'step_size': 256}})
    consumer = api.uuid('c1')
    for amount, note in ((1, 'below min_unit'), (10, 'above max_unit'),
                         (3, 'off step_size'), (4, 'fine')):
        common.put(api, consumer, {rp1: {'VCPU': amount}}, note=note)
    common.put(api, consumer, {rp1: {'VCPU': 4, 'MEMORY_MB': 300}},
               generation=1, note='memory off step_size')
    common.put(api, consumer, {rp1: {'VCPU': 4, 'MEMORY_MB': 128}},
               generation=1, note='memory below min_unit')
    common.get(api, consumer)


@scenario('capacity_unknown_provider',
          'allocating against a provider that does not exist: 400')
def unknown_provider(api):
    rp1 = common.host(api, 'rp1')
    missing = api.uuid('missing')
    consumer = api.uuid('c1')
    common.put(api, consumer, {missing: {'VCPU': 1}})
    common.put(api, consumer, {rp1: {'VCPU': 1}, missing: {'VCPU': 1}},
               generation=None)
    common.get(api, consumer)


@scenario('capacity_missing_inventory',
          'a resource class the provider has no inventory of: 409, and an '
          'unknown class: 400')
def missing_inventory(api):
    rp1 = common.host(api, 'rp1', {'VCPU': 8})
    consumer = api.uuid('c1')
    common.put(api, consumer, {rp1: {'DISK_GB': 1}})
    common.put(api, consumer, {rp1: {'VCPU': 1, 'DISK_GB': 1}})
    common.put(api, consumer, {rp1: {'CUSTOM_GOLD': 1}})
    rp2 = common.host(api, 'rp2', {'DISK_GB': 10})
    common.put(api, consumer, {rp1: {'DISK_GB': 1}, rp2: {'VCPU': 1}},
               note='each provider lacks the other class')
    common.put(api, consumer, {rp2: {'DISK_GB': 1}, rp1: {'DISK_GB': 1}})
    common.get(api, consumer)


@scenario('provider_delete_in_use',
          'deleting a provider that holds allocations: 409 in use; 204 '
          'once they are gone')
def provider_delete_in_use(api):
    rp1 = common.host(api, 'rp1')
    consumer = api.uuid('c1')
    common.put(api, consumer, {rp1: common.FLAVOR})
    for version in ('1.0', common.V):
        api.request('DELETE', '/resource_providers/%s' % rp1,
                    version=version)
    common.delete(api, consumer)
    api.request('DELETE', '/resource_providers/%s' % rp1, version=common.V)
    common.provider(api, rp1)
    common.put(api, consumer, {rp1: common.FLAVOR}, generation=None)
    common.get(api, consumer)


@scenario('capacity_inventory_in_use',
          'removing or shrinking inventory under allocations: 409 for a '
          'class in use, allowed below usage')
def inventory_in_use(api):
    rp1 = common.host(api, 'rp1')
    consumer = api.uuid('c1')
    common.put(api, consumer, {rp1: common.FLAVOR})
    url = '/resource_providers/%s/inventories' % rp1
    api.request('PUT', url, {'resource_provider_generation': 2,
                             'inventories': {'VCPU': {'total': 8}}},
                version=common.V, note='drops classes in use')
    api.request('DELETE', url + '/DISK_GB', version=common.V)
    api.request('PUT', url, {'resource_provider_generation': 2,
                             'inventories': {'VCPU': {'total': 1},
                                             'MEMORY_MB': {'total': 512},
                                             'DISK_GB': {'total': 5}}},
                version=common.V, note='shrinks below usage')
    common.usages(api, rp1)
    common.put(api, consumer, {rp1: common.FLAVOR}, generation=1,
               note='same usage on an overcommitted provider')
    common.put(api, consumer, {rp1: {'VCPU': 3, 'MEMORY_MB': 1024,
                                     'DISK_GB': 10}}, generation=2,
               note='worse usage on an overcommitted provider')
    common.put(api, consumer, {rp1: {'VCPU': 1}}, generation=2)
    common.usages(api, rp1)
