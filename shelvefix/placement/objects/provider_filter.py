"""The search behind ``GET /resource_providers``.

Placement builds one SQL query from the filters, but answers an empty list
early in three cases, before the filters that come after it are even
looked at (an unknown resource class in ``resources`` is then no error):

* ``in_tree`` names no provider;
* no provider at all has the required traits;
* no provider at all is in the required aggregates.

The filters are taken in placement's order, so that the same request
fails (or not) on the same filter: name and uuid, tree, required traits,
forbidden traits, required aggregates, forbidden aggregates, resources.
Trait and aggregate names compare exactly as written.
"""

import itertools

from shelvefix.placement import exception


class ProviderFiltersMixin(object):
    """``list_providers``; mixed into ``PlacementState``."""

    def list_providers(self, name=None, uuid=None, in_tree=None,
                       resources=None, required_traits=(),
                       forbidden_traits=(), member_of=(),
                       forbidden_aggregates=()):
        """Providers matching every filter given, in creation order.

        :param name: exact name.
        :param uuid: exact uuid.
        :param in_tree: any provider of the wanted tree (unknown: none).
        :param resources: ``{resource_class: amount}`` the provider must
            still have room for, respecting its unit constraints.
        :param required_traits: a list of sets of trait names: the provider
            needs one trait of each set.
        :param forbidden_traits: trait names the provider may not have.
        :param member_of: a list of sets of aggregate uuids: the provider
            must be in one aggregate of each set.
        :param forbidden_aggregates: aggregate uuids the provider may not
            be in.
        :returns: a list of :class:`~.models.Provider`.
        :raises TraitNotFound: an unknown trait (the first in placement's
            order).
        :raises ResourceClassNotFound: an unknown class in ``resources``.
        """
        required_traits = [set(any_of) for any_of in required_traits]
        member_of = [set(any_of) for any_of in member_of]
        with self._lock:
            everyone = list(self._providers.values())
            found = everyone
            if name:
                found = [rp for rp in found if rp.name == name]
            if uuid:
                found = [rp for rp in found if rp.uuid == uuid]
            if in_tree:
                if in_tree not in self._providers:
                    return []
                root = self._root_of(self._providers[in_tree])
                found = [rp for rp in found if self._root_of(rp) == root]
            if required_traits:
                self._check_traits(itertools.chain.from_iterable(
                    sorted(any_of) for any_of in required_traits))
                having = set(rp.uuid for rp in everyone if all(
                    rp.traits & any_of for any_of in required_traits))
                if not having:
                    return []
                found = [rp for rp in found if rp.uuid in having]
            if forbidden_traits:
                self._check_traits(sorted(forbidden_traits))
                found = [rp for rp in found
                         if rp.traits.isdisjoint(forbidden_traits)]
            if member_of:
                having = set(rp.uuid for rp in everyone if all(
                    rp.aggregates & any_of for any_of in member_of))
                if not having:
                    return []
                found = [rp for rp in found if rp.uuid in having]
            if forbidden_aggregates:
                found = [rp for rp in found
                         if rp.aggregates.isdisjoint(forbidden_aggregates)]
            for rc, amount in (resources or {}).items():
                self.class_id(rc)
                found = [rp for rp in found if self._has_room(rp, rc, amount)]
            return [self._provider_view(rp) for rp in found]

    def _check_traits(self, names):
        names = list(names)
        missing = set(self.missing_traits(names))
        for name in names:
            if name in missing:
                raise exception.TraitNotFound(name=name)

    def _has_room(self, record, rc, amount):
        stored = record.inventories.get(rc)
        if stored is None:
            return False
        inv = stored.inventory
        room = (inv.total - inv.reserved) * inv.allocation_ratio
        return (self._used(record.uuid, rc) + amount <= room and
                inv.min_unit <= amount <= inv.max_unit and
                amount % inv.step_size == 0)
