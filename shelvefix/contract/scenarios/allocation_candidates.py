"""``GET /allocation_candidates``: groups, trees, sharing, filters, order.

Answers are compared in placement's order, as its own tests compare them:
the candidates, a mapping's providers and a provider's traits (see
:func:`shelvefix.contract.normalise.candidates`), and with ``limit``
which candidates are kept. Every provider and aggregate uuid is named.
"""

from shelvefix.contract import registry
from shelvefix.contract.scenarios import common

scenario = registry.scenario

V = '1.39'
PATH = '/allocation_candidates?'
SHARES = 'MISC_SHARES_VIA_AGGREGATE'
COMPUTE = {'VCPU': 8, 'MEMORY_MB': 2048}


def candidates(api, query, version=V, note=None):
    """``GET /allocation_candidates?<query>``."""
    return api.request('GET', PATH + query, version=version, note=note)


def child(api, name, parent, inventory=None):
    """A provider below ``parent`` (created at 1.14), with inventory."""
    uuid = api.uuid(name)
    api.request('POST', '/resource_providers',
                {'name': name, 'uuid': uuid, 'parent_provider_uuid': parent},
                version='1.20', note='setup')
    if inventory:
        api.request('PUT', '/resource_providers/%s/inventories' % uuid,
                    {'resource_provider_generation': 0,
                     'inventories': {rc: dict(value) if isinstance(
                         value, dict) else {'total': value}
                         for rc, value in inventory.items()}},
                    version='1.26', note='setup')
    return uuid


def generation(api, uuid):
    """The provider's current generation (read, and recorded)."""
    return api.request('GET', '/resource_providers/%s' % uuid,
                       version='1.20', note='setup').json()['generation']


def traits(api, uuid, *names):
    """Give a provider traits, creating the custom ones first."""
    for name in names:
        if name.startswith('CUSTOM_'):
            api.request('PUT', '/traits/%s' % name, version='1.6',
                        note='setup')
    api.request('PUT', '/resource_providers/%s/traits' % uuid,
                {'traits': list(names),
                 'resource_provider_generation': generation(api, uuid)},
                version='1.6', note='setup')


def aggregates(api, uuid, *names):
    """Make a provider a member of the aggregates named ``names``."""
    api.request('PUT', '/resource_providers/%s/aggregates' % uuid,
                {'aggregates': [api.uuid(name) for name in names],
                 'resource_provider_generation': generation(api, uuid)},
                version='1.19', note='setup')


@scenario('candidates_single_provider',
          'one provider per candidate at every answer shape: the list '
          'form, the dict form, traits, every class, tree uuids, mappings')
def candidates_single_provider(api):
    cn1 = api.provider('cn1', {'VCPU': 8, 'MEMORY_MB': 2048, 'DISK_GB': 50})
    api.provider('cn2', {'VCPU': 2, 'MEMORY_MB': 512})
    api.provider('empty')
    common.put(api, api.uuid('c1'), {cn1: {'VCPU': 2, 'MEMORY_MB': 256}})
    for version in ('1.10', '1.12', '1.17', '1.27', '1.29', '1.34', V):
        candidates(api, 'resources=VCPU:1,MEMORY_MB:128', version=version)
    candidates(api, 'resources=VCPU:4')
    candidates(api, 'resources=VCPU:7', note='only 6 left on cn1')
    candidates(api, 'resources=DISK_GB:10,VCPU:1')
    candidates(api, 'resources=VCPU:1,FPGA:1', note='nobody has FPGA')
    candidates(api, 'resources=VCPU:1', version='1.9',
               note='before the route')


@scenario('candidates_inventory_limits',
          'reserved, allocation ratio, min and max unit and step size '
          'decide which amounts a provider is a candidate for')
def candidates_inventory_limits(api):
    api.provider('cn1', {
        'VCPU': {'total': 4, 'allocation_ratio': 4.0, 'max_unit': 4},
        'MEMORY_MB': {'total': 1024, 'reserved': 512, 'min_unit': 128,
                      'step_size': 128},
        'DISK_GB': {'total': 10, 'allocation_ratio': 1.5}})
    for query in ('VCPU:4', 'VCPU:5', 'MEMORY_MB:512', 'MEMORY_MB:640',
                  'MEMORY_MB:64', 'MEMORY_MB:200', 'DISK_GB:15',
                  'DISK_GB:16'):
        candidates(api, 'resources=' + query)


@scenario('candidates_query_errors',
          'malformed resources, unknown classes, missing groups, bad limit, '
          'group_policy, in_tree and member_of values, with their codes')
