"""nova's inventory report in the lab, and what it needs around it.

The lifecycle harness stubs the tracker's inventory report
(``ResourceTracker._update``): a dozen placement requests per audit that
no shelve or move race involves. The scenarios about what a compute
service reports of its node (``service-disable``, ``ironic-rebalance``)
put nova's own back (:func:`report_inventory`), with:

* a virt driver that reports its node's provider, and whose nodes can
  change (an ironic driver's hash ring): :class:`ProviderDriver`;
* a report client whose provider tree cache, which a compute service's
  actors share, is used step by step: :class:`CachedTreeClient`,
  :class:`SteppedTree` (``provider_tree:<host>``; the steps are those of
  a :class:`~.node_records.NodeRecords`).

This module imports nova (see :mod:`shelvefix.nova`).
"""

import fixtures
from nova.compute import resource_tracker
from nova.scheduler.client import report

from shelvefix.explorer import model
from shelvefix.nova import doubles

#: nova's own inventory report, as imported (the lifecycle harness
#: replaces it while a cloud is set up).
NOVA_UPDATE = resource_tracker.ResourceTracker._update
if getattr(NOVA_UPDATE, '__name__', None) == '<lambda>':
    raise ImportError('shelvefix.nova.provider_report was imported while a '
                      'cloud had stubbed ResourceTracker._update')


def report_inventory():
    """A fixture that puts nova's ``ResourceTracker._update`` back."""
    return fixtures.MonkeyPatch(
        'nova.compute.resource_tracker.ResourceTracker._update', NOVA_UPDATE)


class ProviderDriver(doubles.HostDriver):
    """A :class:`~.doubles.HostDriver` that reports its node's provider.

    What a virt driver's ``update_provider_tree`` does for a node of fixed
    size: its inventory, no traits of its own, no nested providers.

    :param nodes: the names of the nodes the driver reports (None: the
        host's own, named like it); see :attr:`nodes`
    :ivar nodes: what ``get_available_nodes`` answers, changeable (the
        hash ring of an ironic driver)
    :ivar node_uuids: ``{node name: uuid}`` of every node the driver knows
    :ivar deleted_nodes: names of nodes the hypervisor says are deleted
        (``is_node_deleted``)
    """

    def __init__(self, host, node_uuid, inventory, events, nodes=None):
        super(ProviderDriver, self).__init__(host, node_uuid, inventory,
                                             events)
        self.node_uuids = {host: node_uuid}
        self.nodes = [host] if nodes is None else list(nodes)
        self.deleted_nodes = set()

    def get_available_nodes(self, refresh=False):
        """The nodes the driver reports now (:attr:`nodes`)."""
        return list(self.nodes)

    def get_nodenames_by_uuid(self, refresh=False):
        """``{uuid: name}`` of the nodes reported now."""
        return {self.node_uuids[name]: name for name in self.nodes}

    def node_is_available(self, nodename):
        """Whether the driver reports ``nodename`` now."""
        return nodename in self.nodes

    def is_node_deleted(self, nodename):
        """Whether the hypervisor says ``nodename`` was deleted."""
        return nodename in self.deleted_nodes

    def get_available_resource(self, nodename):
        """The node's resources, with its own uuid."""
        resources = super(ProviderDriver, self).get_available_resource(
            nodename)
        resources['uuid'] = self.node_uuids[nodename]
        return resources

    def capabilities_as_traits(self):
        """No capability traits."""
        return {}

    def set_host_enabled(self, enabled):
        """Not implemented, as in most virt drivers."""
        # As most virt drivers: nothing to tell the hypervisor.
        raise NotImplementedError()

    def update_provider_tree(self, provider_tree, nodename, allocations=None):
        """The node's inventory, each class whole and not overcommitted."""
        provider_tree.update_inventory(nodename, {
            rc: {'total': total, 'reserved': 0, 'min_unit': 1,
                 'max_unit': total, 'step_size': 1, 'allocation_ratio': 1.0}
            for rc, total in self.inventory.items()})


class CachedTreeClient(report.SchedulerReportClient):
    """nova's report client, each use of its provider tree cache a step.

    A compute service's report client caches its providers (their
    generations, inventories and traits), and its actors share the cache:
    the audit diffs its report against it, and the trait update writes it.
    Each call on the cache is a step on ``provider_tree:<host>``
    (:class:`SteppedTree`), so that the explorer orders them against the
    other actor's.

    :param records: the :class:`NodeRecords` whose controller steps
    :param host: the compute service's host
    """

    def __init__(self, records, host, adapter):
        self._records = records
        self._host = host
        super(CachedTreeClient, self).__init__(adapter=adapter)

    @property
    def _provider_tree(self):
        return self.__dict__['_cached_tree']

    @_provider_tree.setter
    def _provider_tree(self, tree):
        self.__dict__['_cached_tree'] = SteppedTree(tree, self._records,
                                                    self._host)


class SteppedTree(object):
    """A ``ProviderTree`` whose every call is a step (read or write).

    The calls that change the tree (:data:`WRITES`) write
    ``provider_tree:<host>``, the others read it: two reads commute.
    """

    WRITES = frozenset([
        'new_root', 'new_child', 'remove', 'populate_from_iterable',
        'update_inventory', 'update_traits', 'add_traits', 'remove_traits',
        'update_aggregates', 'add_aggregates', 'remove_aggregates',
        'update_resources'])

    def __init__(self, tree, records, host):
        self._tree = tree
        self._records = records
        self._host = host

    def __getattr__(self, name):
        value = getattr(self._tree, name)
        if not callable(value):
            return value
        write = name in self.WRITES

        def call(*args, **kwargs):
            handle = self._records.step(
                'cache', ['provider_tree:%s' % self._host],
                model.WRITE if write else model.READ,
                'provider tree of %s: %s' % (self._host, name))
            handle.done('changed' if write else 'read')
            return value(*args, **kwargs)
        return call
