"""Allocation candidates of the placement double's state.

(Being written: the mixin is wired into
:class:`~.state.PlacementState` and filled in by its owner.)
"""


class CandidatesMixin(object):
    """The search for allocation candidates; mixed into ``PlacementState``."""