def candidates_query_errors(api):
    api.provider('cn1', COMPUTE)
    for query in ('', 'resources=', 'resources=VCPU', 'resources=VCPU:x',
                  'resources=VCPU:0', 'resources=VCPU:1,BOGUS:1',
                  'resources=VCPU:1&limit=0', 'resources=VCPU:1&limit=x',
                  'resources=VCPU:1&foo=bar',
                  'resources1=VCPU:1&resources2=MEMORY_MB:1',
                  'resources1=VCPU:1&resources2=MEMORY_MB:1'
                  '&group_policy=wrong',
                  'resources=VCPU:1&in_tree=not-a-uuid',
                  'resources=VCPU:1&member_of=not-a-uuid',
                  'resources=VCPU:1&member_of=%s,%s' % (
                      api.uuid('a1'), api.uuid('a2')),
                  'resources=VCPU:1&required=CUSTOM_NOPE',
                  'resources=VCPU:1&required=',
                  'resources=VCPU:1&required=HW_CPU_X86_SSE,,HW_CPU_X86_AVX',
                  'resources=VCPU:1&required=HW_CPU_X86_SSE,!HW_CPU_X86_SSE',
                  'resources=VCPU:1&required=in:HW_CPU_X86_SSE,'
                  '!HW_CPU_X86_AVX',
                  'resources=VCPU:1&required=in:,HW_CPU_X86_SSE',
                  'resources=VCPU:1&root_required=HW_CPU_X86_SSE'
                  '&root_required=HW_CPU_X86_AVX',
                  'resources=VCPU:1&root_required=HW_CPU_X86_SSE,'
                  '!HW_CPU_X86_SSE',
                  'resources=VCPU:1&root_required=CUSTOM_NOPE',
                  'resources=VCPU:1&same_subtree=',
                  'resources=VCPU:1&same_subtree=_X',
                  'required_X=HW_CPU_X86_SSE&resources=VCPU:1',
                  'required_X=HW_CPU_X86_SSE',
                  'resources=VCPU:1&resources_X=MEMORY_MB:1'
                  '&group_policy=none&same_subtree=_X,_Y'):
        candidates(api, query)
    for version, query in (
            ('1.10', 'resources=VCPU:1&limit=1'),
            ('1.16', 'resources=VCPU:1&required=HW_CPU_X86_SSE'),
            ('1.17', 'resources=VCPU:1&required=!HW_CPU_X86_SSE'),
            ('1.20', 'resources=VCPU:1&member_of=%s' % api.uuid('a1')),
            ('1.23', 'resources=VCPU:1&member_of=%s&member_of=%s' % (
                api.uuid('a1'), api.uuid('a2'))),
            ('1.31', 'resources=VCPU:1&member_of=!%s' % api.uuid('a1')),
            ('1.24', 'resources1=VCPU:1'),
            ('1.25', 'resources1=VCPU:1&resources2=MEMORY_MB:1'),
            ('1.25', 'resources1=VCPU:1&required2=HW_CPU_X86_SSE'),
            ('1.25', 'resources1=VCPU:1&member_of2=%s' % api.uuid('a1')),
            ('1.30', 'resources=VCPU:1&in_tree=%s' % api.uuid('cn1')),
            ('1.32', 'resources_X=VCPU:1'),
            ('1.34', 'resources=VCPU:1&root_required=HW_CPU_X86_SSE'),
            ('1.35', 'resources=VCPU:1&same_subtree=_X'),
            ('1.38', 'resources=VCPU:1&required=in:HW_CPU_X86_SSE,'
                     'HW_CPU_X86_AVX'),
            ('1.38', 'resources=VCPU:1&required=CUSTOM_NOPE'
                     '&required=HW_CPU_X86_SSE')):
        candidates(api, query, version=version)


@scenario('candidates_nested',
          'a compute node with NUMA and NIC children: the unnumbered group '
          'spanning the tree, granular groups, isolate, in_tree, 1.28 views')
