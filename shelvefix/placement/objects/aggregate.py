"""Aggregates of the placement double's state.

(Being written: the mixin is wired into
:class:`~.state.PlacementState` and filled in by its owner.)
"""


class AggregatesMixin(object):
    """The aggregates providers are members of.

    Mixed into ``PlacementState``.
    """
