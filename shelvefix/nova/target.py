"""The race lab's cells on nova's code: what the nova target runs.

:func:`program` is the explorer program of one cell (the cells are
:func:`shelvefix.nova.cells`): a cloud fixture of
nova's services with the cell's code variant (:mod:`~shelvefix.nova.
variants`) and fault, and the scenario's actors on it
(:class:`~shelvefix.nova.program.NovaRaceProgram`,
:class:`~shelvefix.nova.move_program.NovaMoveProgram`).

This module imports nova (see :mod:`shelvefix.nova`).
"""

import collections
import json

from shelvefix import nova as nova_target
from shelvefix.nova import build
from shelvefix.nova import build_delete
from shelvefix.nova import build_program
from shelvefix.nova import cross_cell
from shelvefix.nova import evacuated_delete
from shelvefix.nova import ironic_rebalance
from shelvefix.nova import lifecycle
from shelvefix.nova import live_migration
from shelvefix.nova import live_migration_abort
from shelvefix.nova import live_migration_group
from shelvefix.nova import move_program
from shelvefix.nova import moves
from shelvefix.nova import program as program_mod
from shelvefix.nova import resize
from shelvefix.nova import second_move
from shelvefix.nova import service_delete
from shelvefix.nova import service_disable
from shelvefix.nova import shelve_api
from shelvefix.nova import variants
from shelvefix import race
from shelvefix.race import scenarios

#: What each fault makes a host's virt driver fail (nova's evacuation
#: rebuilds through ``spawn``).
FAILING = {race.CONFIRM_FAILS: ('confirm_migration',),
           race.REBUILD_FAILS: ('spawn',)}

#: What placement answers another writer of the same provider with, when
#: its own retries run out (placement's error document).
CONCURRENT_UPDATE_BODY = json.dumps({'errors': [{
    'status': 409, 'title': 'Conflict',
    'detail': 'There was a conflict when trying to complete your request.'
              '\n\n update conflict: Another thread concurrently updated '
              'the resource provider data. Please retry your update  ',
    'code': 'placement.concurrent_update'}]})

#: Placement's faults of each fault: keyword arguments of
#: ``inject_fault``. ``concurrent-update``: the first write of
#: allocations that moves them between consumers (``POST
#: /allocations``) is answered as placement answers a writer that lost to
#: a concurrent one.
PLACEMENT_FAULTS = {race.CONCURRENT_UPDATE: (dict(
    method='POST', path='^/allocations$', status=409,
    body=CONCURRENT_UPDATE_BODY),)}

#: What placement answers a claim whose consumer another writer changed
#: meanwhile (placement's error document).
CONSUMER_CONFLICT_BODY = json.dumps({'errors': [{
    'status': 409, 'title': 'Conflict',
    'detail': 'There was a conflict when trying to complete your request.'
              '\n\n consumer generation conflict - expected null but got 1',
    'code': 'placement.concurrent_update'}]})
#: ``alternate-claim-fails``: placement refuses the second claim of the
#: server (``PUT /allocations/{uuid}``: the scheduler's of compute-1 was
#: the first), the conductor's of the alternate host on a reschedule.
PLACEMENT_FAULTS[race.ALTERNATE_CLAIM_FAILS] = (dict(
    method='PUT', path='^/allocations/', nth=2, status=409,
    body=CONSUMER_CONFLICT_BODY),)


def _no_kwargs(cell):
    return {}


def _lifecycle_kwargs(cell):
    return dict(binding_fails=cell.fault == race.PORT_BINDING,
                spawn_fails=cell.fault == race.SPAWN_FAILS)


def _move_kwargs(cell):
    return dict(failing=FAILING.get(cell.fault, ()),
                claim_fails=cell.fault == race.CLAIM_FAILS,
                guest_lost=cell.fault == race.GUEST_LOST)


def _live_migration_kwargs(cell):
    return dict(failing=('live_migration',)
                if cell.fault == race.LIVE_MIGRATION_FAILS else (),
                precheck_fails=cell.fault == race.PRECHECK_FAILS)


def _disable_kwargs(cell):
    return dict(enabling=cell.fault == race.ENABLED_AGAIN)


Wiring = collections.namedtuple('Wiring', ['cloud_cls', 'cloud_kwargs',
                                           'program', 'leaves_out'])
Wiring.__doc__ = """How a scenario runs on nova: its cloud class, the keyword
arguments of a cell's cloud (``cloud_kwargs(cell)``), its program
(``program(cloud, scenario_name, without)``), and whether it can leave
actors out."""

