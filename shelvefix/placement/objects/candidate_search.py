"""The search behind allocation candidates: one request group at a time.

:class:`Snapshot` reads what a search needs from the state once (trees,
traits, aggregates, inventories, usage), so the search works on plain
sets. :class:`GroupSearch` finds, for one request group, the allocation
requests that satisfy it alone, the way placement does:

* a group whose resources must come from one provider (a numbered group,
  or the unnumbered one when there are neither sharing providers nor
  provider trees) matches providers that have all its resources, required
  traits and aggregates themselves; a sharing provider also anchors in
  every tree it shares an aggregate with;
* the unnumbered group otherwise combines providers of one tree, and
  sharing providers (``MISC_SHARES_VIA_AGGREGATE``) reachable through an
  aggregate, resource class by resource class; its traits are then met by
  the providers of each combination together, and its aggregates by each
  provider or the root of its tree.

Request groups and the combined candidates are
:mod:`~shelvefix.placement.objects.candidates`' business.
"""

import collections
import itertools

import os_traits

from shelvefix.placement import exception
from shelvefix.placement.objects import allocation_request

SHARES_VIA_AGGREGATE = os_traits.MISC_SHARES_VIA_AGGREGATE


class NoCandidates(Exception):
    """The request cannot be met at all: the answer is empty."""


class Snapshot(object):
    """What the search reads of the state, taken under its lock.

    The sets and records are the state's own, not copies: a snapshot is
    only valid while the lock is held, and the search never changes them.

    :ivar order: provider uuids in creation order (placement's ids)
    :ivar root: ``{uuid: root uuid}``; :ivar parent: ``{uuid: parent}``
    :ivar traits: ``{uuid: set of trait names}``
    :ivar aggregates: ``{uuid: set of aggregate uuids}``
    :ivar inventories: ``{uuid: {rc: InventoryRecord}}``
    :ivar used: ``{(uuid, rc): amount allocated}``
    :ivar sharing_by_trait: providers with ``MISC_SHARES_VIA_AGGREGATE``
    :ivar sharing: the sharing providers the search still considers
    """

    def __init__(self, state):
        self.order = list(state._providers)
        self.index = {uuid: i for i, uuid in enumerate(self.order)}
        records = state._providers
        self.parent = {uuid: rp.parent_uuid for uuid, rp in records.items()}
        self.root = {}
        for uuid in self.order:
            top = uuid
            while self.parent[top] is not None:
                top = self.parent[top]
            self.root[uuid] = top
        self.traits = {uuid: rp.traits for uuid, rp in records.items()}
        self.aggregates = {uuid: rp.aggregates
                           for uuid, rp in records.items()}
        self.inventories = {uuid: rp.inventories
                            for uuid, rp in records.items()}
        # A plain dict read with .get(): a Counter's default is slower.
        self.used = {}
        for row in state._all_rows():
            key = (row.provider, row.resource_class)
            self.used[key] = self.used.get(key, 0) + row.used
        self.has_trees = any(p is not None for p in self.parent.values())
        # Providers sharing through aggregates. ``sharing`` is the set the
        # search works with: a group with member_of narrows it for the rest
        # of the request, as placement's shared set is narrowed in place.
        self.sharing_by_trait = set(
            uuid for uuid in self.order
            if SHARES_VIA_AGGREGATE in self.traits[uuid])
        self.sharing = set(self.sharing_by_trait)
        self._trait_known = state._trait_known
        self.class_id = state.class_id

    def check_traits(self, names):
        """Raise for the first name that is not a trait.

        :raises TraitNotFound: an unknown name.
        """
        for name in names:
            if not self._trait_known(name):
                raise exception.TraitNotFound(name=name)

    def with_resource(self, rc, amount, tree_root=None):
        """``{(provider, root)}`` with room for ``amount`` of ``rc``."""
        found = set()
        root, used = self.root, self.used
        for uuid, stored in self.inventories.items():
            stored = stored.get(rc)
            if stored is None or (tree_root is not None and
                                  root[uuid] != tree_root):
                continue
            inv = stored.inventory
            room = (inv.total - inv.reserved) * inv.allocation_ratio
            if (used.get((uuid, rc), 0) + amount <= room and
                    inv.min_unit <= amount <= inv.max_unit and
                    amount % inv.step_size == 0):
                found.add((uuid, root[uuid]))
        return found

    def in_aggregates(self, member_of):
        """Providers in one aggregate of every set of ``member_of``."""
        return set(uuid for uuid in self.order
                   if all(self.aggregates[uuid] & set(any_of)
                          for any_of in member_of))

    def with_all_traits(self, required):
        """Providers with one trait of every set of ``required``."""
        return set(uuid for uuid in self.order
                   if all(self.traits[uuid] & any_of for any_of in required))

    def with_any_trait(self, names):
        return set(uuid for uuid in self.order if self.traits[uuid] & names)

    def anchors(self, sharing):
        """``{(sharing provider, anchor root)}`` through shared aggregates."""
        found = set()
        for provider in sharing:
            aggregates = self.aggregates[provider]
            for uuid in self.order:
                if self.aggregates[uuid] & aggregates:
                    found.add((provider, self.root[uuid]))
        return found

    def capacity(self, uuid, rc):
        inv = self.inventories[uuid][rc].inventory
        return int((inv.total - inv.reserved) * inv.allocation_ratio)


