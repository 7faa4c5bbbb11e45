"""Allocation candidates of the placement double's state.

``GET /allocation_candidates`` asks for resources in request groups: the
unnumbered group (its resources may come from several providers of one
tree, or from sharing providers) and numbered or named groups (each from
one provider). :meth:`CandidatesMixin.allocation_candidates` finds the
candidates of each group (:mod:`.candidate_search`), then combines one per
group, anchored in the same tree, the way placement does: ``group_policy``
``isolate`` keeps the numbered groups on distinct providers,
``same_subtree`` keeps the named groups under one of their providers,
amounts taken twice from a provider must still fit, and ``root_required``
filters the trees by their root's traits. The answer's order carries no
meaning (placement's comes from a hash set); the double's is stable.
"""

import collections

from shelvefix.placement.objects import allocation_request
from shelvefix.placement.objects import candidate_search

RequestGroup = collections.namedtuple(
    'RequestGroup', ['suffix', 'use_same_provider', 'resources',
                     'required_traits', 'forbidden_traits', 'member_of',
                     'forbidden_aggs', 'in_tree'])
RequestGroup.__doc__ = """One request group of an allocation candidates query.

``suffix`` is '' for the unnumbered group; ``resources`` maps resource
class to amount (in query order); ``required_traits`` is a list of sets
(one trait of each set needed); ``member_of`` a list of sets of aggregate
uuids (one of each set needed); ``forbidden_traits`` and
``forbidden_aggs`` are sets; ``in_tree`` a provider uuid or None.
"""

RequestWide = collections.namedtuple(
    'RequestWide', ['limit', 'group_policy', 'anchor_required',
                    'anchor_forbidden', 'same_subtrees', 'nested_aware'])
RequestWide.__doc__ = """What applies to the whole query.

``anchor_required`` and ``anchor_forbidden`` are the root's traits of
``root_required`` (sets, maybe empty); ``same_subtrees`` a list of sets of
suffixes; ``nested_aware`` False before microversion 1.29, when a
candidate may not take from two providers of one tree.
"""

ProviderSummary = collections.namedtuple(
    'ProviderSummary', ['uuid', 'parent_provider_uuid', 'root_provider_uuid',
                        'resources', 'traits'])
ProviderSummary.__doc__ = """A provider of a tree the candidates use.

``resources`` maps each class of its inventory to ``{'capacity': ...,
'used': ...}``; ``traits`` is a sorted list.
"""

Candidate = collections.namedtuple('Candidate', ['resources', 'mappings'])
Candidate.__doc__ = """One allocation candidate.

``resources`` maps provider uuid to ``{resource_class: amount}``;
``mappings`` maps group suffix to the sorted provider uuids serving it.
"""


class CandidatesMixin(object):
    """The search for allocation candidates.

    Mixed into ``PlacementState``.
    """

    def allocation_candidates(self, groups, wide):
        """The allocation candidates for some request groups.

        :param groups: :class:`RequestGroup` objects, in query order.
        :param wide: the :class:`RequestWide` parameters.
        :returns: ``(candidates, summaries)``: :class:`Candidate` objects
            and the :class:`ProviderSummary` of every provider in their
            trees.
        :raises ResourceClassNotFound: an unknown resource class.
        :raises TraitNotFound: an unknown trait.
        """
        with self._lock:
            snap = candidate_search.Snapshot(self)
            try:
                requests = _search(snap, groups, wide)
            except candidate_search.NoCandidates:
                return [], []
            return _answer(snap, requests, wide)


def _anchor_roots(snap, wide):
    if not (wide.anchor_required or wide.anchor_forbidden):
        return None
    snap.check_traits(wide.anchor_required)
    snap.check_traits(wide.anchor_forbidden)
    roots = set(uuid for uuid in snap.order
                if snap.parent[uuid] is None and
                wide.anchor_required <= snap.traits[uuid] and
                not wide.anchor_forbidden & snap.traits[uuid])
    if not roots:
        raise candidate_search.NoCandidates()
    return roots


def _search(snap, groups, wide):
    anchor_roots = _anchor_roots(snap, wide)
    by_suffix = collections.OrderedDict()
    for group in groups:
        requests = candidate_search.GroupSearch(
            snap, group, anchor_roots).requests()
        if not requests:
            return []
        for request in requests:
            request.same_provider = group.use_same_provider
        by_suffix[group.suffix] = requests
    return _merge(snap, by_suffix, wide)


def _merge(snap, by_suffix, wide):
    if len(by_suffix) == 1:
        # One group: its requests are the candidates (each already fits,
        # no provider serves it twice, and the group's search kept equal
        # requests once).
        requests, = by_suffix.values()
        return requests
    by_anchor = collections.OrderedDict()
    for suffix, requests in by_suffix.items():
        for request in requests:
            by_anchor.setdefault(
                request.anchor, collections.OrderedDict()).setdefault(
                    suffix, []).append(request)
    # Amounts of one class from one provider add up only for classes more
    # than one group asks for; anything else fits once its group's fits.
    asked = collections.Counter()
    for requests in by_suffix.values():
        asked.update(set(r.rc for request in requests
                         for r in request.resources))
    shared_rcs = set(rc for rc, groups in asked.items() if groups > 1)
    isolate = wide.group_policy == 'isolate'
    merged = []
    for lists in by_anchor.values():
        if len(lists) != len(by_suffix):
            continue
        for combination in _combinations(snap, list(lists.values()),
                                         isolate, shared_rcs):
            if _same_subtrees(snap, combination, wide.same_subtrees):
                merged.append(_consolidate(combination))
    return _unique(snap, merged)


