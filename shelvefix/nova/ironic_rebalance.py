"""nova's own compute services handing an ironic node over to each other.

With the ironic driver, several compute services share the baremetal
nodes: a hash ring over the services decides which one manages each node,
and when the ring changes (a service starts or stops) a node moves. The
service that loses it finds in its audit a compute node record of its
own that its driver no longer reports, an orphan, and deletes it (the
record, then its resource provider, allocations and all); the service
that gains it takes the record over (its host changed to its own) and
reports its provider. Run at the same time, the delete may hit what the
other has just taken over (bug 1853009).

:class:`RebalanceRun` starts with one node, ``node-1``, managed by
compute-1: its record is compute-1's, its provider in placement with the
node's inventory, both services having audited once. Then the ring moves
it to compute-2 (:data:`RING`, an input of the scenario: what each
driver's ``get_available_nodes`` and ``get_nodenames_by_uuid`` answer).
The actors, for the ``ironic-rebalance`` scenario (nova's only):

``periodic-1``
    compute-1's ``ComputeManager.update_available_resource``: its node
    records listed, the tracker's cache cleaned of nodes no longer its
    own, then the orphan's clean-up: the record destroyed (nova's
    ``ComputeNode.destroy``, with its host constraint), the tracker's node
    removed, the provider deleted (``delete_resource_provider``,
    ``cascade=True``);
``periodic-2``
    compute-2's: the node's record read (deleted ones too, as nova's
    tracker reads it), taken over (host and service changed, saved, the
    inventory reported, the provider made again if it is gone).

The per-node updates nova runs in a pool run at once in the actor's
thread (:func:`run_now`). The ironic driver is a double
(:class:`~.provider_report.ProviderDriver`) answering as nova's ironic
driver does: ``is_node_deleted`` is false, ironic still has the node. nova
34.0.0 deletes an orphan only if the driver says ironic deleted it (the
guard 947bb5f641 added after the fixes of bug 1853009); a nova without
that guard deletes it whatever the driver says.

The records are :class:`~.node_records.NodeRecords` (each read and write a
step). After the run, each service audits once more, unexplored
(:meth:`RebalanceRun.settle`): nova heals at the next audit what an audit
left half done, the judge looks for what it cannot heal
(:meth:`RebalanceRun.end_labels`): the node has no live record
(:data:`NODE_LOST`), or one that is not compute-2's
(:data:`NOT_TAKEN_OVER`), or its provider is not in placement with the
node's inventory (:data:`PROVIDER_LOST`); what an actor raised is a label.

This module imports nova (see :mod:`shelvefix.nova`).
"""

from concurrent import futures

import fixtures
from nova.compute import rpcapi as compute_rpcapi
from nova import objects
from nova.objects import service as service_obj
from nova.scheduler.client import report

from shelvefix import explorer
from shelvefix.nova import database as database_mod
from shelvefix.nova import doubles
from shelvefix.nova import harness
from shelvefix.nova import lifecycle
from shelvefix.nova import node_records
from shelvefix.nova import program
from shelvefix.nova import provider_report
from shelvefix.objects import instance as instance_obj
from shelvefix import race
from shelvefix.race import outcomes
from shelvefix.race import scenarios
from shelvefix.race import steps
from shelvefix import rpc
from shelvefix import utils

SOURCE = lifecycle.SOURCE
DESTINATION = lifecycle.DESTINATION
HOSTS = lifecycle.HOSTS
INVENTORY = lifecycle.INVENTORY
#: The ironic node's name (nova's ``hypervisor_hostname``).
NODE = 'node-1'
#: Where the run starts: the node managed by compute-1, about to move.
REBALANCING = scenarios.NODE_ON_SOURCE
#: The hash ring, before and after: the hosts that manage the node.
RING = ((SOURCE,), (DESTINATION,))
#: The node has no live compute node record at the end.
NODE_LOST = 'node lost'
#: The node's live record is not compute-2's at the end.
NOT_TAKEN_OVER = 'node not taken over'
#: The node's provider is not in placement at the end, or has not the
#: node's inventory.
PROVIDER_LOST = 'provider lost'


def run_now(executor_type, func, *args, **kwargs):
    """nova's ``spawn_on``, the job run at once in the calling thread.

    :returns: a done ``Future`` with what the job returned or raised
    """
    future = futures.Future()
    try:
        future.set_result(func(*args, **kwargs))
    except Exception as e:
        future.set_exception(e)
    return future


