"""A resource tracker that keeps its nodes' records and reports them.

The library's :class:`~shelvefix.compute.resource_tracker.ResourceTracker`
counts a node's instances and leaves the node's record and its provider's
inventory to the set-up of each scenario. :class:`NodeResourceTracker`
does what nova's tracker does besides, in its audit
(``update_available_resource``), under the tracker's lock
(``compute_resources``):

* ``_init_compute_node``: the node's record, found by the uuid the driver
  reports and read with deleted rows too; a record of another host, or a
  deleted one, is taken over in one write (host, service and ``deleted``
  saved together: ``_check_for_nodes_rebalance``); none is created;
* the recount of the base class;
* ``_update`` → ``_update_to_placement``: the provider tree read from
  placement (made again if it is gone), the driver's inventory, the
  traits (``COMPUTE_STATUS_DISABLED`` iff the service record, read there
  and then, says disabled: ``_sync_compute_service_disabled_trait``), and
  what changed written with the report client's
  ``update_from_provider_tree``.

Because the service's flag is read under the lock, and compute-1's
``set_host_enabled`` changes the trait under the same lock
(:mod:`shelvefix.compute.host_status`) after the API saved the flag, the
trait the audit writes is never older than the flag the API's update
follows: whichever runs second writes what the record says last.

:class:`NodeDriver` is the virt driver these trackers run with: its nodes
(an ironic driver's hash ring says which) and their fixed inventory.
"""

import os_traits
from oslo_log import log as logging

from shelvefix.compute import collaborators
from shelvefix.compute import resource_tracker
from shelvefix import exception
from shelvefix.objects import compute_node as node_obj

LOG = logging.getLogger(__name__)

#: What the driver reports of each inventory class besides its total.
INVENTORY_FIELDS = {'reserved': 0, 'min_unit': 1, 'step_size': 1,
                    'allocation_ratio': 1.0}


def full_inventory(totals):
    """``{resource class: total}`` as a provider's whole inventory."""
    return {rc: dict(INVENTORY_FIELDS, total=total, max_unit=total)
            for rc, total in sorted(totals.items())}


class NodeDriver(collaborators.RecordingDriver):
    """A virt driver whose nodes are given, each of fixed size.

    :param nodes: ``{node name: node uuid}`` the driver knows
    :param totals: ``{resource class: total}`` of every node
    :param failing: see :class:`~shelvefix.compute.collaborators.
        RecordingDriver`
    :ivar available: the names of the nodes it reports now (an ironic
        driver's hash ring decides them); every known node by default
    """

    def __init__(self, nodes, totals, failing=()):
        super(NodeDriver, self).__init__(failing=failing)
        self.nodes = dict(nodes)
        self.totals = dict(totals)
        self.available = sorted(self.nodes)

    def get_available_nodes(self, refresh=False):
        """The nodes reported now."""
        return list(self.available)

    def get_available_resource(self, nodename):
        """The node's name, uuid and totals."""
        return {'hypervisor_hostname': nodename,
                'uuid': self.nodes[nodename],
                'totals': dict(self.totals)}

    def update_provider_tree(self, provider_tree, nodename,
                             allocations=None):
        """Set the node's inventory in ``provider_tree``."""
        provider_tree.update_inventory(nodename,
                                       full_inventory(self.totals))

    def capabilities_as_traits(self):
        """No capability traits."""
        return {}

    def set_host_enabled(self, enabled):
        """Nothing to tell a hypervisor (as most of nova's drivers)."""
        raise NotImplementedError()


