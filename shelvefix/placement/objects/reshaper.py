"""The reshaper of the placement double's state.

``POST /reshaper`` moves inventory between providers of a tree together
with the allocations on it, in one transaction, as a virt driver does when
it splits a compute node's inventory into child providers. Placement does
it in three steps inside one database transaction, and the double in the
same steps, so that generations move as they do there:

1. every provider given a non-empty inventory gets, for a moment, its old
   and its new classes together (its generation moves);
2. the allocations are replaced, checked against that interim inventory
   (the generation of every provider they touch moves);
3. every provider given inventory gets exactly what was asked, which
   fails if allocations remain on a class it loses (its generation moves).

If any step fails, everything is as it was before the first one,
consumers created for the write included.
"""

import collections
import copy

from shelvefix.placement import exception


class ReshaperMixin(object):
    """Inventories and allocations moved in one write.

    Mixed into ``PlacementState``.
    """

    def reshape(self, inventories, writes):
        """Replace inventories and allocations in one transaction.

        :param inventories: ``{provider uuid: (generation, {resource_class:
            Inventory})}``, in request order; the generation is the one
            the caller saw.
        :param writes: the allocations, as for
            :meth:`~.allocation.AllocationsMixin.replace_allocations`
            (consumer generations are always checked).
        :raises ResourceProviderNotFound: a provider of ``inventories`` is
            unknown.
        :raises ResourceProviderConcurrentUpdateDetected: its generation
            is stale: it was written after the caller read it (the handler
            checked the generation before; this check, under the lock,
            catches a write between the two).
        :raises ConsumerGenerationConflict: a stale consumer generation.
        :raises AllocationProviderNotFound: an allocation names an unknown
            provider (the consumers it created are kept, as placement
            keeps them).
        :raises ResourceClassNotFound: an unknown resource class.
        :raises InventoryInUse: a class that keeps allocations is removed.
        :raises InvalidInventory: allocations do not fit (a reserved
            amount above total is not refused, as in placement).
        """
        with self._lock:
            # Placement's transaction moves each generation with an update
            # conditional on the one the handler read; a request that wrote
            # the provider in between makes that update miss. Checked here,
            # under the lock, before anything is written.
            for uuid, (generation, _wanted) in inventories.items():
                record = self._provider(uuid)
                if generation != record.generation:
                    raise exception.ResourceProviderConcurrentUpdateDetected()
            created = []
            try:
                for write in writes:
                    self._ensure_consumer(write, True, created)
            except exception.PlacementStateError:
                self._forget_consumers(created)
                raise
            entries = self._entries(writes)
            saved = self._save()
            try:
                self._reshape(inventories, writes, entries)
            except exception.PlacementStateError:
                self._restore(saved)
                self._forget_consumers(created)
                raise

    def _reshape(self, inventories, writes, entries):
        for uuid, (_generation, wanted) in inventories.items():
            if wanted:
                interim = collections.OrderedDict(
                    (rc, stored.inventory) for rc, stored in
                    self._providers[uuid].inventories.items())
                interim.update(wanted)
                self.set_inventories(uuid, None, interim,
                                     check_reserved=False)
        touched = self._check(writes, entries)
        self._apply(writes, entries, touched)
        for uuid, (_generation, wanted) in inventories.items():
            self.set_inventories(uuid, None, wanted, check_reserved=False)

    def _save(self):
        return copy.deepcopy((self._providers, self._allocations,
                              self._consumers))

    def _restore(self, saved):
        providers, allocations, consumers = saved
        self._providers.clear()
        self._providers.update(providers)
        self._allocations.clear()
        self._allocations.update(allocations)
        self._consumers.clear()
        self._consumers.update(consumers)
