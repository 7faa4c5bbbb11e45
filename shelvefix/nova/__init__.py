"""The nova target of the race lab: the scenarios on nova's own code.

The race lab's scenarios (:mod:`shelvefix.race.scenarios`) run on the
library's code or, through this package, on nova's: its
``ComputeManager``, ``ResourceTracker``, conductor, scheduler and
``SchedulerReportClient``, imported from the installed nova (``pip
install shelvefix[nova]``) or from a tree the user names (a git checkout,
an unpacked sdist or a wheel), with doubles for what needs a hypervisor,
RPC, neutron or a database (:mod:`~shelvefix.nova.doubles`,
:mod:`~shelvefix.nova.database`).

nova registers a ``[placement]`` group on oslo.config's global ``CONF``
that the library's own (:mod:`shelvefix.conf`) would clash with, so nova
runs in a process of its own: ``shelvefix race --target nova`` starts
:mod:`shelvefix.nova.runner`, which loads the tree
(:func:`~shelvefix.nova.tree.load`), explores the cells and sends back
their results (:mod:`shelvefix.nova.lab`). Every module of this package
but :mod:`~shelvefix.nova.tree` and :mod:`~shelvefix.nova.lab` imports
nova: import them only after :func:`~shelvefix.nova.tree.load`, and
never in a process that has loaded :mod:`shelvefix.conf`.
"""

from shelvefix import race

#: The code variants a nova tree gives: the tree as it is, and each
#: pre-fix variant derived from it (:mod:`~shelvefix.nova.variants`). The
#: library's ``nova-*`` variants are its code with one part as nova has
#: it: on nova, that is ``corrected``.
VARIANTS = (race.CORRECTED, race.LEGACY, race.PRE_2025480,
            race.PRE_1862633, race.PRE_1879878, race.PRE_1821594)


def cells(scenario):
    """The cells of ``scenario`` on nova, in the library's order.

    nova frees its allocations its own way, so the offload-unshelve cells
    do not vary it (``free`` is None); nova has no ghost fault.

    :param scenario: a :class:`~shelvefix.race.scenarios.Scenario`
    """
    found = []
    if race.NOVA not in scenario.targets:
        return found
    for cell in scenario.cells():
        cell = cell._replace(free=None)
        if cell.variant in VARIANTS and cell not in found:
            found.append(cell)
    return found


class NovaUnusable(Exception):
    """The nova named cannot be driven: one line says what is missing."""
