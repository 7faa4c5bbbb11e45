"""Requests placement refuses before any allocation logic runs.

JSON schema errors (400), malformed JSON (400), the wrong content type
(415), unknown routes (404) and methods (405). The details of these
errors are long generated texts; the suite compares them word for word.
"""

from shelvefix.contract import registry
from shelvefix.contract.scenarios import common

scenario = registry.scenario


def _put(api, data, version=common.V, note=None):
    return api.request('PUT', '/allocations/%s' % api.uuid('c1'), data,
                       version=version, note=note)


@scenario('schema_missing_field',
          'PUT /allocations/{c} without project_id, user_id or '
          'allocations: 400')
def missing_field(api):
    rp1 = common.host(api, 'rp1')
    for field in ('project_id', 'user_id', 'allocations'):
        data = common.body({rp1: {'VCPU': 1}})
        del data[field]
        _put(api, data, note='without %s' % field)
    data = common.body({rp1: {'VCPU': 1}})
    del data['allocations'][rp1]['resources']
    _put(api, data, note='without resources')


@scenario('schema_bad_resource_class',
          'a malformed resource class: 400 schema error; a well-formed '
          'unknown one: 400 too')
def bad_resource_class(api):
    rp1 = common.host(api, 'rp1')
    for name in ('vcpu', 'VCPU!', '', 'CUSTOM_NOT_THERE', 'A' * 256):
        _put(api, common.body({rp1: {name: 1}}), note=name[:20])


@scenario('schema_bad_amount',
          'a negative, zero, fractional or string amount: 400')
def bad_amount(api):
    rp1 = common.host(api, 'rp1')
    for amount in (-1, 0, 1.5, '1', None, True, 2 ** 40):
        _put(api, common.body({rp1: {'VCPU': amount}}), note=repr(amount))
    for amount in ('NaN', 'Infinity', '1e2', '2.0'):
        raw = ('{"allocations": {"%s": {"resources": {"VCPU": %s}}}, '
               '"project_id": "p", "user_id": "u", '
               '"consumer_generation": null}' % (rp1, amount))
        api.request('PUT', '/allocations/%s' % api.uuid('c1'),
                    raw_body=raw, version=common.V, note=amount)


@scenario('schema_extra_property',
          'an unexpected member at the top, in a provider entry or a '
          'generation of the wrong type: 400')
def extra_property(api):
    rp1 = common.host(api, 'rp1')
    _put(api, common.body({rp1: {'VCPU': 1}}, colour='blue'))
    data = common.body({rp1: {'VCPU': 1}})
    data['allocations'][rp1]['generation'] = 0
    _put(api, data, note='provider generation is ignored')
    data = common.body({rp1: {'VCPU': 1}})
    data['allocations'][rp1]['colour'] = 'blue'
    _put(api, data)
    _put(api, common.body({rp1: {'VCPU': 1}}, generation='1'))
    _put(api, common.body({rp1: {'VCPU': 1}}, generation=True))
    _put(api, common.body({rp1: {'VCPU': 1}}, generation=-1))
    _put(api, common.body({'not-a-uuid': {'VCPU': 1}}))
    _put(api, common.body({rp1: {'VCPU': 1}}, project_id=''))
    _put(api, common.body({rp1: {'VCPU': 1}}, user_id='u' * 256))


@scenario('malformed_json_everywhere',
          'a body that is not JSON on every write route: 400 Malformed '
          'JSON')
def malformed_json(api):
    rp1 = common.host(api, 'rp1')
    for method, path in (
            ('POST', '/allocations'),
            ('PUT', '/allocations/%s' % api.uuid('c1')),
            ('POST', '/resource_providers'),
            ('PUT', '/resource_providers/%s' % rp1),
            ('PUT', '/resource_providers/%s/inventories' % rp1),
            ('POST', '/resource_providers/%s/inventories' % rp1),
            ('PUT', '/resource_providers/%s/inventories/VCPU' % rp1)):
        api.request(method, path, raw_body='{"oops": ', version=common.V)


