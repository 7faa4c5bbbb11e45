"""The compute manager's live migration: both hosts' parts, as nova's.

The conductor records the migration (``accepted``), hands the server's
allocations on the source to it, has the scheduler claim the destination
for the server, and asks the destination (a call) whether it can take the
server, which asks the source in turn. Then it casts ``live_migration`` to
the source:

1. ``live_migration``: the migration ``queued``, then the migration job
   (``_do_live_migration``) submitted to the service's live migration
   pool (:mod:`~shelvefix.compute.live_migration_abort`, which also
   answers the user's abort);
2. the migration ``preparing``; the destination's ``pre_live_migration``
   (a call); the migration ``running``;
3. the hypervisor moves the guest and calls back, as libvirt's does:
   ``_post_live_migration`` when the guest runs on the destination, or
   ``_rollback_live_migration`` when the move failed.

``_post_live_migration`` cleans the source up, then calls the
destination's ``post_live_migration_at_destination``, which saves the
server there (host and node, no task) and makes the destination's
tracker count it in one critical section (see
:meth:`~shelvefix.compute.move_claims.MoveClaims.finish_live_migration_at_dest`);
only then does the source stop counting it, save the migration
``completed`` and delete what the migration holds on the source: the
source is freed after the server is saved on the destination, never
before.

``_rollback_live_migration`` gives the server back what the migration
holds on the source (one write that also drops the destination's claim),
clears the task state (the server stays ``ACTIVE`` on the source) and
saves the migration ``failed``, or ``cancelled`` for an abort.

The mixin expects the compute manager's collaborators (``driver``,
``network_api``, ``reportclient``, ``rt``, ``compute_rpcapi``), its small
steps and ``_revert_allocation``, ``_delete_allocation_after_move`` and
``_set_migration_status`` (of the resize and evacuation mixins), and its
``_waiting_live_migrations`` (``{instance uuid: (migration, future)}``).
"""

import functools

from oslo_log import log as logging

from shelvefix.compute import task_states
from shelvefix import exception
from shelvefix.objects import migration as migration_obj

LOG = logging.getLogger(__name__)


def _needs_cleanup_at_destination(migrate_data):
    """True unless both hosts share the instance's path (no own disks)."""
    migrate_data = migrate_data or {}
    return bool(migrate_data.get('block_migration') or
                not migrate_data.get('is_shared_instance_path', True))


