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
filters the trees by their root's traits.

The answer is in placement's order, which its API calls "deterministic
but undefined" and nova's scheduler relies on among equally weighted
hosts. It is the iteration order of the Python set placement keeps its
candidates in, filled one combination at a time: anchors in the order the
groups' requests name them, groups in query order, one request of each
(``itertools.product``, the first group outermost). The requests hash as
placement's, so the same state gives the same order in the same process
(string hashing varies from one process to the next, in placement too).
A mapping lists its providers in the order of placement's set of them;
provider summaries come tree by tree (roots by id, then each provider of
the tree by id) for each group in turn, their resources by class id and
their traits by trait id, as placement's queries return them.
"""

import collections

from shelvefix.placement.objects import allocation_request
from shelvefix.placement.objects import candidate_search
from shelvefix.placement.objects import candidate_snapshot

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

``resources`` maps each class of its inventory (by class id) to
``{'capacity': ..., 'used': ...}``; ``traits`` is a list, by trait id.
"""

Candidate = collections.namedtuple('Candidate', ['resources', 'mappings'])
Candidate.__doc__ = """One allocation candidate.

``resources`` maps provider uuid to ``{resource_class: amount}``;
``mappings`` maps group suffix to the provider uuids serving it (a list,
in placement's order).
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
            trees, both in placement's order.
        :raises ResourceClassNotFound: an unknown resource class.
        :raises TraitNotFound: an unknown trait.
        """
        with self._lock:
            snap = candidate_snapshot.Snapshot(self)
            try:
                requests, summarised = _search(snap, groups, wide)
            except candidate_search.NoCandidates:
                return [], []
            return _answer(snap, requests, summarised, wide)


def _anchor_roots(snap, wide):
    if not (wide.anchor_required or wide.anchor_forbidden):
        return None
    snap.check_traits(wide.anchor_required)
    snap.check_traits(wide.anchor_forbidden)
    roots = set(uuid_id for uuid_id in snap.order
                if snap.parent[uuid_id] is None and
                wide.anchor_required <= snap.traits[uuid_id] and
                not wide.anchor_forbidden & snap.traits[uuid_id])
    if not roots:
        raise candidate_search.NoCandidates()
    return roots


def _search(snap, groups, wide):
    anchor_roots = _anchor_roots(snap, wide)
    by_suffix = collections.OrderedDict()
    summarised = []
    for group in groups:
        search = candidate_search.GroupSearch(snap, group, anchor_roots)
        requests = search.requests()
        if not requests:
            return [], []
        for request in requests:
            request.same_provider = group.use_same_provider
        by_suffix[group.suffix] = requests
        summarised.append(search.summary_roots)
    return _merge(snap, by_suffix, wide), summarised


def _merge(snap, by_suffix, wide):
    """Every combination of one request per group, in placement's order.

    A single group goes the same way: a numbered group's search gives a
    sharing provider's request once per tree it anchors in, and the set
    keeps equal requests once.
    """
    by_anchor = collections.OrderedDict()
    for suffix, requests in by_suffix.items():
        for request in requests:
            by_anchor.setdefault(
                request.anchor, collections.OrderedDict()).setdefault(
                    suffix, []).append(request)
    if len(by_suffix) == 1:
        # The product of one list, and its requests consolidate to
        # themselves (a group takes a class from one provider only).
        merged = set()
        for lists in by_anchor.values():
            for request in next(iter(lists.values())):
                if _same_subtrees(snap, (request,), wide.same_subtrees):
                    merged.add(allocation_request.AllocationRequest(
                        request.anchor, request.resources,
                        {suffix: set(providers) for suffix, providers
                         in request.mappings.items()}))
        return list(merged)
    # Amounts of one class from one provider add up only for classes more
    # than one group asks for; anything else fits once its group's fits.
    asked = collections.Counter()
    for requests in by_suffix.values():
        asked.update(set(r.rc for request in requests
                         for r in request.resources))
    shared_rcs = set(rc for rc, groups in asked.items() if groups > 1)
    isolate = wide.group_policy == 'isolate'
    merged = set()
    for lists in by_anchor.values():
        if len(lists) != len(by_suffix):
            continue
        for combination in _combinations(snap, list(lists.values()),
                                         isolate, shared_rcs):
            if _same_subtrees(snap, combination, wide.same_subtrees):
                merged.add(_consolidate(combination))
    return list(merged)


