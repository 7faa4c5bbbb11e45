"""The race lab's scenarios, each written once, for every target.

A :class:`Scenario` is a declaration, in nova's terms: its actors and the
host each runs for, where the server starts, its cells (code variant, way
of freeing, fault) and the symptoms its table always shows. It holds no
code: a *target* (:mod:`shelvefix.race.targets` for the library,
:mod:`shelvefix.nova` for a nova tree) supplies the program that runs a
cell, and :func:`explore` (or :func:`~.random_runs.run_random`) runs
it. This module imports neither target, so that a process running nova's
code never loads the library's configuration (see :mod:`shelvefix.nova`).

The actors:

``compute-1``, ``compute-2``
    the operation's steps on that host's compute service (in
    ``offload-unshelve``, ``compute`` is compute-1's shelve-offload);
``periodic-1``, ``periodic-2``
    that host's ``update_available_resource``;
``conductor``
    the API, the conductor and the scheduler (in ``offload-unshelve``,
    ``scheduler``: the API's unshelve and the scheduler's claim);
``delete``, ``migrate``, ``compute-1-prep``
    another client deleting or migrating the server, and compute-1
    serving the second migration's ``prep_resize``.
"""

import collections
import contextlib

from shelvefix import explorer
from shelvefix import race
from shelvefix.race import outcomes

SOURCE = 'compute-1'
DESTINATION = 'compute-2'
HOSTS = (SOURCE, DESTINATION)
#: A third host, for a scenario that needs one (``live-migrate``'s
#: ``precheck-fails``: the conductor's retry).
THIRD = 'compute-3'

#: Where a scenario's server starts.
ON_SOURCE = 'on-source'
OFFLOADED = 'offloaded'
RESIZED = 'resized'
EVACUATING = 'evacuating'
ACTIVE_ON_SOURCE = 'active-on-source'
#: Evacuated from compute-1 to compute-2 (the migration ``done``), and
#: compute-1 not started again since.
EVACUATED = 'evacuated'
#: No server: an ironic node of compute-1's, about to move to compute-2.
NODE_ON_SOURCE = 'node-on-source'
#: The API accepted a boot: a build request, no record in a cell yet.
BUILD_REQUESTED = 'build-requested'


class Cell(collections.namedtuple('Cell', ['variant', 'free', 'fault'],
                                  defaults=(None,))):
    """One cell of a scenario's matrix: code variant, way of freeing, fault.

    ``free`` is None where the scenario does not vary it (DELETE, nova's
    way since Ussuri). ``fault`` is None or one of the faults of
    :mod:`shelvefix.race` (``ghost``, ``port-binding``,
    ``confirm-fails``, ``rebuild-fails``), in every run of the cell.
    """

    __slots__ = ()

    @property
    def ordering(self):
        """The variant, under the name the offload-unshelve table uses."""
        return self.variant


class Scenario(collections.namedtuple(
        'Scenario', ['name', 'title', 'first_column', 'actors', 'start',
                     'variant_faults', 'symptoms', 'targets'],
        defaults=((race.LIBRARY, race.NOVA),))):
    """A scenario of the race lab.

    ``title`` heads its table and ``first_column`` names the table's first
    column. ``actors`` are ``(name, host)`` pairs in the order the
    explorer lists them, ``host`` the compute host whose service (and
    locks) the actor runs for, or None for the API and conductor.
    ``start`` is where the server starts (:data:`ON_SOURCE`,
    :data:`OFFLOADED`, :data:`RESIZED`, :data:`EVACUATING`,
    :data:`ACTIVE_ON_SOURCE`, :data:`EVACUATED`).
    ``variant_faults`` lists the cells' ``(variant, fault)``; in
    ``offload-unshelve`` each is crossed with the ways of freeing.
    ``symptoms`` are the outcomes its table always has a column for (with
    ``ok``): what its bugs show, so that a table of random runs has the
    same columns whichever runs happened to show them. ``targets`` are the
    targets that have its program (both, unless the library does not have
    its operation yet).
    """

    __slots__ = ()

    @property
    def actor_names(self):
        """The actors' names, in order."""
        return tuple(name for name, _host in self.actors)

    def cells(self, ghost=False):
        """The scenario's matrix on the library.

        :param ghost: also the offload-unshelve cells freeing with a
            DELETE that leaves a ghost consumer
        """
        if self.name != race.OFFLOAD_UNSHELVE:
            return [Cell(variant, None, fault)
                    for variant, fault in self.variant_faults]
        cells = [Cell(variant, free) for variant, _fault in
                 self.variant_faults for free in race.FREE_METHODS]
        if ghost:
            cells += [Cell(variant, race.DELETE, race.GHOST)
                      for variant, _fault in self.variant_faults]
        return cells


