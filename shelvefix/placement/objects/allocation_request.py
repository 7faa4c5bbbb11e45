"""One way to satisfy request groups: an allocation request.

The search (:mod:`.candidate_search`) makes one per way a group can be met;
merging (:mod:`.candidates`) combines one per group into a candidate.
"""

import collections

# One provider's share of a candidate: (provider uuid, class, amount).
Resource = collections.namedtuple('Resource', 'provider rc amount')


class AllocationRequest(object):
    """One way to satisfy one request group (or, merged, all of them).

    Two requests are equal when they take the same resources from the same
    providers for the same groups; where they are anchored is not part of
    it (as in placement, which keeps one of equal requests).
    """

    __slots__ = ('anchor', 'same_provider', 'resources', 'mappings', '_key')

    def __init__(self, anchor, resources, mappings, same_provider=False):
        self.anchor = anchor
        self.resources = tuple(resources)
        self.mappings = mappings
        self.same_provider = same_provider
        self._key = None

    def key(self):
        if self._key is None:
            self._key = (frozenset(self.resources), frozenset(
                (suffix, frozenset(providers))
                for suffix, providers in self.mappings.items()))
        return self._key

    def __eq__(self, other):
        return self.key() == other.key()

    def __hash__(self):
        return hash(self.key())

    def anchored_at(self, anchor):
        """The same request, anchored in another tree."""
        return AllocationRequest(anchor, self.resources, self.mappings,
                                 self.same_provider)
