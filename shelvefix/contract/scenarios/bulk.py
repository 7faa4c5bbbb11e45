"""``POST /allocations``: several consumers written in one transaction.

Nova moves allocations between an instance and a migration record with
it; the write is all or nothing.
"""

from shelvefix.contract import registry
from shelvefix.contract.scenarios import common

scenario = registry.scenario


def _post(api, writes, version=common.V, note=None):
    # writes: {consumer: (allocations, generation)}
    return api.request(
        'POST', '/allocations',
        {consumer: common.body(allocations, generation)
         for consumer, (allocations, generation) in writes.items()},
        version=version, note=note)


def _state(api, consumers, providers):
    for consumer in consumers:
        common.get(api, consumer)
    for rp in providers:
        common.provider(api, rp)
        common.usages(api, rp)


@scenario('post_allocations_success',
          'POST /allocations for two new consumers: 204, both written, '
          'each provider bumped once')
def post_success(api):
    rp1 = common.host(api, 'rp1')
    rp2 = common.host(api, 'rp2')
    c1, c2 = api.uuid('c1'), api.uuid('c2')
    _post(api, {c1: ({rp1: common.FLAVOR}, None),
                c2: ({rp1: {'VCPU': 1}, rp2: {'DISK_GB': 20}}, None)})
    _state(api, (c1, c2), (rp1, rp2))
    common.project_usages(api)


@scenario('post_allocations_generation_conflict',
          'POST /allocations where one consumer has a stale generation: '
          '409 and nothing is written')
def post_generation_conflict(api):
    rp1 = common.host(api, 'rp1')
    rp2 = common.host(api, 'rp2')
    c1, c2, c3 = api.uuid('c1'), api.uuid('c2'), api.uuid('c3')
    _post(api, {c1: ({rp1: common.FLAVOR}, None)})
    _post(api, {c3: ({rp2: common.FLAVOR}, None),
                c1: ({rp2: common.FLAVOR}, 7)},
          note='stale generation for c1')
    _post(api, {c3: ({rp2: common.FLAVOR}, 3),
                c1: ({rp2: common.FLAVOR}, 1)},
          note='generation for an unknown c3')
    _post(api, {c2: ({rp2: {'VCPU': 1}}, None),
                c1: ({rp1: {'VCPU': 99}}, 1)},
          note='capacity exceeded for c1')
    _state(api, (c1, c2, c3), (rp1, rp2))


@scenario('post_allocations_empty_deletes',
          'POST /allocations moving allocations from an instance to a '
          'migration: the emptied consumer is deleted')
def post_empty_deletes(api):
    src = common.host(api, 'src')
    dst = common.host(api, 'dst')
    instance, migration = api.uuid('instance'), api.uuid('migration')
    common.put(api, instance, {src: common.FLAVOR})
    _post(api, {migration: ({src: common.FLAVOR}, None),
                instance: ({dst: common.FLAVOR}, 1)},
          note='move: the migration holds the source')
    _state(api, (instance, migration), (src, dst))
    _post(api, {migration: ({}, 1), instance: ({dst: common.FLAVOR}, 2)},
          note='confirm: the migration is emptied')
    _state(api, (instance, migration), (src, dst))
    _post(api, {migration: ({}, None)}, note='empty for a deleted consumer')
    common.get(api, migration)
    common.put(api, migration, {src: {'VCPU': 1}}, generation=None,
               note='after an empty POST: a ghost consumer?')


@scenario('post_allocations_capacity_combined',
          'POST /allocations where each consumer fits but together they '
          'exceed a provider: 409, nothing written')
def post_capacity_combined(api):
    rp1 = common.host(api, 'rp1', {'VCPU': 4, 'MEMORY_MB': 1024})
    c1, c2 = api.uuid('c1'), api.uuid('c2')
    _post(api, {c1: ({rp1: {'VCPU': 3}}, None),
                c2: ({rp1: {'VCPU': 2}}, None)})
    _post(api, {c1: ({rp1: {'VCPU': 2}}, None),
                c2: ({rp1: {'VCPU': 2, 'MEMORY_MB': 2048}}, None)})
    _state(api, (c1, c2), (rp1,))
    _post(api, {c1: ({rp1: {'VCPU': 2}}, None),
                c2: ({rp1: {'VCPU': 2}}, None)})
    _post(api, {c1: ({rp1: {'VCPU': 3}}, 1), c2: ({}, 1)},
          note='one grows as the other leaves')
    _state(api, (c1, c2), (rp1,))


@scenario('post_allocations_consumer_type',
          'POST /allocations with consumer_type: required at 1.38, refused '
          'at 1.37, shown by GET and /usages')
def post_consumer_type(api):
    rp1 = common.host(api, 'rp1')
    c1, c2 = api.uuid('c1'), api.uuid('c2')
    writes = {c1: common.body({rp1: {'VCPU': 1}}, consumer_type='INSTANCE'),
              c2: common.body({rp1: {'VCPU': 2}},
                              consumer_type='MIGRATION')}
    api.request('POST', '/allocations', writes, version='1.37')
    api.request('POST', '/allocations',
                {c1: common.body({rp1: {'VCPU': 1}})}, version='1.38')
    api.request('POST', '/allocations', writes, version='1.38')
    common.get(api, c1, version='1.38')
    common.get(api, c2, version='1.38')
    common.project_usages(api, version='1.38')


@scenario('post_allocations_validation',
          'POST /allocations errors: empty body, malformed consumer uuid, '
          'unknown provider, before 1.13')
def post_validation(api):
    rp1 = common.host(api, 'rp1')
    c1 = api.uuid('c1')
    api.request('POST', '/allocations', {}, version=common.V)
    api.request('POST', '/allocations',
                {'not-a-uuid': common.body({rp1: {'VCPU': 1}})},
                version=common.V)
    _post(api, {c1: ({api.uuid('missing'): {'VCPU': 1}}, None)})
    _post(api, {c1: ({rp1: {'VCPU': 1}}, None)}, version='1.12')
    api.request('POST', '/allocations', raw_body='{', version=common.V)
    common.get(api, c1)