class GroupSearch(object):
    """The candidates of one request group.

    Built in placement's order, so that the same request fails the same
    way: unknown resource classes, then aggregates (none matching: no
    candidates), then unknown traits, then ``in_tree``, then capacity.

    :raises ResourceClassNotFound: an unknown resource class.
    :raises TraitNotFound: an unknown trait.
    :raises NoCandidates: the group cannot be met.
    """

    def __init__(self, snap, group, anchor_roots):
        self.snap = snap
        self.group = group
        self.anchor_roots = anchor_roots
        for rc in group.resources:
            snap.class_id(rc)
        self.in_aggs = set()
        if group.member_of:
            self.in_aggs = snap.in_aggregates(group.member_of)
            if not self.in_aggs:
                raise NoCandidates()
        for any_of in group.required_traits:
            snap.check_traits(any_of)
        snap.check_traits(group.forbidden_traits)
        self.tree_root = None
        if group.in_tree:
            if group.in_tree not in snap.root:
                raise NoCandidates()
            self.tree_root = snap.root[group.in_tree]
        self.with_resource = collections.OrderedDict()
        for rc, amount in group.resources.items():
            found = snap.with_resource(rc, amount, self.tree_root)
            if not found:
                raise NoCandidates()
            self.with_resource[rc] = found

    def _anchored(self, root):
        return self.anchor_roots is None or root in self.anchor_roots

    def requests(self):
        """The group's allocation requests (a list or a set)."""
        group, snap = self.group, self.snap
        if not group.use_same_provider and (snap.sharing or snap.has_trees):
            if group.required_traits and not snap.with_any_trait(
                    set().union(*group.required_traits)):
                return set()
            return self._from_trees(self._trees_matching_all())
        return self._from_providers(self._providers_matching())

    # -- one provider for everything --------------------------------------

    def _traits_and_aggregates(self):
        group, snap = self.group, self.snap
        allowed = set()
        if group.required_traits:
            allowed = snap.with_all_traits(group.required_traits)
            if not allowed:
                return None, set()
        if group.member_of:
            allowed = allowed & self.in_aggs if allowed else set(
                self.in_aggs)
            if not allowed:
                return None, set()
        forbidden = set()
        if group.forbidden_aggs:
            bad = snap.in_aggregates([group.forbidden_aggs])
            forbidden |= bad
            if allowed:
                allowed -= bad
                if not allowed:
                    return None, set()
        if group.forbidden_traits:
            bad = snap.with_any_trait(group.forbidden_traits)
            forbidden |= bad
            if allowed:
                allowed -= bad
                if not allowed:
                    return None, set()
        return allowed, forbidden

    def _providers_matching(self):
        allowed, forbidden = self._traits_and_aggregates()
        if allowed is None:
            return []
        found = set()
        for i, pairs in enumerate(self.with_resource.values()):
            found = pairs
            ids = set(uuid for uuid, _root in pairs)
            if i == 0 and not allowed:
                allowed = ids - forbidden
            else:
                allowed &= ids
            if not allowed:
                return []
        if not self.with_resource:
            snap = self.snap
            found = set((uuid, snap.root[uuid]) for uuid in snap.order
                        if (not allowed or uuid in allowed) and
                        uuid not in forbidden)
        return [pair for pair in sorted(found, key=self._by_id)
                if pair[0] in allowed]

    def _by_id(self, pair):
        return self.snap.index[pair[0]]

    def _from_providers(self, pairs):
        snap, group = self.snap, self.group
        requests = []
        for uuid, root in pairs:
            request = allocation_request.AllocationRequest(
                root, [allocation_request.Resource(uuid, rc, amount)
                       for rc, amount in group.resources.items()],
                {group.suffix: {uuid}})
            if self._anchored(root):
                requests.append(request)
            if uuid in snap.sharing_by_trait:
                for _shared, anchor in sorted(snap.anchors([uuid])):
                    if anchor != root and self._anchored(anchor):
                        requests.append(request.anchored_at(anchor))
        return requests

    # -- several providers of a tree, and sharing providers ---------------

    def _trees_matching_all(self):
        group, snap = self.group, self.snap
        bad_aggs = (snap.in_aggregates([group.forbidden_aggs])
                    if group.forbidden_aggs else set())
        matching = set()
        for rc, pairs in self.with_resource.items():
            found = set((uuid, root, rc) for uuid, root in pairs)
            if self.in_aggs:
                snap.sharing &= self.in_aggs
            shared = set(uuid for uuid, _root in pairs) & snap.sharing
            if shared and self.tree_root is None:
                found |= set((uuid, anchor, rc)
                             for uuid, anchor in snap.anchors(shared))
            if self.anchor_roots is not None:
                found = set(c for c in found if c[1] in self.anchor_roots)
            if group.member_of:
                found = set(c for c in found
                            if {c[0], c[1]} & self.in_aggs)
            if group.forbidden_aggs:
                found = set(c for c in found
                            if not {c[0], c[1]} & bad_aggs)
            if not found:
                return set()
            if not matching:
                matching = found
            else:
                trees = (set(c[1] for c in matching) &
                         set(c[1] for c in found))
                matching = set(c for c in matching | found if c[1] in trees)
            if not matching:
                return set()
        if (not group.required_traits and not group.forbidden_traits) or (
                snap.sharing):
            return matching
        keep = self._trees_with_traits(set(c[0] for c in matching))
        return set(c for c in matching if (c[0], c[1]) in keep)

    def _trees_with_traits(self, providers):
        group, snap = self.group, self.snap
        good_roots = set(snap.root[uuid] for uuid in providers
                         if not snap.traits[uuid] & group.forbidden_traits)
        if not group.required_traits:
            return set((uuid, snap.root[uuid]) for uuid in providers
                       if snap.root[uuid] in good_roots)
        provided = collections.defaultdict(set)
        for uuid in providers:
            if not snap.traits[uuid] & group.forbidden_traits:
                provided[snap.root[uuid]] |= snap.traits[uuid]
        return set((uuid, snap.root[uuid]) for uuid in providers
                   if all(provided[snap.root[uuid]] & any_of
                          for any_of in group.required_traits))

    def _from_trees(self, matching):
        group, snap = self.group, self.snap
        rc_order = sorted(group.resources, key=snap.class_id)
        amounts = group.resources
        by_tree = {}
        for uuid, anchor, rc in matching:
            by_tree.setdefault(anchor, {}).setdefault(rc, []).append(
                allocation_request.Resource(uuid, rc, amounts[rc]))
        traits = group.required_traits or group.forbidden_traits
        shared = snap.sharing_by_trait
        index = snap.index
        requests, seen = [], set()
        # Equal requests anchored in different trees (a sharing provider
        # meeting the whole group) are kept once, as in placement's hash
        # set; which anchor stays there is an accident of its hashing, here
        # the tree created last.
        for anchor in sorted(by_tree, key=index.get, reverse=True):
            by_rc = by_tree[anchor]
            choices = [by_rc[rc] for rc in rc_order]
            for choice in choices:
                if len(choice) > 1:
                    choice.sort(key=lambda r: index[r.provider])
            if all(len(choice) == 1 for choice in choices):
                combinations = [tuple(choice[0] for choice in choices)]
            else:
                combinations = itertools.product(*choices)
            for combination in combinations:
                if traits and not self._traits_met(combination):
                    continue
                providers = set(r.provider for r in combination)
                request = allocation_request.AllocationRequest(
                    anchor, combination, {group.suffix: providers})
                if shared and providers <= shared:
                    # Only requests of sharing providers alone can be
                    # equal across trees.
                    if request in seen:
                        continue
                    seen.add(request)
                requests.append(request)
        return requests

    def _traits_met(self, combination):
        traits = set()
        for resource in combination:
            own = self.snap.traits[resource.provider]
            if own & self.group.forbidden_traits:
                return False
            traits |= own
        return all(traits & any_of for any_of in self.group.required_traits)
