"""A small cloud for the move operations: resize, cold migration, evacuate.

:class:`MoveCloud` wires the library's services as
:class:`~shelvefix.race.cloud.Cloud` does (two compute hosts, each with its
own compute manager, resource tracker and locks; a conductor and a
scheduler; the RPC transport; the instance store and placement), plus the
migration records. One server is in it, ACTIVE on compute-1 with its
allocations there, brought by the library's own code (not explored) to
the state a scenario starts from:

``RESIZED``
    cold-migrated to compute-2 and not yet confirmed: the conductor moved
    the server's allocations on compute-1 to the migration and the
    scheduler claimed compute-2 for the server; compute-2's
    ``prep_resize``, compute-1's ``resize_instance`` and compute-2's
    ``finish_resize`` ran; both hosts' audits ran once since.
``EVACUATING``
    compute-1 is down; the API accepted an evacuation (the migration is
    ``accepted``, the server ``REBUILDING``); nothing else happened yet.

compute-1's provider carries ``COMPUTE_STATUS_DISABLED`` (see
:func:`~shelvefix.race.cloud.create_providers`), so that the scheduler
places every move on compute-2.
"""

from oslo_utils import uuidutils

from shelvefix.compute import collaborators
from shelvefix.compute import manager as manager_mod
from shelvefix.compute import resource_tracker
from shelvefix.compute import rpcapi
from shelvefix.compute import task_states
from shelvefix.compute import vm_states
from shelvefix.conductor import manager as conductor_mod
from shelvefix.conductor import migrate
from shelvefix import context
from shelvefix.objects import instance as instance_obj
from shelvefix.objects import migration as migration_obj
from shelvefix.race import cloud as cloud_mod
from shelvefix.race import scenario
from shelvefix import rpc
from shelvefix.scheduler.client import report
from shelvefix.scheduler import host_manager
from shelvefix.scheduler import manager as scheduler_mod
from shelvefix.scheduler import request_spec
from shelvefix import utils

SOURCE = cloud_mod.SOURCE
DESTINATION = cloud_mod.DESTINATION
HOSTS = cloud_mod.HOSTS

RESIZED = 'resized'
EVACUATING = 'evacuating'

create_providers = cloud_mod.create_providers


