"""``/resource_classes``: standard and custom classes.

Listings show the standard classes (os-resource-classes, in placement's
numbering) then the custom ones by id; a custom class gets the highest id
in use plus one, which the order of a listing after deletions shows.
"""

from shelvefix.contract import registry
from shelvefix.contract.scenarios import common

scenario = registry.scenario

V = '1.2'
RENAME = '1.6'
ENSURE = '1.7'
CACHED = '1.15'
CODES = '1.23'


def _url(name=None):
    return '/resource_classes/%s' % name if name else '/resource_classes'


def _create(api, name, version=V, note=None):
    return api.request('POST', _url(), {'name': name}, version=version,
                       note=note)


def _inventory(api, rp, generation, inventories, note=None):
    return api.request(
        'PUT', '/resource_providers/%s/inventories' % rp,
        {'resource_provider_generation': generation,
         'inventories': {rc: {'total': total}
                         for rc, total in inventories.items()}},
        version=common.V, note=note)


@scenario('resource_classes_read',
          'GET the list and one class, per microversion (1.15 cache '
          'headers), unknown classes, Accept and versions below 1.2')
def resource_classes_read(api):
    _create(api, 'CUSTOM_GOLD', note='setup')
    for version in (V, CACHED, 'latest'):
        api.request('GET', _url(), version=version)
        api.request('GET', _url('CUSTOM_GOLD'), version=version)
        api.request('GET', _url('VCPU'), version=version)
    api.request('GET', _url('PCPU'), version=CODES)
    for version in (V, CODES):
        api.request('GET', _url('CUSTOM_NOPE'), version=version,
                    note='unknown: plain 404')
    api.request('GET', _url('vcpu'), version=V)
    api.request('GET', _url(), version=V, headers={'Accept': 'text/html'})
    api.request('GET', _url('VCPU'), version=V,
                headers={'Accept': 'text/plain'})
    for method, path in (('GET', _url()), ('GET', _url('VCPU')),
                         ('DELETE', _url('CUSTOM_GOLD'))):
        api.request(method, path, version='1.1', note='before 1.2')
    api.request('POST', _url(), {'name': 'CUSTOM_X'}, version='1.1')
    api.request('PUT', _url('CUSTOM_X'), {'name': 'CUSTOM_Y'},
                version='1.1')
    api.request('PATCH', _url('VCPU'), version=V)
    api.request('PUT', _url(), version=V)


@scenario('resource_classes_create',
          'POST /resource_classes: 201 with Location, 409 for a duplicate, '
          '400 for names that are not CUSTOM_, bodies and content types')
def resource_classes_create(api):
    _create(api, 'CUSTOM_GOLD')
    _create(api, 'CUSTOM_GOLD', note='duplicate')
    _create(api, 'CUSTOM_GOLD', version=CODES, note='duplicate')
    _create(api, 'CUSTOM_SILVER_2', version='latest')
    for name in ('VCPU', 'CUSTOM_', 'CUSTOM_gold', 'custom_gold',
                 'CUSTOM_GOLD-1', 'CUSTOM_%s' % ('A' * 248),
                 'CUSTOM_%s' % ('A' * 249), '', 7, None):
        _create(api, name, version=CODES)
    api.request('POST', _url(), {'name': 'CUSTOM_A', 'id': 1}, version=V)
    api.request('POST', _url(), {}, version=V)
    api.request('POST', _url(), ['CUSTOM_A'], version=V)
    api.request('POST', _url(), raw_body='{"name": ', version=V)
    api.request('POST', _url(), {'name': 'CUSTOM_A'}, version=V,
                content_type='text/plain')
    api.request('POST', _url(), version=V, note='no body, no type')
    api.request('GET', _url(), version=V)


@scenario('resource_classes_rename',
          'PUT /resource_classes/{name} up to 1.6 renames a custom class, '
          'in inventories, usages and allocations too')
