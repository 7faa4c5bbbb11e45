"""Provider aggregates: ``/resource_providers/{uuid}/aggregates``.

Placement lists a provider's aggregates in the order each aggregate uuid
was first seen by placement as a whole; the aggregates new in one PUT get
their order from a Python set, which changes from one process to the
next. Every PUT here therefore introduces at most one new aggregate.
"""

from shelvefix.contract import registry

scenario = registry.scenario

# Before 1.19 a PUT sends a bare list; from 1.19 an object with the
# provider generation; error codes appear at 1.23.
BARE = '1.18'
WITH_GENERATION = '1.19'
WITH_CODE = '1.23'


def _url(rp):
    return '/resource_providers/%s/aggregates' % rp


def get(api, rp, version=WITH_GENERATION, note=None, **kwargs):
    """``GET /resource_providers/{rp}/aggregates``.

    :param api: the scenario's ContractAPI.
    :param rp: the provider uuid.
    :param version: the microversion.
    :param note: the step's label.
    :param kwargs: more arguments of
        :meth:`~shelvefix.contract.api.ContractAPI.request`.
    """
    return api.request('GET', _url(rp), version=version, note=note,
                       **kwargs)


def put(api, rp, aggregates, generation=None, version=WITH_GENERATION,
        note=None, **kwargs):
    """``PUT /resource_providers/{rp}/aggregates`` in the version's form.

    :param api: the scenario's ContractAPI.
    :param rp: the provider uuid.
    :param aggregates: the aggregate uuids.
    :param generation: the provider generation (from 1.19).
    :param version: the microversion.
    :param note: the step's label.
    :param kwargs: more arguments of
        :meth:`~shelvefix.contract.api.ContractAPI.request`.
    """
    body = list(aggregates)
    if _with_generation(version):
        body = {'aggregates': body,
                'resource_provider_generation': generation}
    return api.request('PUT', _url(rp), body, version=version, note=note,
                       **kwargs)


def _with_generation(version):
    return version == 'latest' or tuple(
        int(part) for part in version.split('.')) >= (1, 19)


@scenario('aggregates_by_version',
          'GET and PUT of provider aggregates at 1.0 (404), 1.1, 1.15 '
          '(cache headers), 1.18, 1.19 and latest (generation)')
def by_version(api):
    rp1 = api.provider('rp1')
    agg1, agg2 = api.uuid('agg1'), api.uuid('agg2')
    get(api, rp1, version='1.0')
    put(api, rp1, [agg1], version='1.0')
    get(api, rp1, version='1.1')
    put(api, rp1, [agg1], version='1.1')
    get(api, rp1, version='1.1')
    get(api, rp1, version='1.14')
    get(api, rp1, version='1.15')
    put(api, rp1, [agg2, agg1], version='1.15')
    get(api, rp1, version=BARE)
    get(api, rp1, version=WITH_GENERATION)
    put(api, rp1, [agg1, agg2], generation=0)
    get(api, rp1, version='latest')
    put(api, rp1, [], generation=1, version='latest')
    get(api, rp1, version='latest')
    api.request('GET', '/resource_providers/%s' % rp1, version='latest')


@scenario('aggregates_generation',
          'from 1.19 a PUT names the provider generation (else 409 '
          'concurrent_update) and moves it, even unchanged; not before')
def generation(api):
    rp1 = api.provider('rp1', {'VCPU': 8})
    agg1 = api.uuid('agg1')
    put(api, rp1, [agg1], version=BARE, note='generation stays 1')
    put(api, rp1, [agg1], version=BARE)
    put(api, rp1, [agg1], generation=0, note='stale')
    put(api, rp1, [agg1], generation=0, version=WITH_CODE, note='stale')
    put(api, rp1, [agg1], generation=2, note='ahead')
    put(api, rp1, [agg1], generation=1, note='unchanged, still bumps')
    put(api, rp1, [agg1], generation=2, version=WITH_CODE)
    get(api, rp1)
    api.request('PUT', '/resource_providers/%s/inventories' % rp1,
                {'resource_provider_generation': 3,
                 'inventories': {'VCPU': {'total': 4}}}, version='1.26')
    put(api, rp1, [], generation=3, version='latest',
        note='the inventory write moved it')
    put(api, rp1, [], generation=4, version='latest')
    api.request('GET', '/resource_providers/%s' % rp1, version='latest')


@scenario('aggregates_order_and_spelling',
          'aggregates list in first-seen order whatever the PUT order; '
          'uuids are kept as written (upper case, no dashes, braces)')
