"""What the allocation candidates search reads of the state.

A :class:`Snapshot` is taken once per search, under the state's lock:
trees, traits, aggregates, inventories and usage, keyed by the
providers' internal ids (placement's, see
:class:`~.models.ProviderRecord`), so the search
(:mod:`.candidate_search`) works on plain sets and tuples of ints, as
placement's does. Where placement fills a set from a query's rows, the
snapshot yields them in the order placement's sqlite returns them: the
providers with room for a class in inventory row order, the trees a
sharing provider serves by its aggregates' ids and then the association
rows of their members.
"""

import collections

import os_traits

from shelvefix.placement import exception

SHARES_VIA_AGGREGATE = os_traits.MISC_SHARES_VIA_AGGREGATE


class Snapshot(object):
    """What the search reads of the state, taken under its lock.

    Providers are known by placement's internal id. The sets and records
    are the state's own, not copies: a snapshot is only valid while the
    lock is held, and the search never changes them.

    :ivar order: provider ids, ascending (creation order)
    :ivar uuid_of: ``{id: uuid}``; :ivar id_of: ``{uuid: id}``
    :ivar root: ``{id: root id}``; :ivar parent: ``{id: parent id}``
    :ivar traits: ``{id: set of trait names}``
    :ivar aggregates: ``{id: set of aggregate uuids}``
    :ivar inventories: ``{id: {rc: InventoryRecord}}``
    :ivar used: ``{(id, rc): amount allocated}``
    :ivar sharing_by_trait: providers with ``MISC_SHARES_VIA_AGGREGATE``
    :ivar sharing: the sharing providers the search still considers
    """

    def __init__(self, state):
        records = list(state._providers.values())
        self.id_of = {rp.uuid: rp.id for rp in records}
        self.uuid_of = {rp.id: rp.uuid for rp in records}
        self.order = sorted(self.uuid_of)
        self.parent = {rp.id: self.id_of.get(rp.parent_uuid)
                       for rp in records}
        self.root = {}
        for uuid_id in self.order:
            top = uuid_id
            while self.parent[top] is not None:
                top = self.parent[top]
            self.root[uuid_id] = top
        self.traits = {rp.id: rp.traits for rp in records}
        self.aggregates = {rp.id: rp.aggregates for rp in records}
        self._aggregate_rows = {rp.id: rp.aggregate_rows for rp in records}
        self.inventories = {rp.id: rp.inventories for rp in records}
        # A plain dict read with .get(): a Counter's default is slower.
        self.used = {}
        for row in state._all_rows():
            key = (self.id_of[row.provider], row.resource_class)
            self.used[key] = self.used.get(key, 0) + row.used
        self.has_trees = any(p is not None for p in self.parent.values())
        # Providers sharing through aggregates. ``sharing`` is the set the
        # search works with: a group with member_of narrows it for the rest
        # of the request, as placement's shared set is narrowed in place.
        self.sharing_by_trait = frozenset(
            uuid_id for uuid_id in self.order
            if SHARES_VIA_AGGREGATE in self.traits[uuid_id])
        self.sharing = set(sorted(self.sharing_by_trait))
        self._trait_known = state._trait_known
        self.trait_id = state._trait_id
        self.class_id = state.class_id
        self._aggregate_ids = state._aggregate_ids
        self._rows = {}
        self._members = None

    def check_traits(self, names):
        """Raise for the first name that is not a trait.

        :raises TraitNotFound: an unknown name.
        """
        for name in names:
            if not self._trait_known(name):
                raise exception.TraitNotFound(name=name)

    def _inventory_rows(self, rc):
        rows = self._rows.get(rc)
        if rows is None:
            rows = self._rows[rc] = [uuid_id for _row, uuid_id in sorted(
                (stored[rc].row_id or 0, uuid_id)
                for uuid_id, stored in self.inventories.items()
                if rc in stored)]
        return rows

    def with_resource(self, rc, amount, tree_root=None):
        """``{(provider, root)}`` with room for ``amount`` of ``rc``.

        Filled in inventory row order, as placement's query returns them.
        """
        found = set()
        root, used, inventories = self.root, self.used, self.inventories
        for uuid_id in self._inventory_rows(rc):
            if tree_root is not None and root[uuid_id] != tree_root:
                continue
            inv = inventories[uuid_id][rc].inventory
            room = (inv.total - inv.reserved) * inv.allocation_ratio
            if (used.get((uuid_id, rc), 0) + amount <= room and
                    inv.min_unit <= amount <= inv.max_unit and
                    amount % inv.step_size == 0):
                found.add((uuid_id, root[uuid_id]))
        return found

    def in_aggregates(self, member_of):
        """Providers in one aggregate of every set of ``member_of``."""
        return set(uuid_id for uuid_id in self.order
                   if all(self.aggregates[uuid_id] & set(any_of)
                          for any_of in member_of))

    def with_all_traits(self, required):
        """Providers with one trait of every set of ``required``."""
        return set(uuid_id for uuid_id in self.order
                   if all(self.traits[uuid_id] & any_of
                          for any_of in required))

    def with_any_trait(self, names):
        return set(uuid_id for uuid_id in self.order
                   if self.traits[uuid_id] & names)

    def _aggregate_members(self):
        if self._members is None:
            rows = sorted(
                (row, aggregate, uuid_id)
                for uuid_id, by_aggregate in self._aggregate_rows.items()
                for aggregate, row in by_aggregate.items())
            self._members = collections.defaultdict(list)
            for _row, aggregate, uuid_id in rows:
                self._members[aggregate].append(uuid_id)
        return self._members

    def anchors(self, sharing):
        """``{(provider, its uuid, anchor root, root uuid)}``.

        The trees each sharing provider serves through an aggregate, in
        the order of placement's query: providers by id, their aggregates
        by id, then the members' association rows.
        """
        members = self._aggregate_members()
        found = set()
        uuid_of, root = self.uuid_of, self.root
        for provider in sorted(sharing):
            for aggregate in sorted(self.aggregates[provider],
                                    key=self._aggregate_id):
                for member in members.get(aggregate, ()):
                    anchor = root[member]
                    found.add((provider, uuid_of[provider], anchor,
                               uuid_of[anchor]))
        return found

    def _aggregate_id(self, aggregate):
        return self._aggregate_ids.get(aggregate, 0)

    def tree_order(self):
        """Every provider id, by its root's id, then its own."""
        return sorted(self.order, key=lambda i: (self.root[i], i))

    def capacity(self, uuid_id, rc):
        inv = self.inventories[uuid_id][rc].inventory
        return int((inv.total - inv.reserved) * inv.allocation_ratio)
