"""``POST /reshaper``: inventory and allocations moved in one write.

Each scenario reads back what a reshape left (generations, inventories,
allocations, usages), so that how placement moves generations and what a
failed reshape leaves behind are part of the contract.
"""

from shelvefix.contract import registry
from shelvefix.contract.scenarios import allocation_candidates
from shelvefix.contract.scenarios import common

scenario = registry.scenario

V = '1.30'


def _look(api, *providers):
    for uuid in providers:
        api.request('GET', '/resource_providers/%s' % uuid, version='1.20')
        api.request('GET', '/resource_providers/%s/inventories' % uuid,
                    version='1.26')
        api.request('GET', '/resource_providers/%s/usages' % uuid,
                    version=V)


_generation = allocation_candidates.generation


def _inventories(generation, inventory):
    return {'resource_provider_generation': generation,
            'inventories': {rc: {'total': total}
                            for rc, total in inventory.items()}}


def _split(api):
    """A compute node with an instance, and an empty NUMA child."""
    cn = api.provider('cn', {'VCPU': 8, 'MEMORY_MB': 2048})
    numa = allocation_candidates.child(api, 'numa0', cn)
    c1 = api.uuid('c1')
    common.put(api, c1, {cn: {'VCPU': 2, 'MEMORY_MB': 512}})
    return cn, numa, c1


@scenario('reshaper_moves_inventory_to_a_child',
          'VCPU moves from a compute node to its NUMA child with the '
          'allocation on it; generations, inventories and usages after')
def reshaper_moves_inventory_to_a_child(api):
    cn, numa, c1 = _split(api)
    c2 = api.uuid('c2')
    api.request('POST', '/reshaper', {
        'inventories': {
            cn: _inventories(2, {'MEMORY_MB': 2048}),
            numa: _inventories(0, {'VCPU': 8})},
        'allocations': {
            c1: common.body({cn: {'MEMORY_MB': 512}, numa: {'VCPU': 2}},
                            generation=1),
            c2: common.body({numa: {'VCPU': 1}}, generation=None)}},
        version=V)
    _look(api, cn, numa)
    api.request('GET', '/allocations/%s' % c1, version=V)
    api.request('GET', '/allocations/%s' % c2, version=V)
    api.request('POST', '/reshaper', {
        'inventories': {numa: _inventories(_generation(api, numa), {})},
        'allocations': {c2: common.body({}, generation=1)}},
        version=V, note='VCPU still allocated to c1: in use')
    _look(api, numa)


@scenario('reshaper_versions',
          'the reshaper at 1.34 (mappings) and 1.38 (consumer types), and '
          'before 1.30')
def reshaper_versions(api):
    cn, numa, c1 = _split(api)
    body = {'inventories': {numa: _inventories(0, {'VCPU': 4})},
            'allocations': {}}
    api.request('POST', '/reshaper', body, version='1.29')
    api.request('POST', '/reshaper', body, version='1.34')
    api.request('POST', '/reshaper', {
        'inventories': {numa: _inventories(_generation(api, numa),
                                           {'VCPU': 4})},
        'allocations': {c1: common.body(
            {cn: {'VCPU': 2, 'MEMORY_MB': 512}}, generation=1,
            consumer_type='INSTANCE')}}, version='1.38')
    api.request('GET', '/allocations/%s' % c1, version='1.38')
    _look(api, cn, numa)


@scenario('reshaper_refusals',
          'unknown providers, stale generations, bad classes, overcommit '
          'and content errors leave everything as it was')
def reshaper_refusals(api):
    cn, numa, c1 = _split(api)
    new = api.uuid('new-consumer')

    def post(inventories, allocations=None, note=None, **kwargs):
        return api.request('POST', '/reshaper', {
            'inventories': inventories, 'allocations': allocations or {}},
            version=V, note=note, **kwargs)

    post({}, note='no inventories')
    api.request('POST', '/reshaper', {'inventories': {}}, version=V)
    post({numa: _inventories(0, {'VCPU': 4})}, content_type='text/plain')
    post({api.uuid('ghost'): _inventories(0, {'VCPU': 4})})
    post({numa: _inventories(7, {'VCPU': 4})}, note='stale generation')
    post({numa: _inventories(0, {'BOGUS': 4})})
    post({numa: _inventories(0, {'VCPU': 4})},
         {c1: common.body({numa: {'VCPU': 2}}, generation=0)},
         note='stale consumer generation')
    post({numa: _inventories(0, {'VCPU': 4})},
         {c1: common.body({numa: {'VCPU': 9}}, generation=1)},
         note='does not fit')
    post({numa: _inventories(0, {'VCPU': 4})},
         {new: common.body({api.uuid('ghost'): {'VCPU': 1}},
                           generation=None)},
         note='allocation on an unknown provider')
    common.put(api, new, {cn: {'VCPU': 1}},
               note='was the consumer kept?')
    post({numa: {'resource_provider_generation': 0,
                 'inventories': {'VCPU': {'total': 4, 'reserved': 5}}}})
    post({cn: _inventories(_generation(api, cn), {'MEMORY_MB': 2048})},
         {new: common.body({}, generation=0)},
         note='VCPU of c1 would lose its inventory')
    _look(api, cn, numa)
    api.request('GET', '/allocations/%s' % c1, version=V)


@scenario('reshaper_stale_generations',
          'a stale provider generation in inventories and a stale consumer '
          'generation in allocations: 409 concurrent_update, nothing moves')
def reshaper_stale_generations(api):
    cn, numa, c1 = _split(api)
    fresh = _inventories(0, {'VCPU': 4})
    moved = common.body({cn: {'MEMORY_MB': 512}, numa: {'VCPU': 2}},
                        generation=1)
    for version in (V, '1.34', '1.38'):
        extra = {'consumer_type': 'INSTANCE'} if version == '1.38' else {}
        for inventories, note in (
                ({cn: _inventories(1, {'MEMORY_MB': 2048}), numa: fresh},
                 'the compute node\'s generation behind'),
                ({cn: _inventories(2, {'MEMORY_MB': 2048}),
                  numa: _inventories(1, {'VCPU': 4})},
                 'the child\'s ahead, after a current one')):
            api.request('POST', '/reshaper', {
                'inventories': inventories,
                'allocations': {c1: dict(moved, **extra)}},
                version=version, note=note)
        for generation in (0, 2, None):
            api.request('POST', '/reshaper', {
                'inventories': {numa: fresh},
                'allocations': {c1: dict(common.body(
                    {numa: {'VCPU': 2}}, generation=generation), **extra)}},
                version=version, note='consumer generation %s, not 1'
                % generation)
        api.request('POST', '/reshaper', {
            'inventories': {numa: fresh},
            'allocations': {api.uuid('nobody'): dict(common.body(
                {numa: {'VCPU': 1}}, generation=3), **extra)}},
            version=version, note='a generation for an unknown consumer')
        api.request('POST', '/reshaper', {
            'inventories': {numa: _inventories(5, {'VCPU': 4})},
            'allocations': {c1: dict(common.body(
                {numa: {'VCPU': 2}}, generation=0), **extra)}},
            version=version, note='both stale: the provider is reported')
    _look(api, cn, numa)
    api.request('GET', '/allocations/%s' % c1, version=V)
    api.request('GET', '/allocations/%s' % api.uuid('nobody'), version=V)
