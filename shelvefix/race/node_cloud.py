"""Clouds whose compute services keep their nodes' records and providers.

The scenarios about what a compute service reports of itself
(``service-disable``, ``ironic-rebalance``) need what the other clouds do
without: service and compute node records
(:mod:`shelvefix.objects.compute_node`), trackers that report their nodes
to placement (:class:`~shelvefix.compute.nodes.NodeResourceTracker`, each
host's report client with its own provider cache, as each nova-compute
has), and the manager's node audit
(:mod:`shelvefix.compute.node_manager`). :class:`NodeCloud` wires them on
:class:`~shelvefix.race.cloud.TwoHosts`, and makes each read and write of
the records an explorer step too (kinds ``service`` and
``compute_node``).

:class:`ServiceCloud` starts a ``service-disable`` run: compute-1 and
compute-2 each with its own node (the node's provider is the host's),
both services audited, then a server booted on compute-1 (its claim
moves the provider's generation past compute-1's cache), compute-1's
service enabled (disabled, its provider with the trait, with
``enabling``). :class:`RebalanceCloud` starts an ``ironic-rebalance`` run:
one ironic node of compute-1's (record and provider), both services
audited, then the hash ring's move of the node to compute-2 (what each
driver reports).
"""

import os_traits
from oslo_utils import uuidutils

from shelvefix.compute import host_api
from shelvefix.compute import manager as manager_mod
from shelvefix.compute import nodes
from shelvefix.compute import rpcapi
from shelvefix.compute import vm_states
from shelvefix import context
from shelvefix import exception
from shelvefix.explorer import model
from shelvefix.objects import compute_node as node_obj
from shelvefix.race import cloud as cloud_mod
from shelvefix.race import scenario
from shelvefix.race import steps
from shelvefix.scheduler.client import report

SOURCE = cloud_mod.SOURCE
DESTINATION = cloud_mod.DESTINATION
HOSTS = cloud_mod.HOSTS
#: Every node's size.
TOTALS = scenario.INVENTORY
TRAIT = os_traits.COMPUTE_STATUS_DISABLED
#: The ring before and after: the hosts whose driver reports the node.
RING = ((SOURCE,), (DESTINATION,))


class TreeStepper(object):
    """A service's provider tree cache's interceptor: a step per access.

    Reads (``data``, ``copy``, ...) read ``provider_tree:<host>``, the
    other accesses write it: the cache is what the compute service's
    actors (its audit, and the API's call to it) share.
    """

    def __init__(self, controller, host):
        self.controller = controller
        self.host = host

    def __call__(self, name, write):
        return self.controller.step(
            'cache', frozenset(['provider_tree:%s' % self.host]),
            access=model.WRITE if write else model.READ,
            label='provider tree of %s: %s' % (self.host, name))


class NodeCloud(cloud_mod.TwoHosts):
    """Two hosts reporting their nodes, with records and a report client each.

    :param placement: a set-up placement fixture
    :param providers: ``(src, dst)``: the providers the run's placement
        requests may touch
    :param driver_nodes: ``{host: {node name: node uuid}}`` each host's
        driver knows
    :param sleep: what the report clients wait between retries with
    :param disabled: the hosts whose service record starts disabled
    :ivar services: the :class:`~shelvefix.objects.compute_node.ServiceStore`
    :ivar compute_node_store: the
        :class:`~shelvefix.objects.compute_node.ComputeNodeStore`
    :ivar drivers: ``{host: NodeDriver}``
    :ivar clients: ``{host: its compute service's report client}``
    """

    def __init__(self, placement, providers, driver_nodes, sleep=None,
                 disabled=()):
        self.services = node_obj.ServiceStore()
        self.compute_node_store = node_obj.ComputeNodeStore()
        self.drivers = {host: nodes.NodeDriver(driver_nodes[host], TOTALS)
                        for host in HOSTS}

        def client():
            return report.SchedulerReportClient(
                adapter=placement.adapter, conf=placement.conf, sleep=sleep)
        self._wire(placement, providers, client(), manager_mod.ComputeManager,
                   nodes.NodeResourceTracker, lambda host: (
                       {'driver': self.drivers[host],
                        'node_store': self.compute_node_store,
                        'service_store': self.services},
                       {'driver': self.drivers[host],
                        'compute_rpcapi': self.compute_rpcapi}))
        self.clients = {}
        for number, host in enumerate(HOSTS, 1):
            self.clients[host] = client()
            self.rts[host].reportclient = self.clients[host]
            self.computes[host].reportclient = self.clients[host]
            self.rts[host].set_service_ref(node_obj.Service.create(
                self.services, uuidutils.generate_uuid(), host, number,
                disabled=host in disabled,
                disabled_reason='maintenance' if host in disabled else None))
            self.transport.serve_calls(rpcapi.TOPIC, host,
                                       self.computes[host])
        self.host_api = host_api.HostAPI(self.compute_rpcapi, self.services)

    def names(self):
        """The run's :class:`~shelvefix.race.steps.Names` of its records."""
        return [(self.rts[host].service_ref.uuid, '{service %s}' % host)
                for host in HOSTS]

    def instrument(self, controller, names, holdings, wait_label,
                   actor_hosts):
        """As :meth:`TwoHosts.instrument`, the records' accesses too."""
        undo = super(NodeCloud, self).instrument(
            controller, names, holdings, wait_label, actor_hosts)
        stores = [(self.services, 'service'),
                  (self.compute_node_store, 'compute_node')]
        for store, kind in stores:
            store.interceptor = steps.StoreStepper(
                controller, store, wait_label, names, kind=kind)
        trees = [self.clients[host]._provider_tree for host in HOSTS]
        for host, tree in zip(HOSTS, trees):
            tree.interceptor = TreeStepper(controller, host)

        def undo_all():
            undo()
            for target in [store for store, _kind in stores] + trees:
                target.interceptor = None
        return undo_all

    def audit(self, host):
        """``host``'s ``ComputeManager.update_available_resource``."""
        self.computes[host].update_available_resource(self.ctx)
        return True

    def service(self, host=SOURCE):
        """``host``'s service record as saved."""
        return node_obj.Service.get_by_compute_host(self.services, host)

    def traits(self, rp_uuid):
        """The traits placement has on a provider (a fresh read)."""
        return self.client.get_provider_traits(
            context.get_admin_context(), rp_uuid).traits


