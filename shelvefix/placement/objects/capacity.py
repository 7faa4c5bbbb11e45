"""Capacity check of an allocation write, as placement performs it.

Placement checks a write after removing the written consumers' current
allocations, in request order, and stops at the first failure:

1. every provider named must have inventory of at least one of the
   resource classes the whole write uses;
2. for each allocation with a non-zero amount: the provider must have
   inventory of that class, the amount must respect ``min_unit``,
   ``max_unit`` and ``step_size``, and the provider's usage plus what the
   write asks of that provider and class so far must fit in
   ``(total - reserved) * allocation_ratio``. A provider already over
   capacity (inventory shrunk under its allocations) still accepts a
   write that does not make its usage worse than before the write.

Entries with amount 0 stand for allocations being removed: they take part
in step 1 and make their provider's generation move, nothing else.
"""

import collections

from shelvefix.placement import exception


def check(allocations, inventory_of, used_by_others, used_before,
          class_order):
    """Check an allocation write; return the providers it touches.

    :param allocations: ``(provider_uuid, resource_class, amount)`` tuples
        in request order (amount 0 for a removal).
    :param inventory_of: ``inventory_of(provider, resource_class)`` returns
        the :class:`~shelvefix.placement.objects.models.Inventory` or None.
    :param used_by_others: ``used_by_others(provider, resource_class)``
        returns the usage once the written consumers' allocations are
        gone.
    :param used_before: dict ``(provider, resource_class) -> usage`` before
        the write, with only the pairs that had allocations.
    :param class_order: sort key of resource class names (placement's ids).
    :returns: the provider uuids of ``allocations``, first-seen order.
    :raises InvalidInventory: a provider has no inventory for the classes.
    :raises InvalidAllocationConstraintsViolated: min/max/step violated.
    :raises InvalidAllocationCapacityExceeded: not enough room.
    """
    classes = sorted({rc for _rp, rc, _amount in allocations},
                     key=class_order)
    providers = []
    for rp, _rc, _amount in allocations:
        if rp not in providers:
            providers.append(rp)
    missing = [rp for rp in providers
               if not any(inventory_of(rp, rc) for rc in classes)]
    if missing:
        raise exception.InvalidInventory(
            resource_class=', '.join(classes),
            resource_provider=', '.join(missing))

    asked = collections.defaultdict(int)
    for rp, rc, amount in allocations:
        asked[(rp, rc)] += amount
        if amount == 0:
            continue
        inventory = inventory_of(rp, rc)
        if inventory is None:
            raise exception.InvalidInventory(resource_class=rc,
                                             resource_provider=rp)
        if (amount < inventory.min_unit or amount > inventory.max_unit or
                amount % inventory.step_size):
            raise exception.InvalidAllocationConstraintsViolated(
                resource_class=rc, resource_provider=rp)
        used = used_by_others(rp, rc)
        room = (inventory.total - inventory.reserved) * (
            inventory.allocation_ratio)
        wanted = used + asked[(rp, rc)]
        if room < used + amount or room < wanted:
            before = used_before.get((rp, rc))
            if before is None or wanted > before:
                raise exception.InvalidAllocationCapacityExceeded(
                    resource_class=rc, resource_provider=rp)
    return providers
