"""nova's own services building a server, from the conductor on.

The race lab's ``build`` scenario (nova only). :class:`BuildRun` starts
where nova's API leaves a boot it accepted (:data:`BUILD_REQUESTED`): a
build request holding the server (``BUILDING``, task ``SCHEDULING``, no
host), its request spec, and an instance mapping with no cell yet, in the
API database (:mod:`~.build_database`); nothing in the cell, nothing in
placement. What runs is nova's code, the actors:

``conductor``
    nova's ``ComputeTaskManager.schedule_and_build_instances``: the
    scheduler's ``select_destinations`` (claiming compute-1 in placement,
    compute-2 the alternate), the server's record created in the cell,
    the instance mapping pointed at the cell, the build request destroyed,
    and ``build_and_run_instance`` cast to compute-1; then, as the
    conductor service, the ``build_instances`` a reschedule casts to it
    (nova's reschedule: the alternate claimed, the build cast to it);
``compute-1``
    compute-1's service serving the cast: ``build_and_run_instance``,
    ``_do_build_and_run_instance`` and ``_build_and_run_instance`` (the
    tracker's ``instance_claim``, the network, the driver's ``spawn``);
    a spawn that fails (``build-fails``) is rescheduled: compute-1 frees
    the server's allocations and casts ``build_instances`` to the
    conductor; or, with ``compute-restarts``, compute-1's service stops
    once it took the cast, before the build got to its claim, and starts
    again: a new tracker, and nova's ``init_host``; with
    ``pci-build-fails`` the server asks for a PCI device, which each host
    has one of, and compute-1's spawn fails (:mod:`~.build_pci`);
``conductor-2``
    a second conductor worker, with a scheduler of its own, building a
    second server with ``pci-parallel-builds`` (:mod:`~.build_parallel`;
    idle otherwise);
``compute-2``
    compute-2's service serving the rescheduled build;
``periodic-1``
    compute-1's ``update_available_resource``.

A run is judged by :func:`~shelvefix.nova.build_program.classify`. The jobs
nova spawns (the build, the network allocation) run at once, in the actor that
spawns them.

This module imports nova (see :mod:`shelvefix.nova`).
"""

import fixtures
from nova.compute import utils as compute_utils
from nova import exception as nova_exception
from nova import objects
from nova.objects import service as service_obj
from oslo_utils import uuidutils

from shelvefix.nova import build_database
from shelvefix.nova import build_doubles
from shelvefix.nova import build_pci
from shelvefix.nova import doubles
from shelvefix.nova import harness
from shelvefix.nova import lifecycle
from shelvefix.nova import live_migration
from shelvefix.nova import moves
from shelvefix.nova import second_move
from shelvefix.objects import migration as migration_obj
from shelvefix import race
from shelvefix import rpc

SOURCE = moves.SOURCE
DESTINATION = moves.DESTINATION
CONDUCTOR = lifecycle.CONDUCTOR
#: The service of a second conductor worker.
CONDUCTOR_2 = 'conductor-2'
#: The service the API's actors run for.
API = 'api'
#: What nova's manager logs of its node's audit, the next one retrying.
AUDIT_RETRIED = (nova_exception.AllocationDeleteFailed,)
#: Where a build's run starts: the API accepted the boot.
BUILD_REQUESTED = 'build-requested'
#: The conductor service's RPC topic (the reschedule's cast).
CONDUCTOR_TOPIC = 'conductor'


class BuildCloud(second_move.SecondMoveCloud):
    """nova's services around a server to be built; both hosts enabled.

    :param failing: the driver calls compute-1's hypervisor fails
        (``spawn``: the build is rescheduled)
    :param restarts: compute-1's service restarts once it took the build
    :param pci: the server asks for a PCI device, each host has one
        (:mod:`~.build_pci`)
    :param parallel: two servers asking for PCI devices, each host has
        two, two conductor workers (:mod:`~.build_parallel`)
    """

    def __init__(self, backend='double', failing=(), restarts=False,
                 pci=False, parallel=False, **kwargs):
        super(BuildCloud, self).__init__(backend=backend, failing=failing,
                                         **kwargs)
        self.restarts = restarts
        self.pci = pci or parallel
        self.parallel = parallel

    def _setUp(self):
        super(BuildCloud, self)._setUp()
        conf = self.useFixture(harness.NovaConfig())
        # The quota recheck counts the project's servers in every cell.
        conf.config(recheck_quota=False, group='quota')
        # The driver's name init_host reads (nothing loads it).
        conf.config(compute_driver='fake.FakeDriver')
        self.build_database = self.useFixture(
            build_database.BuildDatabase(self.database))
        # nova-api is a service of its own, with its own locks, and so is
        # a second conductor worker.
        self.locks.services += (API, CONDUCTOR_2)
        self.locks.reset()
        # compute-2 runs servers of others: its record reports less RAM
        # free, so that the scheduler's weighers pick compute-1 and keep
        # compute-2 as the alternate, in every run.
        node = self.database.compute_nodes[self.providers[DESTINATION]]
        node.free_ram_mb = node.memory_mb // 2
        if self.pci:
            self.useFixture(build_pci.PciConfig(
                self, devices=2 if self.parallel else 1))
        cloud = self

        def local_node_uuid():
            return cloud.providers[SOURCE]

        for name, value in [
                ('nova.thread_pool_factory.spawn',
                 lambda func, *args, **kwargs: live_migration.run_now(
                     None, func, *args, **kwargs)),
                ('nova.thread_pool_factory.spawn_on', live_migration.run_now),
                ('nova.virt.node.read_local_node_uuid', local_node_uuid),
                # The API's 500 names nova's release: no release file to
                # read (which needs a parsed configuration).
                ('nova.version.loaded', True)]:
            self.useFixture(fixtures.MonkeyPatch(name, value))


