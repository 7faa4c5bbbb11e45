"""Tests for shelvefix.placement.objects.candidates and candidate_search.

The state is built directly (providers, inventories, traits and
aggregates on the records, allocations through the state), so these run
without HTTP; the contract scenarios compare the same searches with real
placement.
"""

import os_traits
import testtools

from shelvefix.placement import exception
from shelvefix.placement.objects import allocation
from shelvefix.placement.objects import candidates
from shelvefix.placement.objects import models
from shelvefix.placement.objects import state as state_mod

SHARES = os_traits.MISC_SHARES_VIA_AGGREGATE


def group(suffix='', resources=None, required=(), forbidden=(),
          member_of=(), forbidden_aggs=(), in_tree=None):
    return candidates.RequestGroup(
        suffix, bool(suffix), dict(resources or {}),
        [set([name]) if isinstance(name, str) else set(name)
         for name in required],
        set(forbidden), [set(any_of) for any_of in member_of],
        set(forbidden_aggs), in_tree)


def wide(limit=None, group_policy=None, anchor_required=(),
         anchor_forbidden=(), same_subtrees=(), nested_aware=True):
    return candidates.RequestWide(limit, group_policy, set(anchor_required),
                                  set(anchor_forbidden),
                                  [set(s) for s in same_subtrees],
                                  nested_aware)


