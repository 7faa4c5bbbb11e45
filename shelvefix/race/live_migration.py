"""The ``live-migrate`` scenario on the library's code.

A server ``ACTIVE`` on compute-1 (:data:`ACTIVE_ON_SOURCE`, both nodes
audited since) is live-migrated with no host named; compute-1 is
disabled, so the scheduler places it on compute-2. The actors, as on the
nova target (:mod:`shelvefix.nova.live_migration`):

``conductor``
    the API (``MIGRATING`` saved only if no other task owns the server),
    then the conductor's ``live_migrate_instance``: the migration
    (``accepted``), the server's allocations on compute-1 moved to it, the
    scheduler's claim of compute-2, compute-2's check (an RPC call, which
    calls compute-1's), the migration's destination saved, and
    ``live_migration`` cast to compute-1
    (:class:`~shelvefix.conductor.live_migrate.LiveMigrationTask`);
``compute-1``
    compute-1's service serving that cast: the migration ``queued``,
    ``preparing``, compute-2's ``pre_live_migration`` (a call),
    ``running``, then the hypervisor's move and its callback
    (:mod:`shelvefix.compute.live_migration`): on completion compute-2's
    ``post_live_migration_at_destination`` (a call) saves the server
    there, then compute-1 stops counting it, the migration is
    ``completed`` and its allocations on compute-1 are deleted; with the
    ``live-migration-fails`` fault the rollback gives the server its
    allocations back and the migration is ``failed``;
``periodic-1``, ``periodic-2``
    each node's audit.

Calls run the callee's code in the caller's actor, so compute-2's locks
are taken by three actors (its audit, and the calls of the conductor and
compute-1): they are explorer steps
(:meth:`LiveMigrationProgram._actor_hosts`).
The end state is judged by :mod:`shelvefix.race.move_outcomes`, as for
the other moves.
"""

from shelvefix.compute import rpcapi
from shelvefix.compute import task_states
from shelvefix.conductor import manager as conductor_mod
from shelvefix.objects import instance as instance_obj
from shelvefix import race
from shelvefix.race import move_cloud
from shelvefix.race import move_program
from shelvefix.race import random_runs
from shelvefix.race import scenarios
from shelvefix.race import variants
from shelvefix.scheduler import request_spec

SOURCE = move_cloud.SOURCE
DESTINATION = move_cloud.DESTINATION
#: Where the run starts: ``ACTIVE`` on compute-1, no move yet.
ACTIVE_ON_SOURCE = scenarios.ACTIVE_ON_SOURCE
#: What each fault makes a host's virt driver fail.
FAILING = {race.LIVE_MIGRATION_FAILS: {SOURCE: ('live_migration',)}}


def _no_wait(seconds):
    pass


class LiveMigrationCloud(move_cloud.MoveCloud):
    """Two hosts, a conductor and a scheduler around a server to live-migrate.

    The conductor also moves allocations and records the migration, and
    both compute services answer the calls made to them.

    See :class:`~shelvefix.race.move_cloud.MoveCloud` for the parameters
    (the start is always :data:`ACTIVE_ON_SOURCE`).
    """

    def __init__(self, placement, providers, **kwargs):
        super(LiveMigrationCloud, self).__init__(
            placement, providers, start=ACTIVE_ON_SOURCE, **kwargs)
        self.conductor = conductor_mod.ComputeTaskManager(
            self.scheduler, self.compute_rpcapi, report_client=self.client,
            migration_store=self.migrations, compute_nodes=self.providers)
        for host in move_cloud.HOSTS:
            self.transport.serve_calls(rpcapi.TOPIC, host,
                                       self.computes[host])

    def live_migrate(self):
        """The API's live-migrate (no host), then the conductor."""
        instance = instance_obj.Instance.get_by_uuid(self.store,
                                                     self.instance.uuid)
        instance.task_state = task_states.MIGRATING
        instance.save(expected_task_state=[None])
        self.conductor.live_migrate_instance(
            self.ctx, instance, {'host': None}, False, False,
            request_spec.RequestSpec.from_instance(instance),
            migration_uuid=self.migration_uuid)
        return True


class LiveMigrationProgram(move_program.MoveRaceProgram):
    """One cell of ``live-migrate`` on the library.

    See :class:`~shelvefix.race.program.CloudProgram` for the parameters.
    """

    #: The run's cloud class (``live-migrate-abort``'s is a subclass).
    cloud_cls = LiveMigrationCloud

    def _cloud(self, explored):
        if self.providers is None:
            self.providers = move_cloud.create_providers(self.placement)
        code = variants.code(self.cell.variant)
        return self.cloud_cls(
            self.placement, self.providers,
            manager_cls=code.manager_cls, tracker_cls=code.tracker_cls,
            failing=FAILING.get(self.cell.fault),
            sleep=_no_wait if explored else None)

    def _actor_hosts(self):
        # The calls of the conductor and of compute-1 run compute-2's code.
        return super(LiveMigrationProgram, self)._actor_hosts() + [
            DESTINATION, DESTINATION]

    def _actors(self, cloud, timeout=60.0, poll_interval=None, done=None):
        done = done or {}
        funcs = {
            'conductor': cloud.live_migrate,
            'compute-1': lambda: cloud.serve(
                SOURCE, timeout=timeout,
                give_up=lambda: random_runs.finished(done, 'conductor')),
            'periodic-1': lambda: cloud.periodic(SOURCE),
            'periodic-2': lambda: cloud.periodic(DESTINATION),
        }
        return [(name, funcs[name]) for name in self.actors]
