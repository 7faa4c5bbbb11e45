"""The trimmed copy of nova 18.3.0's compute manager, and lines of it.

:data:`MANAGER` is ``nova/compute/manager.py`` from the nova 18.3.0 wheel,
the last Rocky release on PyPI, trimmed like :mod:`.nova_34`: still the
legacy order, the free made through ``rt = self._get_resource_tracker()``
after the save. The backported order is rebuilt by
:func:`.releases.rocky_backport`; the Pike shape (nova 16.1.8, no
``context`` argument) by :func:`.releases.pike_16_1_8`.
"""

MANAGER = '''\
"""The compute service's manager (trimmed).

Trimmed copy of nova 18.3.0 (Rocky) nova/compute/manager.py:
ComputeManager's _shelve_offload_instance and the methods it reaches.
"""

from oslo_log import log as logging

from nova.compute import power_state
from nova.compute import resource_tracker
from nova.compute import task_states
from nova.compute import utils as compute_utils
from nova.compute import vm_states
import nova.conf
from nova import exception
from nova import manager
from nova import objects
from nova.objects import fields
from nova import utils
from nova.virt import block_device as driver_block_device
from nova.virt import driver

CONF = nova.conf.CONF

LOG = logging.getLogger(__name__)


class ComputeManager(manager.Manager):
    """Runs the instances of one compute host."""

    def _get_resource_tracker(self):
        if not self._resource_tracker:
            rt = resource_tracker.ResourceTracker(self.host, self.driver)
            self._resource_tracker = rt
        return self._resource_tracker

    def _update_resource_tracker(self, context, instance):
        """Tell the resource tracker the instance's state changed."""
        if instance.host == self.host:
            rt = self._get_resource_tracker()
            rt.update_usage(context, instance, instance.node)

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
        # No host means no aggregate, so no availability zone either.
        instance.availability_zone = None

    def _get_power_state(self, context, instance):
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
        self.scheduler_client.delete_instance_info(context, self.host,
                                                   instance_uuid)

    def _notify_about_instance_usage(self, context, instance, event_suffix,
                                     network_info=None, extra_usage_info=None,
                                     fault=None):
        compute_utils.notify_about_instance_usage(
            self.notifier, context, instance, event_suffix,
            network_info=network_info, extra_usage_info=extra_usage_info,
            fault=fault)

    def _block_device_info_to_legacy(self, block_device_info):
        """Rewrite block device info for drivers wanting the old form."""
        if self.use_legacy_block_device_info:
            mapping = driver_block_device.legacy_block_devices(
                driver.block_device_info_get_mapping(block_device_info))
            block_device_info.update({'block_device_mapping': mapping})

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
        self._block_device_info_to_legacy(block_device_info)
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

    def _get_power_off_values(self, context, instance, clean_shutdown):
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
        timeout, retry_interval = self._get_power_off_values(
            context, instance, clean_shutdown)
        self.driver.power_off(instance, timeout, retry_interval)

    def shelve_offload_instance(self, context, instance, clean_shutdown):
        """Remove a shelved instance from the hypervisor."""

        @utils.synchronized(instance.uuid)
        def do_shelve_offload_instance():
            self._shelve_offload_instance(context, instance, clean_shutdown)
        do_shelve_offload_instance()

    def _shelve_offload_instance(self, context, instance, clean_shutdown,
                                 bdms=None):
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
        current_power_state = self._get_power_state(context, instance)

        self.network_api.cleanup_instance_network_on_host(context, instance,
                                                          instance.host)
        network_info = self.network_api.get_instance_nw_info(context, instance)

        block_device_info = self._get_instance_block_device_info(
            context, instance, bdms=bdms)
        self.driver.destroy(context, instance, network_info,
                            block_device_info)

        # The instance leaves this host: drop its volume connections.
        self._terminate_volume_connections(context, instance, bdms)

        instance.power_state = current_power_state
        # The tracker update below needs the new vm_state; host and node are
        # cleared only after it.
        instance.vm_state = vm_states.SHELVED_OFFLOADED
        instance.task_state = None
        instance.save(expected_task_state=[task_states.SHELVING,
                                           task_states.SHELVING_OFFLOADING])

        # Free the resources held in the resource tracker.
        self._update_resource_tracker(context, instance)

        rt = self._get_resource_tracker()
        rt.delete_allocation_for_shelve_offloaded_instance(context, instance)

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
        rt = self._get_resource_tracker()
        rt.delete_allocation_for_shelve_offloaded_instance(context, instance)
'''
POWER_STATE = '''\
        instance.power_state = current_power_state
'''
