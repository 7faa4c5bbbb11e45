"""The compute node's resource tracker, on the shelve and unshelve paths.

:class:`ResourceTracker` keeps, per node, the instances whose resources
the node counts as used (``tracked_instances``), as nova's tracker does,
under the same per-host lock (``COMPUTE_RESOURCE_SEMAPHORE``):

* ``instance_claim`` makes an instance the node's (host and node saved on
  the instance) and counts it; the returned :class:`Claim` undoes both if
  the build fails;
* ``update_usage`` stops counting an instance once its state allows it
  (:func:`~shelvefix.compute.vm_states.allow_resource_removal`), as
  shelve-offload asks;
* ``update_available_resource``, the periodic audit, recounts the node
  from the instances saved on it: every instance on the node counts unless
  its state allows removal. Counting ``SHELVED_OFFLOADED`` as removable
  even while an unshelve is spawning it was bug 2025480.

It also frees allocations in placement for shelve-offload.
"""

from oslo_log import log as logging

from shelvefix.compute import vm_states
from shelvefix.objects import instance as instance_obj
from shelvefix.scheduler.client import report
from shelvefix import utils

LOG = logging.getLogger(__name__)

COMPUTE_RESOURCE_SEMAPHORE = 'compute_resources'


class Claim(object):
    """A claim on a node's resources; a context manager.

    Leaving the ``with`` block by an exception aborts the claim: the node
    stops counting the instance and the instance leaves the node.
    """

    def __init__(self, context, instance, nodename, tracker):
        self.context = context
        self.instance = instance
        self.nodename = nodename
        self.tracker = tracker

    def __enter__(self):
        return self

    def __exit__(self, exc_type, exc_value, traceback):
        if exc_type is not None:
            self.abort()

    def abort(self):
        """Give the claimed resources back."""
        LOG.debug('Aborting claim of instance %s on %s',
                  self.instance.uuid, self.nodename)
        self.tracker.abort_instance_claim(self.context, self.instance,
                                          self.nodename)


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
    :param store: the :class:`~shelvefix.objects.instance.InstanceStore`
        the periodic audit lists the node's instances from
    :param locks: this host's :class:`~shelvefix.utils.Locks` (default:
        its own)
    :ivar tracked_instances: ``{uuid: (node, resources)}`` counted as used
    """

    def __init__(self, host, driver=None, reportclient=None,
                 force_delete_allocations=True, store=None, locks=None):
        self.host = host
        self.driver = driver
        self.reportclient = reportclient or report.SchedulerReportClient()
        self.force_delete_allocations = force_delete_allocations
        self.store = store
        self.locks = locks or utils.Locks()
        self.tracked_instances = {}

    def _semaphore(self):
        return self.locks.lock(COMPUTE_RESOURCE_SEMAPHORE)

    # -- claims ------------------------------------------------------------

    def instance_claim(self, context, instance, nodename, allocations=None,
                       limits=None):
        """Make the instance the node's and count its resources.

        :param allocations: placement's allocations for the instance (kept
            for nova's signature: the resources come from the flavor)
        :param limits: oversubscription limits (nova's signature; unused)
        :returns: a :class:`Claim`
        """
        with self._semaphore():
            if instance.host:
                LOG.warning('Host field should not be set on instance %s '
                            'until resources have been claimed.',
                            instance.uuid)
            self._set_instance_host_and_node(instance, nodename)
            self._update_usage_from_instance(context, instance, nodename)
        return Claim(context, instance, nodename, self)

    def abort_instance_claim(self, context, instance, nodename):
        """Stop counting the instance and take it off the node."""
        with self._semaphore():
            self._update_usage_from_instance(context, instance, nodename,
                                             is_removed=True)
            self._unset_instance_host_and_node(instance)

    def _set_instance_host_and_node(self, instance, nodename):
        instance.host = self.host
        instance.node = nodename
        instance.save()

    def _unset_instance_host_and_node(self, instance):
        instance.host = None
        instance.node = None
        instance.save()

    # -- usage -------------------------------------------------------------

    def update_usage(self, context, instance, nodename):
        """Recount a tracked instance (it goes once its state allows)."""
        with self._semaphore():
            if instance.uuid in self.tracked_instances:
                self._update_usage_from_instance(context, instance, nodename)

    def _update_usage_from_instance(self, context, instance, nodename,
                                    is_removed=False):
        uuid = instance.uuid
        is_new = uuid not in self.tracked_instances
        # An instance seen for the first time (a new one, or one being
        # unshelved) is counted even if its state would allow removal.
        removed = not is_new and (
            is_removed or vm_states.allow_resource_removal(
                vm_state=instance.vm_state, task_state=instance.task_state))
        if is_new:
            self.tracked_instances[uuid] = (nodename,
                                            dict(instance.flavor.resources))
        if removed:
            del self.tracked_instances[uuid]
            LOG.debug('Stopped tracking instance %(uuid)s on %(node)s',
                      {'uuid': uuid, 'node': nodename})

    def usage(self, nodename):
        """Sum of the tracked instances' resources on ``nodename``."""
        total = {}
        for node, resources in list(self.tracked_instances.values()):
            if node != nodename:
                continue
            for rc, amount in resources.items():
                total[rc] = total.get(rc, 0) + amount
        return total

    def tracked_on(self, nodename):
        """The uuids of the instances counted on ``nodename``."""
        return sorted(uuid for uuid, (node, _r)
                      in list(self.tracked_instances.items())
                      if node == nodename)

    # -- the periodic audit --------------------------------------------------

    def update_available_resource(self, context, nodename, startup=False):
        """Recount the node from the instances saved on it.

        :param startup: True at service start (nova's signature)
        """
        with self._semaphore():
            instances = instance_obj.InstanceList.get_by_host_and_node(
                self.store, self.host, nodename)
            self._update_usage_from_instances(context, instances, nodename)

    def _update_usage_from_instances(self, context, instances, nodename):
        for uuid in [uuid for uuid, (node, _r)
                     in self.tracked_instances.items() if node == nodename]:
            del self.tracked_instances[uuid]
        for instance in instances:
            if not vm_states.allow_resource_removal(
                    vm_state=instance.vm_state,
                    task_state=instance.task_state):
                self._update_usage_from_instance(context, instance, nodename)

    # -- placement -----------------------------------------------------------

    def delete_allocation_for_shelve_offloaded_instance(self, context,
                                                        instance):
        """Free the instance's allocations in placement.

        :raises AllocationDeleteFailed: placement did not free them
        :returns: True if allocations were removed, False if there were none
        """
        return self.reportclient.delete_allocation_for_instance(
            context, instance.uuid, force=self.force_delete_allocations)