@scenario('unsupported_content_type',
          'a write whose body is not declared application/json: 415; a '
          'body without a type: 400')
def unsupported_content_type(api):
    consumer = api.uuid('c1')
    url = '/allocations/%s' % consumer
    data = common.body({})
    for content_type in ('text/plain', 'application/xml',
                         'application/json-patch+json',
                         'application/json; charset=UTF-8',
                         'Application/JSON',
                         'application/json;', 'application/json,text/plain'):
        api.request('PUT', url, data, content_type=content_type,
                    version=common.V)
    api.request('PUT', url, data, content_type=None, version=common.V)
    api.request('POST', '/allocations', {consumer: data},
                content_type='text/plain', version=common.V)
    api.request('PUT', url, version=common.V, note='no body at all')


@scenario('unknown_route',
          'a path placement does not serve: 404, also below a known one')
def unknown_route(api):
    consumer = api.uuid('c1')
    for path in ('/nothing', '/allocations/%s/extra' % consumer,
                 '/allocations/%s/' % consumer,
                 '/allocations/%7B%7D', '/allocations/a%2Fb',
                 '/resource_providers/', '/allocations/',
                 '/resource_providers/%s/usages/VCPU' % api.uuid('rp1')):
        api.request('GET', path, version=common.V)
    api.request('GET', '/nothing')


@scenario('method_not_allowed',
          'a known path with a method it does not take: 405 with Allow')
def method_not_allowed(api):
    consumer = api.uuid('c1')
    rp = api.uuid('rp1')
    for method, path in (('PATCH', '/allocations/%s' % consumer),
                         ('POST', '/allocations/%s' % consumer),
                         ('GET', '/allocations'),
                         ('DELETE', '/usages'),
                         ('POST', '/resource_providers/%s/usages' % rp),
                         ('PUT', '/resource_providers/%s/allocations' % rp),
                         ('HEAD', '/allocations/%s' % consumer)):
        api.request(method, path, version=common.V)


@scenario('malformed_consumer_uuid',
          'PUT /allocations/{c} with a consumer that is not a uuid: 400; '
          'GET and DELETE of one')
def malformed_consumer_uuid(api):
    rp1 = common.host(api, 'rp1')
    for consumer in ('not-a-uuid', '1234'):
        api.request('PUT', '/allocations/%s' % consumer,
                    common.body({rp1: {'VCPU': 1}}), version=common.V)
        api.request('GET', '/allocations/%s' % consumer, version=common.V)
        api.request('DELETE', '/allocations/%s' % consumer,
                    version=common.V)


@scenario('accept_header',
          'reads answer 406 unless JSON is acceptable; errors follow '
          'Accept (JSON, HTML or text)')
def accept_header(api):
    consumer = api.uuid('c1')
    url = '/allocations/%s' % consumer
    for accept in ('text/html', 'application/json', '*/*',
                   'text/html;q=0.5, application/json',
                   'application/json;q=0'):
        api.request('GET', url, headers={'Accept': accept},
                    version=common.V)
    api.request('DELETE', url, headers={'Accept': 'text/html'},
                version=common.V)
    api.request('DELETE', url, headers={'Accept': 'text/plain'},
                version=common.V)


@scenario('head_requests',
          'HEAD is no route method: 405, 404, 400 and 406 answers without '
          'a body')
def head_requests(api):
    consumer = api.uuid('c1')
    for path, version in (('/', None), ('/nothing', common.V),
                          ('/allocations/%s' % consumer, common.V),
                          ('/usages?project_id=p', common.V),
                          ('/allocations/%s' % consumer, '1.40')):
        api.request('HEAD', path, version=version)
    api.request('HEAD', '/allocations/%s' % consumer,
                headers={'OpenStack-API-Version': 'placement 1.x'})
    api.request('HEAD', '/allocations/%s' % consumer, version=common.V,
                headers={'Accept': 'application/json'})
