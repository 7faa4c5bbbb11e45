"""nova's own API disabling a compute service, against the service's audit.

An operator disables compute-1's service (``PUT /os-services/{id}``,
microversion 2.53, ``status: disabled``). nova saves the service record,
then asks compute-1 to add the ``COMPUTE_STATUS_DISABLED`` trait to its
node's resource provider, so that the scheduler's placement query leaves
the host out. Meanwhile compute-1's periodic audit reports the node's
provider too: its inventory and traits, the trait among them, read from
the service record. Both write the provider's traits with a provider
generation, which any write to the provider bumps, a server's allocations
included.

:class:`ServiceDisableRun` starts with both services enabled, both trackers
having audited their node once (the provider tree of compute-1's report
client then cached, with its generation), and a server that has booted on
compute-1 since: the scheduler's claim bumped the provider's generation
past the cached one (the sequence of bug 1886418). In the
``enabled-again`` cell compute-1's service starts disabled, its provider
with the trait, and the API enables it: the trait is removed. The actors,
for the ``service-disable`` scenario (nova's only):

``api``
    nova's ``ServiceController.update``: the service read, then
    ``HostAPI.service_update``: the record saved, then the RPC call
    ``set_host_enabled`` to compute-1 (run at once under compute-1's
    locks, :mod:`~.bus`): compute-1's ``set_host_enabled``, its
    ``_update_compute_provider_status`` and the virt API's
    ``update_compute_provider_status`` (the provider's traits read, the
    trait added with a ``PUT`` of the traits); an error of that update
    nova logs and swallows, the lab records it
    (:data:`TRAIT_UPDATE_FAILED`);
``periodic-1``
    compute-1's ``ResourceTracker.update_available_resource``, with
    nova's inventory report (``_update``, which the other scenarios stub):
    the provider tree refreshed, the driver's inventory, the traits
    (``COMPUTE_STATUS_DISABLED`` per the service record it reads), and
    what changed written to placement.

The service and compute node records are :class:`~.node_records.
NodeRecords`: each read and save is a step; so is each use of compute-1's
provider tree cache, which both actors share (its report client is a
:class:`~.provider_report.CachedTreeClient`).

The judge (:meth:`ServiceDisableRun.end_labels`): at the end, the
provider carries the trait iff the service is disabled (:data:`OUT_OF_SYNC`
otherwise), and what either actor raised is a label, as everywhere.

nova 34.0.0 ends out of sync in a few runs: the audit reads the service
still enabled, the API then adds the trait (and leaves the provider's new
generation in the shared cache), and the audit's report removes the trait
with that generation; the next audit would put it back.

This module imports nova (see :mod:`shelvefix.nova`).
"""

import fixtures
from nova.api.openstack import api_version_request
from nova.api.openstack.compute import services as services_api
from nova.api.openstack import wsgi
from nova.compute import api as compute_api
from nova.compute import manager as nova_manager
from nova.compute import power_state
from nova.compute import rpcapi as compute_rpcapi
from nova.compute import vm_states
from nova import exception as nova_exception
from nova import objects
from nova.objects import service as service_obj
import os_traits
from oslo_messaging import opts as messaging_opts
from oslo_utils import timeutils
from oslo_utils import uuidutils

from shelvefix import explorer
from shelvefix.nova import database as database_mod
from shelvefix.nova import doubles
from shelvefix.nova import harness
from shelvefix.nova import lifecycle
from shelvefix.nova import node_records
from shelvefix.nova import program
from shelvefix.nova import provider_report
from shelvefix import race
from shelvefix.race import outcomes
from shelvefix.race import scenarios
from shelvefix.race import steps

SOURCE = lifecycle.SOURCE
DESTINATION = lifecycle.DESTINATION
HOSTS = lifecycle.HOSTS
INVENTORY = lifecycle.INVENTORY
#: Where the run starts: a server ``ACTIVE`` on compute-1.
ACTIVE_ON_SOURCE = scenarios.ACTIVE_ON_SOURCE
TRAIT = os_traits.COMPUTE_STATUS_DISABLED
#: The microversion the API's client asks for: services by uuid.
MICROVERSION = '2.53'
#: The provider's traits and the service's ``disabled`` disagree at the
#: end: the scheduler sends servers to a disabled host, or leaves out an
#: enabled one.
OUT_OF_SYNC = 'trait out of sync'
#: What the run records when nova swallows an error of the trait update.
TRAIT_UPDATE_FAILED = 'trait update failed'


class ServiceGroup(object):
    """nova's servicegroup API: every service has just reported."""

    def service_is_up(self, service):
        """Up: it has just reported."""
        return True

    def get_updated_time(self, service):
        """When the record was last saved."""
        return service.updated_at


