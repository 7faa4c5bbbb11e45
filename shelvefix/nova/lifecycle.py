"""nova's own services around one server: the whole shelve/unshelve path.

:class:`NovaCloud` is the nova counterpart of
:class:`shelvefix.race.cloud.Cloud`: two compute hosts (``compute-1``, the
source, drained, and ``compute-2``), a conductor and a scheduler, the RPC
transport between them, the instance store (the database) and a placement
backend. What runs is nova's code, from the installed release:

* on each host, ``ComputeManager.shelve_offload_instance`` and
  ``unshelve_instance`` (with ``_shelve_offload_instance`` and
  ``_unshelve_instance``), and a ``ResourceTracker`` of its own, whose
  ``update_available_resource`` is the periodic audit, down to
  ``_update_usage_from_instances`` and
  ``_remove_deleted_instances_allocations``; each service has its own
  ``SchedulerReportClient`` on the placement fixture's keystoneauth1
  adapter, and its own locks (:class:`~.doubles.ServiceLocks`);
* the conductor's ``ComputeTaskManager.unshelve_instance``, which calls
  the scheduler's ``select_destinations`` (request filters, ``GET
  /allocation_candidates``, the host manager's filters and weighers,
  ``claim_resources``), then casts ``unshelve_instance``; before it, the
  API's part of an unshelve (:func:`shelvefix.race.client.unshelve`).

Stubbed (they need a database, a hypervisor, RPC or another service):

* the databases: see :mod:`shelvefix.nova.database`;
* the virt driver, neutron and the scheduler's RPC API
  (:mod:`shelvefix.nova.doubles`); the compute RPC API's router puts
  casts on a :class:`shelvefix.rpc.Transport`;
* ``ResourceTracker._update``, the inventory report (a dozen requests
  per call, none about allocations): the providers are made with their
  inventory before the runs, compute-1's with ``COMPUTE_STATUS_DISABLED``
  as the report sets it for a disabled service, and each tracker's
  ``provider_tree`` holds its node's provider, as the report leaves it;
* ``report_client_singleton``, so the scheduler (and the conductor) use
  the scheduler's report client on the fixture's adapter;
* the managers' ``__init__`` (they load a virt driver, RPC clients and
  notifiers): the attributes the path reads are set instead. The
  scheduler's ``HostManager`` is nova's, with ``[filter_scheduler]
  track_instance_changes = False`` (its start-up load of every host's
  instances reads the database from a thread of its own).

Each run gets new services, instance store, transport and locks
(:meth:`NovaCloud.start`) and its server; each tracker audits once.

This module imports nova (see :mod:`shelvefix.nova`).
"""

import fixtures
from nova.compute import manager as nova_manager
from nova.compute import power_state
from nova.compute import provider_tree
from nova.compute import resource_tracker
from nova.compute import rpcapi as compute_rpcapi
from nova.compute import task_states
from nova.compute import vm_states
from nova.conductor import manager as conductor_manager
from nova.network import model as network_model
from nova import objects
from nova.scheduler.client import report
from nova.scheduler import host_manager
from nova.scheduler import manager as scheduler_manager
import os_traits
from oslo_utils import uuidutils

from shelvefix import backends
from shelvefix.nova import database as database_mod
from shelvefix.nova import doubles
from shelvefix.nova import harness
from shelvefix.objects import instance as instance_obj
from shelvefix.race import client
from shelvefix import rpc
from shelvefix import utils

SOURCE = 'compute-1'
DESTINATION = 'compute-2'
HOSTS = (SOURCE, DESTINATION)
CONDUCTOR = 'conductor'
ON_SOURCE = 'on-source'
OFFLOADED = 'offloaded'
INVENTORY = harness.INVENTORY
IMAGE = utils.fixed_uuid('image')


def flavor(flavor_id=1, name='m1.small', vcpus=1, memory_mb=512,
           root_gb=10):
    """A flavor; by default the server's: what ``harness.RESOURCES`` claims."""
    return objects.Flavor(
        id=flavor_id, flavorid=str(flavor_id), name=name, vcpus=vcpus,
        memory_mb=memory_mb, root_gb=root_gb, ephemeral_gb=0, swap=0,
        extra_specs={}, rxtx_factor=1.0, vcpu_weight=0, is_public=True,
        disabled=False)


