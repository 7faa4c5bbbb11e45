"""The trimmed copy of nova 34.0.0's compute manager, and lines of it.

:data:`MANAGER` is ``nova/compute/manager.py`` from the nova 34.0.0 wheel,
trimmed to ``ComputeManager._shelve_offload_instance`` and the methods it
reaches: the modern order, the allocations freed through ``self.rt``
before the save. The method keeps the release's statements in their order,
with the comments paraphrased; the helpers are trimmed to what could matter
to the verdict (calls on ``self``, saves, frees).

nova 19.0.0 (Stein) to 20.6.1 (Train) have the same order, with
``cleanup_instance_network_on_host`` instead of unbinding ports and no
accelerators (see :func:`.releases.nova_19_to_20_shape`).
"""

MANAGER = '''\
"""The compute service's manager (trimmed).

Trimmed copy of nova 34.0.0 nova/compute/manager.py: ComputeManager's
_shelve_offload_instance and the methods it reaches.
"""

from oslo_log import log as logging

from nova.accelerator import cyborg
from nova.compute import power_state
from nova.compute import task_states
from nova.compute import utils as compute_utils
from nova.compute import vm_states
import nova.conf
from nova import exception
from nova import manager
from nova import objects
from nova.objects import fields
from nova import utils
from nova.virt import driver

CONF = nova.conf.CONF

LOG = logging.getLogger(__name__)


class ComputeManager(manager.Manager):
    """Runs the instances of one compute host."""

    def _update_resource_tracker(self, context, instance):
        """Tell the resource tracker the instance's state changed."""
        if instance.host == self.host:
            self.rt.update_usage(context, instance, instance.node)

    def _instance_update(self, context, instance, **kwargs):
        """Set fields on the instance from kwargs, then save it."""
        for k, v in kwargs.items():
            setattr(instance, k, v)
        instance.save()
        self._update_resource_tracker(context, instance)

    def _nil_out_instance_obj_host_and_node(self, instance):
        # The caller saves right after this, so no save here.
        instance.host = None
        instance.node = None
        instance.compute_id = None
        instance.launched_on = None
        # No host means no aggregate, so no availability zone either.
        instance.availability_zone = None

    def _get_power_state(self, instance):
        """The instance's power state as the driver reports it."""
        LOG.debug('Checking state', instance=instance)
        try:
            return self.driver.get_info(instance, use_cache=False).state
        except exception.InstanceNotFound:
            return power_state.NOSTATE

    def _delete_scheduler_instance_info(self, context, instance_uuid):
        """Tell the scheduler the instance left this host."""
        if not self.send_instance_updates:
            return
        context = context.elevated()
        self.query_client.delete_instance_info(context, self.host,
                                               instance_uuid)

    def _notify_about_instance_usage(self, context, instance, event_suffix,
                                     network_info=None, extra_usage_info=None,
                                     fault=None, best_effort=False):
        compute_utils.notify_about_instance_usage(
            self.notifier, context, instance, event_suffix,
            network_info=network_info, extra_usage_info=extra_usage_info,
            fault=fault, best_effort=best_effort)

    def _get_instance_block_device_info(self, context, instance,
                                        refresh_conn_info=False, bdms=None):
        """The instance's block devices as the driver wants them."""
        if bdms is None:
            bdms = objects.BlockDeviceMappingList.get_by_instance_uuid(
                context, instance.uuid)
        block_device_info = driver.get_block_device_info(instance, bdms)
        block_device_info['block_device_mapping'] = [
            bdm for bdm in driver.block_device_info_get_mapping(
                block_device_info)
            if bdm.get('connection_info')]
        return block_device_info

    def _terminate_volume_connections(self, context, instance, bdms):
        connector = None
        for bdm in bdms:
            if bdm.is_volume:
                if bdm.attachment_id:
                    # New-style attachments: replace the attachment by one
                    # without a connector.
                    attachment_id = self.volume_api.attachment_create(
                        context, bdm.volume_id, instance.uuid)['id']
                    self.volume_api.attachment_delete(context,
                                                      bdm.attachment_id)
                    bdm.attachment_id = attachment_id
                    bdm.save()
                else:
                    if connector is None:
                        connector = self.driver.get_volume_connector(instance)
                    self.volume_api.terminate_connection(context,
                                                         bdm.volume_id,
                                                         connector)

    def _get_power_off_values(self, instance, clean_shutdown):
        """Timeout and retry interval for stopping the guest."""
        if clean_shutdown:
            timeout = compute_utils.get_value_from_system_metadata(
                instance, key='image_os_shutdown_timeout', type=int,
                default=CONF.shutdown_timeout)
            retry_interval = CONF.compute.shutdown_retry_interval
        else:
            timeout = 0
            retry_interval = 0
        return timeout, retry_interval

    def _power_off_instance(self, context, instance, clean_shutdown=True):
        """Stop the instance's guest on this host."""
        share_info = self.share_manager.get_share_info(context, instance)
        timeout, retry_interval = self._get_power_off_values(
            instance, clean_shutdown)
        self.driver.power_off(instance, timeout, retry_interval)
        share_info.deactivate_all()
        try:
            self.share_manager.umount_all(context, instance, share_info)
        except Exception:
            LOG.exception('Failed to unmount shares during power off',
                          instance=instance)

    def shelve_offload_instance(self, context, instance, clean_shutdown,
                                accel_uuids):
        """Remove a shelved instance from the hypervisor."""

        @utils.synchronized(instance.uuid)
        def do_shelve_offload_instance():
            self._shelve_offload_instance(context, instance, clean_shutdown,
                                          accel_uuids=accel_uuids)
        do_shelve_offload_instance()

    def _shelve_offload_instance(self, context, instance, clean_shutdown,
                                 bdms=None, accel_uuids=None):
        LOG.info('Shelve offloading', instance=instance)
        if bdms is None:
            bdms = objects.BlockDeviceMappingList.get_by_instance_uuid(
                context, instance.uuid)
        self._notify_about_instance_usage(context, instance,
                                          'shelve_offload.start')
        compute_utils.notify_about_instance_action(
            context, instance, self.host,
            action=fields.NotificationAction.SHELVE_OFFLOAD,
            phase=fields.NotificationPhase.START, bdms=bdms)

        self._power_off_instance(context, instance, clean_shutdown)
        current_power_state = self._get_power_state(instance)
        network_info = self.network_api.get_instance_nw_info(context, instance)

        ports_id = [vif['id'] for vif in network_info]
        self.network_api.unbind_ports(context, ports_id, detach=False)

        block_device_info = self._get_instance_block_device_info(
            context, instance, bdms=bdms)
        self.driver.destroy(context, instance, network_info,
                            block_device_info)

        # The instance leaves this host: drop its volume connections.
        self._terminate_volume_connections(context, instance, bdms)

        # Release the accelerators held in cyborg.
        if accel_uuids:
            cyclient = cyborg.get_client(context)
            cyclient.delete_arqs_for_instance(instance.uuid)

        # Placement first: whoever polls the API for SHELVED_OFFLOADED (to
        # unshelve, or to schedule more) must find the allocations gone.
        self.rt.delete_allocation_for_shelve_offloaded_instance(context,
                                                                instance)

        instance.power_state = current_power_state
        # The tracker update below needs the new vm_state; host and node are
        # cleared only after it.
        instance.vm_state = vm_states.SHELVED_OFFLOADED
        instance.task_state = None
        instance.save(expected_task_state=[task_states.SHELVING,
                                           task_states.SHELVING_OFFLOADING])

        self._update_resource_tracker(context, instance)

        # No more RPC for this instance to this host.
        self._nil_out_instance_obj_host_and_node(instance)
        instance.save(expected_task_state=None)

        self._delete_scheduler_instance_info(context, instance.uuid)
        self._notify_about_instance_usage(context, instance,
                                          'shelve_offload.end')
        compute_utils.notify_about_instance_action(
            context, instance, self.host,
            action=fields.NotificationAction.SHELVE_OFFLOAD,
            phase=fields.NotificationPhase.END, bdms=bdms)
'''

# Whole lines of MANAGER, for the rewrites of the variants. Each occurs
# once in it.
FREE = '''\
        # Placement first: whoever polls the API for SHELVED_OFFLOADED (to
        # unshelve, or to schedule more) must find the allocations gone.
        self.rt.delete_allocation_for_shelve_offloaded_instance(context,
                                                                instance)
'''
STATE = '''\
        instance.vm_state = vm_states.SHELVED_OFFLOADED
'''
SAVE = '''\
        instance.save(expected_task_state=[task_states.SHELVING,
                                           task_states.SHELVING_OFFLOADING])
'''
NIL_SAVE = '''\
        instance.save(expected_task_state=None)
'''
