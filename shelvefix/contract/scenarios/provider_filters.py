"""The filters of ``GET /resource_providers``, microversion by microversion.

``name`` and ``uuid`` (1.0), ``member_of`` (1.3: one value, ``in:`` for
any of several; 1.24: repeated, all must hold; 1.32: forbidden ``!`` and
``!in:``), ``resources`` (1.4), ``in_tree`` (1.14), ``required`` (1.18:
traits; 1.22: forbidden ``!TRAIT``; 1.39: ``in:`` any-of and repeated).
Each invalid value is refused with placement's own detail, and the order
in which placement looks at filters decides which error (or which early
empty answer) a request with several problems gets. Each value here has
at most one bad uuid or unknown trait: placement checks the members of a
set in an order that changes from one process to the next.
"""

from shelvefix.contract import registry

scenario = registry.scenario

TRAITS_VERSION = '1.6'


def listing(api, query, version, note=None):
    """``GET /resource_providers?<query>``.

    :param api: the scenario's ContractAPI.
    :param query: the query string, without ``?``.
    :param version: the microversion.
    :param note: the step's label.
    """
    return api.request('GET', '/resource_providers?%s' % query,
                       version=version, note=note)


def join(api, rp, *aggregates):
    """Put provider ``rp`` in the named aggregates (1.1 form, no bump).

    :param api: the scenario's ContractAPI.
    :param rp: the provider uuid.
    :param aggregates: names of aggregates (see ``api.uuid``).
    """
    return api.request('PUT', '/resource_providers/%s/aggregates' % rp,
                       [api.uuid(name) for name in aggregates],
                       version='1.1', note='setup')


def give_traits(api, rp, generation, *traits):
    """Set the traits of provider ``rp``.

    :param api: the scenario's ContractAPI.
    :param rp: the provider uuid.
    :param generation: its current generation.
    :param traits: trait names.
    """
    return api.request('PUT', '/resource_providers/%s/traits' % rp,
                       {'traits': list(traits),
                        'resource_provider_generation': generation},
                       version=TRAITS_VERSION, note='setup')


def _aggregate_providers(api):
    # rp1: agg1; rp2: agg1, agg2; rp3: agg3; rp4: none.
    providers = [api.provider('rp%d' % number) for number in range(1, 5)]
    join(api, providers[0], 'agg1')
    join(api, providers[1], 'agg1', 'agg2')
    join(api, providers[2], 'agg3')
    return providers


def _trait_providers(api):
    # rp1: AVX, SSE; rp2: AVX; rp3: CUSTOM_GOLD; rp4: none.
    providers = [api.provider('rp%d' % number) for number in range(1, 5)]
    api.request('PUT', '/traits/CUSTOM_GOLD', version=TRAITS_VERSION,
                note='setup')
    give_traits(api, providers[0], 0, 'HW_CPU_X86_AVX', 'HW_CPU_X86_SSE')
    give_traits(api, providers[1], 0, 'HW_CPU_X86_AVX')
    give_traits(api, providers[2], 0, 'CUSTOM_GOLD')
    return providers


@scenario('provider_filters_name_uuid',
          'GET /resource_providers by name and uuid (exact), repeated '
          'and unknown parameters, and each filter before its version')
def name_uuid(api):
    rp1 = api.provider('rp1')
    rp2 = api.provider('rp2')
    for query in ('name=rp1', 'name=nope', 'name=', 'name=rp2&name=rp1',
                  'uuid=%s' % rp2, 'uuid=%s' % rp2.upper(),
                  'uuid=%s' % rp2.replace('-', ''), 'uuid=not-a-uuid',
                  'uuid=', 'name=rp1&uuid=%s' % rp2,
                  'name=rp1&uuid=%s' % rp1, 'colour=blue'):
        listing(api, query, '1.0')
    listing(api, 'name=rp2', '1.15', note='cache headers')
    for query, version in (('member_of=%s' % api.uuid('agg1'), '1.2'),
                           ('resources=VCPU:1', '1.3'),
                           ('in_tree=%s' % rp1, '1.13'),
                           ('required=HW_CPU_X86_AVX', '1.17')):
        listing(api, query, version, note='before its version')
        listing(api, query, 'latest')


@scenario('provider_filters_member_of',
          'member_of: one aggregate or in: any of several (1.3), repeated '
          'for all (1.24), forbidden ! and !in: (1.32); refusals')