def candidates_nested(api):
    cn = api.provider('cn', {'DISK_GB': 100})
    child(api, 'numa0', cn, {'VCPU': 4, 'MEMORY_MB': 1024})
    child(api, 'numa1', cn, {'VCPU': 4, 'MEMORY_MB': 1024})
    pf = child(api, 'pf0', cn, {'SRIOV_NET_VF': 4})
    child(api, 'pf1', cn, {'SRIOV_NET_VF': 2})
    other = api.provider('other', {'VCPU': 2, 'MEMORY_MB': 512})
    common.put(api, api.uuid('c1'), {pf: {'SRIOV_NET_VF': 3}})
    candidates(api, 'resources=VCPU:1,MEMORY_MB:512,DISK_GB:10')
    candidates(api, 'resources=VCPU:1,MEMORY_MB:512,DISK_GB:10',
               version='1.28', note='one provider per tree before 1.29')
    candidates(api, 'resources=VCPU:1,MEMORY_MB:512', version='1.28')
    candidates(api, 'resources=VCPU:1,MEMORY_MB:512,SRIOV_NET_VF:1')
    candidates(api, 'resources=DISK_GB:10&resources1=VCPU:1'
                    '&resources2=VCPU:1&group_policy=isolate')
    candidates(api, 'resources=DISK_GB:10&resources1=VCPU:1'
                    '&resources2=VCPU:1&group_policy=none')
    candidates(api, 'resources1=SRIOV_NET_VF:1&resources2=SRIOV_NET_VF:1'
                    '&group_policy=isolate')
    candidates(api, 'resources_COMPUTE=VCPU:2,MEMORY_MB:1024'
                    '&resources_NET=SRIOV_NET_VF:2&group_policy=none')
    candidates(api, 'resources1=VCPU:3&resources2=VCPU:3&group_policy=none',
               note='the same class twice from one provider must fit')
    candidates(api, 'resources=VCPU:1&in_tree=%s' % cn)
    candidates(api, 'resources=VCPU:1&in_tree=%s' % api.uuid('numa1'))
    candidates(api, 'resources=VCPU:1&in_tree=%s' % other)
    candidates(api, 'resources=VCPU:1&in_tree=%s' % api.uuid('nobody'))
    candidates(api, 'resources1=VCPU:1&in_tree1=%s&resources2=VCPU:1'
                    '&group_policy=none' % api.uuid('numa0'))


@scenario('candidates_limit',
          'limit keeps the first candidates in placement\'s order and the '
          'summaries of their tree')
def candidates_limit(api):
    cn = api.provider('cn')
    for name in ('numa0', 'numa1', 'numa2'):
        child(api, name, cn, {'VCPU': 4, 'MEMORY_MB': 1024})
    for limit in ('1', '2', '9'):
        candidates(api, 'resources=VCPU:1,MEMORY_MB:1&limit=' + limit)
    candidates(api, 'resources=VCPU:1&limit=2', version='1.16')


@scenario('candidates_traits',
          'required and forbidden traits, any-of traits from 1.39 and the '
          'last required before it, on single providers and across a tree')
def candidates_traits(api):
    fast = api.provider('fast', COMPUTE)
    api.provider('slow', COMPUTE)
    gpu = api.provider('gpu', COMPUTE)
    traits(api, fast, 'HW_CPU_X86_AVX2', 'CUSTOM_GOLD')
    traits(api, gpu, 'HW_CPU_X86_AVX2', 'CUSTOM_SILVER')
    for query in ('required=HW_CPU_X86_AVX2', 'required=!HW_CPU_X86_AVX2',
                  'required=HW_CPU_X86_AVX2,!CUSTOM_SILVER',
                  'required=in:CUSTOM_GOLD,CUSTOM_SILVER',
                  'required=in:CUSTOM_GOLD,CUSTOM_SILVER&required=!'
                  'CUSTOM_GOLD',
                  'required=CUSTOM_GOLD&required=CUSTOM_SILVER'):
        candidates(api, 'resources=VCPU:1&' + query)
    candidates(api, 'resources=VCPU:1&required=CUSTOM_GOLD'
                    '&required=CUSTOM_SILVER', version='1.38',
               note='before 1.39 the last required counts')
    candidates(api, 'resources=VCPU:1&required=HW_CPU_X86_AVX2',
               version='1.17')
    candidates(api, 'resources=VCPU:1&required=!CUSTOM_GOLD',
               version='1.22')
    cn = api.provider('cn')
    numa = child(api, 'numa0', cn, {'VCPU': 4, 'MEMORY_MB': 512})
    nic = child(api, 'nic0', cn, {'SRIOV_NET_VF': 4})
    traits(api, numa, 'HW_NUMA_ROOT')
    traits(api, nic, 'CUSTOM_PHYSNET_A')
    candidates(api, 'resources=VCPU:1,SRIOV_NET_VF:1'
                    '&required=HW_NUMA_ROOT,CUSTOM_PHYSNET_A',
               note='the unnumbered group\'s traits, met together')
    candidates(api, 'resources=VCPU:1&required=CUSTOM_PHYSNET_A',
               note='a trait of a provider not in the candidate')
    candidates(api, 'resources1=SRIOV_NET_VF:1&required1=CUSTOM_PHYSNET_A'
                    '&resources2=VCPU:1&required2=!CUSTOM_PHYSNET_A'
                    '&group_policy=none')


