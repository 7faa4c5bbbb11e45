"""Traits of the placement double's state.

(Being written: the mixin is wired into
:class:`~.state.PlacementState` and filled in by its owner.)
"""


class TraitsMixin(object):
    """Standard and custom traits, and the traits of providers.

    Mixed into ``PlacementState``.
    """
