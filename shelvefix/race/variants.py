"""The two orderings of the shelve-offload: the fix, and before it.

``corrected`` is the library's own :class:`ComputeManager`. ``legacy`` is
derived from it: :func:`legacy_compute_manager` moves the one statement
that frees the allocations after the save that makes ``SHELVED_OFFLOADED``
visible (:func:`shelvefix.novacheck.rewrite.legacy_order`, the same
rewrite the nova tests apply to nova's own method), as nova was before
change I2a6ccaff904c1f0759d55feeeef0ec1da32c65df. Everything else is the
corrected code itself, so the demonstration cannot drift from what it
demonstrates. The legacy order exists to show the bug; it is not, and must
never become, an option of the library.
"""

import functools

from shelvefix.compute import manager
from shelvefix.novacheck import rewrite
from shelvefix import race


@functools.lru_cache(maxsize=None)
def legacy_compute_manager(cls=manager.ComputeManager):
    """``cls`` with the state saved before the allocations are freed.

    :returns: a subclass of ``cls`` (built once per class)
    :raises shelvefix.novacheck.rewrite.RewriteError: ``cls`` is not in the
        corrected order
    """
    return rewrite.rewrite_method(cls, rewrite.legacy_order,
                                  'Legacy' + cls.__name__)


def compute_manager(ordering):
    """The compute manager class of an ordering.

    :param ordering: ``race.CORRECTED`` or ``race.LEGACY``
    :raises ValueError: an unknown ordering
    """
    if ordering == race.CORRECTED:
        return manager.ComputeManager
    if ordering == race.LEGACY:
        return legacy_compute_manager()
    raise ValueError('unknown ordering %r; choose one of %s'
                     % (ordering, ', '.join(race.ORDERINGS)))