class CandidatesTestCase(testtools.TestCase):

    def setUp(self):
        super(CandidatesTestCase, self).setUp()
        self.state = state_mod.PlacementState()

    def provider(self, name, inventory=None, parent=None, traits=(),
                 aggregates=()):
        uuid = '%s-0000-0000-0000-000000000000' % name.ljust(8, '0')
        self.state.create_provider(name, uuid, parent)
        if inventory:
            self.state.set_inventories(uuid, 0, {
                rc: models.Inventory.build(total)
                for rc, total in inventory.items()})
        self.state._providers[uuid].traits.update(traits)
        if aggregates:
            self.state.set_provider_aggregates(uuid, list(aggregates))
        return uuid

    def search(self, *groups, **kwargs):
        found, summaries = self.state.allocation_candidates(
            list(groups), wide(**kwargs))
        return ([(c.resources, c.mappings) for c in found],
                [s.uuid for s in summaries])

    def providers_of(self, found):
        return sorted(tuple(sorted(resources)) for resources, _m in found)

    def test_single_providers_and_capacity(self):
        cn1 = self.provider('cn1', {'VCPU': 4, 'MEMORY_MB': 512})
        cn2 = self.provider('cn2', {'VCPU': 1})
        self.state.replace_allocations([allocation.ConsumerWrite(
            'c1', {cn1: {'VCPU': 3}}, 'p', 'u', None, None)])
        found, shown = self.search(group(resources={'VCPU': 1}))
        self.assertEqual([(cn1,), (cn2,)], self.providers_of(found))
        self.assertEqual([cn1, cn2], shown)
        found, _shown = self.search(group(resources={'VCPU': 2}))
        self.assertEqual([], found)
        found, shown = self.search(group(resources={'VCPU': 1,
                                                    'MEMORY_MB': 64}))
        self.assertEqual([({cn1: {'VCPU': 1, 'MEMORY_MB': 64}},
                           {'': [cn1]})], found)
        self.assertEqual([cn1], shown)
        _found, summaries = self.state.allocation_candidates(
            [group(resources={'VCPU': 1})], wide())
        self.assertEqual({'VCPU': {'capacity': 4, 'used': 3},
                          'MEMORY_MB': {'capacity': 512, 'used': 0}},
                         summaries[0].resources)

    def test_unknown_class_and_trait(self):
        self.provider('cn1', {'VCPU': 4})
        self.assertRaises(exception.ResourceClassNotFound, self.search,
                          group(resources={'VCPU': 1, 'BOGUS': 1}))
        e = self.assertRaises(exception.TraitNotFound, self.search,
                              group(resources={'VCPU': 1},
                                    required=['CUSTOM_NOPE']))
        self.assertEqual('No such trait(s): CUSTOM_NOPE.', str(e))
        e = self.assertRaises(exception.TraitNotFound, self.search,
                              group(resources={'VCPU': 1}),
                              anchor_required=['CUSTOM_ROOT'])
        self.assertIn('CUSTOM_ROOT', str(e))

    def test_a_group_without_candidates_stops_the_search(self):
        # As in placement: the second group's unknown trait is never
        # looked at once the first group has nothing.
        self.provider('cn1', {'VCPU': 4})
        found, shown = self.search(
            group('1', {'VCPU': 9}), group('2', {'VCPU': 1},
                                           required=['CUSTOM_NOPE']),
            group_policy='none')
        self.assertEqual(([], []), (found, shown))

    def test_tree_spreads_the_unnumbered_group(self):
        cn = self.provider('cn', {'DISK_GB': 100})
        numa0 = self.provider('numa0', {'VCPU': 4}, cn)
        numa1 = self.provider('numa1', {'VCPU': 4}, cn,
                              traits=['HW_NUMA_ROOT'])
        found, shown = self.search(group(resources={'VCPU': 1,
                                                    'DISK_GB': 10}))
        self.assertEqual([(cn, numa0), (cn, numa1)],
                         self.providers_of(found))
        self.assertEqual([cn, numa0, numa1], shown)
        found, _shown = self.search(group(resources={'VCPU': 1,
                                                     'DISK_GB': 10},
                                          required=['HW_NUMA_ROOT']))
        self.assertEqual([(cn, numa1)], self.providers_of(found))
        found, shown = self.search(group(resources={'VCPU': 1,
                                                    'DISK_GB': 10}),
                                   nested_aware=False)
        self.assertEqual(([], []), (found, shown))
        found, shown = self.search(group(resources={'VCPU': 1}),
                                   nested_aware=False)
        self.assertEqual([(numa0,), (numa1,)], self.providers_of(found))
        self.assertEqual([numa0, numa1], shown)

    def test_granular_groups_and_policies(self):
        cn = self.provider('cn')
        numa0 = self.provider('numa0', {'VCPU': 4}, cn)
        numa1 = self.provider('numa1', {'VCPU': 4}, cn)
        two = (group('1', {'VCPU': 3}), group('2', {'VCPU': 3}))
        found, _shown = self.search(*two, group_policy='isolate')
        self.assertEqual([(numa0, numa1), (numa0, numa1)],
                         self.providers_of(found))
        found, _shown = self.search(*two, group_policy='none')
        # 3 + 3 from one NUMA node would not fit.
        self.assertEqual(2, len(found))
        found, _shown = self.search(group('1', {'VCPU': 1}),
                                    group('2', {'VCPU': 1}),
                                    group_policy='none')
        self.assertEqual(4, len(found))
        self.assertIn(({numa0: {'VCPU': 2}}, {'1': [numa0], '2': [numa0]}),
                      found)

    def test_same_subtree_and_root_traits(self):
        for host in ('cn1', 'cn2'):
            cn = self.provider(host, traits=(
                ['COMPUTE_STATUS_DISABLED'] if host == 'cn2' else []))
            numa = self.provider(host + 'n', {'VCPU': 2}, cn)
            self.provider(host + 'v', {'SRIOV_NET_VF': 2}, numa)
            self.provider(host + 'w', {'SRIOV_NET_VF': 2}, cn)
        groups = (group('_CPU', {'VCPU': 1}), group('_NET',
                                                    {'SRIOV_NET_VF': 1}))
        found, _shown = self.search(*groups, group_policy='none')
        self.assertEqual(4, len(found))
        found, _shown = self.search(*groups, group_policy='none',
                                    same_subtrees=[['_CPU', '_NET']])
        self.assertEqual(2, len(found))
        found, _shown = self.search(
            *groups, group_policy='none', same_subtrees=[['_CPU', '_NET']],
            anchor_forbidden=['COMPUTE_STATUS_DISABLED'])
        self.assertEqual(1, len(found))

    def test_sharing_provider_serves_its_aggregate(self):
        cn1 = self.provider('cn1', {'VCPU': 4}, aggregates=['agg'])
        cn2 = self.provider('cn2', {'VCPU': 4}, aggregates=['agg'])
        self.provider('cn3', {'VCPU': 4})
        nfs = self.provider('nfs', {'DISK_GB': 100}, traits=[SHARES],
                            aggregates=['agg'])
        found, shown = self.search(group(resources={'VCPU': 1,
                                                    'DISK_GB': 10}))
        self.assertEqual([(cn1, nfs), (cn2, nfs)], self.providers_of(found))
        self.assertEqual([cn1, cn2, nfs], shown)
        found, _shown = self.search(group(resources={'DISK_GB': 10}))
        self.assertEqual([(nfs,)], self.providers_of(found))
        found, _shown = self.search(group('1', {'VCPU': 1}),
                                    group('2', {'DISK_GB': 10}),
                                    group_policy='isolate')
        self.assertEqual([(cn1, nfs), (cn2, nfs)], self.providers_of(found))
        found, _shown = self.search(group(resources={'VCPU': 1,
                                                     'DISK_GB': 10},
                                          in_tree=cn1))
        self.assertEqual([], found)

    def test_a_sharing_only_request_keeps_one_anchor(self):
        # Placement keeps equal requests once whatever tree anchors them:
        # the disk alone is anchored in one tree only (the first its set
        # of (provider, root, class) ids lists), and pairs with that
        # tree's VCPU only.
        nfs = self.provider('nfs', {'DISK_GB': 100}, traits=[SHARES],
                            aggregates=['agg'])
        cn1 = self.provider('cn1', {'VCPU': 4}, aggregates=['agg'])
        cn2 = self.provider('cn2', {'VCPU': 4}, aggregates=['agg'])
        found, _shown = self.search(group(resources={'DISK_GB': 10}),
                                    group('1', {'VCPU': 1}),
                                    group_policy='none')
        disk = self.state.class_id('DISK_GB')
        first = next(iter(set((1, root, disk) for root in (1, 2, 3))))
        self.assertEqual([((cn1, cn2)[first[1] - 2], nfs)],
                         self.providers_of(found))

    def test_one_granular_group_of_sharing_providers_once_each(self):
        # A numbered group from a sharing provider anchors in every tree
        # of its aggregate; alone, those are one candidate per provider
        # (issue 19: the double listed each once per anchor).
        for name in ('cn1', 'cn2', 'cn3'):
            self.provider(name, {'VCPU': 4}, aggregates=['agg'])
        nfs1 = self.provider('nfs1', {'DISK_GB': 1000}, traits=[SHARES],
                             aggregates=['agg'])
        nfs2 = self.provider('nfs2', {'DISK_GB': 1000}, traits=[SHARES],
                             aggregates=['agg'])
        for groups in ([group('1', {'DISK_GB': 800})],
                       [group('_DISK', {'DISK_GB': 800})]):
            found, shown = self.search(*groups, group_policy='isolate')
            self.assertEqual([(nfs1,), (nfs2,)], self.providers_of(found))
            self.assertEqual([nfs1, nfs2], shown)
        found, _shown = self.search(group(resources={'DISK_GB': 800}))
        self.assertEqual([(nfs1,), (nfs2,)], self.providers_of(found))

    def test_member_of_narrows_sharing_for_the_rest_of_the_request(self):
        # A placement quirk the double keeps: a group with member_of that
        # looks for shared capacity shrinks the request's set of sharing
        # providers to that group's aggregates.
        cn = self.provider('cn', {'VCPU': 4}, aggregates=['a'])
        nfs_a = self.provider('nfsa', {'DISK_GB': 100}, traits=[SHARES],
                              aggregates=['a'])
        nfs_b = self.provider('nfsb', {'DISK_GB': 100}, traits=[SHARES],
                              aggregates=['a', 'b'])
        found, _shown = self.search(group(resources={'VCPU': 1,
                                                     'DISK_GB': 1},
                                          member_of=[['a']]))
        self.assertEqual([(cn, nfs_a), (cn, nfs_b)],
                         self.providers_of(found))
        self.assertEqual(len(found), len(self.search(
            group(resources={'VCPU': 1, 'DISK_GB': 1},
                  member_of=[['b', 'a']]))[0]))

    def test_limit_keeps_the_first_and_the_summaries_of_their_trees(self):
        cns = [self.provider('cn%d' % n, {'VCPU': 4}) for n in range(4)]
        found, shown = self.search(group(resources={'VCPU': 1}))
        self.assertEqual(cns, shown)
        limited, shown = self.search(group(resources={'VCPU': 1}), limit=2)
        self.assertEqual(found[:2], limited)
        self.assertEqual([uuid for uuid in cns
                          if any(uuid in resources
                                 for resources, _m in limited)], shown)

    def test_placements_order(self):
        # The order of the Python sets placement fills, whatever the
        # process' string hashing: providers with room in inventory row
        # order, then its set of requests, hashed by (id, class, amount).
        cns = [self.provider('cn%d' % n) for n in range(1, 7)]
        for uuid in reversed(cns):
            self.state.set_inventories(uuid, 0, {
                'VCPU': models.Inventory.build(8)})
        pairs = set()
        for rp_id in range(6, 0, -1):
            pairs.add((rp_id, rp_id))
        expected = set()
        for rp_id, _root in pairs:
            expected.add(_Key([(rp_id, 'VCPU', 2)]))
        found, _shown = self.search(group(resources={'VCPU': 2}))
        self.assertEqual([{cns[key.resources[0][0] - 1]: {'VCPU': 2}}
                          for key in expected],
                         [resources for resources, _m in found])

    def test_summaries_in_placements_order(self):
        # Tree by tree (roots by id), each provider by id; traits by id:
        # the standard ones first, then custom ones as they were created.
        for name in ('CUSTOM_Z', 'CUSTOM_A'):
            self.state.ensure_trait(name)
        cn1 = self.provider('cn1', {'DISK_GB': 100})
        nfs = self.provider('nfs', {'DISK_GB': 100}, aggregates=['agg'],
                            traits=['CUSTOM_A', SHARES, 'CUSTOM_Z'])
        numa = self.provider('numa', {'MEMORY_MB': 1024, 'VCPU': 4}, cn1)
        self.state.set_provider_aggregates(cn1, ['agg'])
        _found, summaries = self.state.allocation_candidates(
            [group(resources={'VCPU': 1, 'DISK_GB': 1})], wide())
        self.assertEqual([cn1, numa, nfs], [s.uuid for s in summaries])
        self.assertEqual([SHARES, 'CUSTOM_Z', 'CUSTOM_A'],
                         summaries[2].traits)
        self.assertEqual(['VCPU', 'MEMORY_MB'], list(summaries[1].resources))


class _Key(object):
    """A request as placement hashes and compares it."""

    def __init__(self, resources):
        self.resources = resources

    def __hash__(self):
        return hash(tuple(sorted(self.resources, key=hash)))

    def __eq__(self, other):
        return set(self.resources) == set(other.resources)
