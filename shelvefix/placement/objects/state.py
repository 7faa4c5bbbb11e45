"""The placement double's data: providers, inventories, consumers, usage.

:class:`PlacementState` is the domain model behind
:class:`~shelvefix.placement.deploy.PlacementApp`. It knows nothing about
HTTP or microversions: it takes plain values, enforces placement's rules
(generations, capacity, provider trees) and raises
:mod:`~shelvefix.placement.exception` errors. One re-entrant lock guards
everything, and every write validates first and changes state last, so a
write is all-or-nothing exactly like placement's database transactions.

This module holds the core (storage, lock, introspection) and the
resource providers; inventories and allocations live in the mixins of
:mod:`~shelvefix.placement.objects.inventory` and
:mod:`~shelvefix.placement.objects.allocation`, the provider search in
:mod:`~shelvefix.placement.objects.provider_filter`. Tests may read the state
directly (see the introspection members) but should change it through
HTTP, as real clients do.
"""

import collections
import itertools
import uuid as uuidlib

from shelvefix.placement import exception
from shelvefix.placement.objects import aggregate
from shelvefix.placement.objects import allocation
from shelvefix.placement.objects import candidates
from shelvefix.placement.objects import inventory
from shelvefix.placement.objects import models
from shelvefix.placement.objects import provider_filter
from shelvefix.placement.objects import reshaper
from shelvefix.placement.objects import resource_class
from shelvefix.placement.objects import trait
from shelvefix import utils


