"""``/traits`` and provider traits.

Placement lists traits in id order - the standard traits in the order
its database sync inserted them, then the custom ones - except when
filtering on ``name=in:``, which lists them by name; a provider's traits
come in id order, but the answer to setting them by name.
"""

from shelvefix.contract import registry
from shelvefix.contract.scenarios import common

scenario = registry.scenario

V = '1.6'
CACHED = '1.15'
CODES = '1.23'


def _traits(api, query='', version=V, note=None, **kwargs):
    return api.request('GET', '/traits' + query, version=version, note=note,
                       **kwargs)


def _trait(api, method, name, version=V, note=None):
    return api.request(method, '/traits/%s' % name, version=version,
                       note=note)


def _rp_url(rp):
    return '/resource_providers/%s/traits' % rp


def _set(api, rp, generation, traits, version=V, note=None):
    return api.request('PUT', _rp_url(rp),
                       {'resource_provider_generation': generation,
                        'traits': traits}, version=version, note=note)


@scenario('traits_list',
          'GET /traits: every trait in placement\'s order, the name and '
          'associated filters, bad parameters, 1.15 headers')
def traits_list(api):
    for name in ('CUSTOM_C', 'CUSTOM_A', 'CUSTOM_B'):
        _trait(api, 'PUT', name, note='setup')
    for version in (V, CACHED):
        _traits(api, version=version)
    for query in ('name=in:CUSTOM_B,HW_CPU_X86_AVX2,CUSTOM_A,COMPUTE_NODE',
                  'name=in:CUSTOM_B,CUSTOM_NOPE,CUSTOM_B',
                  'name=in:', 'name=in:,', 'name=in:custom_a',
                  'name=startswith:HW_CPU_X86_AVX',
                  'name=startswith:CUSTOM_', 'name=startswith:custom',
                  'name=startswith:HW_CPU_X86_AVX_12',
                  'name=startswith:%25AVX512V', 'name=startswith:',
                  'name=startswith:NOPE', 'name=foo:CUSTOM_A',
                  'name=in%3ACUSTOM_A', 'name=in:CUSTOM_A&name=in:CUSTOM_B',
                  'name=foo', 'name=', 'associated=yes', 'associated=',
                  'associated=false&name=startswith:CUSTOM',
                  'associated=TRUE', 'foo=bar', 'name=in:A&foo=bar'):
        _traits(api, '?' + query, version=CODES)
    _traits(api, '?name=in:CUSTOM_A', version=CACHED)
    _traits(api, headers={'Accept': 'text/html'})
    _traits(api, version='1.5', note='before 1.6')
    api.request('POST', '/traits', version=V)


@scenario('traits_associated',
          'GET /traits?associated= with and without name filters, as '
          'providers gain and lose traits and are deleted')
def traits_associated(api):
    for name in ('CUSTOM_Z', 'CUSTOM_M', 'CUSTOM_A', 'CUSTOM_FREE'):
        _trait(api, 'PUT', name, note='setup')
    rp1, rp2 = api.provider('rp1'), api.provider('rp2')
    queries = ('?associated=true', '?associated=false&name=startswith:CUST',
               '?associated=true&name=in:CUSTOM_Z,CUSTOM_A,COMPUTE_NODE,'
               'HW_CPU_X86_SSE,CUSTOM_FREE',
               '?associated=false&name=in:CUSTOM_M,COMPUTE_NODE,'
               'CUSTOM_FREE,HW_CPU_X86_AVX512F,HW_CPU_X86_AVX',
               '?associated=true&name=startswith:CUSTOM')
    for query in queries:
        _traits(api, query)
    _set(api, rp1, 0, ['CUSTOM_M', 'HW_CPU_X86_SSE', 'CUSTOM_Z',
                       'COMPUTE_NODE'])
    _set(api, rp2, 0, ['CUSTOM_A', 'CUSTOM_M', 'HW_CPU_X86_AVX2'])
    for query in queries:
        _traits(api, query)
    api.request('DELETE', _rp_url(rp2), version=V)
    api.request('DELETE', '/resource_providers/%s' % rp1, version=V)
    for query in queries:
        _traits(api, query)


@scenario('traits_custom',
          'PUT, GET and DELETE /traits/{name}: create (201) or confirm '
          '(204), invalid names, standard 400, in use 409, unknown 404')
