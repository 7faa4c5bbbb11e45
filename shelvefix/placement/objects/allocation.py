"""Consumers, allocations and usages of the placement double's state.

The part of :class:`~shelvefix.placement.objects.state.PlacementState` that
implements placement's allocation semantics. What matters to the shelve
race, all checked against openstack-placement 16.0.0:

* A consumer record is created (generation 0) by the first write naming it
  and every successful write bumps its generation, so after its first
  allocation write a consumer is at generation 1.
* With generation checking (microversion 1.28 and later) an unknown
  consumer must be written with generation None ("expected null but got
  N" otherwise) and a known one with its current generation.
* A write replaces the consumer's allocations. The generation of every
  provider named in the new allocations moves; a provider the consumer
  merely leaves does not, unless the new allocations are empty (the
  removed ones then count as written, amount 0).
* A consumer left without allocations by a write is deleted.
  ``DELETE /allocations/{c}`` deletes allocations and consumer and moves
  no generation at all.
* Quirk kept on purpose: placement creates the consumer record before it
  checks that the providers exist, and does not remove it when that check
  fails; likewise an empty write for an unknown consumer leaves a record
  at generation 0. Such a consumer has no allocations (GET shows ``{}``)
  but the next write must send generation 0, not None.
"""

import collections

from shelvefix.placement import exception
from shelvefix.placement.objects import capacity
from shelvefix.placement.objects import models

ConsumerWrite = collections.namedtuple(
    'ConsumerWrite', ['uuid', 'allocations', 'project_id', 'user_id',
                      'generation', 'consumer_type'])
ConsumerWrite.__doc__ = """The allocations requested for one consumer.

``allocations`` maps provider uuid to ``{resource_class: amount}`` (request
order matters for error reporting); ``project_id`` None means the write
predates microversion 1.8; ``consumer_type`` None leaves the type alone.
"""