def resource_classes_rename(api):
    for name in ('CUSTOM_GOLD', 'CUSTOM_SILVER', 'CUSTOM_BRONZE'):
        _create(api, name, note='setup')
    rp1 = api.provider('rp1')
    _inventory(api, rp1, 0, {'VCPU': 8, 'CUSTOM_GOLD': 4,
                             'CUSTOM_BRONZE': 2}, note='setup')
    consumer = api.uuid('c1')
    common.put(api, consumer, {rp1: {'VCPU': 1, 'CUSTOM_GOLD': 2}})
    api.request('PUT', _url('CUSTOM_GOLD'), {'name': 'CUSTOM_PLATINUM'},
                version=RENAME, note='in use: allowed')
    api.request('GET', _url(), version=RENAME, note='keeps its place')
    api.request('GET', _url('CUSTOM_GOLD'), version=RENAME)
    api.request('GET', _url('CUSTOM_PLATINUM'), version=RENAME)
    api.request('GET', '/resource_providers/%s/inventories' % rp1,
                version=common.V)
    common.usages(api, rp1)
    common.get(api, consumer)
    common.provider_allocations(api, rp1)
    common.project_usages(api)
    common.provider(api, rp1, version='1.14')
    api.request('PUT', _url('CUSTOM_PLATINUM'), {'name': 'CUSTOM_SILVER'},
                version=RENAME, note='taken')
    api.request('PUT', _url('CUSTOM_PLATINUM'),
                {'name': 'CUSTOM_PLATINUM'}, version=RENAME,
                note='to itself')
    api.request('PUT', _url('VCPU'), {'name': 'CUSTOM_VCPU'},
                version=RENAME, note='standard')
    api.request('PUT', _url('CUSTOM_NOPE'), {'name': 'CUSTOM_X'},
                version=RENAME, note='unknown: plain 404')
    api.request('PUT', _url('CUSTOM_NOPE'), {'name': 'VCPU'},
                version=RENAME, note='body checked first')
    api.request('PUT', _url('CUSTOM_SILVER'), {'name': 'CUSTOM_x'},
                version=V)
    api.request('PUT', _url('CUSTOM_SILVER'), {}, version=V)
    api.request('PUT', _url('CUSTOM_SILVER'), {'name': 'CUSTOM_X'},
                version=V, content_type='text/plain')
    api.request('PUT', _url('CUSTOM_SILVER'), version=RENAME,
                note='no body')
    common.put(api, consumer, {rp1: {'CUSTOM_GOLD': 1}}, generation=1,
               note='old name unknown')
    common.put(api, consumer, {rp1: {'CUSTOM_PLATINUM': 4}}, generation=1)
    api.request('GET', _url(), version=V)


@scenario('resource_classes_ensure',
          'PUT /resource_classes/{name} from 1.7: 201 then 204, the name '
          'checked as JSON, any body ignored')
def resource_classes_ensure(api):
    api.request('PUT', _url('CUSTOM_GOLD'), version=ENSURE)
    api.request('PUT', _url('CUSTOM_GOLD'), version=ENSURE)
    api.request('PUT', _url('CUSTOM_GOLD'), {'name': 'CUSTOM_OTHER'},
                version=CACHED, note='body ignored, no cache headers')
    api.request('PUT', _url('CUSTOM_GOLD'), raw_body='not json',
                version='latest', content_type='text/plain')
    api.request('PUT', _url('CUSTOM_SILVER'), version='latest')
    for name in ('VCPU', 'CUSTOM_gold', 'CUSTOM_', 'CUSTOM_A%22',
                 'CUSTOM_A%5C', 'CUSTOM_A%C3%89', 'CUSTOM_%s' % ('B' * 249)):
        api.request('PUT', _url(name), version=CODES)
    api.request('PUT', _url('CUSTOM_%s' % ('B' * 248)), version=CODES)
    api.request('GET', _url(), version=ENSURE)
    api.request('PUT', _url('CUSTOM_BRONZE'), version=RENAME,
                note='1.6 renames: wants a body')


@scenario('resource_classes_delete',
          'DELETE /resource_classes/{name}: standard 400, in use by an '
          'inventory 409, unknown 404; ids of new classes after deletes')
def resource_classes_delete(api):
    for name in ('CUSTOM_A', 'CUSTOM_B', 'CUSTOM_C'):
        _create(api, name, note='setup')
    rp1 = api.provider('rp1')
    _inventory(api, rp1, 0, {'CUSTOM_B': 1, 'CUSTOM_C': 1, 'VCPU': 1},
               note='setup')
    for version in (V, CODES):
        api.request('DELETE', _url('VCPU'), version=version)
        api.request('DELETE', _url('CUSTOM_B'), version=version,
                    note='in use')
        api.request('DELETE', _url('CUSTOM_NOPE'), version=version)
    api.request('DELETE', _url('CUSTOM_C'), version=CODES, note='in use')
    _inventory(api, rp1, 1, {'CUSTOM_B': 1, 'VCPU': 1})
    api.request('DELETE', _url('CUSTOM_C'), version=CODES)
    api.request('DELETE', _url('CUSTOM_C'), version=CODES, note='gone')
    _inventory(api, rp1, 2, {'CUSTOM_C': 1}, note='class gone')
    _create(api, 'CUSTOM_D', note='takes the id C had')
    _create(api, 'CUSTOM_C')
    api.request('DELETE', _url('CUSTOM_A'), version=V)
    _create(api, 'CUSTOM_A', note='after the others now')
    api.request('GET', _url(), version=V)
    _inventory(api, rp1, 2, {'CUSTOM_A': 1, 'CUSTOM_C': 2, 'CUSTOM_D': 3,
                             'CUSTOM_B': 4})
    common.usages(api, rp1)
    api.request('DELETE', _url('CUSTOM_B'), version=V, note='in use')
    api.request('DELETE', '/resource_providers/%s/inventories' % rp1,
                version=common.V)
    api.request('DELETE', _url('CUSTOM_B'), version=V)
    api.request('DELETE', _url('VCPU'), version='1.1', note='before 1.2')
    api.request('GET', _url(), version=V)