def member_of(api):
    _aggregate_providers(api)
    agg1, agg2, agg3 = (api.uuid(name) for name in ('agg1', 'agg2', 'agg3'))
    unknown = api.uuid('unknown')
    for query in ('member_of=%s' % agg1,
                  'member_of=in:%s,%s' % (agg2, agg3),
                  'member_of=in:%s' % agg3,
                  'member_of=%s' % unknown,
                  'member_of=in:%s,%s' % (unknown, agg3),
                  'member_of=%s' % agg1.upper(),
                  'member_of=%s' % agg1.replace('-', ''),
                  'member_of=%s,%s' % (agg1, agg2),
                  'member_of=not-a-uuid', 'member_of=', 'member_of=in:',
                  'member_of=in:%s,' % agg1,
                  'member_of=%s&member_of=%s' % (agg1, agg2),
                  'member_of=!%s' % agg1):
        listing(api, query, '1.3')
    for version in ('1.23', '1.24'):
        listing(api, 'member_of=%s&member_of=%s' % (agg1, agg2), version)
    for query in ('member_of=%s&member_of=in:%s,%s' % (agg1, agg2, agg3),
                  'member_of=in:%s,%s&member_of=%s' % (agg1, agg3, agg3),
                  'member_of=%s&member_of=not-a-uuid' % agg1,
                  'member_of=%s&member_of=%s' % (agg1, unknown)):
        listing(api, query, '1.24')
    for query in ('member_of=!%s' % agg1, 'member_of=!not-a-uuid',
                  'member_of=!in:%s,%s' % (agg1, agg2),
                  'member_of=%s&member_of=!%s' % (agg1, agg2)):
        listing(api, query, '1.31')
    for query in ('member_of=!%s' % agg1,
                  'member_of=!in:%s,%s' % (agg1, agg3),
                  'member_of=in:%s,%s&member_of=!%s' % (agg1, agg3, agg2),
                  'member_of=!%s' % unknown, 'member_of=!',
                  'member_of=!in:', 'member_of=in:%s,!%s' % (agg1, agg2),
                  'member_of=!%s,%s' % (agg1, agg2),
                  'member_of=!%s&member_of=%s' % (agg1, agg1)):
        listing(api, query, '1.32')
    listing(api, 'member_of=%s&name=rp2' % agg1, 'latest')


@scenario('provider_filters_required',
          'required traits (1.18), forbidden !TRAIT (1.22), in: and '
          'repeated (1.39); unknown traits, malformed values per version')
def required(api):
    _trait_providers(api)
    for query in ('required=HW_CPU_X86_AVX',
                  'required=HW_CPU_X86_AVX,HW_CPU_X86_SSE',
                  'required=CUSTOM_GOLD', 'required=HW_CPU_X86_VMX',
                  'required=CUSTOM_NOPE',
                  'required=HW_CPU_X86_AVX,CUSTOM_NOPE',
                  'required=%20HW_CPU_X86_SSE%20',
                  'required=HW_CPU_X86_SSE&required=HW_CPU_X86_AVX',
                  'required=', 'required=HW_CPU_X86_AVX,,HW_CPU_X86_SSE',
                  'required=!HW_CPU_X86_AVX',
                  'required=in:HW_CPU_X86_AVX'):
        listing(api, query, '1.18')
    listing(api, 'required=!HW_CPU_X86_AVX', '1.21')
    for query in ('required=!HW_CPU_X86_AVX',
                  'required=HW_CPU_X86_AVX,!HW_CPU_X86_SSE',
                  'required=!HW_CPU_X86_AVX,!CUSTOM_GOLD',
                  'required=!!HW_CPU_X86_AVX',
                  'required=HW_CPU_X86_AVX,!HW_CPU_X86_AVX',
                  'required=!CUSTOM_NOPE',
                  'required=CUSTOM_NOPE,!CUSTOM_NOPE2',
                  'required=HW_CPU_X86_VMX,!CUSTOM_NOPE',
                  'required=!', 'required=in:HW_CPU_X86_AVX'):
        listing(api, query, '1.22')
    listing(api, 'required=in:HW_CPU_X86_SSE,CUSTOM_GOLD', '1.38')
    listing(api, 'required=HW_CPU_X86_SSE&required=HW_CPU_X86_AVX', '1.38',
            note='the last one only')
    for query in ('required=in:HW_CPU_X86_SSE,CUSTOM_GOLD',
                  'required=in:HW_CPU_X86_SSE,CUSTOM_GOLD'
                  '&required=!HW_CPU_X86_AVX',
                  'required=HW_CPU_X86_SSE&required=HW_CPU_X86_AVX',
                  'required=in:%20CUSTOM_GOLD%20,HW_CPU_X86_VMX',
                  'required=in:HW_CPU_X86_VMX',
                  'required=in:HW_CPU_X86_AVX,!HW_CPU_X86_SSE',
                  'required=in:', 'required=in:HW_CPU_X86_AVX,',
                  'required=in:HW_CPU_X86_AVX,CUSTOM_NOPE',
                  'required=HW_CPU_X86_AVX&required=in:CUSTOM_NOPE'):
        listing(api, query, '1.39')


@scenario('provider_filters_resources_in_tree',
          'resources (1.4): room left after allocations and unit '
          'constraints, malformed values; in_tree (1.14), alone and with '
          'resources')
