"""Allocation candidates: the placement double against real placement.

Both backends get the same deployment-shaped placement over HTTP, through
the same keystoneauth1 adapter: a few hundred providers, mostly flat
compute nodes, some nested ones (NUMA and NIC children), shared storage,
traits, aggregates and some allocations. Then the same set of ``GET
/allocation_candidates`` queries (the kinds nova's scheduler sends: a
flavor with ``root_required`` and ``limit``, traits, an availability
zone, a target host, NUMA, granular NIC groups, ``same_subtree``) is timed
on each, in one run, and the answers are checked to agree in size.

Printed: the median time per query on each backend and the ratio; the
ratio of the totals is the figure (the target is at least 10x).
Usage: ``python benchmarks/bench_allocation_candidates.py
[--hosts N] [--runs N]``.
"""

import argparse
import statistics
import sys
import time
import uuid

from shelvefix.backends import fixture as double_fixture
from shelvefix.backends import real

# A sibling of this script: its directory is first on sys.path.
import figures

NAMESPACE = uuid.UUID('b3c1a1f6-6d1c-4c8f-9a55-1798688c0ffe')
SHARES = 'MISC_SHARES_VIA_AGGREGATE'


def _uuid(name):
    return str(uuid.uuid5(NAMESPACE, name))


def _call(adapter, method, path, body=None, version='1.39'):
    response = adapter.request(path, method, json=body, microversion=version,
                               raise_exc=False)
    if response.status_code >= 400:
        raise RuntimeError('%s %s: %d %s' % (method, path,
                                             response.status_code,
                                             response.text))
    return response


def _provider(adapter, name, parent=None, inventory=None, traits=(),
              aggregates=()):
    uuid_ = _uuid(name)
    body = {'name': name, 'uuid': uuid_}
    if parent:
        body['parent_provider_uuid'] = parent
    _call(adapter, 'POST', '/resource_providers', body)
    generation = 0
    if inventory:
        generation = _call(
            adapter, 'PUT', '/resource_providers/%s/inventories' % uuid_,
            {'resource_provider_generation': generation,
             'inventories': {rc: {'total': total}
                             for rc, total in inventory.items()}}
        ).json()['resource_provider_generation']
    if traits:
        generation = _call(
            adapter, 'PUT', '/resource_providers/%s/traits' % uuid_,
            {'resource_provider_generation': generation,
             'traits': list(traits)}).json()['resource_provider_generation']
    if aggregates:
        _call(adapter, 'PUT', '/resource_providers/%s/aggregates' % uuid_,
              {'resource_provider_generation': generation,
               'aggregates': [_uuid(a) for a in aggregates]})
    return uuid_


