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

from shelvefix.compute import claims
from shelvefix.compute import move_claims
from shelvefix.compute import vm_states
from shelvefix.objects import instance as instance_obj
from shelvefix.objects import migration as migration_obj
from shelvefix.scheduler.client import report
from shelvefix import utils

LOG = logging.getLogger(__name__)

COMPUTE_RESOURCE_SEMAPHORE = 'compute_resources'


#: See :class:`shelvefix.compute.claims.Claim`.
Claim = claims.Claim


class ResourceTracker(move_claims.MoveClaims):
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
    :param migration_store: the
        :class:`~shelvefix.objects.migration.MigrationStore` the periodic
        audit lists the node's migrations in progress from (None: no move
        operations on this host)
    :param compute_nodes: ``{node name: resource provider uuid}`` of this
        host's nodes (what an evacuation's clean-up removes)
    :ivar tracked_instances: ``{uuid: (node, resources)}`` counted as used
    :ivar tracked_migrations: ``{instance uuid: migration}`` whose flavor
        the node counts for an instance moving in or out
    :ivar compute_node_usage: ``{node: {resource class: amount}}``, what
        the node counts as used; claims add to it, drops subtract from it
        and the periodic audit recounts it
    """

    def __init__(self, host, driver=None, reportclient=None,
                 force_delete_allocations=True, store=None, locks=None,
                 migration_store=None, compute_nodes=None):
        self.host = host
        self.driver = driver
        self.reportclient = reportclient or report.SchedulerReportClient()
        self.force_delete_allocations = force_delete_allocations
        self.store = store
        self.migration_store = migration_store
        self.locks = locks or utils.Locks()
        self.tracked_instances = {}
        self.tracked_migrations = {}
        self.compute_node_usage = {}
        self.compute_nodes = dict(compute_nodes or {})

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
        return claims.Claim(context, instance, nodename, self)

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
            resources = dict(instance.flavor.resources)
            self.tracked_instances[uuid] = (nodename, resources)
            self._update_usage(resources, nodename)
        if removed:
            _node, resources = self.tracked_instances.pop(uuid)
            self._update_usage(resources, nodename, sign=-1)
            LOG.debug('Stopped tracking instance %(uuid)s on %(node)s',
                      {'uuid': uuid, 'node': nodename})

    def _update_usage(self, resources, nodename, sign=1):
        """Add (``sign`` 1) or subtract (-1) resources from a node's use."""
        used = self.compute_node_usage.setdefault(nodename, {})
        for rc, amount in resources.items():
            used[rc] = used.get(rc, 0) + sign * amount

    def usage(self, nodename):
        """What ``nodename`` counts as used (a negative amount is a bug)."""
        return {rc: amount for rc, amount in
                sorted(self.compute_node_usage.get(nodename, {}).items())
                if amount}

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
            self._update_available_resource(context, nodename, startup)

    def _update_available_resource(self, context, nodename, startup=False):
        """The audit's recount, under the tracker's lock."""
        instances = instance_obj.InstanceList.get_by_host_and_node(
            self.store, self.host, nodename)
        self._update_usage_from_instances(context, instances, nodename)
        if self.migration_store is not None:
            migrations = (
                migration_obj.MigrationList.
                get_in_progress_by_host_and_node(
                    self.migration_store, self.host, nodename))
            self._update_usage_from_migrations(context, migrations,
                                               nodename)

    def _update_usage_from_instances(self, context, instances, nodename):
        for uuid in [uuid for uuid, (node, _r)
                     in self.tracked_instances.items() if node == nodename]:
            del self.tracked_instances[uuid]
        self.compute_node_usage[nodename] = {}
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

    def delete_allocation_for_evacuated_instance(self, context, instance,
                                                 node, node_type='source'):
        """Drop ``node``'s provider from an evacuated instance's allocations.

        A refusal is logged, not raised.
        """
        provider = self.compute_nodes.get(node)
        if provider is None or not (
                self.reportclient.
                remove_provider_tree_from_instance_allocation(
                    context, instance.uuid, provider)):
            LOG.error('Failed to clean the allocations of evacuated '
                      'instance %(uuid)s on the %(type)s node %(node)s',
                      {'uuid': instance.uuid, 'type': node_type,
                       'node': node})

    def finish_evacuation(self, instance, node, migration):
        """The evacuated instance is this node's now; migration ``done``.

        Host and node are saved together with what the rebuild left unsaved
        (the instance ``ACTIVE``, no task), and the node counts the
        instance from then on, in one critical section. nova saves the end
        of the rebuild first, with host and node still the source's: an
        audit in between no longer sees a server being moved, and this
        node then counts nothing for the server it runs until its next
        audit (found by ``shelvefix race --scenario evacuate``).
        """
        with self._semaphore():
            instance.host = self.host
            instance.node = node
            instance.save()
            resources = dict(instance.flavor.resources)
            tracked = self.tracked_migrations.pop(instance.uuid, None)
            if instance.uuid not in self.tracked_instances:
                self.tracked_instances[instance.uuid] = (node, resources)
                if tracked is None:
                    self._update_usage(resources, node)
            if migration is not None:
                migration.status = migration_obj.DONE
                migration.save()
