"""Resource classes of the placement double's state.

(Being written: the mixin is wired into
:class:`~.state.PlacementState` and filled in by its owner.)
"""


class ResourceClassesMixin(object):
    """Standard and custom resource classes; mixed into ``PlacementState``."""