class RebalanceCloud(lifecycle.NovaCloud):
    """nova's compute services sharing an ironic node; one run at a time.

    :param ring: the hosts that manage the node before and after the
        ring changes (:data:`RING`)
    :param says_deleted: the driver of the host that loses the node says
        it was deleted (``is_node_deleted``), as nova's ironic driver does
        not for a node ironic still has; as nova deleted any orphan before
        947bb5f641

    :ivar node_uuid: the node's uuid (its provider's)
    :ivar records: the :class:`~.node_records.NodeRecords`
    """

    def __init__(self, backend='double', ring=RING, says_deleted=False,
                 **kwargs):
        super(RebalanceCloud, self).__init__(backend=backend, **kwargs)
        self.ring = ring
        self.says_deleted = says_deleted

    def _setUp(self):
        super(RebalanceCloud, self)._setUp()
        self.useFixture(provider_report.report_inventory())
        self.records = self.useFixture(
            node_records.NodeRecords(self.database))
        self.useFixture(fixtures.MonkeyPatch(
            'nova.compute.manager.thread_pool_factory.spawn_on', run_now))
        # The orphan's provider delete frees its servers' allocations and
        # those of servers evacuated from it: the node has none.
        database = self.database

        def uuids_by_host_and_node(context, host, node):
            return [row['uuid'] for row in
                    database.store.query(host=host, node=node)]
        self.useFixture(fixtures.MonkeyPatch(
            'nova.objects.instance.InstanceList.get_uuids_by_host_and_node',
            doubles.class_call(uuids_by_host_and_node)))
        self.useFixture(fixtures.MonkeyPatch(
            'nova.objects.migration.MigrationList.get_by_filters',
            doubles.class_call(lambda *args, **kwargs:
                               objects.MigrationList(objects=[]))))
        self.node_uuid = utils.fixed_uuid('ironic-node-1')

    def reset_records(self):
        """The services, and the node's record compute-1's."""
        self.database.compute_nodes.clear()
        for number, host in enumerate(HOSTS, 1):
            record = database_mod.service(host, number)
            record.version = service_obj.SERVICE_VERSION
            record.obj_reset_changes()
            self.database.services[host] = record
        node = database_mod.compute_node(SOURCE, self.node_uuid, 1,
                                         INVENTORY)
        node.hypervisor_hostname = NODE
        node.obj_reset_changes()
        self.database.compute_nodes[self.node_uuid] = node

    def start(self, start=REBALANCING):
        """A fresh :class:`RebalanceRun`; the node's provider made anew."""
        if start != REBALANCING:
            raise ValueError('an ironic-rebalance run starts %r, not %r'
                             % (REBALANCING, start))
        self.locks.reset()
        self.database.events = []
        self.reset_records()
        self.placement.delete_provider(self.node_uuid)
        self.placement.create_provider(NODE, uuid=self.node_uuid,
                                       inventory=INVENTORY)
        self.run = RebalanceRun(self)
        self.arm_faults()
        return self.run