def build(adapter, hosts):
    """The deployment: flat compute nodes, nested ones, shared storage.

    ``hosts`` flat compute nodes and a tenth as many nested ones (two NUMA
    children, a NIC under the first); traits, aggregates and a few
    allocations.
    """
    for name in ('CUSTOM_PHYSNET_A', 'CUSTOM_PHYSNET_B', 'CUSTOM_GOLD'):
        _call(adapter, 'PUT', '/traits/%s' % name)
    for s in range(3):
        _provider(adapter, 'nfs%d' % s, inventory={'DISK_GB': 10000},
                  traits=[SHARES], aggregates=['storage%d' % s])
    for h in range(hosts):
        _provider(adapter, 'cn%d' % h,
                  inventory={'VCPU': 32, 'MEMORY_MB': 65536, 'DISK_GB': 500},
                  traits=(['COMPUTE_STATUS_DISABLED'] if h % 10 == 9 else
                          ['CUSTOM_GOLD'] if h % 3 == 0 else []),
                  aggregates=['az%d' % (h % 2)])
        if h % 4 == 0:
            _call(adapter, 'PUT', '/allocations/%s' % _uuid('vm%d' % h), {
                'allocations': {_uuid('cn%d' % h): {
                    'resources': {'VCPU': 30, 'MEMORY_MB': 4096}}},
                'project_id': 'p', 'user_id': 'u',
                'consumer_generation': None, 'consumer_type': 'INSTANCE'})
    for h in range(hosts // 10):
        cn = _provider(adapter, 'nested%d' % h, inventory={'DISK_GB': 200},
                       aggregates=['storage%d' % (h % 3)])
        for n in range(2):
            numa = _provider(adapter, 'nested%d-numa%d' % (h, n),
                             parent=cn,
                             inventory={'VCPU': 16, 'MEMORY_MB': 32768},
                             traits=['HW_NUMA_ROOT', 'HW_CPU_X86_AVX2'])
            if n == 0:
                _provider(adapter, 'nested%d-nic' % h, parent=numa,
                          inventory={'SRIOV_NET_VF': 8},
                          traits=['CUSTOM_PHYSNET_%s' % 'AB'[h % 2]])


QUERIES = [
    ('flavor', 'resources=VCPU:2,MEMORY_MB:2048,DISK_GB:20'
               '&root_required=!COMPUTE_STATUS_DISABLED&limit=1000'),
    ('traits', 'resources=VCPU:2,MEMORY_MB:2048,DISK_GB:20'
               '&root_required=CUSTOM_GOLD,!COMPUTE_STATUS_DISABLED'),
    ('member_of', 'resources=VCPU:4,MEMORY_MB:4096&member_of=%s'
                  % _uuid('az1')),
    ('in_tree', 'resources=VCPU:1,MEMORY_MB:512&in_tree=%s' % _uuid('cn7')),
    ('limit', 'resources=VCPU:1,MEMORY_MB:512&limit=10'),
    ('numa', 'resources=VCPU:2,MEMORY_MB:1024,DISK_GB:10'
             '&required=HW_NUMA_ROOT'),
    ('granular', 'resources=VCPU:2,MEMORY_MB:1024,DISK_GB:10'
                 '&resources1=SRIOV_NET_VF:1&required1=CUSTOM_PHYSNET_A'
                 '&resources2=SRIOV_NET_VF:1&group_policy=none'),
    ('same_subtree', 'resources_CPU=VCPU:1&resources_NET=SRIOV_NET_VF:1'
                     '&group_policy=none&same_subtree=_CPU,_NET'),
]


def measure(adapter, runs):
    """``{query name: (median seconds, candidates)}``."""
    results = {}
    for name, query in QUERIES:
        path = '/allocation_candidates?' + query
        times = []
        count = None
        for _ in range(runs):
            start = time.perf_counter()
            response = _call(adapter, 'GET', path)
            times.append(time.perf_counter() - start)
            count = len(response.json()['allocation_requests'])
        results[name] = (statistics.median(times), count)
    return results


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument('--hosts', type=figures.count, default=250,
                        help='flat compute nodes (default 250; a tenth as '
                             'many nested ones come with them)')
    parser.add_argument('--runs', type=figures.count, default=5,
                        help='times each query runs per backend')
    args = parser.parse_args(argv)
    if not real.available():
        print('skipped: %s' % real.INSTALL_HINT)
        return 0
    measured = {}
    for label, make in (('double', double_fixture.PlacementFixture),
                        ('real', real.RealPlacementFixture)):
        with make() as placement:
            start = time.perf_counter()
            build(placement.adapter, args.hosts)
            setup = time.perf_counter() - start
            measured[label] = measure(placement.adapter, args.runs)
            print('%s: %d providers set up in %.1f s'
                  % (label, args.hosts + args.hosts // 10 * 4 + 3, setup))
    print('%-14s %12s %12s %8s %11s' % ('query', 'double (ms)', 'real (ms)',
                                        'ratio', 'candidates'))
    totals = [0.0, 0.0]
    for name, _query in QUERIES:
        double, count = measured['double'][name]
        placement, real_count = measured['real'][name]
        if count != real_count:
            print('%s: the double found %d candidates, placement %d'
                  % (name, count, real_count))
            return 1
        totals[0] += double
        totals[1] += placement
        print('%-14s %12.2f %12.2f %7.1fx %11d' % (
            name, double * 1000, placement * 1000,
            figures.ratio(placement, double, name + ' real/double'), count))
    print('all queries: double %.1f ms, real %.1f ms: real/double %.1fx'
          % (totals[0] * 1000, totals[1] * 1000,
             figures.ratio(totals[1], totals[0], 'all queries real/double')))
    return 0


if __name__ == '__main__':
    sys.exit(figures.main(main))