class HostAPI(compute_api.HostAPI):
    """nova's ``HostAPI``, reading the service from the run's records."""

    def __init__(self, records):
        super(HostAPI, self).__init__(
            rpcapi=compute_rpcapi.ComputeAPI.__new__(
                compute_rpcapi.ComputeAPI),
            servicegroup_api=ServiceGroup())
        self.records = records

    def service_get_by_id(self, context, service_id):
        """The record whose uuid is ``service_id`` (a step)."""
        for host, record in sorted(self.records.database.services.items()):
            if record.uuid == service_id:
                return self.records.service_by_host(context, host)
        raise nova_exception.ServiceNotFound(service_id=service_id)


class ServiceDisableCloud(lifecycle.NovaCloud):
    """nova's services, with nova's inventory report and stepped records.

    Both hosts' services enabled (but with ``enabling``), no trait on
    the providers; one :class:`ServiceDisableRun` at a time.

    :param enabling: compute-1's service starts disabled (its provider
        with the trait, as its audit reported it), and the API enables it
        again (the ``enabled-again`` cell)

    :ivar records: the :class:`~.node_records.NodeRecords`
    """

    def __init__(self, backend='double', enabling=False, **kwargs):
        super(ServiceDisableCloud, self).__init__(backend=backend, **kwargs)
        self.enabling = enabling

    def _setUp(self):
        super(ServiceDisableCloud, self)._setUp()
        self.useFixture(provider_report.report_inventory())
        self.records = self.useFixture(
            node_records.NodeRecords(self.database))
        self.placement.set_traits(self.providers[SOURCE], [])
        # The compute RPC API's call reads oslo.messaging's reply timeout.
        conf = self.useFixture(harness.NovaConfig())
        conf.register_opts([opt for group, opts in messaging_opts.list_opts()
                            if group is None for opt in opts
                            if opt.name == 'rpc_response_timeout'])
        # The API's answer names the service's zone: no aggregate has one.
        self.useFixture(fixtures.MonkeyPatch(
            'nova.objects.aggregate.AggregateList.get_by_metadata_key',
            doubles.class_call(lambda *args, **kwargs:
                               objects.AggregateList(objects=[]))))

    def reset_records(self):
        """The services (compute-1's disabled if :attr:`enabling`), nodes."""
        for number, host in enumerate(HOSTS, 1):
            record = database_mod.service(
                host, number, disabled=self.enabling and host == SOURCE)
            record.version = service_obj.SERVICE_VERSION
            record.obj_reset_changes()
            self.database.services[host] = record
            self.database.compute_nodes[self.providers[host]] = (
                database_mod.compute_node(host, self.providers[host],
                                          number, INVENTORY))

    def start(self, start=ACTIVE_ON_SOURCE, run_cls=None):
        """A fresh run (a :class:`ServiceDisableRun`, or ``run_cls``)."""
        self.locks.reset()
        self.database.events = []
        self.reset_records()
        self.run = (run_cls or ServiceDisableRun)(self, start)
        self.router.transport = self.run.transport
        self.arm_faults()
        return self.run


def recorded(events, func):
    """``func``, recording in ``events`` what it raises (raised on)."""
    def call(*args, **kwargs):
        try:
            return func(*args, **kwargs)
        except Exception as e:
            events.append((TRAIT_UPDATE_FAILED, type(e).__name__))
            raise
    return call


