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
    keeps the destination's allocations, as before nova commit e65d4a13;
``pre-1879878``
    :func:`~shelvefix.novacheck.move_rewrites.status_outside_lock`: confirm
    and revert set the migration's status before the resource tracker's
    critical section that drops the move claim, as before nova commits
    a57800d382 and dc9c7a5ebf;
``pre-1821594``
    :func:`~shelvefix.novacheck.move_rewrites.free_after_success`: confirm
    deletes the migration's allocations only if the source's clean-up
    succeeded, as before nova commit 03a6d26691;
``nova-revert``
    :func:`~shelvefix.novacheck.move_rewrites.revert_outside_lock`: the
    source saves a reverted server back outside its tracker's lock, as
    nova's latest release does (not fixed upstream);
``nova-evacuate``
    :func:`~shelvefix.novacheck.move_rewrites.cleanup_in_flight`,
    :func:`~shelvefix.novacheck.move_rewrites.rebuild_saved_apart` and
    :func:`~shelvefix.novacheck.move_rewrites.evacuation_not_counted`: the
    source's start-up cleans up after evacuations still in flight, and the
    destination saves the end of the rebuild before the server is its own,
    uncounted, as nova's latest release does (not fixed upstream).

The pre-fix variants exist to show the bugs; they are not, and must never
become, options of the library.
"""

import collections
import functools

from shelvefix.compute import evacuate
from shelvefix.compute import manager
from shelvefix.compute import move_claims
from shelvefix.compute import resize
from shelvefix.compute import resource_tracker
from shelvefix.novacheck import move_rewrites
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


@functools.lru_cache(maxsize=None)
def status_outside_lock_tracker(cls=resource_tracker.ResourceTracker):
    """``cls`` saving the migration's status outside its lock (1879878)."""
    return rewrite.rewrite_method(cls, move_rewrites.status_outside_lock,
                                  'Pre1879878' + cls.__name__,
                                  method_name=None,
                                  defined_in=move_claims.MoveClaims)


@functools.lru_cache(maxsize=None)
def leaking_confirm_manager(cls=manager.ComputeManager):
    """``cls`` freeing the migration's allocations on success only."""
    return rewrite.rewrite_method(cls, move_rewrites.free_after_success,
                                  'Pre1821594' + cls.__name__,
                                  method_name='confirm_resize',
                                  defined_in=resize.ResizeMixin)


@functools.lru_cache(maxsize=None)
def nova_revert_manager(cls=manager.ComputeManager):
    """``cls`` saving a reverted server back as nova does."""
    return rewrite.rewrite_method(cls, move_rewrites.revert_outside_lock,
                                  'NovaRevert' + cls.__name__,
                                  method_name='_finish_revert_resize',
                                  defined_in=resize.ResizeMixin)


@functools.lru_cache(maxsize=None)
def nova_evacuate_manager(cls=manager.ComputeManager):
    """``cls`` evacuating as nova does.

    The start-up cleans up after evacuations in flight, and the end of
    the rebuild is saved before the host.
    """
    cleaning = rewrite.rewrite_method(
        cls, move_rewrites.cleanup_in_flight, 'NovaCleanup' + cls.__name__,
        method_name='_destroy_evacuated_instances',
        defined_in=evacuate.EvacuateMixin)
    return rewrite.rewrite_method(
        cleaning, move_rewrites.rebuild_saved_apart,
        'NovaEvacuate' + cls.__name__, method_name='_do_rebuild_instance',
        defined_in=evacuate.EvacuateMixin)


@functools.lru_cache(maxsize=None)
def nova_evacuation_tracker(cls=resource_tracker.ResourceTracker):
    """``cls`` whose ``finish_evacuation`` counts nothing, as nova's."""
    return rewrite.rewrite_method(cls, move_rewrites.evacuation_not_counted,
                                  'NovaEvacuation' + cls.__name__,
                                  method_name='finish_evacuation')


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
    if variant == race.PRE_1879878:
        return Code(manager.ComputeManager, status_outside_lock_tracker())
    if variant == race.PRE_1821594:
        return Code(leaking_confirm_manager(),
                    resource_tracker.ResourceTracker)
    if variant == race.NOVA_REVERT:
        return Code(nova_revert_manager(), resource_tracker.ResourceTracker)
    if variant == race.NOVA_EVACUATE:
        return Code(nova_evacuate_manager(), nova_evacuation_tracker())
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