def order_and_spelling(api):
    rp1 = api.provider('rp1')
    rp2 = api.provider('rp2')
    agg = [api.uuid('agg%d' % number) for number in range(1, 5)]
    put(api, rp1, [agg[2]], version=BARE)
    put(api, rp2, [agg[0]], version=BARE)
    put(api, rp2, [agg[0], agg[1]], version=BARE)
    put(api, rp1, [agg[1], agg[0], agg[2]], version=BARE,
        note='answered in request order')
    get(api, rp1, version=BARE, note='listed in first-seen order')
    put(api, rp2, [agg[3], agg[2], agg[1], agg[0]], version=BARE)
    get(api, rp2, version=BARE)
    put(api, rp1, [agg[0].upper()], version=BARE)
    put(api, rp1, [agg[0].upper(), agg[0]], version=BARE,
        note='two aggregates for placement')
    put(api, rp1, [agg[0].upper(), agg[0], agg[1].replace('-', '')],
        version=BARE)
    put(api, rp1, ['{%s}' % agg[2], agg[0].upper(), agg[0],
                   agg[1].replace('-', '')], version=BARE)
    get(api, rp1, version=BARE)
    api.request('GET', '/resource_providers?member_of=%s' % agg[0],
                version=BARE)
    api.request('GET', '/resource_providers?member_of=%s'
                % agg[0].upper(), version=BARE)


@scenario('aggregates_bad_requests',
          'aggregate PUTs refused: bad JSON, schema errors per version, '
          'wrong content type, Accept, unknown provider first')
def bad_requests(api):
    rp1 = api.provider('rp1')
    agg1 = api.uuid('agg1')
    for body, note in (({'aggregates': [agg1]}, 'object'),
                       ([agg1, agg1], 'duplicate'),
                       (['not-a-uuid'], 'not a uuid'),
                       ([1], 'not a string'),
                       (agg1, 'a string')):
        api.request('PUT', _url(rp1), body, version=BARE, note=note)
    for body, note in (([agg1], 'bare list'),
                       ({'aggregates': [agg1]}, 'no generation'),
                       ({'resource_provider_generation': 0}, 'no list'),
                       ({'aggregates': [agg1, agg1],
                         'resource_provider_generation': 0}, 'duplicate'),
                       ({'aggregates': [agg1],
                         'resource_provider_generation': '0'}, 'string'),
                       ({'aggregates': [agg1], 'resource_provider_generation':
                         0, 'colour': 'blue'}, 'extra member')):
        api.request('PUT', _url(rp1), body, version=WITH_CODE, note=note)
    api.request('PUT', _url(rp1), raw_body='[', version=BARE)
    api.request('PUT', _url(rp1), raw_body='', version=WITH_CODE)
    api.request('PUT', _url(rp1), [agg1], version=BARE,
                content_type='text/plain')
    api.request('PUT', _url(rp1), [agg1], version='1.0',
                content_type='text/plain', note='415 before 404')
    get(api, rp1, version='1.0', headers={'Accept': 'text/html'},
        note='406 before 404')
    get(api, rp1, headers={'Accept': 'text/html'})
    missing = api.uuid('missing')
    get(api, missing)
    get(api, missing, version=WITH_CODE)
    get(api, 'not-a-uuid')
    put(api, missing, [agg1], generation=0)
    api.request('PUT', _url(missing), raw_body='[', version=BARE,
                note='404 before the body is read')
    api.request('PATCH', _url(rp1), version=BARE)
    get(api, rp1, version=BARE, note='nothing was written')


@scenario('aggregates_provider_lifecycle',
          'a deleted provider loses its aggregates; one recreated with '
          'the same uuid starts without any, and the generation is new')
def provider_lifecycle(api):
    rp1 = api.provider('rp1')
    agg1, agg2 = api.uuid('agg1'), api.uuid('agg2')
    put(api, rp1, [agg1], generation=0)
    put(api, rp1, [agg1, agg2], generation=1)
    api.request('DELETE', '/resource_providers/%s' % rp1, version=BARE)
    get(api, rp1)
    api.request('GET', '/resource_providers?member_of=in:%s,%s'
                % (agg1, agg2), version=BARE)
    api.provider('rp1')
    get(api, rp1)
    put(api, rp1, [agg2], generation=0)
    put(api, rp1, [agg2, agg1], generation=1)
    get(api, rp1, note='old aggregates keep their place')
