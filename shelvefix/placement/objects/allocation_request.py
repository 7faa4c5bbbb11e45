"""One way to satisfy request groups: an allocation request.

The search (:mod:`.candidate_search`) makes one per way a group can be met;
merging (:mod:`.candidates`) combines one per group into a candidate.
Requests hash and compare as placement's do, so that a Python set of them
(placement keeps its candidates in one) holds the same requests in the
same order as placement's set.
"""

import collections

# One provider's share of a request: (provider id, class, amount). Its hash
# is that of the tuple, the hash placement gives the same share.
Resource = collections.namedtuple('Resource', 'provider rc amount')


class AllocationRequest(object):
    """One way to satisfy one request group (or, merged, all of them).

    :ivar anchor: the id of the root of the tree it is anchored in.
    :ivar resources: :class:`Resource` tuples, in placement's order.
    :ivar mappings: ``{suffix: set of provider uuids}``.
    :ivar same_provider: whether its group is a numbered (or named) one.

    Two requests are equal when they take the same resources from the same
    providers for the same groups; where they are anchored is not part of
    it (as in placement, which keeps one of equal requests). The hash is
    placement's: that of the tuple of resources ordered by their hashes.
    """

    __slots__ = ('anchor', 'same_provider', 'resources', 'mappings',
                 '_hash')

    def __init__(self, anchor, resources, mappings, same_provider=False):
        self.anchor = anchor
        self.resources = resources
        self.mappings = mappings
        self.same_provider = same_provider
        self._hash = None

    def __hash__(self):
        if self._hash is None:
            self._hash = hash(tuple(sorted(self.resources, key=hash)))
        return self._hash

    def __eq__(self, other):
        return (set(self.resources) == set(other.resources) and
                self.mappings == other.mappings)

    def __repr__(self):
        return 'AllocationRequest(%r, %r, %r)' % (
            self.anchor, list(self.resources), self.mappings)

    def anchored_at(self, anchor):
        """The same request (sharing its resources), in another tree."""
        return AllocationRequest(anchor, self.resources, self.mappings,
                                 self.same_provider)