def traits_custom(api):
    for version in (V, CACHED):
        _trait(api, 'PUT', 'CUSTOM_GOLD', version=version)
        _trait(api, 'GET', 'CUSTOM_GOLD', version=version)
        _trait(api, 'GET', 'HW_CPU_X86_AVX', version=version)
        _trait(api, 'PUT', 'HW_CPU_X86_AVX', version=version,
               note='standard: not a custom name')
    _trait(api, 'PUT', 'CUSTOM_SILVER', version=CACHED)
    for name in ('CUSTOM_', 'CUSTOM_gold', 'custom_gold', 'CUSTOM_A-B',
                 'CUSTOM_A%22', 'CUSTOM_A%C3%89',
                 'CUSTOM_%s' % ('A' * 249)):
        _trait(api, 'PUT', name, version=CODES)
    _trait(api, 'PUT', 'CUSTOM_%s' % ('A' * 248), version=CODES)
    for version in (V, CODES):
        _trait(api, 'GET', 'CUSTOM_NOPE', version=version)
        _trait(api, 'DELETE', 'CUSTOM_NOPE', version=version)
        _trait(api, 'DELETE', 'HW_CPU_X86_AVX', version=version)
    _trait(api, 'DELETE', 'NOT_A_TRAIT', version=CODES)
    rp1 = api.provider('rp1')
    _set(api, rp1, 0, ['CUSTOM_GOLD'], note='setup')
    _trait(api, 'DELETE', 'CUSTOM_GOLD', version=CODES, note='in use')
    _trait(api, 'DELETE', 'CUSTOM_SILVER', version=CACHED)
    _trait(api, 'GET', 'CUSTOM_SILVER', version=CACHED)
    _trait(api, 'DELETE', 'CUSTOM_SILVER', version=V, note='gone')
    _trait(api, 'PUT', 'CUSTOM_SILVER', version=V, note='again: last')
    _trait(api, 'PUT', 'CUSTOM_BRONZE', version=V)
    _traits(api, '?name=startswith:CUSTOM')
    _set(api, rp1, 1, ['CUSTOM_SILVER', 'CUSTOM_BRONZE', 'CUSTOM_GOLD'])
    api.request('GET', _rp_url(rp1), version=V)
    api.request('PUT', '/traits/CUSTOM_X', {'name': 'CUSTOM_Y'},
                version=V, note='body ignored')
    for method in ('GET', 'PUT', 'DELETE'):
        _trait(api, method, 'CUSTOM_GOLD', version='1.5',
               note='before 1.6')
    _trait(api, 'POST', 'CUSTOM_GOLD')


@scenario('traits_provider',
          'GET, PUT and DELETE /resource_providers/{uuid}/traits: '
          'generations, conflicts, unknown traits, bad bodies, 404s')
def traits_provider(api):
    rp1 = api.provider('rp1')
    missing = api.uuid('missing')
    _trait(api, 'PUT', 'CUSTOM_GOLD', note='setup')
    api.request('GET', _rp_url(rp1), version=V)
    api.request('GET', _rp_url(rp1), version=CACHED)
    _set(api, rp1, 0, ['HW_CPU_X86_SSE', 'CUSTOM_GOLD', 'COMPUTE_NODE',
                       'HW_CPU_X86_AVX2', 'COMPUTE_NODE'])
    api.request('GET', _rp_url(rp1), version=CACHED)
    common.provider(api, rp1, version=V)
    _set(api, rp1, 1, ['COMPUTE_NODE', 'CUSTOM_GOLD', 'HW_CPU_X86_SSE',
                       'HW_CPU_X86_AVX2'], version=CACHED,
         note='same traits: generation stays')
    _set(api, rp1, 0, ['COMPUTE_NODE'], note='stale')
    _set(api, rp1, 0, ['COMPUTE_NODE'], version=CODES, note='stale')
    _set(api, rp1, 1, ['COMPUTE_NODE', 'CUSTOM_NOPE'], version=CODES)
    _set(api, rp1, 1, ['CUSTOM_X', 'CUSTOM_Z', 'CUSTOM_Y', 'COMPUTE_NODE',
                       'CUSTOM_X', 'HW_NOPE'], note='several unknown')
    _set(api, rp1, 0, ['CUSTOM_NOPE'], note='generation checked first')
    _set(api, missing, 0, ['CUSTOM_NOPE'], version=CODES,
         note='unknown provider: plain 404')
    for body in ({'traits': []}, {'resource_provider_generation': 1},
                 {'resource_provider_generation': 1, 'traits': 'A'},
                 {'resource_provider_generation': 1, 'traits': ['']},
                 {'resource_provider_generation': 1, 'traits': [1]},
                 {'resource_provider_generation': '1', 'traits': []},
                 {'resource_provider_generation': 1, 'traits': [],
                  'uuid': rp1},
                 {'resource_provider_generation': 1,
                  'traits': ['CUSTOM_%s' % ('A' * 249)]}, []):
        api.request('PUT', _rp_url(missing), body, version=V,
                    note='body checked before the provider')
    api.request('PUT', _rp_url(rp1), raw_body='{"traits": [', version=V)
    api.request('PUT', _rp_url(rp1), {'resource_provider_generation': 1,
                                      'traits': []},
                version=V, content_type='text/plain')
    _set(api, rp1, 1, ['CUSTOM_GOLD'], version='1.5', note='before 1.6')
    api.request('GET', _rp_url(rp1), version='1.5')
    api.request('DELETE', _rp_url(rp1), version='1.5')
    api.request('GET', _rp_url(rp1), version=V,
                headers={'Accept': 'text/html'})
    api.request('GET', _rp_url(missing), version=V)
    api.request('GET', _rp_url(missing), version=CODES)
    api.request('DELETE', _rp_url(missing), version=CODES)
    api.request('POST', _rp_url(rp1), version=V)
    api.request('DELETE', _rp_url(rp1), version=V)
    api.request('GET', _rp_url(rp1), version=V)
    api.request('DELETE', _rp_url(rp1), version=V, note='nothing to remove')
    _set(api, rp1, 2, [], note='nothing to set')
    common.provider(api, rp1, version=V)
