"""The reshaper of the placement double's state.

(Being written: the mixin is wired into
:class:`~.state.PlacementState` and filled in by its owner.)
"""


class ReshaperMixin(object):
    """Inventories and allocations moved in one write.

    Mixed into ``PlacementState``.
    """
