"""Inventories of the placement double's state.

The part of :class:`~.state.PlacementState` that holds what each provider
offers. Every inventory write moves the provider
generation; only the writes that send a generation (``PUT`` of one or all
inventories) are checked against it, as in placement. Inventory that
allocations consume cannot be removed, but may shrink below its usage
(placement only logs that).
"""

from shelvefix.placement import exception
from shelvefix.placement.objects import models


class InventoriesMixin(object):
    """Inventory reads and writes; mixed into ``PlacementState``."""

    def get_inventories(self, uuid):
        """A provider's generation and inventories.

        :param uuid: the provider.
        :returns: ``(generation, {resource_class: Inventory})``.
        :raises ResourceProviderNotFound: no such provider.
        """
        with self._lock:
            view = self._provider_view(self._provider(uuid))
            return view.generation, view.inventories

    def inventory_last_modified(self, uuid, resource_class=None):
        """When the inventory (of one class, or any) last changed.

        :param uuid: the provider.
        :param resource_class: one class, or None for all of them.
        :returns: an aware datetime, or None without inventory.
        """
        with self._lock:
            stored = self._provider(uuid).inventories
            rows = [stored[resource_class]] if resource_class else list(
                stored.values())
            stamps = [row.updated_at or row.created_at for row in rows]
            return max(stamps) if stamps else None

    @staticmethod
    def _check_reserved(uuid, resource_class, inventory,
                        reserved_can_be_total):
        # Placement 1.26 allowed reserved == total (a fully reserved
        # inventory); before that the capacity had to stay positive.
        if reserved_can_be_total:
            if inventory.capacity < 0:
                raise exception.InvalidInventoryCapacityReservedCanBeTotal(
                    resource_class=resource_class, resource_provider=uuid)
        elif inventory.capacity <= 0:
            raise exception.InvalidInventoryCapacity(
                resource_class=resource_class, resource_provider=uuid)

    def _check_generation(self, record, generation):
        if generation != record.generation:
            raise exception.ProviderGenerationConflict()

    def _in_use(self, uuid, classes):
        used = {row.resource_class for row in self._all_rows()
                if row.provider == uuid}
        return sorted(used & set(classes), key=self._class_order)

    def set_inventories(self, uuid, generation, inventories,
                        reserved_can_be_total=True, check_reserved=True):
        """Replace all inventory of a provider; bumps its generation.

        :param uuid: the provider.
        :param generation: the generation the caller last saw; None skips
            the check (DELETE of all inventory does not send one).
        :param inventories: ``{resource_class: Inventory}``.
        :param reserved_can_be_total: allow ``reserved == total``.
        :param check_reserved: refuse reserved above total (the reshaper,
            unlike the inventory routes, does not).
        :returns: the new provider generation.
        :raises ResourceProviderNotFound: no such provider.
        :raises ProviderGenerationConflict: stale generation.
        :raises InvalidInventoryCapacity: reserved too large.
        :raises ResourceClassNotFound: unknown resource class.
        :raises InventoryInUse: removing a class that has allocations.
        """
        with self._lock:
            record = self._provider(uuid)
            if generation is not None:
                self._check_generation(record, generation)
            for rc, inv in inventories.items():
                if check_reserved:
                    self._check_reserved(uuid, rc, inv,
                                         reserved_can_be_total)
            for rc in inventories:
                self.class_id(rc)
            removed = [rc for rc in record.inventories
                       if rc not in inventories]
            existing = set(sorted(self.class_id(rc)
                                  for rc in record.inventories))
            busy = self._in_use(uuid, removed)
            if busy:
                raise exception.InventoryInUse(
                    resource_classes=', '.join(busy), resource_provider=uuid)
            for rc in removed:
                del record.inventories[rc]
            # New rows are inserted in the order placement inserts them:
            # the iteration order of its set of new class ids.
            by_id = {self.class_id(rc): rc for rc in inventories}
            for class_id in set(by_id) - existing:
                rc = by_id[class_id]
                record.inventories[rc] = models.InventoryRecord(
                    inventories[rc], self._next_inventory_row())
            for rc, inv in inventories.items():
                if self.class_id(rc) in existing:
                    record.inventories[rc].update(inv)
            record.bump()
            return record.generation

    def _next_inventory_row(self):
        # Placement's sqlite gives a new row the highest id plus one.
        return 1 + max((stored.row_id or 0
                        for rp in self._providers.values()
                        for stored in rp.inventories.values()), default=0)

    def add_inventory(self, uuid, resource_class, inventory,
                      reserved_can_be_total=True):
        """Add one inventory class (no generation check); bumps generation.

        :param uuid: the provider.
        :param resource_class: the class to add.
        :param inventory: its :class:`~.models.Inventory`.
        :param reserved_can_be_total: allow ``reserved == total``.
        :returns: the new provider generation.
        :raises ResourceProviderNotFound: no such provider.
        :raises InvalidInventoryCapacity: reserved too large.
        :raises ResourceClassNotFound: unknown resource class.
        :raises InventoryExists: the provider already has that class.
        """
        with self._lock:
            record = self._provider(uuid)
            self._check_reserved(uuid, resource_class, inventory,
                                 reserved_can_be_total)
            class_id = self.class_id(resource_class)
            if resource_class in record.inventories:
                raise exception.InventoryExists(
                    (record.id, class_id) + tuple(inventory.stored())
                    + (models.utcnow().strftime('%Y-%m-%d %H:%M:%S.%f'),))
            record.inventories[resource_class] = models.InventoryRecord(
                inventory, self._next_inventory_row())
            record.bump()
            return record.generation

    def update_inventory(self, uuid, generation, resource_class, inventory,
                         reserved_can_be_total=True):
        """Update one inventory class; bumps the provider generation.

        Parameters, result and errors as for :meth:`set_inventories`,
        for one class (``resource_class``, its new values ``inventory``),
        whose generation is always checked; and
        :raises InventoryNotFound: the provider has no such inventory.
        """
        with self._lock:
            record = self._provider(uuid)
            self._check_generation(record, generation)
            self._check_reserved(uuid, resource_class, inventory,
                                 reserved_can_be_total)
            self.class_id(resource_class)
            if resource_class not in record.inventories:
                raise exception.InventoryNotFound(
                    resource_class=resource_class)
            record.inventories[resource_class].update(inventory)
            record.bump()
            return record.generation

    def delete_inventory(self, uuid, resource_class):
        """Remove one inventory class (no generation check).

        :param uuid: the provider.
        :param resource_class: the class to remove.
        :returns: the new provider generation.
        :raises ResourceProviderNotFound: no such provider.
        :raises ResourceClassNotFound: unknown resource class.
        :raises InventoryInUse: the class has allocations.
        :raises NotFound: the provider has no such inventory.
        """
        with self._lock:
            record = self._provider(uuid)
            self.class_id(resource_class)
            if self._in_use(uuid, [resource_class]):
                raise exception.InventoryInUse(
                    resource_classes=resource_class, resource_provider=uuid)
            if resource_class not in record.inventories:
                raise exception.NotFound(
                    'No inventory of class %s found for delete'
                    % resource_class)
            del record.inventories[resource_class]
            record.bump()
            return record.generation