def _cells(*pairs):
    return tuple(pair if isinstance(pair, tuple) else (pair, None)
                 for pair in pairs)


_UNSHELVE = (('conductor', None), ('compute-2', DESTINATION),
             ('periodic-2', DESTINATION))
_MOVE_SYMPTOMS = (outcomes.OK,)
_CROSS_CELL = (('conductor', None), ('periodic-1', SOURCE),
               ('periodic-2', DESTINATION))

SCENARIOS = collections.OrderedDict((s.name, s) for s in [
    Scenario(race.OFFLOAD_UNSHELVE,
             'shelve-offload (compute) against unshelve (API + scheduler)',
             'ordering', (('compute', SOURCE), ('scheduler', None)),
             ON_SOURCE, _cells(race.CORRECTED, race.LEGACY),
             (outcomes.OK, outcomes.SCHEDULER_409, outcomes.COMPUTE_409,
              outcomes.CLAIM_WIPED, outcomes.LEAKED)),
    Scenario(race.UNSHELVE_PERIODIC,
             'unshelve (API + conductor + scheduler, compute-2) against '
             "compute-2's update_available_resource",
             'variant', _UNSHELVE, OFFLOADED,
             _cells(race.CORRECTED, (race.CORRECTED, race.PORT_BINDING),
                    race.PRE_2025480, (race.PRE_2025480, race.PORT_BINDING),
                    race.PRE_1862633,
                    (race.PRE_1862633, race.PORT_BINDING)),
             (outcomes.OK, outcomes.LEAKED, outcomes.USAGE_UNTRACKED)),
    Scenario(race.LIFECYCLE,
             'shelve-offload on compute-1, unshelve to compute-2, the '
             'periodic audit on both hosts',
             'variant',
             (('compute-1', SOURCE), ('periodic-1', SOURCE)) + _UNSHELVE,
             ON_SOURCE,
             _cells(race.CORRECTED, (race.CORRECTED, race.PORT_BINDING),
                    race.LEGACY, race.PRE_2025480,
                    (race.PRE_1862633, race.PORT_BINDING)),
             (outcomes.OK, outcomes.SCHEDULER_409, outcomes.CLAIM_WIPED,
              outcomes.LEAKED, outcomes.USAGE_UNTRACKED)),
    Scenario(race.RESIZE_CONFIRM,
             "confirm a resize (compute-1) against compute-1's "
             'update_available_resource',
             'variant', (('compute-1', SOURCE), ('periodic-1', SOURCE)),
             RESIZED,
             _cells(race.CORRECTED, (race.CORRECTED, race.CONFIRM_FAILS),
                    race.PRE_1879878,
                    (race.PRE_1821594, race.CONFIRM_FAILS)),
             _MOVE_SYMPTOMS),
    Scenario(race.RESIZE_REVERT,
             'revert a resize (compute-2, then compute-1) against the '
             'periodic audit on both hosts',
             'variant', (('compute-2', DESTINATION), ('compute-1', SOURCE),
                         ('periodic-1', SOURCE),
                         ('periodic-2', DESTINATION)),
             RESIZED, _cells(race.CORRECTED, race.NOVA_REVERT),
             _MOVE_SYMPTOMS),
    Scenario(race.EVACUATE,
             "evacuate to compute-2 against compute-1's service starting "
             "again and compute-2's periodic audit",
             'variant', (('conductor', None), ('compute-2', DESTINATION),
                         ('compute-1', SOURCE),
                         ('periodic-2', DESTINATION)),
             EVACUATING,
             _cells(race.CORRECTED, (race.CORRECTED, race.REBUILD_FAILS),
                    race.NOVA_EVACUATE),
             _MOVE_SYMPTOMS),
    Scenario(race.RESIZE_DELETE,
             'delete a resized server (API, compute-2) while its resize is '
             "confirmed (compute-1), compute-1's audit",
             # The delete's RPC call runs compute-1's confirm, under its
             # locks.
             'variant', (('compute-1', SOURCE), ('delete', SOURCE),
                         ('compute-2', DESTINATION),
                         ('periodic-1', SOURCE)),
             RESIZED,
             _cells(race.CORRECTED, (race.CORRECTED, race.CONFIRM_FAILS)),
             _MOVE_SYMPTOMS),
    Scenario(race.RESIZE_MIGRATE,
             'migrate a resized server back to compute-1 as soon as its '
             "resize is confirmed there, compute-1's audit",
             'variant', (('compute-1', SOURCE), ('migrate', None),
                         ('compute-1-prep', SOURCE),
                         ('periodic-1', SOURCE)),
             RESIZED,
             _cells(race.CORRECTED, (race.CORRECTED, race.CONFIRM_FAILS),
                    race.PRE_1879878,
                    (race.PRE_1821594, race.CONFIRM_FAILS)),
             _MOVE_SYMPTOMS),
    # nova's only: the library has prep_resize and resize_instance, but the
    # race lab has no program of the whole resize on it yet.
    Scenario(race.RESIZE,
             'resize a server from compute-1 to compute-2 (API + conductor '
             '+ scheduler, compute-2, compute-1) against the periodic audit '
             'on both hosts',
             'variant', (('conductor', None), ('compute-2', DESTINATION),
                         ('compute-1', SOURCE), ('periodic-1', SOURCE),
                         ('periodic-2', DESTINATION)),
             ACTIVE_ON_SOURCE,
             _cells(race.CORRECTED, (race.CORRECTED, race.PREP_FAILS),
                    (race.CORRECTED, race.RESIZE_FAILS),
                    (race.CORRECTED, race.FINISH_FAILS)),
             _MOVE_SYMPTOMS, targets=(race.NOVA,)),
    # Two API clients (api-1, api-2) shelve the same server, active on
    # compute-1, through nova's REST controller; nova's only.
    Scenario(race.SHELVE_API,
             'two clients shelve one active server at once through '
             "nova's REST API",
             'variant', (('api-1', None), ('api-2', None)),
             ACTIVE_ON_SOURCE, _cells(race.CORRECTED),
             (outcomes.OK, outcomes.API_500), targets=(race.NOVA,)),
    # A server evacuated to compute-2 is deleted (the API's delete, and
    # compute-2's terminate_instance) while compute-1's service starts
    # again; nova's only.
    Scenario(race.EVACUATE_DELETE,
             'delete an evacuated server (API, compute-2) while its old '
             "host's service starts again (compute-1)",
             'variant', (('delete', None), ('compute-2', DESTINATION),
                         ('compute-1', SOURCE)),
             EVACUATED, _cells(race.CORRECTED),
             _MOVE_SYMPTOMS, targets=(race.NOVA,)),
    # The host a server was evacuated from never comes back: the API
    # deletes its compute service; nova's only.
    Scenario(race.SERVICE_DELETE,
             'delete the compute service of a host whose server was '
             "evacuated (API) against compute-2's periodic audit",
             'variant', (('api', None), ('periodic-2', DESTINATION)),
             EVACUATED, _cells(race.CORRECTED),
             _MOVE_SYMPTOMS, targets=(race.NOVA,)),
    Scenario(race.LIVE_MIGRATE,
             'live-migrate a server from compute-1 (API + conductor + '
             'scheduler, compute-1 with its calls to compute-2) against the '
             'periodic audit on both hosts',
             'variant', (('conductor', None), ('compute-1', SOURCE),
                         ('periodic-1', SOURCE),
                         ('periodic-2', DESTINATION)),
             ACTIVE_ON_SOURCE, _cells(race.CORRECTED, (
                 race.CORRECTED, race.LIVE_MIGRATION_FAILS)),
             _MOVE_SYMPTOMS),
    # The same live migration, compute-1's job in its pool (``job``), and
    # a user aborting it (``abort``).
    Scenario(race.LIVE_MIGRATE_ABORT,
             'abort a live migration (API) while compute-1 may still hold '
             'it queued, its job in compute-1\'s pool, against both '
             'audits',
             'variant', (('conductor', None), ('compute-1', SOURCE),
                         ('job', SOURCE), ('abort', None),
                         ('periodic-1', SOURCE),
                         ('periodic-2', DESTINATION)),
             ACTIVE_ON_SOURCE, _cells(race.CORRECTED),
             _MOVE_SYMPTOMS),
    # Two members of an anti-affinity group (A on compute-1, B on
    # compute-3) live-migrated at once; the migrations' own hosts serve
    # their casts after each run. nova's only.
    Scenario(race.LIVE_MIGRATE_GROUP,
             'live-migrate two members of an anti-affinity group at once '
             '(API + conductor each; A from compute-1, B from compute-3)',
             'variant', (('conductor', None), ('conductor-b', None)),
             ACTIVE_ON_SOURCE, _cells(race.CORRECTED),
             # shelvefix.race.move_outcomes.GROUP_VIOLATED
             (outcomes.OK, 'anti-affinity violated'), targets=(race.NOVA,)),
    # A server's build from the conductor on (schedule_and_build_instances,
    # compute-1's build, a reschedule to compute-2); conductor-2 builds a
    # second server with the pci-parallel-builds fault only. The PCI
    # faults are nova's only (the library models no PCI devices: see
    # shelvefix.race.build_program.BuildProgram.faults).
    Scenario(race.BUILD,
             'build a server (conductor + scheduler, compute-1, a '
             "reschedule to compute-2) against compute-1's periodic audit",
             'variant', (('conductor', None), ('conductor-2', None),
                         ('compute-1', SOURCE), ('compute-2', DESTINATION),
                         ('periodic-1', SOURCE)),
             BUILD_REQUESTED,
             _cells(race.CORRECTED, (race.CORRECTED, race.BUILD_FAILS),
                    (race.CORRECTED, race.ALTERNATE_CLAIM_FAILS),
                    (race.CORRECTED, race.COMPUTE_RESTARTS),
                    (race.CORRECTED, race.PCI_BUILD_FAILS),
                    (race.CORRECTED, race.PCI_PARALLEL_BUILDS)),
             # shelvefix.nova.build_pci.PCI_MISMATCH
             (outcomes.OK, 'PCI devices mismatch')),
    # The same build, and the user's delete of the server (nova's REST API
    # and API.delete) while the conductor builds it; compute-1 serves what
    # was cast to it after each run, unexplored.
    Scenario(race.BUILD_DELETE,
             'delete a server (API) while the conductor builds it '
             "(conductor + scheduler), compute-1's periodic audit",
             'variant', (('conductor', None), ('delete', None),
                         ('periodic-1', SOURCE)),
             BUILD_REQUESTED, _cells(race.CORRECTED),
             (outcomes.OK, outcomes.API_500)),
    # The library's: shelvefix.race.node_programs; nova's:
    # shelvefix.nova.service_disable.
    Scenario(race.SERVICE_DISABLE,
             "compute-1's periodic audit against disabling its service "
             "(API, compute-1's trait update)",
             'variant', (('periodic-1', SOURCE), ('api', None)),
             ACTIVE_ON_SOURCE,
             _cells(race.CORRECTED, (race.CORRECTED, race.ENABLED_AGAIN)),
             (outcomes.OK, 'trait out of sync')),
    # The library's: shelvefix.race.node_programs; nova's:
    # shelvefix.nova.ironic_rebalance.
    Scenario(race.IRONIC_REBALANCE,
             "an ironic node moving from compute-1 to compute-2: compute-1's "
             "audit (orphan clean-up) against compute-2's (take-over)",
             'variant', (('periodic-1', SOURCE), ('periodic-2', DESTINATION)),
             NODE_ON_SOURCE, _cells(race.CORRECTED),
             (outcomes.OK, 'node lost', 'node not taken over',
              'provider lost')),
    # A resize from compute-1 in cell1 to compute-2 in cell2, reverted or
    # confirmed by the conductor.
    Scenario(race.CROSS_CELL_REVERT,
             'revert a cross-cell resize (API + conductor, its calls to both '
             'hosts) against both audits, each in its cell',
             'variant', _CROSS_CELL, RESIZED, _cells(race.CORRECTED),
             _MOVE_SYMPTOMS),
    Scenario(race.CROSS_CELL_CONFIRM,
             'confirm a cross-cell resize (API + conductor, its call to '
             'compute-1) against both audits, each in its cell',
             'variant', _CROSS_CELL, RESIZED, _cells(race.CORRECTED),
             _MOVE_SYMPTOMS),
])


