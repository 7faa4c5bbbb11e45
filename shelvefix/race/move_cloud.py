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
places every move on compute-2; except for a second move
(:meth:`MoveCloud.migrate_again`, ``resize-migrate``), which goes back
to compute-1: both hosts are enabled, and the API's ``ignore_hosts``
keeps each cold migration off its source, as nova's does.
"""

from oslo_log import log as logging
from oslo_utils import uuidutils

from shelvefix.compute import collaborators
from shelvefix.compute import manager as manager_mod
from shelvefix.compute import resource_tracker
from shelvefix.compute import rpcapi
from shelvefix.compute import task_states
from shelvefix.compute import vm_states
from shelvefix.conductor import migrate
from shelvefix import context
from shelvefix import exception
from shelvefix.objects import instance as instance_obj
from shelvefix.objects import migration as migration_obj
from shelvefix.race import client
from shelvefix.race import cloud as cloud_mod
from shelvefix.race import scenario
from shelvefix.race import scenarios
from shelvefix.scheduler.client import report
from shelvefix.scheduler import request_spec

SOURCE = cloud_mod.SOURCE
DESTINATION = cloud_mod.DESTINATION
HOSTS = cloud_mod.HOSTS

RESIZED = scenarios.RESIZED
EVACUATING = scenarios.EVACUATING
ACTIVE_ON_SOURCE = scenarios.ACTIVE_ON_SOURCE


def create_providers(placement, enabled=False):
    """Both hosts' providers; compute-1's disabled unless ``enabled``."""
    if enabled:
        return scenario.create_providers(placement, names=HOSTS)
    return cloud_mod.create_providers(placement)


LOG = logging.getLogger(__name__)


class MoveCloud(cloud_mod.TwoHosts):
    """Two compute hosts, a conductor and a scheduler around one moving server.

    :param placement: a set-up placement fixture
    :param providers: ``(src, dst)`` from :func:`create_providers`
    :param start: :data:`RESIZED`, :data:`EVACUATING` or
        :data:`ACTIVE_ON_SOURCE` (no move started:
        :mod:`~shelvefix.race.live_migration`)
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
        self.migrations = migration_obj.MigrationStore()
        self.drivers = {host: collaborators.RecordingDriver(
            failing=failing.get(host, ())) for host in HOSTS}
        self._wire(
            placement, providers, report.SchedulerReportClient(
                adapter=placement.adapter, conf=placement.conf, sleep=sleep),
            manager_cls, tracker_cls, lambda host: (
                {'migration_store': self.migrations,
                 'compute_nodes': {host: self.providers[host]}},
                {'driver': self.drivers[host],
                 'compute_rpcapi': self.compute_rpcapi}))
        self.instance = self._server_on_source(vm_state=vm_states.ACTIVE)
        self.migration_uuid = uuidutils.generate_uuid()
        #: Every migration a run may record, oldest first: the start's,
        #: then a second move's (:meth:`migrate_again`).
        self.migration_uuids = [self.migration_uuid,
                                uuidutils.generate_uuid()]
        if start == RESIZED:
            self._cold_migrate()
        elif start == EVACUATING:
            self._accept_evacuation()
        else:
            # ACTIVE_ON_SOURCE: both nodes audited; no migration yet.
            for host in HOSTS:
                self.periodic(host)
            self.migration = None
            return
        self.migration = migration_obj.Migration.get_by_uuid(
            self.migrations, self.migration_uuid)

    def _serve_one(self, host):
        # The set-up's casts are all queued already: no long wait.
        self.serve(host, timeout=5.0)

    def _migration_task(self, migration_uuid):
        """The API's hand-off of a cold migration: the conductor's task."""
        def schedule(instance):
            spec = request_spec.RequestSpec.from_instance(instance)
            # nova's API, with allow_resize_to_same_host off.
            spec.ignore_hosts = [instance.host]
            return migrate.MigrationTask(
                self.ctx, instance, scenario.FLAVOR, spec,
                self.compute_rpcapi, self.scheduler, self.client,
                self.migrations, self.providers[instance.host],
                migration_uuid).execute()
        return schedule

    def _load(self, row):
        return instance_obj.Instance(self.store, **row)

    def _cold_migrate(self):
        client.move(self.store, self.instance.uuid, self._load,
                    self._migration_task(self.migration_uuid), timeout=0)
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

    def confirm(self):
        """The API confirms the resize; compute-1 cleans up."""
        instance, migration = self._loaded()
        migration.status = migration_obj.CONFIRMING
        migration.save()
        self.computes[SOURCE].confirm_resize(self.ctx, instance, migration)
        return True

    def api_confirm(self):
        """The API confirms the resize, checking first as nova's does.

        :returns: False if the API refuses (the server is not ``RESIZED``
            with no task, or no migration is ``finished``); True once
            compute-1's ``confirm_resize`` ran
        """
        instance = instance_obj.Instance.get_by_uuid(self.store,
                                                     self.instance.uuid)
        if (instance.vm_state != vm_states.RESIZED or
                instance.task_state is not None):
            return False
        migration = self._migration_by_status(migration_obj.FINISHED)
        if migration is None:
            return False
        migration.status = migration_obj.CONFIRMING
        migration.save()
        self.computes[migration.source_compute].confirm_resize(
            self.ctx, instance, migration)
        return True

    def delete(self):
        """The API deletes the server (nova's ``_delete``).

        ``DELETING`` saved whatever the task state; a server still
        ``RESIZED`` has its resize confirmed first, waiting for the source
        (``_confirm_resize_on_deleting``); then ``terminate_instance`` is
        cast to its host, unless a delete was in progress already.

        One change to nova: if that confirm fails, the delete goes on and
        casts ``terminate_instance`` all the same. nova's ``_delete``
        lets the error out, leaving the server ``ERROR`` and ``DELETING``
        with no terminate cast, and ignores every later delete (one was in
        progress): a server nobody can delete. The server runs on its
        destination, where terminating it is what a delete does, and the
        failed confirm freed the source's allocations anyway (its
        ``finally``); what the source's clean-up left on its hypervisor
        stays either way.

        :returns: True if it cast ``terminate_instance``
        """
        instance = instance_obj.Instance.get_by_uuid(self.store,
                                                     self.instance.uuid)
        original_task_state = instance.task_state
        instance.task_state = task_states.DELETING
        instance.save()
        if instance.vm_state == vm_states.RESIZED:
            try:
                self._confirm_resize_on_deleting(instance)
            except exception.InstanceNotFound:
                # Gone meanwhile: nova's _delete stops there too.
                return False
            except Exception:
                LOG.exception('Confirming the resize of instance %s before '
                              'deleting it failed; deleting it anyway',
                              instance.uuid)
        if original_task_state in (task_states.DELETING,
                                   task_states.SOFT_DELETING):
            return False
        # The block device mappings are read by the host (None).
        self.compute_rpcapi.terminate_instance(self.ctx, instance, None)
        return True

    def _confirm_resize_on_deleting(self, instance):
        for status in (migration_obj.FINISHED, migration_obj.CONFIRMING):
            migration = self._migration_by_status(status)
            if migration is not None:
                break
        else:
            return
        # A call, not a cast (nova's cast=False): the delete goes on once
        # the source is done.
        self.computes[migration.source_compute].confirm_resize(
            self.ctx, instance, migration)

    def _migration_by_status(self, status):
        found = migration_obj.MigrationList.get_by_filters(
            self.migrations, {'instance_uuid': self.instance.uuid,
                              'status': status})
        return found[0] if found else None

    def revert(self):
        """The API reverts the resize; compute-2 runs ``revert_resize``.

        In the order of nova's ``API.revert_resize``: the server's task
        state, then the migration's status.
        """
        instance, migration = self._loaded()
        instance.task_state = task_states.RESIZE_REVERTING
        instance.save(expected_task_state=[None])
        migration.status = migration_obj.REVERTING
        migration.save()
        self.computes[DESTINATION].revert_resize(self.ctx, instance,
                                                 migration)
        return True

    def migrate_again(self, timeout=60.0, give_up=None):
        """A client cold-migrates the server as soon as it may.

        It waits for the server ``ACTIVE`` with no task (the confirm of the
        resize saves it so before it deletes the migration's allocations
        on compute-1), then the API and the conductor: a second
        migration, recorded, its allocations moved, compute-1 claimed by
        the scheduler, ``prep_resize`` cast there.

        :raises GaveUp: ``give_up`` said so first (the confirm failed)
        """
        client.move(self.store, self.instance.uuid, self._load,
                    self._migration_task(self.migration_uuids[1]),
                    timeout=timeout, give_up=give_up)
        return True

    def finish_moves(self, rounds=4):
        """Serve what is still cast to either host, as the hosts would.

        Not explored: the rest of a move the run started (a second move's
        ``resize_instance`` and ``finish_resize``), run to its end so that
        the end state is one a user could see.

        :param rounds: how many times both hosts' queues are emptied, at
            most (a cast answered by a cast back takes one round)
        :returns: ``{'<host> later': exception}`` for the casts that
            failed (the last one per host)
        """
        errors = {}
        for _round in range(rounds):
            served = False
            for host in HOSTS:
                while self.transport.waiting(rpcapi.TOPIC, host):
                    served = True
                    try:
                        self.serve(host, timeout=0)
                    except Exception as exc:
                        errors['%s later' % host] = exc
            if not served:
                break
        return errors

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

    def saved_migration(self):
        return self.migrations.peek(self.migration_uuid)

    def saved_migrations(self):
        """The saved rows of :attr:`migration_uuids` recorded, oldest first."""
        saved = set(self.migrations.uuids())
        return [self.migrations.peek(uuid) for uuid in self.migration_uuids
                if uuid in saved]

    def usage(self):
        """``{host: usage}`` each host's tracker counts on its node."""
        return {host: self.rts[host].usage(host) for host in HOSTS}

    def remove_from_placement(self):
        """Free what the run left in placement (the providers stay)."""
        ctx = context.get_admin_context()
        for consumer in [self.instance.uuid] + self.migration_uuids:
            self.client.delete_allocation_for_instance(ctx, consumer,
                                                       force=True)
