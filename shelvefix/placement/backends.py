"""The placement backends shelvefix can run against, by name.

``double``
    :class:`~shelvefix.placement.fixture.PlacementFixture`: the in-memory
    placement written for shelvefix.
``real``
    :class:`~shelvefix.placement.real.RealPlacementFixture`:
    openstack-placement's own application over in-memory sqlite (needs the
    ``placement`` extra).

Both are fixtures exposing the same attributes (``adapter``, ``client``,
``calls``, ``inject_fault``...), so code written against one runs unchanged
against the other.
"""

from shelvefix.placement import fixture
from shelvefix.placement import real

BACKENDS = {
    'double': fixture.PlacementFixture,
    'real': real.RealPlacementFixture,
}


def get(name):
    """The fixture class of a backend.

    :raises ValueError: unknown name, listing the known ones
    """
    try:
        return BACKENDS[name]
    except KeyError:
        raise ValueError('unknown placement backend %r; choose one of %s'
                         % (name, ', '.join(sorted(BACKENDS))))
