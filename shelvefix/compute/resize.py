"""The compute manager's resize and cold migration, as nova runs them.

Before the destination is chosen the conductor moves the instance's
allocations on the source to the migration record
(:func:`shelvefix.conductor.migrate.replace_allocation_with_migration`) and
the scheduler claims the destination for the instance. Then:

1. ``prep_resize`` on the destination: the resource tracker's move claim;
   cast ``resize_instance`` to the source;
2. ``resize_instance`` on the source: the disk is migrated, the instance
   saved on the destination (``RESIZE_MIGRATED``); cast ``finish_resize``;
3. ``finish_resize`` on the destination: the guest runs there,
   ``RESIZED``, the migration ``finished``.

The user then confirms, and the source cleans up (``confirm_resize``): the
source node drops the old flavor and the migration's allocations on the
source are deleted *whatever happens* (in a ``finally``: a failure in
between leaked them, bug 1821594). Or the user reverts: the destination
drops its claim (``revert_resize``) and casts ``finish_revert_resize`` to
the source, which moves the migration's allocations back to the instance
(one ``POST /allocations`` that also drops the destination's) and runs the
guest at home again.

The mixin expects the compute manager's collaborators (``driver``,
``network_api``, ``volume_api``, ``reportclient``, ``rt``, ``locks``,
``compute_rpcapi``) and its small steps (``_notify_about_instance_usage``,
``_terminate_volume_connections``, ``_delete_scheduler_instance_info``).
"""

import contextlib

from oslo_log import log as logging

from shelvefix.compute import decorators
from shelvefix.compute import power_state
from shelvefix.compute import task_states
from shelvefix.compute import vm_states
from shelvefix import exception
from shelvefix.objects import migration as migration_obj

LOG = logging.getLogger(__name__)