def resources_in_tree(api):
    root = api.provider('root', {'VCPU': 8, 'MEMORY_MB': 2048})
    child = api.uuid('child')
    api.request('POST', '/resource_providers',
                {'name': 'child', 'uuid': child,
                 'parent_provider_uuid': root}, version='1.20',
                note='setup')
    api.request('PUT', '/resource_providers/%s/inventories' % child,
                {'resource_provider_generation': 0,
                 'inventories': {'DISK_GB': {'total': 100, 'max_unit': 50,
                                             'step_size': 10}}},
                version='1.26', note='setup')
    api.provider('other', {'VCPU': 4})
    for query in ('resources=VCPU:4', 'resources=VCPU:5',
                  'resources=VCPU:1,DISK_GB:10', 'resources=DISK_GB:50',
                  'resources=DISK_GB:60', 'resources=DISK_GB:15',
                  'resources=VCPU:1,MEMORY_MB:2048',
                  'resources=VCPU:4&resources=VCPU:5',
                  'resources=CUSTOM_NOPE:1', 'resources=VCPU',
                  'resources=', 'resources=VCPU:0', 'resources=VCPU:-1',
                  'resources=VCPU:x', 'resources=VCPU:1,,DISK_GB:1',
                  'resources=VCPU:1:2'):
        listing(api, query, '1.4')
    api.request('PUT', '/allocations/%s' % api.uuid('c1'),
                {'allocations': {root: {'resources': {'VCPU': 6}}},
                 'project_id': 'proj', 'user_id': 'user',
                 'consumer_generation': None}, version='1.28',
                note='setup')
    listing(api, 'resources=VCPU:3', '1.4', note='room left')
    listing(api, 'resources=VCPU:2', '1.4')
    for query in ('in_tree=%s' % child, 'in_tree=%s' % root,
                  'in_tree=%s' % api.uuid('missing'),
                  'in_tree=%s' % child.upper(),
                  'in_tree=not-a-uuid', 'in_tree=',
                  'in_tree=%s&resources=DISK_GB:10' % root,
                  'in_tree=%s&resources=VCPU:2' % root,
                  'in_tree=%s&name=other' % root):
        listing(api, query, '1.14')


@scenario('provider_filters_precedence',
          'format errors: schema, member_of, required, resources; an '
          'unknown tree, traits or aggregates nobody has answer [] first')
def precedence(api):
    rp1 = api.provider('rp1', {'VCPU': 4})
    join(api, rp1, 'agg1')
    agg1, unused = api.uuid('agg1'), api.uuid('unused')
    missing = api.uuid('missing')
    latest = 'latest'
    for query in ('in_tree=%s&resources=CUSTOM_NOPE:1' % missing,
                  'in_tree=%s&required=CUSTOM_NOPE' % missing,
                  'member_of=%s&resources=CUSTOM_NOPE:1' % unused,
                  'member_of=%s&resources=CUSTOM_NOPE:1' % agg1,
                  'member_of=!%s&resources=CUSTOM_NOPE:1' % unused,
                  'member_of=%s&required=CUSTOM_NOPE' % unused,
                  'required=HW_CPU_X86_VMX&resources=CUSTOM_NOPE:1',
                  'required=!HW_CPU_X86_VMX&resources=CUSTOM_NOPE:1',
                  'required=HW_CPU_X86_VMX,CUSTOM_NOPE',
                  'name=nope&resources=CUSTOM_NOPE:1',
                  'uuid=%s&resources=CUSTOM_NOPE:1' % missing,
                  'resources=VCPU:1,CUSTOM_NOPE:1,CUSTOM_NOPE2:1',
                  'member_of=x&required=!&resources=VCPU',
                  'required=!&resources=VCPU', 'resources=VCPU&colour=1',
                  'member_of=x&in_tree=y'):
        listing(api, query, latest)
    listing(api, 'in_tree=%s&resources=CUSTOM_NOPE:1' % rp1, '1.14')
    listing(api, 'member_of=%s&member_of=x' % agg1, '1.3',
            note='the repetition first')


@scenario('provider_filters_combined',
          'member_of, required, resources and in_tree together: each '
          'narrows the others')
def combined(api):
    providers = [api.provider('rp%d' % number, {'VCPU': 2 * number})
                 for number in range(1, 4)]
    for rp, aggregates in zip(providers, (('agg1',), ('agg1', 'agg2'),
                                          ('agg2',))):
        join(api, rp, *aggregates)
    for rp, traits in zip(providers, (('HW_CPU_X86_AVX',),
                                      ('HW_CPU_X86_AVX', 'HW_CPU_X86_SSE'),
                                      ('HW_CPU_X86_SSE',))):
        give_traits(api, rp, 1, *traits)
    agg1, agg2 = api.uuid('agg1'), api.uuid('agg2')
    for query in ('member_of=%s&required=HW_CPU_X86_SSE' % agg1,
                  'member_of=%s&required=!HW_CPU_X86_AVX' % agg2,
                  'member_of=in:%s,%s&resources=VCPU:4' % (agg1, agg2),
                  'member_of=!%s&required=HW_CPU_X86_SSE' % agg1,
                  'required=in:HW_CPU_X86_AVX,HW_CPU_X86_SSE'
                  '&resources=VCPU:6',
                  'in_tree=%s&member_of=%s' % (providers[1], agg1),
                  'in_tree=%s&member_of=%s' % (providers[0], agg2),
                  'name=rp2&required=HW_CPU_X86_AVX&member_of=%s' % agg2):
        listing(api, query, 'latest')