#: The scenarios whose cloud or program is their own; the others are the
#: shelve lifecycle's (:data:`LIFECYCLE`) or the moves' (:data:`MOVES`).
WIRINGS = {
    race.SHELVE_API: Wiring(
        shelve_api.ShelveApiCloud, _no_kwargs,
        lambda cloud, name, without: shelve_api.ShelveApiProgram(cloud,
                                                                 name),
        False),
    race.RESIZE: Wiring(
        resize.ResizeCloud, lambda cell: resize.cloud_kwargs(cell.fault),
        lambda cloud, name, without: resize.ResizeProgram(
            cloud, without=without), True),
    race.RESIZE_MIGRATE: Wiring(
        second_move.SecondMoveCloud, _move_kwargs,
        move_program.NovaMoveProgram, True),
    race.EVACUATE_DELETE: Wiring(
        moves.NovaMoveCloud, _move_kwargs,
        lambda cloud, name, without:
            evacuated_delete.EvacuatedDeleteProgram(cloud), True),
    race.SERVICE_DELETE: Wiring(
        moves.NovaMoveCloud, _move_kwargs,
        lambda cloud, name, without: service_delete.ServiceDeleteProgram(
            cloud, without), True),
    race.LIVE_MIGRATE: Wiring(
        live_migration.LiveMigrationCloud, _live_migration_kwargs,
        lambda cloud, name, without: live_migration.LiveMigrationProgram(
            cloud, without=without), True),
    race.LIVE_MIGRATE_ABORT: Wiring(
        live_migration_abort.AbortCloud, _live_migration_kwargs,
        lambda cloud, name, without: live_migration_abort.AbortProgram(
            cloud, without=without), True),
    race.LIVE_MIGRATE_GROUP: Wiring(
        live_migration_group.GroupCloud, _live_migration_kwargs,
        lambda cloud, name, without: live_migration_group.GroupProgram(
            cloud, without=without), True),
    race.BUILD: Wiring(
        build.BuildCloud, lambda cell: build.cloud_kwargs(cell.fault),
        lambda cloud, name, without: build_program.BuildProgram(
            cloud, without=without), True),
    race.BUILD_DELETE: Wiring(
        build.BuildCloud, lambda cell: build.cloud_kwargs(cell.fault),
        lambda cloud, name, without: build_delete.BuildDeleteProgram(
            cloud, without=without), True),
    race.SERVICE_DISABLE: Wiring(
        service_disable.ServiceDisableCloud, _disable_kwargs,
        lambda cloud, name, without:
            service_disable.ServiceDisableProgram(cloud), False),
    race.IRONIC_REBALANCE: Wiring(
        ironic_rebalance.RebalanceCloud, _no_kwargs,
        lambda cloud, name, without:
            ironic_rebalance.RebalanceProgram(cloud), False),
}
for _name in cross_cell.SCENARIOS:
    WIRINGS[_name] = Wiring(cross_cell.CrossCellCloud, _no_kwargs,
                            cross_cell.CrossCellProgram, True)
#: The shelve lifecycle's scenarios (a start on compute-1 or offloaded).
LIFECYCLE = Wiring(
    lifecycle.NovaCloud, _lifecycle_kwargs,
    lambda cloud, name, without: program_mod.NovaRaceProgram(cloud, name),
    False)
#: The other moves (resize's confirm and revert, evacuation, a delete).
MOVES = Wiring(moves.NovaMoveCloud, _move_kwargs,
               move_program.NovaMoveProgram, True)


def wiring(scenario):
    """The :class:`Wiring` of ``scenario`` on nova."""
    if scenario.name in WIRINGS:
        return WIRINGS[scenario.name]
    if scenario.start in (scenarios.ON_SOURCE, scenarios.OFFLOADED):
        return LIFECYCLE
    return MOVES


class CellProgram(object):
    """One cell of a scenario on nova's code, for the explorer.

    :param backend: the placement backend's name (``double``, ``real``)
    :param scenario: the :class:`~shelvefix.race.scenarios.Scenario`
    :param cell: the :class:`~shelvefix.race.scenarios.Cell`
    :param without: actors of the scenario left out (the move scenarios,
        ``resize``, the live migrations, builds and cross-cell resizes;
        see :class:`~.move_program.NovaMoveProgram`)
    :raises shelvefix.nova.NovaUnusable: actors left out of a scenario
        that cannot leave them out
    """

    def __init__(self, backend, scenario, cell, without=()):
        without = tuple(without)
        wired = wiring(scenario)
        if without and not wired.leaves_out:
            raise nova_target.NovaUnusable(
                'the %s scenario on nova runs every one of its actors; it '
                'cannot leave out %s' % (scenario.name, ', '.join(without)))
        code = variants.code(cell.variant)
        kwargs = dict(backend=backend, manager_cls=code.manager_cls,
                      tracker_cls=code.tracker_cls,
                      placement_faults=PLACEMENT_FAULTS.get(cell.fault, ()))
        kwargs.update(wired.cloud_kwargs(cell))
        self.cloud = wired.cloud_cls(**kwargs)
        self.cloud.setUp()
        try:
            self.inner = wired.program(self.cloud, scenario.name, without)
        except ValueError as e:
            self.cloud.cleanUp()
            raise nova_target.NovaUnusable('%s: %s' % (scenario.name, e))
        except Exception:
            self.cloud.cleanUp()
            raise
        self.actors = self.inner.actors

    def __call__(self, controller):
        return self.inner(controller)

    def random_run(self, rng, poll_interval, max_start_delay):
        """One run with real threads; returns its outcome."""
        return self.inner.random_run(rng, poll_interval, max_start_delay)

    def close(self, interrupted=False):
        """Remove the cloud: its placement, providers and patches."""
        self.cloud.cleanUp()


def program(backend, scenario, cell, without=()):
    """The explorer program of one cell (see :class:`CellProgram`)."""
    return CellProgram(backend, scenario, cell, without)