class MoveCloud(object):
    """Two compute hosts, a conductor and a scheduler around one moving server.

    :param placement: a set-up placement fixture
    :param providers: ``(src, dst)`` from :func:`create_providers`
    :param start: :data:`RESIZED` or :data:`EVACUATING`
    :param manager_cls: the compute manager class of both hosts
    :param tracker_cls: the resource tracker class of both hosts
    :param failing: ``{host: driver method names that fail}``
    :param sleep: what the services' report client waits between retries
        with (default ``time.sleep``; the explorer, which orders the actors
        itself, passes one that returns at once)
    """

    def __init__(self, placement, providers, start=RESIZED,
                 manager_cls=manager_mod.ComputeManager,
                 tracker_cls=resource_tracker.ResourceTracker,
                 failing=None, sleep=None):
        failing = failing or {}
        self.placement = placement
        self.client = report.SchedulerReportClient(
            adapter=placement.adapter, conf=placement.conf, sleep=sleep)
        self.providers = dict(zip(HOSTS, providers))
        self.store = instance_obj.InstanceStore()
        self.migrations = migration_obj.MigrationStore()
        self.transport = rpc.Transport()
        self.ctx = context.RequestContext(
            user_id=scenario.USER, project_id=scenario.PROJECT,
            request_id='req-%s' % uuidutils.generate_uuid())
        self.locks = {host: utils.Locks() for host in HOSTS}
        self.rts = {host: tracker_cls(
            host, reportclient=self.client, store=self.store,
            locks=self.locks[host], migration_store=self.migrations,
            compute_nodes={host: self.providers[host]}) for host in HOSTS}
        self.drivers = {host: collaborators.RecordingDriver(
            failing=failing.get(host, ())) for host in HOSTS}
        compute_rpcapi = rpcapi.ComputeAPI(self.transport)
        self.computes = {host: manager_cls(
            host=host, reportclient=self.client, rt=self.rts[host],
            driver=self.drivers[host], locks=self.locks[host],
            compute_rpcapi=compute_rpcapi) for host in HOSTS}
        self.scheduler = scheduler_mod.SchedulerManager(
            self.client, host_manager.HostManager(
                [host_manager.ComputeNode(rp, host, host)
                 for host, rp in self.providers.items()]))
        self.compute_rpcapi = compute_rpcapi
        self.conductor = conductor_mod.ComputeTaskManager(self.scheduler,
                                                          compute_rpcapi)
        self.instance = instance_obj.Instance.create(
            self.store, uuidutils.generate_uuid(), vm_state=vm_states.ACTIVE,
            host=SOURCE, node=SOURCE, project_id=scenario.PROJECT,
            user_id=scenario.USER, flavor=scenario.FLAVOR)
        self.client.claim_resources(
            self.ctx, self.instance.uuid,
            scenario.alloc_request(self.providers[SOURCE]), scenario.PROJECT,
            scenario.USER, scenario.CLAIM_VERSION)
        self.migration_uuid = uuidutils.generate_uuid()
        if start == RESIZED:
            self._cold_migrate()
        else:
            self._accept_evacuation()
        self.migration = migration_obj.Migration.get_by_uuid(
            self.migrations, self.migration_uuid)

    def _serve_one(self, host):
        rpc.Server(self.transport, rpcapi.TOPIC, host,
                   self.computes[host]).handle_one(timeout=5.0)

    def _cold_migrate(self):
        migrate.MigrationTask(
            self.ctx, self.instance.obj_clone(), scenario.FLAVOR,
            request_spec.RequestSpec.from_instance(self.instance),
            self.compute_rpcapi, self.scheduler, self.client,
            self.migrations, self.providers[SOURCE],
            self.migration_uuid).execute()
        for host in (DESTINATION, SOURCE, DESTINATION):
            # prep_resize, resize_instance, finish_resize
            self._serve_one(host)
        for host in HOSTS:
            self.periodic(host)

    def _accept_evacuation(self):
        migration_obj.Migration.create(
            self.migrations, self.migration_uuid,
            instance_uuid=self.instance.uuid, source_compute=SOURCE,
            source_node=SOURCE, migration_type=migration_obj.EVACUATION,
            status=migration_obj.ACCEPTED, old_flavor=self.instance.flavor,
            new_flavor=self.instance.flavor)
        inst = instance_obj.Instance.get_by_uuid(self.store,
                                                 self.instance.uuid)
        inst.task_state = task_states.REBUILDING
        inst.save(expected_task_state=[None])
        self.rts[SOURCE].update_available_resource(self.ctx, SOURCE)

    def _loaded(self):
        return (instance_obj.Instance.get_by_uuid(self.store,
                                                  self.instance.uuid),
                migration_obj.Migration.get_by_uuid(self.migrations,
                                                    self.migration_uuid))

    # -- the actors ---------------------------------------------------------

    def periodic(self, host):
        """``update_available_resource`` on ``host``'s node."""
        self.rts[host].update_available_resource(self.ctx, host)
        return True

    def confirm(self):
        """The API confirms the resize; compute-1 cleans up."""
        instance, migration = self._loaded()
        migration.status = migration_obj.CONFIRMING
        migration.save()
        self.computes[SOURCE].confirm_resize(self.ctx, instance, migration)
        return True

    def revert(self):
        """The API reverts the resize; compute-2 runs ``revert_resize``."""
        instance, migration = self._loaded()
        migration.status = migration_obj.REVERTING
        migration.save()
        instance.task_state = task_states.RESIZE_REVERTING
        instance.save(expected_task_state=[None])
        self.computes[DESTINATION].revert_resize(self.ctx, instance,
                                                 migration)
        return True

    def serve(self, host, timeout=60.0, give_up=None):
        """``host``'s compute service runs the next message cast to it."""
        rpc.Server(self.transport, rpcapi.TOPIC, host,
                   self.computes[host]).handle_one(timeout=timeout,
                                                   give_up=give_up)
        return True

    def schedule_evacuation(self):
        """The conductor: the scheduler claims compute-2, then the cast."""
        instance, migration = self._loaded()
        self.conductor.rebuild_instance(
            self.ctx, instance, None, None, [], None, {}, [], True, True,
            request_spec=request_spec.RequestSpec.from_instance(instance),
            migration=migration)
        return True

    def source_starts(self):
        """compute-1's service starts again: ``init_host``."""
        self.computes[SOURCE].init_host()
        return True

    # -- what happened --------------------------------------------------------

    def held(self, consumer=None):
        """``{rp_uuid: resources}`` placement holds for a consumer.

        :param consumer: a uuid (default: the server)
        """
        allocations = self.client.get_allocs_for_consumer(
            context.get_admin_context(),
            consumer or self.instance.uuid)['allocations']
        return {rp: alloc['resources'] for rp, alloc in allocations.items()}

    def saved(self):
        return self.store.peek(self.instance.uuid)

    def saved_migration(self):
        return self.migrations.peek(self.migration_uuid)

    def usage(self):
        """``{host: usage}`` each host's tracker counts on its node."""
        return {host: self.rts[host].usage(host) for host in HOSTS}

    def remove_from_placement(self):
        """Free what the run left in placement (the providers stay)."""
        ctx = context.get_admin_context()
        for consumer in (self.instance.uuid, self.migration_uuid):
            self.client.delete_allocation_for_instance(ctx, consumer,
                                                       force=True)