class RebalanceRun(object):
    """One run: the node managed by compute-1, the ring just changed.

    :ivar computes: ``{host: nova ComputeManager}``
    :ivar rts: ``{host: nova ResourceTracker}``
    :ivar drivers: ``{host: ProviderDriver}``
    :ivar providers: ``{host: the node's provider}``: what the run's
        placement requests may touch (:func:`~.program.instrument`); the
        services have no node of their own
    :ivar holdings: no consumer holds anything
    """

    def __init__(self, cloud):
        self.cloud = cloud
        self.node_uuid = cloud.node_uuid
        self.providers = {host: self.node_uuid for host in HOSTS}
        self.holdings = {}
        self.store = instance_obj.InstanceStore()
        cloud.database.store = self.store
        cloud.database.static = {}
        self.transport = rpc.Transport()
        self.events = cloud.database.events
        self.admin = harness.context('setup', is_admin=True)
        self.scheduler_client = report.SchedulerReportClient(
            adapter=cloud.placement.adapter)
        self.computes, self.rts, self.drivers = {}, {}, {}
        before, after = cloud.ring
        for host in HOSTS:
            self._build_host(host, nodes=[NODE] if host in before else [])
        # Each service has audited once, the ring as it was.
        for host in HOSTS:
            self.computes[host].update_available_resource(self.admin)
        # The ring changes: the node moves (ironic still has it).
        for host, driver in self.drivers.items():
            driver.nodes = [NODE] if host in after else []
            if cloud.says_deleted and host not in after:
                driver.deleted_nodes = {NODE}

    def _build_host(self, host, nodes):
        cloud = self.cloud
        driver = provider_report.ProviderDriver(
            host, self.node_uuid, INVENTORY, self.events, nodes=nodes)
        driver.node_uuids = {NODE: self.node_uuid}
        # The ironic driver's: several services share its nodes.
        driver.rebalances_nodes = True
        reportclient = report.SchedulerReportClient(
            adapter=cloud.placement.adapter)
        rt = cloud.tracker_cls(host, driver, reportclient=reportclient)
        rt.set_service_ref(cloud.database.services[host])
        compute = cloud.manager_cls.__new__(cloud.manager_cls)
        compute.host = host
        compute.driver = driver
        compute.rt = rt
        compute.reportclient = reportclient
        compute.notifier = None
        compute.compute_rpcapi = compute_rpcapi.ComputeAPI.__new__(
            compute_rpcapi.ComputeAPI)
        self.computes[host], self.rts[host] = compute, rt
        self.drivers[host] = driver

    # -- the actors ---------------------------------------------------------

    def periodic(self, host):
        """``host``'s ``ComputeManager.update_available_resource``."""
        self.computes[host].update_available_resource(
            harness.context('periodic-%s' % host, is_admin=True))
        return True

    def settle(self):
        """Each service's next audit, unexplored: compute-1's, compute-2's.

        nova heals at the next audit what an audit left half done (a
        record deleted under a take-over is found again and undeleted, a
        provider gone is made again, once the tracker's caches let go of
        them): what the run is judged by is what the audits cannot heal.
        An error of these audits is recorded (:attr:`settle_errors`), the
        end state says the rest.
        """
        self.settle_errors = []
        for host in HOSTS:
            try:
                self.periodic(host)
            except Exception as e:
                self.settle_errors.append((host, type(e).__name__))

    # -- what happened --------------------------------------------------------

    def node(self):
        """The node's record, as the database has it (None: none)."""
        return self.cloud.database.compute_nodes.get(self.node_uuid)

    def inventory(self):
        """``{resource class: total}`` of the node's provider, or None."""
        found = self.cloud.placement.admin_adapter.get(
            '/resource_providers/%s/inventories' % self.node_uuid,
            raise_exc=False)
        if found.status_code == 404:
            return None
        return {rc: inv['total']
                for rc, inv in found.json()['inventories'].items()}

    def end_state(self):
        """What the run ended with.

        :returns: ``{'node': (host, deleted) or None, 'inventory':
            {resource class: total} or None, 'tracked': hosts whose
            tracker has the node, 'settle_errors': [(host, error name)]}``
        """
        node = self.node()
        return {'node': None if node is None else (node.host,
                                                   bool(node.deleted)),
                'inventory': self.inventory(),
                'tracked': sorted(host for host, rt in self.rts.items()
                                  if NODE in rt.compute_nodes),
                'settle_errors': list(getattr(self, 'settle_errors', []))}

    def end_labels(self):
        """The end's labels, :data:`NODE_LOST` to :data:`PROVIDER_LOST`."""
        end = self.end_state()
        labels = []
        if end['node'] is None or end['node'][1]:
            labels.append(NODE_LOST)
        elif end['node'][0] != DESTINATION:
            labels.append(NOT_TAKEN_OVER)
        if end['inventory'] != INVENTORY:
            labels.append(PROVIDER_LOST)
        return labels

    def remove_from_placement(self):
        """Nothing to free: no server holds anything on the node."""


class RebalanceProgram(program.NovaProgram):
    """The ``ironic-rebalance`` scenario on a :class:`RebalanceCloud`.

    :ivar ends: each run's :meth:`~RebalanceRun.end_state`, in order
    """

    hosts = {'periodic-1': SOURCE, 'periodic-2': DESTINATION}

    def __init__(self, cloud, scenario=race.IRONIC_REBALANCE):
        self.cloud = cloud
        self.actors = scenarios.get_scenario(scenario).actor_names
        self.ends = []

    def _actors(self, run, timeout=60.0, done=None):
        return [(name, self.cloud.locks.running(
            self.hosts[name],
            lambda host=self.hosts[name]: run.periodic(host)))
            for name in self.actors]

    def _start(self):
        return self.cloud.start(REBALANCING)

    def _finish(self, run, results):
        run.settle()
        self.ends.append(run.end_state())
        labels = outcomes.actor_labels(results)
        labels += [label for label in run.end_labels()
                   if label not in labels]
        return outcomes.as_outcome(labels)

    def __call__(self, controller):
        run = self._start()
        names = steps.Names([(run.node_uuid, '{node-1}')])
        undo = program.instrument(controller, self.cloud, run, names,
                                  list(self.hosts.values()), 'wait')
        self.cloud.records.controller = controller

        def check(results):
            undo()
            self.cloud.records.controller = None
            return self._finish(run, results)
        return explorer.RunSpec(actors=self._actors(run), check=check)
