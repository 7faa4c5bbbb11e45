"""The corrected code and the pre-fix variants derived from it.

``corrected`` is the library itself. Each pre-fix variant is derived from
it by one rewrite of its source (:mod:`shelvefix.novacheck.rewrite`, the
same rewrites the nova tests apply to nova's own classes), so a
demonstration cannot drift from what it demonstrates:

``legacy`` (bug 1798688)
    :func:`~shelvefix.novacheck.rewrite.legacy_order`: the shelve-offload
    saves ``SHELVED_OFFLOADED`` before it frees the allocations, as nova
    did before change I2a6ccaff904c1f0759d55feeeef0ec1da32c65df;
``pre-2025480``
    :func:`~shelvefix.novacheck.rewrite.untrack_spawning`: the resource
    tracker stops counting every ``SHELVED_OFFLOADED`` server, even one an
    unshelve is spawning, as before nova commit f1dc4ec3;
``pre-1862633``
    :func:`~shelvefix.novacheck.rewrite.leak_on_bind_failure`: the unshelve
    sets up the network before its ``try``, so a port binding failure
    keeps the destination's allocations, as before nova commit e65d4a13.

The pre-fix variants exist to show the bugs; they are not, and must never
become, options of the library.
"""

import collections
import functools

from shelvefix.compute import manager
from shelvefix.compute import resource_tracker
from shelvefix.novacheck import rewrite
from shelvefix import race

Code = collections.namedtuple('Code', ['manager_cls', 'tracker_cls'])
Code.__doc__ = """The compute manager and resource tracker classes of a
variant."""


@functools.lru_cache(maxsize=None)
def legacy_compute_manager(cls=manager.ComputeManager):
    """``cls`` with the state saved before the allocations are freed.

    :returns: a subclass of ``cls`` (built once per class)
    :raises shelvefix.novacheck.rewrite.RewriteError: ``cls`` is not in the
        corrected order
    """
    return rewrite.rewrite_method(cls, rewrite.legacy_order,
                                  'Legacy' + cls.__name__)


@functools.lru_cache(maxsize=None)
def untracking_resource_tracker(cls=resource_tracker.ResourceTracker):
    """``cls`` testing ``vm_state`` alone for removal (bug 2025480)."""
    return rewrite.rewrite_method(cls, rewrite.untrack_spawning,
                                  'Pre2025480' + cls.__name__,
                                  method_name=None)


@functools.lru_cache(maxsize=None)
def leaking_compute_manager(cls=manager.ComputeManager):
    """``cls`` setting up the network outside the ``try`` (bug 1862633)."""
    return rewrite.rewrite_method(cls, rewrite.leak_on_bind_failure,
                                  'Pre1862633' + cls.__name__,
                                  method_name='_unshelve_instance')


def code(variant):
    """The :class:`Code` of a variant.

    :raises ValueError: an unknown variant
    """
    if variant == race.CORRECTED:
        return Code(manager.ComputeManager,
                    resource_tracker.ResourceTracker)
    if variant == race.LEGACY:
        return Code(legacy_compute_manager(),
                    resource_tracker.ResourceTracker)
    if variant == race.PRE_2025480:
        return Code(manager.ComputeManager, untracking_resource_tracker())
    if variant == race.PRE_1862633:
        return Code(leaking_compute_manager(),
                    resource_tracker.ResourceTracker)
    raise ValueError('unknown variant %r; choose one of %s'
                     % (variant, ', '.join(race.VARIANTS)))


def compute_manager(ordering):
    """The compute manager class of an ordering of the shelve-offload.

    :param ordering: ``race.CORRECTED`` or ``race.LEGACY``
    :raises ValueError: an unknown ordering
    """
    if ordering not in race.ORDERINGS:
        raise ValueError('unknown ordering %r; choose one of %s'
                         % (ordering, ', '.join(race.ORDERINGS)))
    return code(ordering).manager_cls