class LiveMigrationMixin(object):
    """Live migration: the checks, the source's job, both callbacks."""

    # -- the checks: calls from the conductor, then from the destination

    def check_can_live_migrate_destination(self, ctxt, instance,
                                           block_migration, disk_over_commit,
                                           migration, limits):
        """Whether this host can take ``instance``; the migrate data.

        Asks the driver here, then the source (a call). The driver's
        check is cleaned up whatever the source answers.

        :raises MigrationPreCheckError: the source refused or did not
            answer
        """
        dest_check_data = self.driver.check_can_live_migrate_destination(
            ctxt, instance, None, None, block_migration, disk_over_commit)
        try:
            try:
                return self.compute_rpcapi.check_can_live_migrate_source(
                    ctxt, instance, dest_check_data)
            except Exception as e:
                raise exception.MigrationPreCheckError(
                    reason='the source %s refused the live migration of '
                           'instance %s to %s: %s'
                           % (instance.host, instance.uuid, self.host, e))
        finally:
            self.driver.cleanup_live_migration_destination_check(
                ctxt, dest_check_data)

    def check_can_live_migrate_source(self, ctxt, instance, dest_check_data):
        """Whether this host can send ``instance``; the migrate data."""
        return self.driver.check_can_live_migrate_source(
            ctxt, instance, dest_check_data, block_device_info=None)

    # -- the destination's preparation (a call from the source)

    def pre_live_migration(self, context, instance, disk, migrate_data):
        """Prepare this host for the guest: its networks, the driver's."""
        network_info = self.network_api.get_instance_nw_info(context,
                                                             instance)
        self._notify_about_instance_usage(context, instance,
                                          'live_migration.pre.start')
        migrate_data = self.driver.pre_live_migration(
            context, instance, None, network_info, disk, migrate_data)
        self.network_api.setup_networks_on_host(context, instance, self.host)
        self._notify_about_instance_usage(context, instance,
                                          'live_migration.pre.end')
        return migrate_data

    # -- the source: the job (its queue and the abort:
    #    :mod:`~shelvefix.compute.live_migration_abort`)

    def _do_live_migration(self, context, dest, instance, block_migration,
                           migration, migrate_data):
        self._set_migration_status(migration, migration_obj.PREPARING)
        try:
            migrate_data = self.compute_rpcapi.pre_live_migration(
                context, instance, block_migration, None, dest,
                migrate_data)
        except Exception:
            LOG.exception('Pre live migration of instance %s failed at %s',
                          instance.uuid, dest)
            self._rollback_live_migration(context, instance, dest,
                                          migrate_data, migration=migration,
                                          pre_live_migration=True)
            raise
        if self._waiting_live_migrations.pop(instance.uuid, None) is None:
            LOG.info('Live migration %s of instance %s was aborted before '
                     'it ran', migration.uuid, instance.uuid)
            self._rollback_live_migration(
                context, instance, dest, migrate_data,
                migration_status=migration_obj.CANCELLED,
                migration=migration)
            return
        self._set_migration_status(migration, migration_obj.RUNNING)
        post_method = functools.partial(self._post_live_migration,
                                        migration=migration)
        recover_method = functools.partial(self._rollback_live_migration,
                                           migration=migration)
        try:
            self.driver.live_migration(context, instance, dest, post_method,
                                       recover_method, block_migration,
                                       migrate_data)
        except Exception:
            LOG.exception('Live migration of instance %s failed',
                          instance.uuid)
            # Too late to roll back: where the guest runs is unknown.
            self._set_migration_status(migration, migration_obj.ERROR)
            instance.refresh()
            self._set_instance_obj_error_state(instance,
                                               clean_task_state=True)
            raise

    # -- the hypervisor's callbacks, on the source

    def _post_live_migration(self, ctxt, instance, dest,
                             block_migration=False, migrate_data=None,
                             migration=None):
        """The guest runs on ``dest``: clean up here, then free the source.

        The destination saves the server as its own (a call) before this
        host stops counting it, the migration is ``completed`` and its
        allocations on the source are deleted.
        """
        self._notify_about_instance_usage(ctxt, instance,
                                          'live_migration._post.start')
        self.network_api.migrate_instance_start(ctxt, instance, migration)
        self.driver.post_live_migration(ctxt, instance, None, migrate_data)
        network_info = self.network_api.get_instance_nw_info(ctxt,
                                                             instance)
        self.driver.post_live_migration_at_source(ctxt, instance,
                                                  network_info)
        source_node = instance.node
        self.compute_rpcapi.post_live_migration_at_destination(
            ctxt, instance, block_migration, dest)
        self.rt.drop_live_migrated_instance(ctxt, instance, source_node)
        self._delete_scheduler_instance_info(ctxt, instance.uuid)
        self._notify_about_instance_usage(ctxt, instance,
                                          'live_migration._post.end')
        if migration is None:
            LOG.warning('Live migration of instance %s ended with no '
                        'migration: its allocations on %s are left',
                        instance.uuid, source_node)
            return
        migration.status = migration_obj.COMPLETED
        migration.save()
        self._delete_allocation_after_move(ctxt, instance, migration)

    def _rollback_live_migration(self, context, instance, dest,
                                 migrate_data=None,
                                 migration_status=migration_obj.FAILED,
                                 migration=None, pre_live_migration=False):
        """The move failed (or was aborted): the server stays here.

        The server gets back what the migration holds here, which drops
        the destination's claim in the same write; the destination's
        networks are torn down, or, if it holds disks of its own (a block
        migration), it undoes its preparation (a cast); the task state is
        cleared; the migration ends with ``migration_status``.
        """
        if migration is not None:
            self._revert_allocation(context, instance, migration)
        else:
            LOG.error('Live migration of instance %s rolled back with no '
                      'migration: the allocations are left as they are',
                      instance.uuid)
        self.network_api.setup_networks_on_host(context, instance, self.host)
        if not pre_live_migration:
            self.driver.rollback_live_migration_at_source(context, instance,
                                                          migrate_data)
        self._notify_about_instance_usage(context, instance,
                                          'live_migration._rollback.start')
        if _needs_cleanup_at_destination(migrate_data):
            self.compute_rpcapi.rollback_live_migration_at_destination(
                context, instance, dest, destroy_disks=True,
                migrate_data=migrate_data)
        else:
            self.network_api.setup_networks_on_host(context, instance, dest,
                                                    teardown=True)
        instance.task_state = None
        instance.save(expected_task_state=[task_states.MIGRATING])
        self._notify_about_instance_usage(context, instance,
                                          'live_migration._rollback.end')
        self._set_migration_status(migration, migration_status)

    # -- the destination's ends

    def post_live_migration_at_destination(self, context, instance,
                                           block_migration):
        """The guest runs here: the server is this host's (a call)."""
        self.network_api.setup_networks_on_host(context, instance, self.host)
        self.network_api.migrate_instance_finish(context, instance, None)
        network_info = self.network_api.get_instance_nw_info(context,
                                                             instance)
        self.driver.post_live_migration_at_destination(
            context, instance, network_info, block_migration)
        self.rt.finish_live_migration_at_dest(
            context, instance, self.host, self._get_power_state(instance))
        self._update_scheduler_instance_info(context, instance)

    def rollback_live_migration_at_destination(self, context, instance,
                                               destroy_disks, migrate_data):
        """Undo the preparation here after a failed live migration."""
        self.network_api.setup_networks_on_host(context, instance, self.host,
                                                teardown=True)
        self.driver.rollback_live_migration_at_destination(
            context, instance, [], None, destroy_disks=destroy_disks,
            migrate_data=migrate_data)