def _combinations(snap, choices, isolate, shared_rcs):
    """One request of each list, pruned as soon as a choice cannot work.

    The same candidates as placement's product filtered afterwards: with
    ``isolate`` no two numbered groups on one provider, and amounts taken
    twice from a provider within its capacity.
    """
    chosen, taken, totals = [], set(), collections.Counter()

    def extend(level):
        if level == len(choices):
            yield tuple(chosen)
            return
        for request in choices[level]:
            provider = None
            if isolate and request.same_provider:
                provider = next(iter(next(iter(request.mappings.values()))))
                if provider in taken:
                    continue
            added = []
            for resource in request.resources:
                if resource.rc in shared_rcs:
                    key = (resource.provider, resource.rc)
                    added.append((key, resource.amount))
                    totals[key] += resource.amount
            if not any(_exceeds(snap, key, totals[key]) for key, _a in added):
                chosen.append(request)
                taken.add(provider)
                yield from extend(level + 1)
                chosen.pop()
                taken.discard(provider)
            for key, amount in added:
                totals[key] -= amount

    return extend(0)


def _exceeds(snap, key, amount):
    provider, rc = key
    return (snap.used.get(key, 0) + amount > snap.capacity(provider, rc) or
            amount > snap.inventories[provider][rc].inventory.max_unit)


def _unique(snap, requests):
    # Equal requests can only be made of sharing providers alone: any
    # other provider is in one tree, and serves requests anchored there.
    unique, seen = [], set()
    for request in requests:
        if all(r.provider in snap.sharing_by_trait
               for r in request.resources):
            if request in seen:
                continue
            seen.add(request)
        unique.append(request)
    return unique


def _ancestors(snap, uuid):
    found = {uuid}
    while snap.parent[uuid] is not None:
        uuid = snap.parent[uuid]
        found.add(uuid)
    return found


def _same_subtrees(snap, combination, same_subtrees):
    for suffixes in same_subtrees:
        providers = set()
        for request in combination:
            for suffix in suffixes:
                providers |= request.mappings.get(suffix, set())
        if len(providers) == 1:
            continue
        common = set.intersection(*(_ancestors(snap, uuid)
                                    for uuid in providers))
        if not common & providers:
            return False
    return True


def _consolidate(combination):
    amounts = collections.OrderedDict()
    mappings = {}
    for request in combination:
        for resource in request.resources:
            key = (resource.provider, resource.rc)
            amounts[key] = amounts.get(key, 0) + resource.amount
        # Each group of the combination maps its own suffix.
        mappings.update(request.mappings)
    return allocation_request.AllocationRequest(
        combination[0].anchor,
        [allocation_request.Resource(provider, rc, amount)
         for (provider, rc), amount in amounts.items()],
        mappings)


def _answer(snap, requests, wide):
    if not requests:
        return [], []
    trees = set(snap.root[r.provider] for request in requests
                for r in request.resources)
    shown = set(uuid for uuid in snap.order if snap.root[uuid] in trees)
    if not wide.nested_aware and snap.has_trees:
        # Before 1.29 a candidate takes from one provider per tree, and
        # only the providers of the kept candidates are summarised.
        requests = [request for request in requests
                    if _one_per_tree(snap, request)]
        shown = set(r.provider for request in requests
                    for r in request.resources)
    if wide.limit and wide.limit < len(requests):
        requests = requests[:wide.limit]
        kept = set(snap.root[r.provider] for request in requests
                   for r in request.resources)
        shown = set(uuid for uuid in shown if snap.root[uuid] in kept)
    return ([_candidate(request) for request in requests],
            [_summary(snap, uuid) for uuid in snap.order if uuid in shown])


def _one_per_tree(snap, request):
    providers = set(r.provider for r in request.resources)
    return len(providers) == len(set(snap.root[p] for p in providers))


def _candidate(request):
    resources = {}
    for provider, rc, amount in request.resources:
        entry = resources.get(provider)
        if entry is None:
            resources[provider] = {rc: amount}
        else:
            entry[rc] = amount
    return Candidate(resources, {
        suffix: sorted(providers) if len(providers) > 1 else list(providers)
        for suffix, providers in request.mappings.items()})


def _summary(snap, uuid):
    used = snap.used
    resources = {}
    for rc, stored in snap.inventories[uuid].items():
        inv = stored.inventory
        resources[rc] = {
            'capacity': int((inv.total - inv.reserved) *
                            inv.allocation_ratio),
            'used': used.get((uuid, rc), 0)}
    return ProviderSummary(uuid, snap.parent[uuid], snap.root[uuid],
                           resources, sorted(snap.traits[uuid]))
