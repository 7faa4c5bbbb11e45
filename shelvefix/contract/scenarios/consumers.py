"""The placement semantics table of bug 1798688, one scenario per row.

These are the rows of the bug 1798688 write-up's table of placement
semantics (microversion 1.28 and later): the answers the report client and
the shelve-offload fix are built on.
"""

from shelvefix.contract import registry
from shelvefix.contract.scenarios import common

scenario = registry.scenario


@scenario('allocations_get_unknown',
          'GET /allocations/{c} of an unknown consumer: 200 {} without '
          'consumer fields')
def get_unknown(api):
    consumer = api.uuid('c1')
    for version in ('1.0', '1.12', common.V, '1.38'):
        common.get(api, consumer, version=version)


@scenario('allocations_get_known',
          'GET /allocations/{c} of a known consumer: allocations with '
          'provider generations, consumer generation, project and user')
def get_known(api):
    rp1 = common.host(api, 'rp1')
    rp2 = common.host(api, 'rp2')
    consumer = api.uuid('c1')
    common.put(api, consumer, {rp1: {'VCPU': 2, 'MEMORY_MB': 1024},
                               rp2: {'DISK_GB': 10}})
    common.get(api, consumer)


@scenario('allocations_put_without_generation',
          'PUT without consumer_generation at 1.28: 400 schema error')
def put_without_generation(api):
    rp1 = common.host(api, 'rp1')
    consumer = api.uuid('c1')
    data = common.body({rp1: common.FLAVOR})
    del data['consumer_generation']
    api.request('PUT', '/allocations/%s' % consumer, data,
                version=common.V)
    common.get(api, consumer)


@scenario('allocations_put_unknown_with_generation',
          'PUT for an unknown consumer with a generation: 409 expected '
          'null but got N')
def put_unknown_with_generation(api):
    rp1 = common.host(api, 'rp1')
    consumer = api.uuid('c1')
    common.put(api, consumer, {rp1: common.FLAVOR}, generation=1)
    common.put(api, consumer, {rp1: common.FLAVOR}, generation=0)
    common.get(api, consumer)
    common.usages(api, rp1)


@scenario('allocations_put_wrong_generation',
          'PUT for a known consumer with a stale or future generation: '
          '409 expected X but got Y')
def put_wrong_generation(api):
    rp1 = common.host(api, 'rp1')
    consumer = api.uuid('c1')
    common.put(api, consumer, {rp1: common.FLAVOR})
    for wrong in (0, 2, None):
        common.put(api, consumer, {rp1: {'VCPU': 1}}, generation=wrong)
    common.get(api, consumer)


@scenario('allocations_put_empty_deletes_consumer',
          'PUT of empty allocations: 204, the consumer record is gone and '
          'the next claim sends null')
def put_empty_deletes_consumer(api):
    rp1 = common.host(api, 'rp1')
    consumer = api.uuid('c1')
    common.put(api, consumer, {rp1: common.FLAVOR})
    common.put(api, consumer, {}, generation=1)
    common.get(api, consumer)
    common.put(api, consumer, {rp1: common.FLAVOR}, generation=1,
               note='stale generation of the deleted consumer')
    common.put(api, consumer, {rp1: common.FLAVOR}, generation=None)
    common.get(api, consumer)


@scenario('allocations_put_empty_unknown_consumer',
          'empty PUT for an unknown consumer with null: 204, leaving a '
          'ghost consumer the next null PUT conflicts with')
def put_empty_unknown_consumer(api):
    rp1 = common.host(api, 'rp1')
    consumer = api.uuid('c1')
    common.put(api, consumer, {}, generation=None)
    common.get(api, consumer)
    common.put(api, consumer, {}, generation=None,
               note='empty again: ghost at generation 0')
    common.put(api, consumer, {rp1: common.FLAVOR}, generation=None,
               note='expected 0 but got None')
    common.put(api, consumer, {rp1: common.FLAVOR}, generation=0)
    common.get(api, consumer)


@scenario('allocations_delete_unknown',
          'DELETE /allocations/{c} of an unknown consumer: 404')
def delete_unknown(api):
    consumer = api.uuid('c1')
    common.delete(api, consumer)
    common.delete(api, consumer, version='1.0')
    common.delete(api, 'not-a-uuid')


@scenario('allocations_delete',
          'DELETE /allocations/{c}: 204, consumer gone, a second DELETE '
          '404, no generation moves')
def delete(api):
    rp1 = common.host(api, 'rp1')
    consumer = api.uuid('c1')
    common.put(api, consumer, {rp1: common.FLAVOR})
    common.provider(api, rp1)
    common.delete(api, consumer)
    common.get(api, consumer)
    common.provider(api, rp1)
    common.usages(api, rp1)
    common.delete(api, consumer)
    common.put(api, consumer, {rp1: common.FLAVOR}, generation=None)
    common.get(api, consumer)


@scenario('allocations_put_malformed_json',
          'PUT /allocations/{c} with a body that is not JSON: 400 '
          'Malformed JSON')
def put_malformed_json(api):
    consumer = api.uuid('c1')
    for raw in ('{"allocations": ', '', 'null', '[]', '{"a": 1', '{} x',
                b'\xff\xfe{}', '\ufeff{}', '{"a": NaN}'):
        api.request('PUT', '/allocations/%s' % consumer, raw_body=raw,
                    version=common.V)


@scenario('allocations_unsupported_microversion',
          'a microversion outside 1.0-1.39: 406 with min_version and '
          'max_version')
def unsupported_microversion(api):
    consumer = api.uuid('c1')
    for version in ('1.40', '2.0', '0.9', '1.999'):
        common.get(api, consumer, version=version)
    api.request('PUT', '/allocations/%s' % consumer, common.body({}),
                version='1.40')
    api.request('GET', '/', version='1.40')


@scenario('consumer_uuid_spelling',
          'a consumer uuid in upper case or without dashes names the same '
          'consumer in PUT; GET and DELETE take it as written')
def consumer_uuid_spelling(api):
    rp1 = common.host(api, 'rp1')
    consumer = api.uuid('c1')
    upper, bare = consumer.upper(), consumer.replace('-', '')
    common.put(api, upper, {rp1: {'VCPU': 1}})
    common.get(api, consumer)
    common.get(api, upper)
    common.put(api, bare, {rp1: {'VCPU': 2}}, generation=1)
    common.get(api, consumer)
    common.delete(api, upper)
    common.delete(api, bare)
    api.request('POST', '/allocations',
                {upper: common.body({rp1: {'VCPU': 1}}, generation=2)},
                version=common.V)
    common.get(api, upper)
    common.get(api, consumer)
    common.delete(api, consumer)
    common.put(api, consumer, {rp1.upper(): {'VCPU': 1}},
               note='provider uuid in upper case')
    common.get(api, consumer)