@scenario('candidates_aggregates',
          'member_of with one, any of several, all of several and '
          'forbidden aggregates, per group and across a tree')
def candidates_aggregates(api):
    rack1 = api.provider('rack1-cn', COMPUTE)
    rack2 = api.provider('rack2-cn', COMPUTE)
    api.provider('loose-cn', COMPUTE)
    aggregates(api, rack1, 'rack1', 'az1')
    aggregates(api, rack2, 'rack2', 'az1')
    a = {name: api.uuid(name) for name in ('rack1', 'rack2', 'az1', 'az2')}
    for query in ('member_of=%(rack1)s', 'member_of=in:%(rack1)s,%(rack2)s',
                  'member_of=%(az1)s&member_of=%(rack2)s',
                  'member_of=!%(rack1)s', 'member_of=!in:%(rack1)s,%(az2)s',
                  'member_of=%(az2)s', 'member_of=%(az1)s&member_of=!'
                  '%(rack2)s'):
        candidates(api, 'resources=VCPU:1&' + query % a)
    candidates(api, 'resources=VCPU:1&member_of=%s' % a['rack1'],
               version='1.21')
    cn = api.provider('cn')
    child(api, 'numa0', cn, {'VCPU': 4})
    aggregates(api, cn, 'az2')
    candidates(api, 'resources=VCPU:1&member_of=%s' % a['az2'],
               note='the root\'s aggregate spans its tree')
    candidates(api, 'resources1=VCPU:1&member_of1=%s' % a['az2'],
               note='but not for a numbered group')
    candidates(api, 'resources=VCPU:1&member_of=!%s' % a['az2'])


@scenario('candidates_sharing',
          'a sharing provider (MISC_SHARES_VIA_AGGREGATE) gives disk to the '
          'compute nodes of its aggregate, alone or with their own')
def candidates_sharing(api):
    cn1 = api.provider('cn1', COMPUTE)
    cn2 = api.provider('cn2', dict(COMPUTE, DISK_GB=20))
    api.provider('cn3', COMPUTE)
    nfs = api.provider('nfs', {'DISK_GB': 500})
    api.provider('lonely-nfs', {'DISK_GB': 500})
    traits(api, nfs, SHARES)
    traits(api, api.uuid('lonely-nfs'), SHARES)
    for uuid in (cn1, cn2, nfs):
        aggregates(api, uuid, 'shared-storage')
    candidates(api, 'resources=VCPU:1,DISK_GB:10')
    candidates(api, 'resources=VCPU:1,DISK_GB:100')
    candidates(api, 'resources=DISK_GB:100')
    candidates(api, 'resources=VCPU:1,DISK_GB:10&member_of=%s'
               % api.uuid('shared-storage'))
    candidates(api, 'resources=VCPU:1,DISK_GB:10&member_of=!%s'
               % api.uuid('shared-storage'))
    candidates(api, 'resources=VCPU:1,DISK_GB:10', version='1.28')
    candidates(api, 'resources=VCPU:1,DISK_GB:10&in_tree=%s' % cn1,
               note='in_tree leaves sharing providers out')
    candidates(api, 'resources1=VCPU:1&resources2=DISK_GB:10'
                    '&group_policy=isolate')


@scenario('candidates_sharing_single_group',
          'one group alone over two sharing disks and the trees of their '
          'aggregates: numbered, named and unnumbered, each disk once')
def candidates_sharing_single_group(api):
    cn1 = api.provider('cn1', COMPUTE)
    api.provider('cn2', COMPUTE)
    cn3 = api.provider('cn3')
    child(api, 'cn3-numa0', cn3, COMPUTE)
    cn4 = api.provider('cn4', COMPUTE)
    nfs1 = api.provider('nfs1', {'DISK_GB': 1000})
    nfs2 = api.provider('nfs2', {'DISK_GB': 1000})
    for uuid in (nfs1, nfs2):
        traits(api, uuid, SHARES)
    for uuid in (cn1, api.uuid('cn2'), cn3, nfs1):
        aggregates(api, uuid, 'storage')
    aggregates(api, cn4, 'rack')
    aggregates(api, nfs2, 'storage', 'rack')
    for query in ('resources1=DISK_GB:800',
                  'resources1=DISK_GB:800&group_policy=isolate',
                  'resources_DISK=DISK_GB:800&group_policy=none',
                  'resources=DISK_GB:800',
                  'resources1=DISK_GB:800&member_of1=%s'
                  % api.uuid('rack'),
                  'resources1=DISK_GB:800&limit=1'):
        candidates(api, query)
    candidates(api, 'resources1=DISK_GB:800', version='1.25')
    candidates(api, 'resources=VCPU:1&resources1=DISK_GB:800')