class AllocationsMixin(object):
    """Allocation reads and writes; mixed into ``PlacementState``."""

    # -- reads --------------------------------------------------------------

    def _all_rows(self):
        for rows in self._allocations.values():
            yield from rows

    def _used(self, provider, resource_class, skip=()):
        return sum(row.used for row in self._all_rows()
                   if row.provider == provider and
                   row.resource_class == resource_class and
                   row.consumer not in skip)

    def allocations_for(self, consumer):
        """A consumer's allocations: ``{provider: {class: amount}}``.

        :param consumer: the consumer uuid (exact match).
        """
        with self._lock:
            result = collections.OrderedDict()
            for row in self._allocations.get(consumer, []):
                result.setdefault(row.provider, collections.OrderedDict())
                result[row.provider][row.resource_class] = row.used
            return result

    @property
    def allocations(self):
        """Every allocation: ``{consumer: {provider: {class: amount}}}``.

        A snapshot, consumers in the order they were first written; a
        consumer without allocations (see the quirk above) is left out.
        """
        with self._lock:
            return collections.OrderedDict(
                (consumer, self.allocations_for(consumer))
                for consumer, rows in self._allocations.items() if rows)

    def get_consumer(self, consumer):
        """The consumer record, or None.

        :param consumer: the consumer uuid (exact match).
        """
        with self._lock:
            record = self._consumers.get(consumer)
            return record.snapshot() if record else None

    def consumer_allocation_rows(self, consumer):
        """Everything ``GET /allocations/{consumer}`` shows.

        :param consumer: the consumer uuid (exact match).
        :returns: ``(Consumer or None, rows)``; each row is
            ``(provider, provider_generation, resource_class, amount,
            created_at)``, in placement's order.
        """
        with self._lock:
            rows = [(row.provider, self._providers[row.provider].generation,
                     row.resource_class, row.used, row.created_at)
                    for row in self._allocations.get(consumer, [])]
            return self.get_consumer(consumer) if rows else None, rows

    def provider_allocation_rows(self, provider):
        """Everything ``GET /resource_providers/{uuid}/allocations`` shows.

        :param provider: the provider uuid.
        :returns: ``(provider_generation, rows)``; each row is
            ``(consumer, Consumer, resource_class, amount, created_at)``.
        :raises ResourceProviderNotFound: no such provider.
        """
        with self._lock:
            record = self._provider(provider)
            # Placement has no ORDER BY here; its (sqlite) index on
            # (provider, class, used) yields this order, kept for
            # byte-identical answers.
            rows = sorted((row for row in self._all_rows()
                           if row.provider == provider),
                          key=lambda row: (self._class_order(
                              row.resource_class), row.used, row.seq))
            return record.generation, [
                (row.consumer, self._consumers[row.consumer].snapshot(),
                 row.resource_class, row.used, row.created_at)
                for row in rows]

    def usages(self, provider):
        """Usage of each inventory class of a provider (0 if unused).

        :param provider: the provider uuid.
        :returns: ``{resource_class: used}`` in placement's class order.
        :raises ResourceProviderNotFound: no such provider.
        """
        return self.provider_usages(provider)[1]

    def provider_usages(self, provider):
        """A provider's generation and the usage of its inventories.

        :param provider: the provider uuid.
        :returns: ``(generation, {resource_class: used})``.
        :raises ResourceProviderNotFound: no such provider.
        """
        with self._lock:
            record = self._provider(provider)
            classes = sorted(record.inventories, key=self._class_order)
            return record.generation, collections.OrderedDict(
                (rc, self._used(provider, rc)) for rc in classes)

    def total_usages(self, project_id, user_id=None, by_type=False,
                     consumer_type=None):
        """Usage summed over a project's (and user's) consumers.

        :param project_id: the project.
        :param user_id: only consumers of this user, if given.
        :param by_type: group by consumer type, with a ``consumer_count``
            per group (placement from microversion 1.38).
        :param consumer_type: with ``by_type``: keep only this type;
            ``all`` puts everything in one group, ``unknown`` keeps
            consumers without a type.
        :returns: ``{resource_class: used}``, or with ``by_type``
            ``{type: {resource_class: used, 'consumer_count': n}}``.
        """
        with self._lock:
            chosen = [c for c in self._consumers.values()
                      if c.project_id == project_id and
                      (not user_id or c.user_id == user_id)]
            if not by_type:
                return self._sum_usage(chosen)
            groups = collections.OrderedDict()
            if consumer_type == 'all':
                groups['all'] = chosen
            elif consumer_type == 'unknown':
                groups['unknown'] = [c for c in chosen
                                     if c.consumer_type is None]
            else:
                for c in chosen:
                    name = c.consumer_type or 'unknown'
                    if consumer_type in (None, name):
                        groups.setdefault(name, []).append(c)
            result = collections.OrderedDict()
            for name, members in groups.items():
                usage = self._sum_usage(members)
                if usage:
                    counted = [c for c in members
                               if self._allocations.get(c.uuid)]
                    usage['consumer_count'] = len(counted)
                    result[name] = usage
            return result

    def _sum_usage(self, consumers):
        totals = collections.defaultdict(int)
        for consumer in consumers:
            for row in self._allocations.get(consumer.uuid, []):
                totals[row.resource_class] += row.used
        return collections.OrderedDict(
            (rc, totals[rc]) for rc in sorted(totals, key=self._class_order))

    # -- writes -------------------------------------------------------------

    def delete_allocations(self, consumer):
        """Drop a consumer's allocations and record; no generation moves.

        Two steps, as in placement, which runs them in two transactions:
        the allocations go first, then the consumers left without any. If
        the second step fails (see :meth:`fail_consumer_cleanup`), the
        allocations are gone and the consumer record stays at its
        generation: a *ghost* consumer.

        :param consumer: the consumer uuid (exact match).
        :raises NotFound: the consumer has no allocations.
        :raises DatabaseError: the second step failed.
        """
        with self._lock:
            if not self._allocations.get(consumer):
                raise exception.NotFound(
                    "No allocations for consumer '%s'" % consumer)
            del self._allocations[consumer]
            self._delete_consumers_if_no_allocations([consumer])

    def fail_consumer_cleanup(self, times=1):
        """Make the next ``times`` consumer clean-ups of a DELETE fail.

        As a database error between placement's two steps would (seen: a
        locked sqlite database under two workers; a deadlock victim, a
        failover or a lost connection does the same elsewhere): the
        ``DELETE /allocations/{c}`` that hits it answers 500 with the
        allocations gone and the consumer kept.

        :param times: how many clean-ups in a row fail from now on (0
            disarms).
        """
        with self._lock:
            self._cleanup_faults = times

    def _delete_consumers_if_no_allocations(self, uuids):
        if self._cleanup_faults:
            self._cleanup_faults -= 1
            raise exception.DatabaseError(
                statement='DELETE FROM consumers WHERE consumers.uuid IN (?)')
        for uuid in uuids:
            if not self._allocations.get(uuid):
                self._consumers.pop(uuid, None)

    def _ensure_consumer(self, write, check_generation, created):
        record = self._consumers.get(write.uuid)
        if record is not None:
            if check_generation and record.generation != write.generation:
                raise exception.ConsumerGenerationConflict(
                    record.generation, write.generation)
            return
        if check_generation and write.generation is not None:
            raise exception.ConsumerGenerationConflict(None, write.generation)
        self._consumers[write.uuid] = models.ConsumerRecord(
            write.uuid, write.project_id, write.user_id, write.consumer_type)
        created.append(write.uuid)

    def replace_allocations(self, writes, check_generation=True):
        """Replace the allocations of one or more consumers atomically.

        :param writes: a list of :class:`ConsumerWrite`, request order.
        :param check_generation: enforce consumer generations (placement
            microversion 1.28 and later).
        :raises ConsumerGenerationConflict: a stale consumer generation.
        :raises AllocationProviderNotFound: an unknown provider.
        :raises ResourceClassNotFound: an unknown resource class.
        :raises InvalidInventory: capacity or constraint failure (one of
            its subclasses).
        """
        # A write without project (before microversion 1.8) is attributed
        # to the "incomplete consumer" project and user, even when the
        # consumer already had a real one.
        writes = [w._replace(project_id=models.INCOMPLETE_CONSUMER_ID,
                             user_id=models.INCOMPLETE_CONSUMER_ID)
                  if w.project_id is None else w for w in writes]
        with self._lock:
            created = []
            try:
                for write in writes:
                    self._ensure_consumer(write, check_generation, created)
            except exception.PlacementStateError:
                self._forget_consumers(created)
                raise
            # Providers are looked up only now; a failure here keeps the
            # consumers created above (see the module docstring).
            entries = self._entries(writes)
            try:
                touched = self._check(writes, entries)
            except exception.PlacementStateError:
                self._forget_consumers(created)
                raise
            self._apply(writes, entries, touched)

    def _entries(self, writes):
        """``(consumer, provider, class, amount)`` of some writes.

        An empty write lists the consumer's current allocations at 0.

        :raises AllocationProviderNotFound: an unknown provider.
        """
        entries = []
        for write in writes:
            if write.allocations:
                for rp, resources in write.allocations.items():
                    if rp not in self._providers:
                        raise exception.AllocationProviderNotFound(rp_uuid=rp)
                    entries.extend((write.uuid, rp, rc, amount)
                                   for rc, amount in resources.items())
            else:
                entries.extend((write.uuid, row.provider, row.resource_class,
                                0)
                               for row in self._allocations.get(write.uuid,
                                                                []))
        return entries

    def _forget_consumers(self, uuids):
        for uuid in uuids:
            del self._consumers[uuid]

    def _check(self, writes, entries):
        for _consumer, _rp, rc, _amount in entries:
            self.class_id(rc)
        rewritten = {write.uuid for write in writes}
        before = collections.defaultdict(int)
        for row in self._all_rows():
            before[(row.provider, row.resource_class)] += row.used

        def inventory_of(rp, rc):
            stored = self._providers[rp].inventories.get(rc)
            return stored.inventory if stored else None

        return capacity.check(
            [(rp, rc, amount) for _c, rp, rc, amount in entries],
            inventory_of,
            lambda rp, rc: self._used(rp, rc, skip=rewritten),
            before, self._class_order)

    def _apply(self, writes, entries, touched):
        now = models.utcnow()
        for write in writes:
            self._allocations.pop(write.uuid, None)
            record = self._consumers[write.uuid]
            record.project_id = write.project_id
            record.user_id = write.user_id
            if write.consumer_type is not None:
                record.consumer_type = write.consumer_type
        for consumer, rp, rc, amount in entries:
            if amount:
                self._allocations.setdefault(consumer, []).append(
                    models.AllocationRow(next(self._seq), consumer, rp, rc,
                                         amount, now))
        for rp in touched:
            self._providers[rp].bump()
        # Only consumers that appear in the written entries move; an empty
        # write for a consumer without allocations changes nothing.
        for consumer in collections.OrderedDict.fromkeys(
                c for c, _rp, _rc, _amount in entries):
            self._consumers[consumer].generation += 1
            if not self._allocations.get(consumer):
                del self._consumers[consumer]