class ResizeMixin(object):
    """``prep_resize`` to ``confirm_resize`` / ``finish_revert_resize``."""

    @contextlib.contextmanager
    def _error_out_instance_on_exception(self, context, instance):
        """On failure, save the instance in ERROR, then re-raise."""
        try:
            yield
        except Exception:
            LOG.error('Setting instance %s to ERROR', instance.uuid)
            self._set_instance_obj_error_state(instance)
            raise

    def _set_instance_obj_error_state(self, instance, clean_task_state=False):
        instance.vm_state = vm_states.ERROR
        if clean_task_state:
            instance.task_state = None
        try:
            instance.save()
        except exception.InstanceNotFound:
            LOG.debug('Instance %s vanished before it could be set to ERROR',
                      instance.uuid)

    # -- destination: the claim ---------------------------------------------

    @decorators.reverts_task_state
    @decorators.errors_out_migration
    def prep_resize(self, context, image, instance, flavor, request_spec,
                    filter_properties, node, clean_shutdown, migration,
                    host_list=None):
        """Claim ``flavor`` here for an incoming resize; cast to the source.

        On failure the scheduler's allocations here go back (the
        migration's move back to the instance), the migration is saved as
        ``error`` and the exception re-raised (nova would reschedule).
        """
        if node is None:
            node = self.host
        allocations = self.reportclient.get_allocations_for_consumer(
            context, instance.uuid)
        try:
            with self.rt.resize_claim(context, instance, flavor, node,
                                      migration, allocations):
                self.compute_rpcapi.resize_instance(
                    context, instance, migration, image, flavor,
                    request_spec, clean_shutdown)
        except Exception:
            LOG.exception('Resize of instance %s failed on %s',
                          instance.uuid, self.host)
            self._revert_allocation(context, instance, migration)
            raise

    # -- source: the move ---------------------------------------------------

    @decorators.reverts_task_state
    @decorators.errors_out_migration
    def resize_instance(self, context, instance, image, migration, flavor,
                        clean_shutdown, request_spec=None):
        """Move the disk to the destination; the instance is saved there."""
        with self._error_out_instance_on_exception(context, instance):
            migration.status = migration_obj.MIGRATING
            migration.save()
            instance.task_state = task_states.RESIZE_MIGRATING
            instance.save(expected_task_state=task_states.RESIZE_PREP)
            network_info = self.network_api.get_instance_nw_info(context,
                                                                 instance)
            bdms = self.volume_api.get_bdms(context, instance.uuid)
            disk_info = self.driver.migrate_disk_and_power_off(
                context, instance, migration.dest_compute, flavor,
                network_info)
            self._terminate_volume_connections(context, instance, bdms)
            self.network_api.migrate_instance_start(context, instance,
                                                    migration)
            migration.status = migration_obj.POST_MIGRATING
            migration.save()
            instance.host = migration.dest_compute
            instance.node = migration.dest_node
            instance.task_state = task_states.RESIZE_MIGRATED
            instance.save(expected_task_state=task_states.RESIZE_MIGRATING)
            self.compute_rpcapi.finish_resize(
                context, instance, migration, image, disk_info,
                migration.dest_compute, request_spec)

    # -- destination: the guest runs -----------------------------------------

    @decorators.reverts_task_state
    @decorators.errors_out_migration
    def finish_resize(self, context, disk_info, image, instance, migration,
                      request_spec=None):
        """Start the moved guest here: ``RESIZED``, migration ``finished``."""
        with self._error_out_instance_on_exception(context, instance):
            instance.flavor = migration.new_flavor
            self.network_api.setup_networks_on_host(context, instance,
                                                    migration.dest_compute)
            self.network_api.migrate_instance_finish(context, instance,
                                                     migration)
            network_info = self.network_api.get_instance_nw_info(context,
                                                                 instance)
            instance.task_state = task_states.RESIZE_FINISH
            instance.save(expected_task_state=task_states.RESIZE_MIGRATED)
            self.driver.finish_migration(context, migration, instance,
                                         disk_info, network_info, image)
            migration.status = migration_obj.FINISHED
            migration.save()
            instance.vm_state = vm_states.RESIZED
            instance.task_state = None
            instance.save(expected_task_state=task_states.RESIZE_FINISH)

    # -- source: confirm ----------------------------------------------------

    @decorators.errors_out_migration
    def confirm_resize(self, context, instance, migration):
        """Clean the source up after the user confirmed the resize.

        Serialised per instance on this host. The migration's allocations
        on the source are deleted even if the clean-up fails (the instance
        then goes to ERROR): it runs on the destination either way.
        """
        @self.locks.synchronized(instance.uuid)
        def do_confirm_resize(context, instance, migration):
            if migration.status == migration_obj.CONFIRMED:
                LOG.info('Migration %s is already confirmed', migration.uuid)
                return
            if migration.status not in (migration_obj.FINISHED,
                                        migration_obj.CONFIRMING):
                LOG.warning('Unexpected confirmation status %(status)r of '
                            'migration %(uuid)s; not confirming',
                            {'status': migration.status,
                             'uuid': migration.uuid})
                return
            try:
                instance.refresh()
            except exception.InstanceNotFound:
                LOG.info('Instance %s is not found during confirmation',
                         instance.uuid)
                return
            with self._error_out_instance_on_exception(context, instance):
                try:
                    self._confirm_resize(context, instance,
                                         migration=migration)
                except Exception:
                    LOG.exception('Confirm resize failed on source host %s; '
                                  'the allocations of migration %s are '
                                  'deleted anyway, the instance runs on %s',
                                  self.host, migration.uuid,
                                  migration.dest_compute)
                    raise
                finally:
                    self._delete_allocation_after_move(context, instance,
                                                       migration)
                    self._delete_scheduler_instance_info(context,
                                                         instance.uuid)
        do_confirm_resize(context, instance, migration)

    def _confirm_resize(self, context, instance, migration=None):
        self._notify_about_instance_usage(context, instance,
                                          'resize.confirm.start')
        self.network_api.setup_networks_on_host(
            context, instance, migration.source_compute, teardown=True)
        network_info = self.network_api.get_instance_nw_info(context,
                                                             instance)
        self.driver.confirm_migration(context, migration, instance,
                                      network_info)
        # The status and the drop in one critical section (bug 1879878).
        self.rt.drop_move_claim_at_source(context, instance, migration)
        if instance.power_state == power_state.SHUTDOWN:
            instance.vm_state = vm_states.STOPPED
        else:
            instance.vm_state = vm_states.ACTIVE
        instance.task_state = None
        instance.save(expected_task_state=[None, task_states.DELETING,
                                           task_states.SOFT_DELETING])
        self._notify_about_instance_usage(context, instance,
                                          'resize.confirm.end')

    def _delete_allocation_after_move(self, context, instance, migration):
        """Delete what the migration holds on the source."""
        try:
            self.reportclient.delete_allocation_for_instance(
                context, migration.uuid, consumer_type='migration',
                force=False)
        except exception.AllocationDeleteFailed:
            LOG.error('Deleting the allocations of migration %(migration)s '
                      'failed: instance %(uuid)s goes to ERROR and the '
                      'migration keeps its allocations on the source until '
                      'they are deleted by hand',
                      {'migration': migration.uuid, 'uuid': instance.uuid})
            raise

    # -- revert -------------------------------------------------------------

    @decorators.reverts_task_state
    @decorators.errors_out_migration
    def revert_resize(self, context, instance, migration, request_spec=None):
        """Destination: destroy the guest, drop the claim, cast to source."""
        with self._error_out_instance_on_exception(context, instance):
            self.network_api.setup_networks_on_host(context, instance,
                                                    teardown=True)
            self.network_api.migrate_instance_start(context, instance,
                                                    migration)
            network_info = self.network_api.get_instance_nw_info(context,
                                                                 instance)
            bdms = self.volume_api.get_bdms(context, instance.uuid)
            self.driver.destroy(context, instance, network_info,
                                self._get_instance_block_device_info(
                                    context, instance, bdms=bdms))
            self._terminate_volume_connections(context, instance, bdms)
            # The status and the drop in one critical section (1879878).
            self.rt.drop_move_claim_at_dest(context, instance, migration)
            self.compute_rpcapi.finish_revert_resize(
                context, instance, migration, migration.source_compute,
                request_spec)

    @decorators.reverts_task_state
    @decorators.errors_out_migration
    def finish_revert_resize(self, context, instance, migration,
                             request_spec=None):
        """Source: take the allocations back and run the guest here again."""
        self._finish_revert_resize(context, instance, migration,
                                   request_spec)

    def _finish_revert_resize(self, context, instance, migration,
                              request_spec=None):
        with self._error_out_instance_on_exception(context, instance):
            self._notify_about_instance_usage(context, instance,
                                              'resize.revert.start')
            # Host, node and flavor back, and counted by this node, in one
            # critical section (see move_claims).
            self.rt.revert_migration_at_source(context, instance, migration)
            try:
                self._revert_allocation(context, instance, migration)
            except exception.AllocationMoveFailed:
                LOG.error('Moving the allocations of migration %(migration)s '
                          'back to instance %(uuid)s failed: it goes to '
                          'ERROR, the migration keeps them',
                          {'migration': migration.uuid,
                           'uuid': instance.uuid})
                raise
            self.network_api.setup_networks_on_host(context, instance,
                                                    migration.source_compute)
            self.network_api.migrate_instance_finish(context, instance,
                                                     migration)
            network_info = self.network_api.get_instance_nw_info(context,
                                                                 instance)
            self.driver.finish_revert_migration(context, instance,
                                                network_info, migration)
            instance.vm_state = vm_states.ACTIVE
            instance.task_state = None
            instance.save(expected_task_state=task_states.RESIZE_REVERTING)
            self._notify_about_instance_usage(context, instance,
                                              'resize.revert.end')

    def _revert_allocation(self, context, instance, migration):
        """Give the instance back what the migration holds on the source.

        :returns: the allocations moved, or False if the migration held
            none
        """
        held = self.reportclient.get_allocations_for_consumer(
            context, migration.uuid)
        if not held:
            LOG.error('Migration %(migration)s holds no allocations on the '
                      'source node %(node)s: nothing to give back to '
                      'instance %(uuid)s',
                      {'migration': migration.uuid,
                       'node': migration.source_node,
                       'uuid': instance.uuid})
            return False
        self.reportclient.move_allocations(context, migration.uuid,
                                           instance.uuid)
        return held
