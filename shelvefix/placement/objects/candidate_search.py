"""The search behind allocation candidates: one request group at a time.

:class:`GroupSearch` finds, for one request group, the allocation
requests that satisfy it alone, the way placement does, on what a
:class:`~.candidate_snapshot.Snapshot` read of the state:

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

The order of the answer is placement's, so the search is built from the
same pieces in the same order: the same Python sets (of the same tuples
of ids, and of requests hashed as placement hashes them), filled in the
order placement's sqlite queries return their rows (see the snapshot).
Request groups and the combined candidates are
:mod:`~shelvefix.placement.objects.candidates`' business.
"""

import collections
import itertools

from shelvefix.placement.objects import allocation_request

Resource = allocation_request.Resource
Request = allocation_request.AllocationRequest


class NoCandidates(Exception):
    """The request cannot be met at all: the answer is empty."""


class GroupSearch(object):
    """The candidates of one request group.

    Built in placement's order, so that the same request fails the same
    way: unknown resource classes, then aggregates (none matching: no
    candidates), then unknown traits, then ``in_tree``, then capacity.

    :ivar summary_roots: the ids whose trees placement summarises for
        this group (None until :meth:`requests` found some).
    :raises ResourceClassNotFound: an unknown resource class.
    :raises TraitNotFound: an unknown trait.
    :raises NoCandidates: the group cannot be met.
    """

    def __init__(self, snap, group, anchor_roots):
        self.snap = snap
        self.group = group
        self.anchor_roots = anchor_roots
        self.summary_roots = None
        self.rc_ids = collections.OrderedDict(
            (rc, snap.class_id(rc)) for rc in group.resources)
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
            tree = snap.id_of.get(group.in_tree)
            if tree is None:
                raise NoCandidates()
            self.tree_root = snap.root[tree]
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
        for bad in (snap.in_aggregates([group.forbidden_aggs])
                    if group.forbidden_aggs else None,
                    snap.with_any_trait(group.forbidden_traits)
                    if group.forbidden_traits else None):
            if bad is None:
                continue
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
        pairs = set()
        for i, found in enumerate(self.with_resource.values()):
            pairs = found
            ids = set(uuid_id for uuid_id, _root in found)
            if i == 0 and not allowed:
                allowed = ids - forbidden
            else:
                allowed &= ids
            if not allowed:
                return []
        if not self.with_resource:
            pairs = self._with_root(allowed, forbidden)
        return [pair for pair in pairs if pair[0] in allowed]

    def _with_root(self, allowed, forbidden):
        # Placement's query walks the ids it is given in ascending order,
        # else the index of roots.
        snap = self.snap
        ids = (sorted(allowed) if allowed else snap.tree_order())
        return set((uuid_id, snap.root[uuid_id]) for uuid_id in ids
                   if uuid_id not in forbidden)

    def _from_providers(self, pairs):
        if not pairs:
            return set()
        snap, group = self.snap, self.group
        self.summary_roots = set(root for _uuid_id, root in pairs)
        requests = []
        for uuid_id, root in pairs:
            request = Request(
                root, [Resource(uuid_id, rc, amount)
                       for rc, amount in group.resources.items()],
                {group.suffix: set([snap.uuid_of[uuid_id]])})
            if self._anchored(root):
                requests.append(request)
            if uuid_id in snap.sharing_by_trait:
                for anchor in snap.anchors([uuid_id]):
                    if anchor[2] != root and self._anchored(anchor[2]):
                        request = request.anchored_at(anchor[2])
                        requests.append(request)
        return requests

    # -- several providers of a tree, and sharing providers ---------------

    def _trees_matching_all(self):
        group, snap = self.group, self.snap
        bad_aggs = (snap.in_aggregates([group.forbidden_aggs])
                    if group.forbidden_aggs else set())
        matching = set()
        for rc, pairs in self.with_resource.items():
            rc_id = self.rc_ids[rc]
            found = set()
            found |= set((p[0], p[1], rc_id) for p in pairs)
            if self.in_aggs:
                snap.sharing &= self.in_aggs
            shared = snap.sharing & set(p[0] for p in pairs) if (
                snap.sharing) else set()
            if shared and self.tree_root is None:
                anchored = set((a[0], a[2]) for a in snap.anchors(shared))
                found |= set((p[0], p[1], rc_id) for p in anchored)
            if self.anchor_roots:
                found = set(c for c in found if c[1] in self.anchor_roots)
            if group.member_of:
                found = set(c for c in found
                            if set([c[0], c[1]]) & self.in_aggs)
            if group.forbidden_aggs:
                found = set(c for c in found
                            if not (set([c[0], c[1]]) & bad_aggs))
            if not found:
                return set()
            if not matching:
                matching = found
            else:
                trees = (set(c[1] for c in matching) &
                         set(c[1] for c in found))
                matching |= found
                matching = set(c for c in matching if c[1] in trees)
            if not matching:
                return set()
        if (not group.required_traits and not group.forbidden_traits) or (
                snap.sharing):
            return matching
        keep = self._trees_with_traits(set(c[0] for c in matching))
        return set(c for c in matching if (c[0], c[1]) in keep)

    def _trees_with_traits(self, providers):
        group, snap = self.group, self.snap
        good_roots = set(snap.root[uuid_id] for uuid_id in providers
                         if not snap.traits[uuid_id] & group.forbidden_traits)
        if not group.required_traits:
            return set((uuid_id, snap.root[uuid_id]) for uuid_id in providers
                       if snap.root[uuid_id] in good_roots)
        provided = collections.defaultdict(set)
        for uuid_id in providers:
            if not snap.traits[uuid_id] & group.forbidden_traits:
                provided[snap.root[uuid_id]] |= snap.traits[uuid_id]
        return set((uuid_id, snap.root[uuid_id]) for uuid_id in providers
                   if all(provided[snap.root[uuid_id]] & any_of
                          for any_of in group.required_traits))

    def _from_trees(self, matching):
        if not matching:
            return set()
        group, snap = self.group, self.snap
        self.summary_roots = (set(c[0] for c in matching) |
                              set(c[1] for c in matching))
        names = {rc_id: rc for rc, rc_id in self.rc_ids.items()}
        amounts = group.resources
        by_tree = {}
        for uuid_id, anchor, rc_id in matching:
            rc = names[rc_id]
            by_tree.setdefault(anchor, {}).setdefault(rc_id, []).append(
                Resource(uuid_id, rc, amounts[rc]))
        traits = group.required_traits or group.forbidden_traits
        uuid_of, suffix = snap.uuid_of, group.suffix
        requests = set()
        # One set per tree, then their union: equal requests anchored in
        # two trees (a sharing provider meeting the whole group) are kept
        # once, anchored where placement's set keeps them.
        for anchor, by_rc in by_tree.items():
            in_tree = set()
            for combination in itertools.product(
                    *[by_rc[rc_id] for rc_id in sorted(by_rc)]):
                if traits and not self._traits_met(combination):
                    continue
                providers = set()
                for resource in combination:
                    providers.add(uuid_of[resource.provider])
                in_tree.add(Request(anchor, combination,
                                    {suffix: providers}))
            requests |= in_tree
        return requests

    def _traits_met(self, combination):
        traits = set()
        for resource in combination:
            own = self.snap.traits[resource.provider]
            if own & self.group.forbidden_traits:
                return False
            traits |= own
        return all(traits & any_of for any_of in self.group.required_traits)
