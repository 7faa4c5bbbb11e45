"""The compute manager's side of deleting a server, as nova runs it.

The API saves the server ``DELETING`` (after confirming, synchronously, a
resize it finds unconfirmed) and casts ``terminate_instance`` to the
server's host. There, serialised per instance:

1. the guest is shut down: the virt driver destroys it and the volumes'
   connections are terminated (``_shutdown_instance``);
2. the server is saved ``DELETED``, no task, whatever task state it had
   (a delete that got this far wins);
3. the deletion is completed (``_complete_deletion``): this node's tracker
   stops counting the server and its allocations are deleted from
   placement (``force=True``, as nova when deferred deletes are off);
4. the row is destroyed (:meth:`Instance.destroy
   <shelvefix.objects.instance.Instance.destroy>`, nova's soft delete),
   only once the deletion completed: from then on nobody finds the
   server, and a concurrent operation's save of it raises
   InstanceNotFound instead of bringing it back (a confirm of its resize,
   ``shelvefix race --scenario resize-delete``).

A failure on the way leaves the server in ``ERROR`` with its task state
cleared, and is re-raised.

The mixin expects the compute manager's collaborators (``driver``,
``network_api``, ``volume_api``, ``reportclient``, ``rt``, ``locks``) and
its small steps (``_notify_about_instance_usage``,
``_get_instance_block_device_info``, ``_terminate_volume_connections``,
``_update_resource_tracker``, ``_delete_scheduler_instance_info``,
``_set_instance_obj_error_state``).
"""

from oslo_log import log as logging

from shelvefix.compute import decorators
from shelvefix.compute import power_state
from shelvefix.compute import vm_states
from shelvefix import exception

LOG = logging.getLogger(__name__)


class DeleteMixin(object):
    """``terminate_instance``: the server's host deletes it."""

    @decorators.reverts_task_state
    def terminate_instance(self, context, instance, bdms):
        """Delete ``instance`` on this host (the RPC entry point).

        :param bdms: its block device mappings as the API read them (None:
            read them here)
        """
        @self.locks.synchronized(instance.uuid)
        def do_terminate_instance(instance, bdms):
            try:
                self._delete_instance(context, instance, bdms)
            except exception.InstanceNotFound:
                LOG.info('Instance %s vanished while it was terminated',
                         instance.uuid)
            except Exception:
                LOG.exception('Terminating instance %s failed; it goes to '
                              'ERROR', instance.uuid)
                self._set_instance_obj_error_state(instance)
                raise
        do_terminate_instance(instance, bdms)

    def _delete_instance(self, context, instance, bdms):
        if bdms is None:
            bdms = self.volume_api.get_bdms(context, instance.uuid)
        self._notify_about_instance_usage(context, instance, 'delete.start')
        self._shutdown_instance(context, instance, bdms)
        instance.vm_state = vm_states.DELETED
        instance.task_state = None
        instance.power_state = power_state.NOSTATE
        instance.save()
        self._complete_deletion(context, instance)
        # Destroyed only if the deletion completed: a failure above leaves
        # the row, in ERROR, for another delete to find.
        instance.destroy()
        self._notify_about_instance_usage(context, instance, 'delete.end')

    def _shutdown_instance(self, context, instance, bdms):
        """Destroy the guest on this host and let its volumes go."""
        LOG.info('Terminating instance %s on %s', instance.uuid, self.host)
        network_info = self.network_api.get_instance_nw_info(context,
                                                             instance)
        block_device_info = self._get_instance_block_device_info(
            context, instance, bdms=bdms)
        self.driver.destroy(context, instance, network_info,
                            block_device_info)
        self._terminate_volume_connections(context, instance, bdms)

    def _complete_deletion(self, context, instance):
        """The node stops counting the server; its allocations go."""
        self._update_resource_tracker(context, instance, instance.host,
                                      instance.node)
        self.reportclient.delete_allocation_for_instance(
            context, instance.uuid, force=True)
        self._delete_scheduler_instance_info(context, instance.uuid)