def _combinations(snap, choices, isolate, shared_rcs):
    """One request of each list, pruned as soon as a choice cannot work.

    The same candidates, in the same order, as placement's product
    filtered afterwards: with ``isolate`` no two numbered groups on one
    provider, and amounts taken twice from a provider within its
    capacity.
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


def _ancestors(snap, uuid_id):
    found = {uuid_id}
    while snap.parent[uuid_id] is not None:
        uuid_id = snap.parent[uuid_id]
        found.add(uuid_id)
    return found


def _same_subtrees(snap, combination, same_subtrees):
    for suffixes in same_subtrees:
        providers = set()
        for request in combination:
            for suffix in suffixes:
                providers |= request.mappings.get(suffix, set())
        if len(providers) == 1:
            continue
        common = set.intersection(*(_ancestors(snap, snap.id_of[uuid])
                                    for uuid in providers))
        if not common & set(snap.id_of[uuid] for uuid in providers):
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
        for suffix, providers in request.mappings.items():
            mappings.setdefault(suffix, set()).update(providers)
    return allocation_request.AllocationRequest(
        combination[0].anchor,
        [allocation_request.Resource(provider, rc, amount)
         for (provider, rc), amount in amounts.items()],
        mappings)


def _summarised(snap, summarised):
    """The providers placement summarises, in its order.

    Each group adds the trees of its ids not summarised yet: roots by id,
    each with its providers by id.
    """
    members = collections.defaultdict(list)
    for uuid_id in snap.order:
        members[snap.root[uuid_id]].append(uuid_id)
    order, seen = [], set()
    for ids in summarised:
        for root in sorted(ids - seen):
            for uuid_id in members.get(root, ()):
                order.append(uuid_id)
                seen.add(uuid_id)
    return order


def _answer(snap, requests, summarised, wide):
    if not requests:
        return [], []
    trees = set(snap.root[r.provider] for request in requests
                for r in request.resources)
    shown = [uuid_id for uuid_id in _summarised(snap, summarised)
             if snap.root[uuid_id] in trees]
    if not wide.nested_aware and snap.has_trees:
        # Before 1.29 a candidate takes from one provider per tree, and
        # only the providers of the kept candidates are summarised.
        requests = [request for request in requests
                    if _one_per_tree(snap, request)]
        used = set(r.provider for request in requests
                   for r in request.resources)
        shown = [uuid_id for uuid_id in shown if uuid_id in used]
    if wide.limit and wide.limit < len(requests):
        requests = requests[:wide.limit]
        kept = set(snap.root[r.provider] for request in requests
                   for r in request.resources)
        shown = [uuid_id for uuid_id in shown if snap.root[uuid_id] in kept]
    return ([_candidate(snap, request) for request in requests],
            [_summary(snap, uuid_id) for uuid_id in shown])


def _one_per_tree(snap, request):
    providers = set(r.provider for r in request.resources)
    return len(providers) == len(set(snap.root[p] for p in providers))


def _candidate(snap, request):
    resources = {}
    for provider, rc, amount in request.resources:
        resources.setdefault(snap.uuid_of[provider], {})[rc] = amount
    return Candidate(resources, {suffix: list(providers) for suffix, providers
                                 in request.mappings.items()})


def _summary(snap, uuid_id):
    used = snap.used
    resources = {}
    stored = snap.inventories[uuid_id]
    for rc in sorted(stored, key=snap.class_id):
        inv = stored[rc].inventory
        resources[rc] = {
            'capacity': int((inv.total - inv.reserved) *
                            inv.allocation_ratio),
            'used': used.get((uuid_id, rc), 0)}
    parent = snap.parent[uuid_id]
    return ProviderSummary(
        snap.uuid_of[uuid_id],
        snap.uuid_of[parent] if parent is not None else None,
        snap.uuid_of[snap.root[uuid_id]], resources,
        sorted(snap.traits[uuid_id], key=snap.trait_id))
