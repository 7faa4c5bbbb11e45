"""Aggregates of the placement double's state.

An aggregate is nothing but a uuid that providers are associated with;
placement creates its row the first time any provider is put in it and
never deletes it. Its internal id (the order of first appearance) is the
order placement lists a provider's aggregates in, whatever order they were
sent in. The uuids are kept exactly as a client wrote them: placement
neither lower-cases nor adds dashes, so ``AAAA...`` and ``aaaa...`` are
two aggregates.

Placement hands out the ids of the aggregates new in one write, and
inserts the provider's new association rows, in the iteration order of a
Python set of their uuids (which depends on the process' string hashing);
the double walks the same set, so in the same process it gets the same
order. Association rows get the highest row id plus one, as in
placement's sqlite; placement's search for the trees a sharing provider
serves follows them.
"""

from shelvefix.placement import exception


class AggregatesMixin(object):
    """The aggregates providers are members of.

    Mixed into ``PlacementState``, which initialises
    ``self._aggregate_ids`` (``{aggregate uuid: internal id}``).
    """

    def _aggregate_order(self, aggregates):
        return sorted(aggregates, key=self._aggregate_ids.__getitem__)

    def get_provider_aggregates(self, uuid):
        """The aggregates of a provider, and its generation.

        :param uuid: the provider.
        :returns: ``(aggregate uuids in placement's order, generation)``.
        :raises ResourceProviderNotFound: no such provider.
        """
        with self._lock:
            record = self._provider(uuid)
            return (self._aggregate_order(record.aggregates),
                    record.generation)

    def set_provider_aggregates(self, uuid, aggregates, generation=None):
        """Replace the aggregates of a provider.

        Without ``generation`` (placement before microversion 1.19) the
        provider generation does not move; with it, it must be the current
        one and is then incremented, even when nothing changes.

        :param uuid: the provider.
        :param aggregates: the aggregate uuids, any spelling, no duplicate.
        :param generation: the generation the caller last saw, or None.
        :returns: the provider generation after the write.
        :raises ResourceProviderNotFound: no such provider.
        :raises ProviderGenerationConflict: stale generation.
        """
        with self._lock:
            record = self._provider(uuid)
            if generation is not None and generation != record.generation:
                raise exception.ProviderGenerationConflict()
            wanted = set(aggregates)
            for aggregate in wanted - set(record.aggregates):
                self._aggregate_ids.setdefault(
                    aggregate, len(self._aggregate_ids) + 1)
                record.aggregate_rows[aggregate] = 1 + max(
                    (row for rp in self._providers.values()
                     for row in rp.aggregate_rows.values()), default=0)
            for aggregate in record.aggregates - wanted:
                record.aggregate_rows.pop(aggregate, None)
            record.aggregates = wanted
            if generation is not None:
                record.bump()
            return record.generation