class PlacementState(inventory.InventoriesMixin,
                     allocation.AllocationsMixin,
                     resource_class.ResourceClassesMixin,
                     trait.TraitsMixin,
                     aggregate.AggregatesMixin,
                     candidates.CandidatesMixin,
                     reshaper.ReshaperMixin,
                     provider_filter.ProviderFiltersMixin):
    """In-memory placement data, safe to share between threads.

    Introspection (snapshots, safe to keep):

    * :attr:`providers` - ``{uuid: Provider}``
    * :attr:`consumers` - ``{uuid: Consumer}``
    * :attr:`allocations` - ``{consumer: {provider: {resource_class:
      amount}}}``
    * :meth:`allocations_for` - ``{provider: {resource_class: amount}}``
      of one consumer
    * :meth:`usages` - ``{resource_class: used}`` of one provider
    """

    def __init__(self):
        # Taken from green threads and native ones alike (nova calls
        # placement from eventlet's tpool threads too).
        self._lock = utils.AnyThreadRLock()
        # Insertion order is placement's id order: listings follow it.
        self._providers = collections.OrderedDict()
        # Custom resource classes and traits, names in creation (id)
        # order, and their records (see their mixins); the standard ones
        # count as created with the state.
        self._custom_classes = []
        self._class_records = {}
        self._custom_traits = []
        self._trait_records = {}
        self._created_at = models.utcnow()
        # Every aggregate uuid ever used -> its id (see the aggregates
        # mixin); providers keep theirs in ProviderRecord.aggregates.
        self._aggregate_ids = {}
        self._consumers = {}
        self._allocations = {}
        self._seq = itertools.count(1)
        # Consumer clean-ups still to fail (see fail_consumer_cleanup).
        self._cleanup_faults = 0

    # -- introspection ----------------------------------------------------

    @property
    def providers(self):
        """``{uuid: Provider}`` snapshot of every resource provider."""
        with self._lock:
            return collections.OrderedDict(
                (rp.uuid, self._provider_view(rp))
                for rp in self._providers.values())

    @property
    def consumers(self):
        """``{uuid: Consumer}`` snapshot of every consumer record."""
        with self._lock:
            return {c.uuid: c.snapshot() for c in self._consumers.values()}

    # -- helpers (caller holds the lock) ---------------------------------

    def _provider(self, uuid):
        try:
            return self._providers[uuid]
        except KeyError:
            raise exception.ResourceProviderNotFound(uuid=uuid)

    def _root_of(self, record):
        while record.parent_uuid is not None:
            record = self._providers[record.parent_uuid]
        return record.uuid

    def _subtree(self, uuid):
        found = [uuid]
        for rp in self._providers.values():
            if rp.parent_uuid == uuid:
                found.extend(self._subtree(rp.uuid))
        return found

    def _provider_view(self, record):
        # Placement lists a provider's inventories by resource class id.
        inventories = collections.OrderedDict(
            (rc, record.inventories[rc].inventory)
            for rc in sorted(record.inventories, key=self._class_order))
        return models.Provider(record.uuid, record.name, record.generation,
                               record.parent_uuid, self._root_of(record),
                               inventories)

    # -- resource providers -------------------------------------------------

    def create_provider(self, name, uuid=None, parent_provider_uuid=None):
        """Create a resource provider (generation 0, no inventory).

        :param name: unique name, not empty.
        :param uuid: its uuid (generated when None).
        :param parent_provider_uuid: parent in a provider tree.
        :returns: the new :class:`~.models.Provider`.
        :raises ProviderActionError: empty name, bad parent.
        :raises ProviderNameExists: the name is taken.
        :raises ProviderUuidExists: the uuid is taken.
        """
        uuid = uuid or str(uuidlib.uuid4())
        with self._lock:
            if not name:
                raise exception.ProviderActionError(
                    action='create', reason='name is required')
            if parent_provider_uuid is not None:
                if parent_provider_uuid == uuid:
                    raise exception.ProviderActionError(
                        action='create',
                        reason='parent provider UUID cannot be same as '
                               'UUID. Please set parent provider UUID to '
                               'None if there is no parent.')
                if parent_provider_uuid not in self._providers:
                    raise exception.ProviderActionError(
                        action='create',
                        reason='parent provider UUID does not exist.')
            if any(rp.name == name for rp in self._providers.values()):
                raise exception.ProviderNameExists(name=name)
            if uuid in self._providers:
                raise exception.ProviderUuidExists(uuid=uuid)
            record = models.ProviderRecord(
                uuid, name, parent_provider_uuid,
                1 + max((rp.id for rp in self._providers.values()),
                        default=0))
            self._providers[uuid] = record
            return self._provider_view(record)

    def get_provider(self, uuid):
        """One provider.

        :param uuid: the provider uuid (exact match).
        :raises ResourceProviderNotFound: no such provider.
        """
        with self._lock:
            return self._provider_view(self._provider(uuid))

    def provider_last_modified(self, uuid):
        """When the provider row last changed (for Last-Modified).

        :param uuid: the provider uuid.
        :raises ResourceProviderNotFound: no such provider.
        """
        with self._lock:
            return self._provider(uuid).last_modified

    def update_provider(self, uuid, name, parent_provider_uuid,
                        allow_reparenting=False):
        """Rename a provider and (re)set its parent.

        Without ``allow_reparenting`` (placement before microversion 1.37)
        a parent can only be set on a provider that has none. The
        generation does not move.

        :param uuid: the provider.
        :param name: its (new) name.
        :param parent_provider_uuid: its (new) parent, or None.
        :param allow_reparenting: allow changing or removing a parent.
        :returns: the updated :class:`~.models.Provider`.
        :raises ResourceProviderNotFound: no such provider.
        :raises ProviderActionError: refused parent change.
        :raises ProviderNameExists: the name is taken.
        """
        with self._lock:
            record = self._provider(uuid)
            parent = parent_provider_uuid
            if parent is not None:
                if parent not in self._providers:
                    raise exception.ProviderActionError(
                        action='create',
                        reason='parent provider UUID does not exist.')
                if (record.parent_uuid not in (None, parent) and
                        not allow_reparenting):
                    raise exception.ProviderActionError(
                        action='update',
                        reason='re-parenting a provider is not currently '
                               'allowed.')
                if parent in self._subtree(uuid):
                    raise exception.ProviderActionError(
                        action='update',
                        reason='creating loop in the provider tree is not '
                               'allowed.')
            elif record.parent_uuid is not None and not allow_reparenting:
                raise exception.ProviderActionError(
                    action='update',
                    reason='un-parenting a provider is not currently '
                           'allowed.')
            if any(rp.name == name and rp.uuid != uuid
                   for rp in self._providers.values()):
                raise exception.ProviderNameExists(name=name)
            record.name = name
            record.parent_uuid = parent
            record.touch()
            return self._provider_view(record)

    def delete_provider(self, uuid):
        """Delete a provider and its inventory.

        :param uuid: the provider.
        :raises ResourceProviderNotFound: no such provider.
        :raises CannotDeleteParentResourceProvider: it has children.
        :raises ResourceProviderInUse: it has allocations.
        """
        with self._lock:
            self._provider(uuid)
            if any(rp.parent_uuid == uuid for rp in self._providers.values()):
                raise exception.CannotDeleteParentResourceProvider()
            if any(row.provider == uuid for row in self._all_rows()):
                raise exception.ResourceProviderInUse()
            del self._providers[uuid]