def static_fields(uuid):
    """What nova reads of the server that its store row does not hold.

    Given to every ``Instance`` loaded from the store, under the row's own
    fields (see :attr:`.database.Database.static`).
    """
    return {
        'flavor': flavor(), 'metadata': {}, 'numa_topology': None,
        'pci_requests': objects.InstancePCIRequests(
            requests=[], instance_uuid=uuid),
        'pci_devices': objects.PciDeviceList(objects=[]),
        'info_cache': objects.InstanceInfoCache(
            instance_uuid=uuid, network_info=network_model.NetworkInfo()),
        'resources': None, 'migration_context': None, 'key_data': None,
        'auto_disk_config': False, 'root_device_name': '/dev/vda',
        'launched_at': None, 'config_drive': '', 'os_type': None,
        'deleted': False, 'hidden': False, 'display_name': 'server',
        'locked': False, 'disable_terminate': False, 'cell_name': None,
        'system_metadata': {}, 'image_ref': IMAGE, 'vcpus': 1,
        'memory_mb': 512, 'root_gb': 10, 'ephemeral_gb': 0}


class NovaCloud(fixtures.Fixture):
    """nova's services and a placement backend; one :class:`Run` at a time.

    :param backend: ``'double'`` or ``'real'``
    :param manager_cls: the compute manager class of both hosts
    :param tracker_cls: the resource tracker class of both hosts
    :param binding_fails: neutron fails to bind ports on compute-2
    :param spawn_fails: compute-2's virt driver fails to spawn
    :param placement_faults: faults placement's transport injects in each
        run (``inject_fault``'s keyword arguments), armed by :meth:`start`

    :ivar placement: the placement fixture, shared by the runs
    :ivar providers: ``{host: rp_uuid}``
    :ivar database: the :class:`~.database.Database` stubs
    :ivar locks: the :class:`~.doubles.ServiceLocks` of every service
    :ivar run: the current :class:`Run` (what the stubs read)
    """

    #: The compute hosts, each with its node, provider and service.
    hosts = HOSTS

    def __init__(self, backend='double',
                 manager_cls=nova_manager.ComputeManager,
                 tracker_cls=resource_tracker.ResourceTracker,
                 binding_fails=False, spawn_fails=False, placement_faults=()):
        super(NovaCloud, self).__init__()
        self.backend = backend
        self.manager_cls = manager_cls
        self.tracker_cls = tracker_cls
        self.binding_fails = binding_fails
        self.spawn_fails = spawn_fails
        self.placement_faults = tuple(placement_faults)
        self.run = None

    def _setUp(self):
        conf = self.useFixture(harness.NovaConfig())
        # Its start-up load of every host's instances needs a database.
        conf.config(track_instance_changes=False, group='filter_scheduler')
        self.placement = self.useFixture(backends.make_backend(self.backend))
        # nova's scheduler orders nodes by uuid: the providers' sort as the
        # hosts do, in every process (another one may replay these runs).
        uuids = sorted(utils.fixed_uuid('provider-' + host)
                       for host in self.hosts)
        self.providers = {host: self.placement.create_provider(
            host, uuid=uuid, inventory=INVENTORY)
            for host, uuid in zip(self.hosts, uuids)}
        self.placement.set_traits(self.providers[SOURCE],
                                  [os_traits.COMPUTE_STATUS_DISABLED])
        self.database = self.useFixture(database_mod.Database())
        for number, host in enumerate(self.hosts, 1):
            self.database.compute_nodes[self.providers[host]] = (
                database_mod.compute_node(host, self.providers[host],
                                          number, INVENTORY))
            self.database.services[host] = database_mod.service(
                host, number, disabled=host == SOURCE)
        self.locks = self.useFixture(doubles.ServiceLocks(
            self.hosts + (CONDUCTOR,)))
        self.router = doubles.ComputeRouter(None)
        self.useFixture(fixtures.MonkeyPatch(
            'nova.compute.rpcapi._ROUTER', self.router))
        self.useFixture(fixtures.MonkeyPatch(
            'nova.scheduler.client.report.report_client_singleton',
            lambda: self.run.scheduler_client))
        self.useFixture(fixtures.MonkeyPatch(
            'nova.compute.resource_tracker.ResourceTracker._update',
            lambda rt, context, compute_node, startup=False: None))
        # The report client's retries back off for up to seconds: the
        # explorer orders the retry's requests, the sleep adds nothing.
        self.useFixture(fixtures.MonkeyPatch(
            'nova.scheduler.client.report.time.sleep', lambda seconds: None))

    def arm_faults(self):
        """Placement's faults, each to hit afresh in the next run."""
        self.placement.clear_faults()
        for fault in self.placement_faults:
            self.placement.inject_fault(**fault)

    def start(self, start=ON_SOURCE):
        """A fresh :class:`Run`: new services, store, transport and locks."""
        self.locks.reset()
        self.database.events = []
        self.run = Run(self, start)
        self.router.transport = self.run.transport
        # After the run's set-up: the faults hit the actors' requests.
        self.arm_faults()
        return self.run


