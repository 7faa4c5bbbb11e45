"""The code variants of the race lab, derived from a nova tree's own code.

``corrected`` is the tree as it is. Each pre-fix variant moves the tree's
code back to its shape before one fix, by one rewrite of the method's
source (:mod:`shelvefix.novacheck.rewrite`,
:mod:`shelvefix.novacheck.move_rewrites`), as the library's variants are
derived from its corrected code (:mod:`shelvefix.race.variants`). A tree
whose method no longer has the shape a rewrite expects cannot give that
variant: :class:`shelvefix.nova.NovaUnusable` says which.

This module imports nova (see :mod:`shelvefix.nova`).
"""

import collections

from nova.compute import manager as nova_manager
from nova.compute import resource_tracker

from shelvefix import nova as nova_target
from shelvefix.novacheck import move_rewrites
from shelvefix.novacheck import rewrite
from shelvefix.novacheck import steps as novacheck_steps
from shelvefix import race

Code = collections.namedtuple('Code', ['manager_cls', 'tracker_cls'])

#: variant -> (which class, the rewrite, the new class's name, the method)
REWRITES = {
    race.LEGACY: ('manager', rewrite.legacy_order,
                  'LegacyOrderComputeManager', novacheck_steps.METHOD_NAME),
    race.PRE_2025480: ('tracker', rewrite.untrack_spawning,
                       'Pre2025480ResourceTracker', None),
    race.PRE_1862633: ('manager', rewrite.leak_on_bind_failure,
                       'Pre1862633ComputeManager', '_unshelve_instance'),
    race.PRE_1879878: ('tracker', move_rewrites.status_outside_lock,
                       'Pre1879878ResourceTracker', None),
    race.PRE_1821594: ('manager', move_rewrites.free_after_success,
                       'Pre1821594ComputeManager', 'confirm_resize'),
}


def code(variant):
    """The compute manager and resource tracker classes of ``variant``.

    :raises shelvefix.nova.NovaUnusable: the tree's code does not have the
        shape the variant's rewrite expects
    """
    manager_cls = nova_manager.ComputeManager
    tracker_cls = resource_tracker.ResourceTracker
    if variant == race.CORRECTED:
        return Code(manager_cls, tracker_cls)
    which, rewriter, name, method = REWRITES[variant]
    base = manager_cls if which == 'manager' else tracker_cls
    try:
        derived = rewrite.rewrite_method(base, rewriter, name,
                                         method_name=method)
    except Exception as e:
        raise nova_target.NovaUnusable(
            'cannot derive the %s variant from this nova: %s.%s: %s'
            % (variant, base.__name__, method or 'its drop methods', e))
    if which == 'manager':
        return Code(derived, tracker_cls)
    return Code(manager_cls, derived)