@scenario('candidates_order',
          'placement\'s order: inventory rows out of provider order, a '
          'reused provider id, two sharing aggregates, swapped groups, limit')
def candidates_order(api):
    for n in range(1, 7):
        api.provider('cn%d' % n)
    for n in (4, 2, 6, 1, 5, 3):
        api.request('PUT', '/resource_providers/%s/inventories'
                    % api.uuid('cn%d' % n),
                    {'resource_provider_generation': 0,
                     'inventories': {'MEMORY_MB': {'total': 2048},
                                     'VCPU': {'total': 8}}},
                    version='1.26', note='setup')
    api.request('DELETE', '/resource_providers/%s' % api.uuid('cn6'),
                note='its id is given to the next provider')
    host = api.provider('host', {'DISK_GB': 100})
    for n in range(3):
        child(api, 'host-numa%d' % n, host,
              {'VCPU': 4, 'MEMORY_MB': 1024, 'SRIOV_NET_VF': 2})
    nfs1 = api.provider('nfs1', {'DISK_GB': 500})
    nfs2 = api.provider('nfs2', {'DISK_GB': 500})
    traits(api, nfs1, SHARES)
    traits(api, nfs2, 'CUSTOM_Z', 'CUSTOM_A', SHARES, 'HW_CPU_X86_AVX2')
    traits(api, api.uuid('cn1'), 'CUSTOM_M', 'CUSTOM_A', 'HW_CPU_X86_SSE')
    for name, aggs in (('cn1', 'a'), ('cn2', 'a'), ('cn3', 'b'),
                       ('host', 'b'), ('nfs1', 'a'), ('nfs2', 'ab')):
        aggregates(api, api.uuid(name), *aggs)
    for query in ('resources=VCPU:1', 'resources=VCPU:1,MEMORY_MB:64'
                  '&limit=4', 'resources=VCPU:1,DISK_GB:10',
                  'resources=VCPU:1,MEMORY_MB:64,DISK_GB:10,SRIOV_NET_VF:1',
                  'resources1=VCPU:1&resources2=VCPU:1&group_policy=none',
                  'resources1=VCPU:1&resources2=MEMORY_MB:64'
                  '&group_policy=isolate',
                  'resources=DISK_GB:10&resources1=VCPU:1'
                  '&resources2=SRIOV_NET_VF:1&group_policy=none&limit=9'):
        candidates(api, query)
    candidates(api, 'resources=VCPU:1,MEMORY_MB:64', version='1.10')
    candidates(api, 'resources=VCPU:1,DISK_GB:10', version='1.28')


@scenario('candidates_subtrees_and_roots',
          'same_subtree with resourceless groups, and root_required, on '
          'two compute nodes with NUMA and NIC children')
def candidates_subtrees_and_roots(api):
    for host in ('cn1', 'cn2'):
        cn = api.provider(host)
        for n in ('0', '1'):
            numa = child(api, '%s-numa%s' % (host, n), cn,
                         {'VCPU': 4, 'MEMORY_MB': 1024})
            nic = child(api, '%s-nic%s' % (host, n), numa,
                        {'SRIOV_NET_VF': 2})
            traits(api, numa, 'HW_NUMA_ROOT')
            traits(api, nic, 'CUSTOM_PHYSNET_%s' % ('A' if n == '0' else 'B'))
    traits(api, api.uuid('cn2'), 'COMPUTE_STATUS_DISABLED')
    candidates(api, 'resources_CPU=VCPU:1&resources_NET=SRIOV_NET_VF:1'
                    '&required_NET=CUSTOM_PHYSNET_A&group_policy=none'
                    '&same_subtree=_CPU,_NET')
    candidates(api, 'resources_CPU=VCPU:1&required_NUMA=HW_NUMA_ROOT'
                    '&resources_NET=SRIOV_NET_VF:1&group_policy=none'
                    '&same_subtree=_NUMA,_CPU,_NET')
    candidates(api, 'resources=VCPU:1&root_required=!COMPUTE_STATUS_DISABLED')
    candidates(api, 'resources=VCPU:1&root_required=COMPUTE_STATUS_DISABLED')
    candidates(api, 'resources=VCPU:1&root_required=HW_NUMA_ROOT',
               note='a child\'s trait is not the root\'s')
    candidates(api, 'resources_CPU=VCPU:2&resources_NET=SRIOV_NET_VF:2'
                    '&group_policy=isolate&same_subtree=_CPU,_NET'
                    '&root_required=!COMPUTE_STATUS_DISABLED')