class Run(object):
    """The state of one run: the services and the server.

    :ivar store: the instance store (what the API and the audits read)
    :ivar transport: the RPC transport
    :ivar rts: ``{host: nova ResourceTracker}``
    :ivar computes: ``{host: nova ComputeManager}``
    :ivar uuid: the server's uuid
    :ivar holdings: ``{uuid: providers}`` placement holds at the start
    :ivar events: driver, network and notification calls
    """

    #: The cell's instance table.
    store_cls = instance_obj.InstanceStore

    def __init__(self, cloud, start):
        self.cloud = cloud
        self.providers = cloud.providers
        self.store = self.store_cls()
        cloud.database.store = self.store
        self.transport = rpc.Transport()
        self.events = cloud.database.events
        self.scheduler_client = self._client()
        self.admin = harness.context('setup', is_admin=True)
        self.rts, self.computes = {}, {}
        for host in cloud.hosts:
            self._build_host(host)
        self.scheduler = self._build_scheduler()
        self.conductor = self._build_conductor()
        self.uuid = self._create_instance(start)
        self.offloading = self._handed()

    def _handed(self):
        """What compute-1 was handed by the API's shelve (RPC) message."""
        return self.cloud.database.load(
            harness.context(SOURCE, is_admin=True), self.store.peek(self.uuid))

    def _client(self):
        return report.SchedulerReportClient(
            adapter=self.cloud.placement.adapter)

    def _build_host(self, host):
        driver = doubles.HostDriver(host, self.providers[host], INVENTORY,
                                    self.events)
        if self.cloud.spawn_fails and host == DESTINATION:
            driver.failing = ('spawn',)
        reportclient = self._client()
        rt = self.cloud.tracker_cls(host, driver, reportclient=reportclient)
        rt.set_service_ref(self.cloud.database.services[host])
        # What the (stubbed) inventory report leaves: the node's provider.
        rt.provider_tree = provider_tree.ProviderTree()
        rt.provider_tree.new_root(host, self.providers[host])
        compute = self.cloud.manager_cls.__new__(self.cloud.manager_cls)
        compute.host = host
        compute.driver = driver
        compute.network_api = doubles.NetworkAPI(
            host, self.events,
            binding_fails=self.cloud.binding_fails and host == DESTINATION)
        compute.volume_api = None
        compute.query_client = doubles.SchedulerRPC(self.events)
        compute.send_instance_updates = True
        compute.notifier = doubles.Notifier(self.events, host)
        compute.reportclient = reportclient
        compute.rt = rt
        compute.compute_rpcapi = compute_rpcapi.ComputeAPI.__new__(
            compute_rpcapi.ComputeAPI)
        harness.add_share_manager(compute, driver)
        self.rts[host], self.computes[host] = rt, compute

    def _build_scheduler(self):
        scheduler = scheduler_manager.SchedulerManager.__new__(
            scheduler_manager.SchedulerManager)
        scheduler.host_manager = host_manager.HostManager()
        scheduler.notifier = doubles.Notifier(self.events, 'scheduler')
        return scheduler

    def _build_conductor(self):
        conductor = conductor_manager.ComputeTaskManager.__new__(
            conductor_manager.ComputeTaskManager)
        conductor.compute_rpcapi = compute_rpcapi.ComputeAPI.__new__(
            compute_rpcapi.ComputeAPI)
        conductor.image_api = None
        conductor.network_api = doubles.NetworkAPI(CONDUCTOR, self.events)
        conductor.query_client = doubles.SchedulerRPC(self.events,
                                                      self.scheduler)
        conductor.notifier = doubles.Notifier(self.events, CONDUCTOR)
        conductor.host = CONDUCTOR
        return conductor

    def _create_instance(self, start):
        uuid = uuidutils.generate_uuid()
        self.cloud.database.static = static_fields(uuid)
        on_source = start == ON_SOURCE
        row = {
            'id': 1, 'uuid': uuid, 'project_id': harness.PROJECT,
            'user_id': harness.USER, 'availability_zone': 'nova',
            'vm_state': (vm_states.SHELVED if on_source
                         else vm_states.SHELVED_OFFLOADED),
            'task_state': (task_states.SHELVING_OFFLOADING if on_source
                           else None),
            'power_state': power_state.RUNNING,
            'host': SOURCE if on_source else None,
            'node': SOURCE if on_source else None,
            'launched_on': SOURCE if on_source else None,
            'compute_id': 1 if on_source else None,
        }
        self.store.create(row)
        self.holdings = {}
        if on_source:
            self.holdings[uuid] = {self.providers[SOURCE]}
            self.computes[SOURCE].driver.running.add(uuid)
            harness.NovaShelveScenario.assert_claimed(
                self.scheduler_client.claim_resources(
                    self.admin, uuid, {'allocations': {
                        self.providers[SOURCE]: {
                            'resources': dict(harness.RESOURCES)}}},
                    harness.PROJECT, harness.USER, harness.CLAIM_VERSION))
        # Each tracker has audited its node once, as at service start.
        for host in self.cloud.hosts:
            self.rts[host].update_available_resource(self.admin, host)
        return uuid

    def request_spec(self):
        """The request spec the API reads from its database."""
        return objects.RequestSpec(
            instance_uuid=self.uuid, project_id=harness.PROJECT,
            user_id=harness.USER, flavor=flavor(),
            image=objects.ImageMeta.from_dict({}), num_instances=1,
            is_bfv=False, scheduler_hints={}, ignore_hosts=None,
            force_hosts=None, force_nodes=None, retry=None,
            limits=objects.SchedulerLimits(
                numa_topology=None, vcpu=None, disk_gb=None, memory_mb=None),
            instance_group=None,
            requested_destination=None, numa_topology=None,
            pci_requests=objects.InstancePCIRequests(requests=[]),
            availability_zone=None, requested_resources=[],
            security_groups=objects.SecurityGroupList(),
            network_metadata=objects.NetworkMetadata(
                physnets=set(), tunneled=False),
            request_level_params=objects.RequestLevelParams())

    # -- the actors ---------------------------------------------------------

    def shelve_offload(self):
        """compute-1: nova's ``shelve_offload_instance``."""
        self.computes[SOURCE].shelve_offload_instance(
            self.offloading._context, self.offloading, True,
            accel_uuids=[])
        return True

    def periodic(self, host):
        """``host``'s ``ResourceTracker.update_available_resource``."""
        self.rts[host].update_available_resource(
            harness.context('periodic-%s' % host, is_admin=True), host)
        return True

    def api_unshelve(self, timeout=60.0, give_up=None):
        """The API's unshelve, then nova's conductor (and scheduler)."""
        api = harness.context('api')

        def conduct(instance):
            self.conductor.unshelve_instance(
                harness.context(CONDUCTOR, is_admin=True), instance,
                request_spec=self.request_spec())
            return True
        return client.unshelve(
            self.store, self.uuid,
            lambda row: self.cloud.database.load(api, row), conduct,
            timeout=timeout, give_up=give_up, revert=False)

    def serve(self, host=DESTINATION, timeout=60.0, give_up=None):
        """``host``'s compute service runs the next message cast to it."""
        rpc.Server(self.transport, doubles.COMPUTE_TOPIC, host,
                   self.computes[host]).handle_one(timeout=timeout,
                                                   give_up=give_up)
        return True

    # -- what happened --------------------------------------------------------

    def held(self):
        """``{rp_uuid: resources}`` placement holds for the server."""
        allocations = self.scheduler_client.get_allocs_for_consumer(
            self.admin, self.uuid)['allocations']
        return {rp: alloc['resources'] for rp, alloc in allocations.items()}

    def tracked(self):
        """``{host: uuids}`` each host's tracker counts."""
        return {host: set(rt.tracked_instances)
                for host, rt in self.rts.items()}

    def saved(self):
        return self.store.peek(self.uuid)

    def remove_from_placement(self):
        """Free what the run left in placement (the providers stay)."""
        self.scheduler_client.delete_allocation_for_instance(
            self.admin, self.uuid, force=True)
