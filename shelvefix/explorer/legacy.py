"""The pre-fix shelve-offload order, a reproduction for demonstration.

``LegacyComputeManager`` saves ``vm_state = SHELVED_OFFLOADED`` *before*
freeing the allocations, as nova did before change
I2a6ccaff904c1f0759d55feeeef0ec1da32c65df. It exists so that the explorer
and the regression tests can show the bug; it is not, and must never
become, an option of the library's ComputeManager.
"""

from shelvefix.compute import manager
from shelvefix.compute import vm_states


class LegacyComputeManager(manager.ComputeManager):
    """ComputeManager with the state saved before allocations are freed."""

    def _shelve_offload_instance(self, context, instance, clean_shutdown,
                                 bdms=None):
        self._check_offloadable(instance)
        if bdms is None:
            bdms = self.volume_api.get_bdms(context, instance.uuid)
        self._notify_about_instance_usage(context, instance,
                                          'shelve_offload.start')
        self._power_off_instance(context, instance, clean_shutdown)
        current_power_state = self._get_power_state(instance)
        network_info = self.network_api.get_instance_nw_info(context,
                                                             instance)
        self.network_api.unbind_ports(
            context, [vif['id'] for vif in network_info], detach=False)
        self.driver.destroy(context, instance, network_info,
                            self._get_instance_block_device_info(
                                context, instance, bdms=bdms))
        self._terminate_volume_connections(context, instance, bdms)

        instance.power_state = current_power_state
        instance.vm_state = vm_states.SHELVED_OFFLOADED
        instance.task_state = None
        instance.save(expected_task_state=manager.OFFLOADABLE_TASK_STATES)

        # The bug: the offloaded state is already visible to API clients.
        self.rt.delete_allocation_for_shelve_offloaded_instance(context,
                                                                instance)
        self._update_resource_tracker(context, instance)
        self._nil_out_instance_obj_host_and_node(instance)
        instance.save(expected_task_state=None)
        self._delete_scheduler_instance_info(context, instance.uuid)
        self._notify_about_instance_usage(context, instance,
                                          'shelve_offload.end')
