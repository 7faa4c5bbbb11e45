"""The compute hosts' side of ending a resize across cells.

A resize from a host of one cell to a host of another (nova's
``CrossCellMigrationTask``) leaves the server ``RESIZED`` on the
destination, in the target cell, and a hidden copy of it on the source,
in the source cell, whose guest is destroyed but whose disks are kept.
The conductor then ends it (:mod:`shelvefix.conductor.cross_cell`) and
calls the hosts, each of which works on its own cell's copy:

* confirm: the source's :meth:`~CrossCellMixin.
  confirm_snapshot_based_resize_at_source` removes what the guest left
  (its disks, its ports' bindings to the host), stops counting the old
  flavor (``drop_move_claim_at_source``, the migration ``confirmed`` in
  the same critical section), and, whatever happened, deletes what the
  migration holds on the source in placement and tells the scheduler the
  server left the host. nova's does not tell the scheduler (its view of
  the source keeps the server until the host's next instance sync): the
  same-cell confirm has done so since bug 1869050's fix, and so does this
  one;
* revert, first the destination's
  :meth:`~CrossCellMixin.revert_snapshot_based_resize_at_dest`: the guest
  destroyed, the ports bound to the source again, the new flavor dropped
  (``drop_move_claim_at_dest``: the target cell's migration
  ``reverted``), the server out of the scheduler's view of the host;
* then the source's :meth:`~CrossCellMixin.
  finish_revert_snapshot_based_resize_at_source`: the copy's flavor,
  host and node saved back and counted in one critical section
  (``revert_migration_at_source``, as the same-cell revert), what the
  migration holds moved back to the server (one write that drops the
  destination's), the guest started from the kept disks, the server
  ``ACTIVE`` (or ``STOPPED``) with no task, the source cell's migration
  ``reverted``, and the scheduler told the server is on the host.

The mixin expects the compute manager's collaborators (``driver``,
``network_api``, ``volume_api``, ``rt``, ``locks``) and its steps
(``_get_instance_block_device_info``, ``_terminate_volume_connections``,
``_get_power_state``, ``_delete_allocation_after_move``,
``_revert_allocation``, ``_error_out_instance_on_exception``, the
scheduler's instance info).
"""

from oslo_log import log as logging

from shelvefix.compute import decorators
from shelvefix.compute import task_states
from shelvefix.compute import vm_states
from shelvefix import exception
from shelvefix.objects import migration as migration_obj

LOG = logging.getLogger(__name__)