class NodeResourceTracker(resource_tracker.ResourceTracker):
    """A tracker keeping its nodes' records and their providers' report.

    Takes the base class's parameters, and:

    :param node_store: the
        :class:`~shelvefix.objects.compute_node.ComputeNodeStore`
    :param service_store: the
        :class:`~shelvefix.objects.compute_node.ServiceStore`
    :ivar compute_nodes: ``{node name: ComputeNode}``, as nova's (the base
        class maps names to provider uuids: this tracker's nodes are not
        for its evacuation clean-up)
    :ivar service_ref: this host's
        :class:`~shelvefix.objects.compute_node.Service`, once set
    """

    def __init__(self, host, driver=None, reportclient=None,
                 node_store=None, service_store=None, **kwargs):
        kwargs.pop('compute_nodes', None)
        super(NodeResourceTracker, self).__init__(
            host, driver, reportclient=reportclient, **kwargs)
        self.node_store = node_store
        self.service_store = service_store
        self.service_ref = None

    def set_service_ref(self, service_ref):
        """Remember this host's service record (for its id)."""
        self.service_ref = service_ref

    # -- the audit -----------------------------------------------------------

    def update_available_resource(self, context, nodename, startup=False):
        """The node's record, the recount, then its provider's report."""
        resources = self.driver.get_available_resource(nodename)
        with self._semaphore():
            self._init_compute_node(context, resources)
            self._update_available_resource(context, nodename, startup)
            self._update(context, self.compute_nodes[nodename], startup)

    def _init_compute_node(self, context, resources):
        """Find, take over or create the node's record.

        :returns: True if a record was created
        """
        nodename = resources['hypervisor_hostname']
        if nodename in self.compute_nodes:
            return False
        node = self._check_for_nodes_rebalance(context, resources)
        if node is not None:
            self.compute_nodes[nodename] = node
            return False
        node = node_obj.ComputeNode.create(
            self.node_store, resources['uuid'], self.host, nodename,
            service_id=self._service_id())
        self.compute_nodes[nodename] = node
        LOG.info('Compute node record created for %(host)s:%(node)s',
                 {'host': self.host, 'node': nodename})
        return True

    def _service_id(self):
        return self.service_ref.id if self.service_ref else None

    def _check_for_nodes_rebalance(self, context, resources):
        """The node's record, this host's now; None if it has none.

        A record of another host (the hash ring moved the node here) or a
        deleted one (its old host deleted it as an orphan) is taken over:
        host, service and ``deleted`` saved in one write.
        """
        try:
            node = node_obj.ComputeNode.get_by_uuid(
                self.node_store, resources['uuid'], read_deleted='yes')
        except exception.ComputeHostNotFound:
            return None
        if node.host != self.host or node.deleted:
            LOG.info('Compute node %(node)s moving from %(old)s%(deleted)s '
                     'to %(new)s', {'node': node.hypervisor_hostname,
                                    'old': node.host, 'new': self.host,
                                    'deleted': ' (deleted)'
                                    if node.deleted else ''})
            node.host = self.host
            node.service_id = self._service_id()
            node.deleted = False
            node.save()
        return node

    def clean_compute_node_cache(self, compute_nodes_in_db):
        """Forget the nodes whose records are no longer this host's."""
        names = set(node.hypervisor_hostname for node in compute_nodes_in_db)
        for nodename in sorted(set(self.compute_nodes) - names):
            LOG.info('Forgetting compute node %s: its record is not this '
                     "host's", nodename)
            self.remove_node(nodename)

    def remove_node(self, nodename):
        """Stop tracking ``nodename``; its provider leaves the cache."""
        node = self.compute_nodes.pop(nodename, None)
        self.compute_node_usage.pop(nodename, None)
        for uuid in [uuid for uuid, (node_name, _r)
                     in self.tracked_instances.items()
                     if node_name == nodename]:
            del self.tracked_instances[uuid]
        if node is not None:
            self.reportclient.invalidate_resource_provider(node.uuid)

    # -- the report ----------------------------------------------------------

    def _update(self, context, compute_node, startup=False):
        """Report the node to placement."""
        self._update_to_placement(context, compute_node, startup)

    def _update_to_placement(self, context, compute_node, startup):
        nodename = compute_node.hypervisor_hostname
        tree = self.reportclient.get_provider_tree_and_ensure_root(
            context, compute_node.uuid, name=nodename)
        self.driver.update_provider_tree(tree, nodename)
        traits = self._get_traits(context, nodename, provider_tree=tree)
        tree.update_traits(nodename, traits)
        self.reportclient.update_from_provider_tree(context, tree)

    def _get_traits(self, context, nodename, provider_tree):
        """The provider's traits: the driver's, the status trait synced."""
        traits = provider_tree.data(nodename).traits
        traits.update(trait for trait, supported in
                      self.driver.capabilities_as_traits().items()
                      if supported)
        self._sync_compute_service_disabled_trait(context, traits)
        return traits

    def _sync_compute_service_disabled_trait(self, context, traits):
        """Add or drop ``COMPUTE_STATUS_DISABLED`` as the record says now.

        :param traits: a set, changed in place
        """
        trait = os_traits.COMPUTE_STATUS_DISABLED
        try:
            service = node_obj.Service.get_by_compute_host(
                self.service_store, self.host)
        except exception.ComputeHostNotFound:
            LOG.error('No service record for host %s', self.host)
            return
        if service.disabled:
            traits.add(trait)
        else:
            traits.discard(trait)
