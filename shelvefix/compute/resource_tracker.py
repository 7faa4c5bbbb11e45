"""The compute node's resource tracker, reduced to the shelve path."""

import threading

from oslo_log import log as logging

from shelvefix.compute import vm_states
from shelvefix.scheduler.client import report

LOG = logging.getLogger(__name__)


class ResourceTracker(object):
    """Tracks instance usage on one host and frees placement allocations.

    :param host: the compute host name
    :param driver: the virt driver (kept for nova's signature)
    :param reportclient: a ``SchedulerReportClient`` (default: one built
        from the ``[placement]`` options)
    :param force_delete_allocations: how shelve-offload frees allocations.
        True (the default, nova since Ussuri): DELETE /allocations/{uuid}.
        False (nova on Rocky, the bug's branch): GET the consumer generation,
        then PUT empty allocations with it.
    """

    def __init__(self, host, driver=None, reportclient=None,
                 force_delete_allocations=True):
        self.host = host
        self.driver = driver
        self.reportclient = reportclient or report.SchedulerReportClient()
        self.force_delete_allocations = force_delete_allocations
        self.tracked_instances = {}
        self._lock = threading.Lock()

    def instance_claim(self, context, instance, nodename):
        """Start counting an instance's flavor on ``nodename``."""
        with self._lock:
            self.tracked_instances[instance.uuid] = (
                nodename, dict(instance.flavor.resources))

    def usage(self, nodename):
        """Sum of the tracked instances' resources on ``nodename``."""
        with self._lock:
            total = {}
            for node, resources in self.tracked_instances.values():
                if node != nodename:
                    continue
                for rc, amount in resources.items():
                    total[rc] = total.get(rc, 0) + amount
            return total

    def update_usage(self, context, instance, nodename):
        """Stop counting an instance once its state allows it."""
        if not vm_states.allow_resource_removal(instance.vm_state,
                                                instance.task_state):
            return
        with self._lock:
            if self.tracked_instances.pop(instance.uuid, None):
                LOG.debug('Stopped tracking instance %(uuid)s on %(node)s',
                          {'uuid': instance.uuid, 'node': nodename})

    def delete_allocation_for_shelve_offloaded_instance(self, context,
                                                        instance):
        """Free the instance's allocations in placement.

        :raises AllocationDeleteFailed: placement did not free them
        :returns: True if allocations were removed, False if there were none
        """
        return self.reportclient.delete_allocation_for_instance(
            context, instance.uuid, force=self.force_delete_allocations)