class BuildRun(moves.MoveRun):
    """One run: a boot the API accepted, and nova's services."""

    #: compute-1's service took the build's cast and then restarted.
    restarted = False

    #: The cell's instance table of a build.
    store_cls = build_database.BuildInstanceStore

    def _handed(self):
        """Nothing: no server is in the cell yet to hand a service."""
        return None

    def _create_instance(self, start):
        if start != BUILD_REQUESTED:
            raise ValueError('a build run starts %r, not %r'
                             % (BUILD_REQUESTED, start))
        cloud = self.cloud
        # No migration: the audits find none.
        self.migrations = migration_obj.MigrationStore()
        cloud.move_database.migrations = self.migrations
        cloud.move_database.extra = {}
        cloud.move_database.next_uuid = uuidutils.generate_uuid()
        self.migration_uuid = cloud.move_database.next_uuid
        api = cloud.build_database
        self.build_requests = api.build_requests = build_database.ApiStore(
            'build request')
        self.mappings = api.mappings = build_database.ApiStore(
            'instance mapping')
        for host in moves.HOSTS:
            self._prepare_host(host)
        uuid = uuidutils.generate_uuid()
        #: ``{uuid: InstancePCIRequests}`` of each server to build.
        self.pci_of = {}
        self.holdings = {}
        self._accept(uuid, build_pci.requests(uuid) if cloud.pci else
                     objects.InstancePCIRequests(requests=[],
                                                 instance_uuid=uuid))
        cloud.database.static = dict(lifecycle.static_fields(uuid),
                                     trusted_certs=None,
                                     pci_requests=self.pci_of[uuid])
        self._more_servers()
        for host in moves.HOSTS:
            self.rts[host].update_available_resource(self.admin, host)
        return uuid

    def _accept(self, uuid, pci_requests):
        """The API accepts the boot of server ``uuid``: its records."""
        self.pci_of[uuid] = pci_requests
        self.build_requests.create({
            'uuid': uuid,
            'instance': build_database.api_instance(uuid, pci_requests)})
        self.mappings.create({'uuid': uuid, 'cell': None,
                              'project_id': harness.PROJECT,
                              'user_id': harness.USER,
                              'queued_for_delete': False})
        self.holdings[uuid] = set()

    def _more_servers(self):
        """Other boots the API accepted (none)."""

    def servers(self):
        """The uuids of the servers the run builds."""
        return [self.uuid]

    @property
    def pci_requests(self):
        """The PCI requests of the run's (first) server."""
        return self.pci_of[self.uuid]

    def _prepare_host(self, host):
        compute = self.computes[host]
        driver = build_doubles.BuildDriver(
            host, self.providers[host], lifecycle.INVENTORY, self.events)
        if host == SOURCE:
            driver.failing = self.cloud.failing
        if self.cloud.pci:
            driver.pci_devices = build_pci.devices_json(host)
        compute.driver = compute.rt.driver = driver
        harness.add_share_manager(compute, driver)
        compute.network_api = build_doubles.NetworkAPI(host, self.events)
        second_move.manager_state(compute)
        compute._build_semaphore = compute_utils.UnlimitedSemaphore()
        compute.compute_task_api = build_doubles.task_api(
            self.transport, CONDUCTOR_TOPIC, CONDUCTOR)
        compute.image_api = None

    # -- the actors ---------------------------------------------------------

    def schedule_and_build(self, uuid=None, conductor=None):
        """The conductor's ``schedule_and_build_instances`` of a boot.

        :param uuid: the server (default: the run's)
        :param conductor: the conductor worker (default: the run's)
        """
        uuid = uuid or self.uuid
        context = harness.context(CONDUCTOR, is_admin=True)
        request = self.cloud.build_database.build_request(
            context, self.build_requests.peek(uuid))
        (conductor or self.conductor).schedule_and_build_instances(
            context, build_requests=[request],
            request_specs=[self.request_spec(uuid)], image={},
            admin_password=None, injected_files=[],
            requested_networks=objects.NetworkRequestList(objects=[]),
            block_device_mapping=objects.BlockDeviceMappingList(objects=[]),
            tags=None)
        return True

    def serve_conductor(self, timeout=60.0, give_up=None):
        """The conductor service runs the next message cast to it."""
        rpc.Server(self.transport, CONDUCTOR_TOPIC, CONDUCTOR,
                   self.conductor).handle_one(timeout=timeout,
                                              give_up=give_up)
        return True

    def conduct(self, timeout=60.0, give_up=None):
        """The conductor: the build, then a reschedule if one comes."""
        self.schedule_and_build()
        try:
            self.serve_conductor(timeout=timeout, give_up=give_up)
        except rpc.NothingToReceive:
            pass
        return True

    def serve_all(self, host, most=2, timeout=60.0, give_up=None):
        """``host``'s service runs the messages cast to it, ``most`` at most.

        :returns: how many it ran
        """
        served = 0
        for _ in range(most):
            try:
                self.serve(host, timeout=timeout, give_up=give_up)
            except rpc.NothingToReceive:
                break
            served += 1
        return served

    def restart(self, timeout=60.0, give_up=None):
        """compute-1 takes the build's cast, then its service restarts.

        The build's thread, waiting for its claim, is gone with the
        process; the new process has a new tracker, knowing no compute
        node before its first audit, and runs nova's ``init_host``
        before its RPC server consumes.
        """
        self.transport.receive(doubles.COMPUTE_TOPIC, SOURCE,
                               timeout=timeout, give_up=give_up)
        self.restarted = True
        self._fresh_tracker()
        service = self.cloud.database.services[SOURCE].obj_clone()
        service.version = service_obj.SERVICE_VERSION
        self.computes[SOURCE].init_host(service)
        return True

    def _fresh_tracker(self):
        compute, old = self.computes[SOURCE], self.rts[SOURCE]
        rt = self.cloud.tracker_cls(SOURCE, compute.driver,
                                    reportclient=compute.reportclient)
        rt.set_service_ref(self.cloud.database.services[SOURCE])
        rt.provider_tree = old.provider_tree
        compute.rt = self.rts[SOURCE] = rt

    def periodic(self, host):
        """``host``'s periodic audit.

        The tracker's ``update_available_resource``, whose failure to
        remove a deleted server's allocations (placement refusing the
        audit's write: the server's delete got there first) nova's
        manager logs, the next audit trying again: so does this one
        (:data:`AUDIT_RETRIED`). Any other error is the actor's.
        """
        try:
            self.rts[host].update_available_resource(
                harness.context('periodic-%s' % host, is_admin=True), host)
        except AUDIT_RETRIED as e:
            self.events.append(('periodic-%s retries' % host,
                                type(e).__name__))
        return True

    # -- what happened --------------------------------------------------------

    def saved(self, uuid=None):
        """A server's row in the cell, or None if never created."""
        uuid = uuid or self.uuid
        if uuid not in set(self.store.uuids()):
            return None
        return self.store.peek(uuid)

    def deleted(self, uuid=None):
        """True if a server's record was created and destroyed."""
        uuid = uuid or self.uuid
        return (uuid in set(self.store.uuids()) and
                self.store.is_deleted(uuid))

    def end_state(self):
        """What the run ended with: the records, and what placement holds.

        :returns: ``{'instance': (vm_state, task_state, host) or None,
            'deleted': bool, 'held': hosts, 'build request': kept}``
        """
        host_of = {rp: host for host, rp in self.providers.items()}
        row = self.saved()
        return {
            'instance': (row['vm_state'], row['task_state'], row['host'])
            if row else None,
            'deleted': self.deleted(),
            'held': sorted(host_of[rp] for rp in self.held()),
            'build request': not self.build_requests.is_deleted(self.uuid),
        }

    def request_spec(self, uuid=None):
        """The request spec the API saved for a server, with its PCI."""
        uuid = uuid or self.uuid
        spec = super(BuildRun, self).request_spec()
        spec.instance_uuid = uuid
        spec.pci_requests = self.pci_of[uuid].obj_clone()
        return spec

    def end_labels(self):
        """What only the run's own records say: the server's PCI devices."""
        return build_pci.end_labels(self) if self.cloud.pci else []

    def remove_from_placement(self):
        """Free what the run left in placement (the providers stay)."""
        for uuid in self.servers():
            self.scheduler_client.delete_allocation_for_instance(
                self.admin, uuid, force=True)


def cloud_kwargs(fault):
    """The :class:`BuildCloud` keyword arguments of a fault."""
    return {
        'failing': (('spawn',) if fault in (
            race.BUILD_FAILS, race.ALTERNATE_CLAIM_FAILS,
            race.PCI_BUILD_FAILS) else ()),
        'restarts': fault == race.COMPUTE_RESTARTS,
        'pci': fault == race.PCI_BUILD_FAILS,
        'parallel': fault == race.PCI_PARALLEL_BUILDS,
    }