def get_scenario(name):
    """The :class:`Scenario` called ``name``.

    :raises ValueError: no such scenario
    """
    try:
        return SCENARIOS[name]
    except KeyError:
        raise ValueError('unknown scenario %r; choose one of %s'
                         % (name, ', '.join(SCENARIOS)))


def shows(outcome, symptoms):
    """Whether a run's ``outcome`` (labels) shows one of ``symptoms``.

    A symptom names a label (``usage untracked``) or the start of one
    (``periodic-1 error: TypeError`` for the labels of that exception).
    """
    return any(label == symptom or label.startswith(symptom)
               for label in outcome for symptom in symptoms)


def explore(prog, reduce=True, progress=None, workers=1, stop_at=(),
            ahead=None):
    """Explore every interleaving of a cell's program ``prog``.

    ``workers`` above 1 runs the explorer's executions in that many forked
    processes (the double only: see :mod:`shelvefix.explorer.parallel`).
    With ``stop_at`` (symptoms, see :func:`shows`) the search ends at the
    first run showing one of them. ``ahead`` is as for
    :func:`shelvefix.explorer.explore` (a Dask cluster's subtree tasks).
    The program is closed on the way out.

    :returns: a :class:`~shelvefix.explorer.controller.Exploration` whose
        run outcomes are label tuples (see :mod:`shelvefix.race.outcomes`)
    """
    with closing(prog):
        return explorer.explore(
            prog, reduce=reduce, progress=progress, workers=workers,
            stop=(lambda record: shows(record.outcome, stop_at))
            if stop_at else None, ahead=ahead)


@contextlib.contextmanager
def closing(prog):
    """Close the program ``prog`` on the way out, interrupted or not."""
    interrupted = False
    try:
        yield prog
    except KeyboardInterrupt:
        interrupted = True
        raise
    finally:
        prog.close(interrupted=interrupted)
