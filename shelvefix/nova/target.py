"""The race lab's cells on nova's code: what the nova target runs.

:func:`program` is the explorer program of one cell (the cells are
:func:`shelvefix.nova.cells`): a cloud fixture of
nova's services with the cell's code variant (:mod:`~shelvefix.nova.
variants`) and fault, and the scenario's actors on it
(:class:`~shelvefix.nova.program.NovaRaceProgram`,
:class:`~shelvefix.nova.move_program.NovaMoveProgram`).

This module imports nova (see :mod:`shelvefix.nova`).
"""

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


class CellProgram(object):
    """One cell of a scenario on nova's code, for the explorer.

    :param backend: the placement backend's name (``double``, ``real``)
    :param scenario: the :class:`~shelvefix.race.scenarios.Scenario`
    :param cell: the :class:`~shelvefix.race.scenarios.Cell`
    :param without: actors of the scenario left out (the move scenarios
        and ``resize`` only; see :class:`~.move_program.NovaMoveProgram`)
    :raises shelvefix.nova.NovaUnusable: actors left out of a scenario
        that cannot leave them out
    """

    def __init__(self, backend, scenario, cell, without=()):
        without = tuple(without)
        if without and (scenario.start in (scenarios.ON_SOURCE,
                                           scenarios.OFFLOADED) or
                        scenario.name == race.SHELVE_API):
            raise nova_target.NovaUnusable(
                'the %s scenario on nova runs every one of its actors; it '
                'cannot leave out %s' % (scenario.name, ', '.join(without)))
        code = variants.code(cell.variant)
        kwargs = dict(backend=backend, manager_cls=code.manager_cls,
                      tracker_cls=code.tracker_cls,
                      placement_faults=PLACEMENT_FAULTS.get(cell.fault, ()))
        if scenario.name == race.SHELVE_API:
            cloud_cls = shelve_api.ShelveApiCloud
        elif scenario.name in (race.BUILD, race.BUILD_DELETE):
            cloud_cls = build.BuildCloud
            kwargs.update(build.cloud_kwargs(cell.fault))
        elif scenario.name == race.RESIZE:
            cloud_cls = resize.ResizeCloud
            kwargs.update(resize.cloud_kwargs(cell.fault))
        elif scenario.name in (race.LIVE_MIGRATE, race.LIVE_MIGRATE_ABORT):
            cloud_cls = (live_migration.LiveMigrationCloud
                         if scenario.name == race.LIVE_MIGRATE
                         else live_migration_abort.AbortCloud)
            kwargs['failing'] = (
                ('live_migration',)
                if cell.fault == race.LIVE_MIGRATION_FAILS else ())
            kwargs['precheck_fails'] = cell.fault == race.PRECHECK_FAILS
        elif scenario.name in (race.SERVICE_DISABLE, race.IRONIC_REBALANCE):
            if without:
                raise nova_target.NovaUnusable(
                    'the %s scenario on nova runs every one of its actors'
                    % scenario.name)
            cloud_cls = (service_disable.ServiceDisableCloud
                         if scenario.name == race.SERVICE_DISABLE
                         else ironic_rebalance.RebalanceCloud)
            if scenario.name == race.SERVICE_DISABLE:
                kwargs['enabling'] = cell.fault == race.ENABLED_AGAIN
        elif scenario.name in cross_cell.SCENARIOS:
            cloud_cls = cross_cell.CrossCellCloud
        elif scenario.start in (scenarios.ON_SOURCE, scenarios.OFFLOADED):
            cloud_cls = lifecycle.NovaCloud
            kwargs['binding_fails'] = cell.fault == race.PORT_BINDING
            kwargs['spawn_fails'] = cell.fault == race.SPAWN_FAILS
        else:
            cloud_cls = (second_move.SecondMoveCloud
                         if scenario.name == race.RESIZE_MIGRATE
                         else moves.NovaMoveCloud)
            kwargs['failing'] = FAILING.get(cell.fault, ())
            kwargs['claim_fails'] = cell.fault == race.CLAIM_FAILS
            kwargs['guest_lost'] = cell.fault == race.GUEST_LOST
        self.cloud = cloud_cls(**kwargs)
        self.cloud.setUp()
        try:
            if cloud_cls is shelve_api.ShelveApiCloud:
                self.inner = shelve_api.ShelveApiProgram(self.cloud,
                                                         scenario.name)
            elif cloud_cls is build.BuildCloud:
                self.inner = (build_delete.BuildDeleteProgram
                              if scenario.name == race.BUILD_DELETE
                              else build_program.BuildProgram)(
                    self.cloud, without=without)
            elif cloud_cls is resize.ResizeCloud:
                self.inner = resize.ResizeProgram(self.cloud,
                                                  without=without)
            elif cloud_cls is live_migration_abort.AbortCloud:
                self.inner = live_migration_abort.AbortProgram(
                    self.cloud, without=without)
            elif cloud_cls is live_migration.LiveMigrationCloud:
                self.inner = live_migration.LiveMigrationProgram(
                    self.cloud, without=without)
            elif cloud_cls is service_disable.ServiceDisableCloud:
                self.inner = service_disable.ServiceDisableProgram(
                    self.cloud)
            elif cloud_cls is ironic_rebalance.RebalanceCloud:
                self.inner = ironic_rebalance.RebalanceProgram(self.cloud)
            elif cloud_cls is cross_cell.CrossCellCloud:
                self.inner = cross_cell.CrossCellProgram(
                    self.cloud, scenario.name, without)
            elif cloud_cls is lifecycle.NovaCloud:
                self.inner = program_mod.NovaRaceProgram(self.cloud,
                                                         scenario.name)
            elif scenario.name == race.EVACUATE_DELETE:
                self.inner = evacuated_delete.EvacuatedDeleteProgram(
                    self.cloud)
            elif scenario.name == race.SERVICE_DELETE:
                self.inner = service_delete.ServiceDeleteProgram(
                    self.cloud, without)
            else:
                self.inner = move_program.NovaMoveProgram(
                    self.cloud, scenario.name, without)
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
