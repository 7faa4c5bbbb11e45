"""What changes with the microversion, and how the header is parsed.

Below 1.28 there are no consumer generations; below 1.12 allocations are
a list; 1.34 adds ``mappings``, 1.38 ``consumer_type``.
"""

from shelvefix.contract import registry
from shelvefix.contract.scenarios import common

scenario = registry.scenario


def _list_body(rp, resources, **extra):
    data = {'allocations': [{'resource_provider': {'uuid': rp},
                             'resources': resources}]}
    data.update(extra)
    return data


@scenario('microversion_1_0_list_format',
          'PUT in the list format of 1.0 without project: accepted, the '
          'consumer gets the incomplete-consumer project')
def mv_1_0(api):
    rp1 = common.host(api, 'rp1')
    consumer = api.uuid('c1')
    url = '/allocations/%s' % consumer
    api.request('PUT', url, _list_body(rp1, {'VCPU': 1}))
    api.request('PUT', url, _list_body(rp1, {'VCPU': 2}), version='1.7')
    api.request('PUT', url, {'allocations': []}, note='empty list')
    api.request('GET', url)
    response = common.get(api, consumer)
    common.project_usages(api, project_id='00000000-0000-0000-0000-'
                          '000000000000')
    common.put(api, consumer, {rp1: {'VCPU': 3}},
               generation=common.generation_of(response),
               note='completes the consumer')
    common.get(api, consumer)
    api.request('DELETE', url)


@scenario('microversion_1_8_list_format',
          'at 1.8 the list format needs project_id and user_id; no '
          'generation in GET')
def mv_1_8(api):
    rp1 = common.host(api, 'rp1')
    consumer = api.uuid('c1')
    url = '/allocations/%s' % consumer
    api.request('PUT', url, _list_body(rp1, {'VCPU': 1}), version='1.8')
    api.request('PUT', url, _list_body(rp1, {'VCPU': 1}, project_id='p',
                                       user_id='u'), version='1.8')
    api.request('PUT', url, common.body({rp1: {'VCPU': 1}}),
                version='1.8', note='dict format too early')
    api.request('GET', url, version='1.8')
    common.get(api, consumer)


@scenario('microversion_1_12_dict_format',
          'at 1.12 the dict format without generation; GET adds project '
          'and user but no generation')
def mv_1_12(api):
    rp1 = common.host(api, 'rp1')
    consumer = api.uuid('c1')
    url = '/allocations/%s' % consumer
    data = common.body({rp1: {'VCPU': 1}})
    del data['consumer_generation']
    api.request('PUT', url, data, version='1.12')
    api.request('PUT', url, _list_body(rp1, {'VCPU': 1}, project_id='p',
                                       user_id='u'),
                version='1.12', note='list format too late')
    api.request('PUT', url, common.body({rp1: {'VCPU': 2}}),
                version='1.12', note='generation too early')
    for version in ('1.11', '1.12', common.V):
        common.get(api, consumer, version=version)
    common.provider_allocations(api, rp1, version='1.12')
    common.put(api, consumer, {rp1: {'VCPU': 2}}, generation=None,
               note='a consumer from 1.12 has a generation at 1.28')


@scenario('microversion_1_17_1_27_no_generation_check',
          'at 1.17 and 1.27 a PUT without generation overwrites a consumer '
          'whatever its generation')
def mv_1_27(api):
    rp1 = common.host(api, 'rp1')
    consumer = api.uuid('c1')
    url = '/allocations/%s' % consumer
    common.put(api, consumer, {rp1: {'VCPU': 1}})
    for version, vcpu in (('1.17', 2), ('1.27', 3)):
        data = common.body({rp1: {'VCPU': vcpu}})
        del data['consumer_generation']
        api.request('PUT', url, data, version=version)
        common.get(api, consumer, version=version)
    common.get(api, consumer)
    api.request('PUT', url, common.body({}), version='1.27',
                note='generation not allowed before 1.28')
    data = common.body({})
    del data['consumer_generation']
    api.request('PUT', url, data, version='1.27')
    common.get(api, consumer)


@scenario('microversion_1_28',
          'at 1.28 GET shows consumer_generation and provider allocations '
          'carry it; 1.27 does not')
def mv_1_28(api):
    rp1 = common.host(api, 'rp1')
    consumer = api.uuid('c1')
    common.put(api, consumer, {rp1: {'VCPU': 1}})
    for version in ('1.27', '1.28'):
        common.get(api, consumer, version=version)
        common.provider_allocations(api, rp1, version=version)


@scenario('microversion_1_34_mappings',
          'mappings are accepted from 1.34 (and refused before); GET does '
          'not show them')
def mv_1_34(api):
    rp1 = common.host(api, 'rp1')
    consumer = api.uuid('c1')
    common.put(api, consumer, {rp1: {'VCPU': 1}}, version='1.33',
               mappings={'g1': [rp1]})
    common.put(api, consumer, {rp1: {'VCPU': 1}}, version='1.34',
               mappings={'g1': [rp1]})
    common.put(api, consumer, {rp1: {'VCPU': 1}}, generation=1,
               version='1.34', mappings={'': [rp1]})
    common.put(api, consumer, {rp1: {'VCPU': 1}}, generation=1,
               version='1.34', mappings={'g1': ['not-a-uuid']})
    common.get(api, consumer, version='1.34')


@scenario('microversion_1_38_consumer_type',
          'consumer_type is required from 1.38, refused before, shown in '
          'GET (unknown when never set)')
def mv_1_38(api):
    rp1 = common.host(api, 'rp1')
    c1, c2 = api.uuid('c1'), api.uuid('c2')
    common.put(api, c1, {rp1: {'VCPU': 1}}, version='1.37',
               consumer_type='INSTANCE')
    common.put(api, c1, {rp1: {'VCPU': 1}}, version='1.38')
    common.put(api, c1, {rp1: {'VCPU': 1}}, version='1.38',
               consumer_type='instance')
    common.put(api, c1, {rp1: {'VCPU': 1}}, version='1.38',
               consumer_type='INSTANCE')
    common.put(api, c2, {rp1: {'VCPU': 1}})
    common.get(api, c1, version='1.38')
    common.get(api, c2, version='1.38')
    common.put(api, c1, {rp1: {'VCPU': 1}}, generation=1, version='1.38',
               consumer_type='MIGRATION')
    common.get(api, c1, version='1.38')
    common.put(api, c1, {rp1: {'VCPU': 2}}, generation=2)
    common.get(api, c1, version='1.39')


@scenario('microversion_latest_and_1_39',
          'latest is 1.39: the root document, version headers and '
          'allocations at latest and 1.39')
def mv_latest(api):
    rp1 = common.host(api, 'rp1')
    consumer = api.uuid('c1')
    for version in (None, '1.39', 'latest'):
        api.request('GET', '/', version=version)
    common.put(api, consumer, {rp1: {'VCPU': 1}}, version='latest',
               consumer_type='INSTANCE')
    common.get(api, consumer, version='latest')
    common.get(api, consumer, version='1.39')
    common.provider(api, rp1, version='latest')


@scenario('microversion_garbage',
          'an OpenStack-API-Version that is not a version: 400; other '
          'services and odd spellings')
def mv_garbage(api):
    consumer = api.uuid('c1')
    url = '/allocations/%s' % consumer
    for value in ('placement 1.28x', 'placement 1', 'placement 1.2.3',
                  'placement one.two', 'placement LATEST', 'placement',
                  'compute 2.1', 'placement 1.28, compute 2.1',
                  'placement  latest ', 'placement 1.01'):
        api.request('GET', url,
                    headers={'OpenStack-API-Version': value})