class ServiceCloud(NodeCloud):
    """A ``service-disable`` run: compute-1's service about to change.

    :param enabling: compute-1's service starts disabled and the API
        enables it (the ``enabled-again`` cell)
    """

    def __init__(self, placement, providers, enabling=False, sleep=None):
        self.enabling = enabling
        super(ServiceCloud, self).__init__(
            placement, providers,
            {host: {host: rp} for host, rp in zip(HOSTS, providers)},
            sleep=sleep, disabled=(SOURCE,) if enabling else ())
        # Both services audit (their caches hold their providers), then
        # a server boots on compute-1: the scheduler's claim moves the
        # provider's generation past compute-1's cached one (the start of
        # bug 1886418); compute-1's audit counts it from its next run.
        for host in HOSTS:
            self.audit(host)
        self.instance = self._server_on_source(vm_state=vm_states.ACTIVE)

    def update_service(self):
        """The API's ``PUT /os-services/{id}`` of compute-1's service."""
        self.host_api.update_service_status(
            self.ctx, SOURCE, disabled=not self.enabling,
            disabled_reason='maintenance')
        return True

    def tracked(self):
        """``{host: uuids}`` compute-1's tracker counts on its node."""
        return {SOURCE: self.rts[SOURCE].tracked_on(SOURCE)}

    def remove_from_placement(self):
        """Free the server's allocations; no trait left on compute-1."""
        admin = context.get_admin_context()
        self.client.delete_allocation_for_instance(admin, self.instance.uuid,
                                                   force=True)
        self.placement.set_traits(self.providers[SOURCE], [])


class RebalanceCloud(NodeCloud):
    """An ``ironic-rebalance`` run: the ring has just moved the node.

    :param node: ``(name, uuid)`` of the ironic node (its provider is
        made again by compute-1's first audit)
    :param ring: the hosts that manage the node before and after
    """

    def __init__(self, placement, node, ring=RING, sleep=None):
        self.node_name, self.node_uuid = node
        before, after = ring
        super(RebalanceCloud, self).__init__(
            placement, (self.node_uuid, self.node_uuid),
            {host: {self.node_name: self.node_uuid} for host in HOSTS},
            sleep=sleep)
        self.instance = None
        placement.delete_provider(self.node_uuid)
        for host in HOSTS:
            self.drivers[host].available = (
                [self.node_name] if host in before else [])
        for host in HOSTS:
            self.audit(host)
        for host in HOSTS:
            self.drivers[host].available = (
                [self.node_name] if host in after else [])

    def settle(self):
        """Each service's next audit, unexplored; their errors by host."""
        errors = {}
        for host in HOSTS:
            try:
                self.audit(host)
            except Exception as e:
                errors[host] = type(e).__name__
        return errors

    def node(self):
        """The node's record as saved (deleted too), or None."""
        try:
            return node_obj.ComputeNode(
                self.compute_node_store,
                **self.compute_node_store.peek(self.node_uuid))
        except exception.ComputeHostNotFound:
            return None

    def inventory(self):
        """``{resource class: total}`` of the node's provider, or None."""
        found = self.placement.admin_adapter.get(
            '/resource_providers/%s/inventories' % self.node_uuid)
        if found.status_code == 404:
            return None
        return {rc: inv['total']
                for rc, inv in found.json()['inventories'].items()}

    def tracking(self):
        """The hosts whose tracker has the node, sorted."""
        return sorted(host for host in HOSTS
                      if self.node_name in self.rts[host].compute_nodes)