class ServiceDisableRun(lifecycle.Run):
    """One run: the services as the cell has them, a server just booted."""

    def _build_host(self, host):
        super(ServiceDisableRun, self)._build_host(host)
        compute = self.computes[host]
        driver = provider_report.ProviderDriver(
            host, self.providers[host], INVENTORY, self.events)
        compute.driver = self.rts[host].driver = driver
        compute.reportclient = self.rts[host].reportclient = (
            provider_report.CachedTreeClient(
                self.cloud.records, host, self.cloud.placement.adapter))
        compute.virtapi = nova_manager.ComputeVirtAPI(compute)
        # nova logs and swallows the update's errors: the run sees them.
        compute.virtapi.update_compute_provider_status = recorded(
            self.events, compute.virtapi.update_compute_provider_status)

    def _create_instance(self, start):
        if start != ACTIVE_ON_SOURCE:
            raise ValueError('a service-disable run starts %r, not %r'
                             % (ACTIVE_ON_SOURCE, start))
        # The trackers' audits report the nodes (the provider trees
        # cached), then a server boots on compute-1: the scheduler's claim
        # bumps the provider's generation.
        for host in HOSTS:
            self.rts[host].update_available_resource(self.admin, host)
        uuid = uuidutils.generate_uuid()
        self.cloud.database.static = lifecycle.static_fields(uuid)
        self.store.create({
            'id': 1, 'uuid': uuid, 'project_id': harness.PROJECT,
            'user_id': harness.USER, 'availability_zone': 'nova',
            'vm_state': vm_states.ACTIVE, 'task_state': None,
            'power_state': power_state.RUNNING, 'host': SOURCE,
            'node': SOURCE, 'launched_on': SOURCE, 'compute_id': 1,
            'launched_at': timeutils.utcnow(),
        })
        harness.NovaShelveScenario.assert_claimed(
            self.scheduler_client.claim_resources(
                self.admin, uuid, {'allocations': {self.providers[SOURCE]: {
                    'resources': dict(harness.RESOURCES)}}},
                harness.PROJECT, harness.USER, harness.CLAIM_VERSION))
        self.computes[SOURCE].driver.running.add(uuid)
        self.holdings = {uuid: {self.providers[SOURCE]}}
        self.cloud.router.endpoints[SOURCE] = (
            lambda func: self.cloud.locks.running(SOURCE, func),
            self.computes[SOURCE])
        return uuid

    # -- the actors ---------------------------------------------------------

    def update_service(self, status=None):
        """The API's ``PUT /os-services/{id}`` of compute-1's service.

        :param status: ``disabled`` or ``enabled``; by default what the
            cloud's cell does (:attr:`ServiceDisableCloud.enabling`)
        """
        if status is None:
            status = 'enabled' if self.cloud.enabling else 'disabled'
        context = harness.context('api', is_admin=True)
        context.can = lambda *args, **kwargs: True
        service_id = self.cloud.database.services[SOURCE].uuid
        request = wsgi.Request.blank('/v2.1/os-services/%s' % service_id,
                                     method='PUT')
        request.environ['nova.context'] = context
        request.api_version_request = api_version_request.APIVersionRequest(
            MICROVERSION)
        controller = services_api.ServiceController.__new__(
            services_api.ServiceController)
        controller.host_api = HostAPI(self.cloud.records)
        controller.servicegroup_api = ServiceGroup()
        body = {'status': status}
        if status == 'disabled':
            body['disabled_reason'] = 'maintenance'
        controller.update(request, service_id, body=body)
        return True

    # -- what happened --------------------------------------------------------

    def traits(self, host=SOURCE):
        """The traits placement has on ``host``'s node provider."""
        return set(self.scheduler_client.get_provider_traits(
            self.admin, self.providers[host]).traits)

    def end_state(self):
        """``{'disabled': bool, 'trait': bool, 'failed': [error names]}``."""
        return {
            'disabled': self.cloud.database.services[SOURCE].disabled,
            'trait': TRAIT in self.traits(),
            'failed': [name for event, name in
                       (e for e in self.events if len(e) == 2)
                       if event == TRAIT_UPDATE_FAILED],
        }

    def end_labels(self):
        """:data:`OUT_OF_SYNC` if the trait and the service disagree.

        An error of the trait update that nova swallowed (it logs it and
        leaves the trait to the next audit) is judged by what it left: if
        the trait ends out of sync, it is the API's error too (``api
        error: ResourceProviderUpdateConflict``); if the audit put the
        trait right within the run, it is only recorded
        (:meth:`end_state`).
        """
        end = self.end_state()
        if end['trait'] == end['disabled']:
            return []
        return [OUT_OF_SYNC] + [outcomes.ACTOR_ERROR % ('api', name)
                                for name in sorted(set(end['failed']))]

    def remove_from_placement(self):
        """Free the server's allocations; no trait on the provider."""
        super(ServiceDisableRun, self).remove_from_placement()
        self.cloud.placement.set_traits(self.providers[SOURCE], [])


class ServiceDisableProgram(program.NovaProgram):
    """The ``service-disable`` scenario on a :class:`ServiceDisableCloud`.

    :ivar ends: each run's :meth:`~ServiceDisableRun.end_state`, in order
    """

    #: The actors, and the service each runs for (the API's call runs on
    #: compute-1's service too).
    hosts = {'api': lifecycle.CONDUCTOR, 'periodic-1': SOURCE}

    def __init__(self, cloud, scenario=race.SERVICE_DISABLE):
        self.cloud = cloud
        self.actors = scenarios.get_scenario(scenario).actor_names
        self.ends = []

    def _actors(self, run, timeout=60.0, done=None):
        funcs = {'api': run.update_service,
                 'periodic-1': lambda: run.periodic(SOURCE)}
        return [(name, self.cloud.locks.running(self.hosts[name],
                                                funcs[name]))
                for name in self.actors]

    def _start(self):
        return self.cloud.start(ACTIVE_ON_SOURCE)

    def _finish(self, run, results):
        try:
            self.ends.append(run.end_state())
            labels = outcomes.actor_labels(results)
            labels += [label for label in run.end_labels()
                       if label not in labels]
            return outcomes.as_outcome(labels)
        finally:
            run.remove_from_placement()

    def __call__(self, controller):
        run = self._start()
        names = steps.Names([
            (run.uuid, '{instance}'),
            (run.providers[SOURCE], '{compute-1}'),
            (run.providers[DESTINATION], '{compute-2}')])
        undo = program.instrument(
            controller, self.cloud, run, names,
            list(self.hosts.values()) + [SOURCE], 'wait')
        self.cloud.records.controller = controller

        def check(results):
            undo()
            self.cloud.records.controller = None
            return self._finish(run, results)
        return explorer.RunSpec(actors=self._actors(run), check=check)