class CrossCellMixin(object):
    """The snapshot-based resize's end on the source and the destination."""

    # -- confirm, on the source -------------------------------------------

    @decorators.errors_out_migration
    def confirm_snapshot_based_resize_at_source(self, ctxt, instance,
                                                migration):
        """Clean the source up after a cross-cell resize was confirmed.

        Serialised per instance on this host. The migration's allocations
        on the source are deleted, and the scheduler told the server left,
        even if the clean-up fails (the copy then goes to ``ERROR``): the
        server runs on the destination either way.

        :param instance: the source cell's (hidden) copy
        :param migration: the source cell's migration record
        """
        @self.locks.synchronized(instance.uuid)
        def do_confirm():
            LOG.info('Confirming the cross-cell resize of instance %s on '
                     'its source host %s', instance.uuid, self.host)
            with self._error_out_instance_on_exception(ctxt, instance):
                try:
                    self._confirm_snapshot_based_resize_at_source(
                        ctxt, instance, migration)
                except Exception:
                    LOG.exception('Confirming the resize of instance %s '
                                  'failed on its source host %s; the '
                                  'allocations of migration %s are deleted '
                                  'anyway, the server runs on %s',
                                  instance.uuid, self.host, migration.uuid,
                                  migration.dest_compute)
                    raise
                finally:
                    self._delete_allocation_after_move(ctxt, instance,
                                                       migration)
                    self._delete_scheduler_instance_info(ctxt,
                                                         instance.uuid)
        do_confirm()

    def _confirm_snapshot_based_resize_at_source(self, ctxt, instance,
                                                 migration):
        network_info = self.network_api.get_instance_nw_info(ctxt, instance)
        # The guest is gone since the resize began; its disks are not.
        self.driver.cleanup(ctxt, instance, network_info,
                            block_device_info=None, destroy_disks=True,
                            destroy_vifs=False)
        self._delete_port_bindings_on_host(ctxt, instance)
        # The status and the drop in one critical section (bug 1879878).
        self.rt.drop_move_claim_at_source(ctxt, instance, migration)

    def _delete_port_bindings_on_host(self, ctxt, instance):
        """The instance's ports' bindings to this host go."""
        self.network_api.cleanup_instance_network_on_host(ctxt, instance,
                                                          self.host)

    # -- revert, on the destination ---------------------------------------

    @decorators.reverts_task_state
    @decorators.errors_out_migration
    def revert_snapshot_based_resize_at_dest(self, ctxt, instance,
                                             migration):
        """Remove the reverted server from this (the destination) host.

        Serialised per instance on this host; on failure the target
        cell's copy goes to ``ERROR`` and the migration to ``error``.

        :param instance: the target cell's copy, ``RESIZED``,
            ``RESIZE_REVERTING``
        :param migration: the target cell's migration, ``reverting``
        """
        @self.locks.synchronized(instance.uuid)
        def do_revert():
            LOG.info('Reverting the cross-cell resize of instance %s on its '
                     'destination host %s', instance.uuid, self.host)
            with self._error_out_instance_on_exception(ctxt, instance):
                self._revert_snapshot_based_resize_at_dest(ctxt, instance,
                                                           migration)
        do_revert()
        self._delete_scheduler_instance_info(ctxt, instance.uuid)

    def _revert_snapshot_based_resize_at_dest(self, ctxt, instance,
                                              migration):
        network_info = self.network_api.get_instance_nw_info(ctxt, instance)
        bdms = self.volume_api.get_bdms(ctxt, instance.uuid)
        self.driver.destroy(ctxt, instance, network_info,
                            self._get_instance_block_device_info(
                                ctxt, instance, bdms=bdms))
        # The source's bindings activated before this host's go.
        self.network_api.migrate_instance_start(ctxt, instance, migration)
        self._delete_port_bindings_on_host(ctxt, instance)
        self._terminate_volume_connections(ctxt, instance, bdms)
        # The status and the drop in one critical section (bug 1879878).
        self.rt.drop_move_claim_at_dest(ctxt, instance, migration)

    # -- revert, back on the source ---------------------------------------

    @decorators.reverts_task_state
    @decorators.errors_out_migration
    def finish_revert_snapshot_based_resize_at_source(self, ctxt, instance,
                                                      migration):
        """Run the reverted server on this (the source) host again.

        Serialised per instance on this host; on failure the source
        cell's copy goes to ``ERROR`` and the migration to ``error``.

        :param instance: the source cell's copy, shown again,
            ``RESIZE_REVERTING``
        :param migration: the source cell's migration, ``reverting``
        """
        @self.locks.synchronized(instance.uuid)
        def do_revert():
            LOG.info('Finishing the revert of the cross-cell resize of '
                     'instance %s on its source host %s', instance.uuid,
                     self.host)
            with self._error_out_instance_on_exception(ctxt, instance):
                self._finish_revert_snapshot_based_resize_at_source(
                    ctxt, instance, migration)
        do_revert()
        self._update_scheduler_instance_info(ctxt, instance)

    def _finish_revert_snapshot_based_resize_at_source(self, ctxt, instance,
                                                       migration):
        # The copy kept the state the server had before the resize (nova
        # stashes it as old_vm_state): a stopped server stays stopped.
        power_on = instance.vm_state == vm_states.ACTIVE
        # Flavor, host and node back, and counted by this node, in one
        # critical section (see move_claims).
        self.rt.revert_migration_at_source(ctxt, instance, migration)
        try:
            self._revert_allocation(ctxt, instance, migration)
        except exception.AllocationMoveFailed:
            # As nova's: the ports and the guest are still set up; the
            # allocations are left for the operator to heal.
            LOG.error('Moving the allocations of migration %(migration)s '
                      'back to instance %(uuid)s failed: the migration '
                      'keeps them on the source',
                      {'migration': migration.uuid, 'uuid': instance.uuid})
        self.network_api.migrate_instance_finish(ctxt, instance, migration)
        network_info = self.network_api.get_instance_nw_info(ctxt, instance)
        self.driver.finish_revert_migration(ctxt, instance, network_info,
                                            migration, power_on=power_on)
        instance.power_state = self._get_power_state(instance)
        instance.vm_state = (vm_states.ACTIVE if power_on
                             else vm_states.STOPPED)
        instance.task_state = None
        instance.save(expected_task_state=[task_states.RESIZE_REVERTING])
        migration.status = migration_obj.REVERTED
        migration.save()
