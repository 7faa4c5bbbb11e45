"""A small cloud for the whole shelve/unshelve lifecycle.

:class:`Cloud` wires the library's services the way a deployment runs them,
each with its own state: two compute hosts (``compute-1``, the source,
and ``compute-2``), each with a compute manager, a resource tracker and
its own locks; a conductor and a scheduler; the RPC transport between
them; the instance store (the database) and a placement backend. One
server is in it, in one of two starting states:

``ON_SOURCE``
    shelved on compute-1 and about to be offloaded (``SHELVED`` /
    ``SHELVING_OFFLOADING``), its allocations on compute-1's provider and
    counted by compute-1's tracker;
``OFFLOADED``
    already offloaded (``SHELVED_OFFLOADED``, no host, no allocations).

compute-1's service is disabled (its provider carries
``COMPUTE_STATUS_DISABLED``, as nova marks it), as when an operator drains
a host: the scheduler must place the unshelve on compute-2.

The wiring, the audit and RPC actors and the explorer's steppers belong
to :class:`TwoHosts`, which :class:`~shelvefix.race.move_cloud.MoveCloud`
shares.
"""

import os_traits
from oslo_utils import uuidutils

from shelvefix.compute import collaborators
from shelvefix.compute import manager as manager_mod
from shelvefix.compute import resource_tracker
from shelvefix.compute import rpcapi
from shelvefix.compute import task_states
from shelvefix.compute import vm_states
from shelvefix.conductor import manager as conductor_mod
from shelvefix import context
from shelvefix.objects import instance as instance_obj
from shelvefix.race import client
from shelvefix.race import scenario
from shelvefix.race import scenarios
from shelvefix.race import steps
from shelvefix import rpc
from shelvefix.scheduler import host_manager
from shelvefix.scheduler import manager as scheduler_mod
from shelvefix.scheduler import request_spec
from shelvefix import utils

SOURCE = scenarios.SOURCE
DESTINATION = scenarios.DESTINATION
HOSTS = scenarios.HOSTS

ON_SOURCE = scenarios.ON_SOURCE
OFFLOADED = scenarios.OFFLOADED


def create_providers(placement):
    """Both hosts' providers, compute-1's marked disabled."""
    src, dst = scenario.create_providers(placement, names=HOSTS)
    placement.set_traits(src, [os_traits.COMPUTE_STATUS_DISABLED])
    return src, dst


def instrument_placement(controller, placement, names, providers,
                         holdings):
    """Mount the stepping transport; returns the function undoing it."""
    session = placement.session.session
    session.mount(placement.endpoint, steps.StepTransport(
        placement.transport, controller, names, providers, holdings))
    return lambda: session.mount(placement.endpoint, placement.transport)


class TwoHosts(object):
    """What every cloud of the lab wires: two hosts and the services.

    :meth:`_wire` makes the instance store, the RPC transport, each host's
    locks, resource tracker and compute manager, the scheduler and the
    conductor; the clouds add their own collaborators per host.
    """

    def _wire(self, placement, providers, reportclient, manager_cls,
              tracker_cls, per_host):
        """Wire both hosts and the services around them.

        :param reportclient: the report client every service shares
        :param per_host: ``host -> (tracker kwargs, manager kwargs)``:
            what a host's tracker and compute manager get beyond the report
            client, the store and the host's locks
        """
        self.placement = placement
        self.client = reportclient
        self.providers = dict(zip(HOSTS, providers))
        self.store = instance_obj.InstanceStore()
        self.transport = rpc.Transport()
        self.compute_rpcapi = rpcapi.ComputeAPI(self.transport)
        self.ctx = context.RequestContext(
            user_id=scenario.USER, project_id=scenario.PROJECT,
            request_id='req-%s' % uuidutils.generate_uuid())
        self.locks = {host: utils.Locks() for host in HOSTS}
        self.rts, self.computes = {}, {}
        for host in HOSTS:
            tracker_kwargs, manager_kwargs = per_host(host)
            self.rts[host] = tracker_cls(
                host, reportclient=self.client, store=self.store,
                locks=self.locks[host], **tracker_kwargs)
            self.computes[host] = manager_cls(
                host=host, reportclient=self.client, rt=self.rts[host],
                locks=self.locks[host], **manager_kwargs)
        self.scheduler = scheduler_mod.SchedulerManager(
            self.client, host_manager.HostManager(
                [host_manager.ComputeNode(rp, host, host)
                 for host, rp in self.providers.items()]))
        self.conductor = conductor_mod.ComputeTaskManager(
            self.scheduler, self.compute_rpcapi)

    def instrument(self, controller, names, holdings, wait_label,
                   actor_hosts):
        """Make every access of the actors to shared state an explorer step.

        Placement's transport, the instance store (and the migration store
        of a cloud that has one), the RPC transport, and the locks of each
        host more than one actor runs on (a host with one actor has no
        contended lock: its locks stay real, and cost no steps); see
        :mod:`shelvefix.race.steps`.

        :param controller: the explorer's controller
        :param names: the run's :class:`~shelvefix.race.steps.Names`
        :param holdings: ``{consumer: providers}`` placement holds at the
            start
        :param wait_label: the label of a wait on the instance store
        :param actor_hosts: the host each actor runs on (None: none)
        :returns: the function undoing it all
        """
        undo_placement = instrument_placement(
            controller, self.placement, names,
            tuple(self.providers[host] for host in HOSTS), holdings)
        mounted = [(self.store, steps.StoreStepper(
            controller, self.store, wait_label, names)),
            (self.transport, steps.RpcStepper(controller))]
        migrations = getattr(self, 'migrations', None)
        if migrations is not None:
            mounted.append((migrations, steps.StoreStepper(
                controller, migrations, wait_label, names,
                kind='migration')))
        for host in HOSTS:
            if sum(on == host for on in actor_hosts) > 1:
                mounted.append((self.locks[host],
                                steps.LockStepper(controller, host, names)))
        for target, stepper in mounted:
            target.interceptor = stepper

        def undo():
            undo_placement()
            for target, _stepper in mounted:
                target.interceptor = None
        return undo

    def periodic(self, host):
        """``update_available_resource`` on ``host``'s node."""
        self.rts[host].update_available_resource(self.ctx, host)
        return True

    def serve(self, host=DESTINATION, timeout=60.0, give_up=None):
        """``host``'s compute service runs the next message cast to it."""
        rpc.Server(self.transport, rpcapi.TOPIC, host,
                   self.computes[host]).handle_one(timeout=timeout,
                                                   give_up=give_up)
        return True

    def held(self, consumer=None):
        """``{rp_uuid: resources}`` placement holds for a consumer.

        :param consumer: a uuid (default: the server)
        """
        allocations = self.client.get_allocs_for_consumer(
            context.get_admin_context(),
            consumer or self.instance.uuid)['allocations']
        return {rp: alloc['resources'] for rp, alloc in allocations.items()}

    def saved(self):
        return self.store.peek(self.instance.uuid)

    def _server_on_source(self, **fields):
        """A server on compute-1 holding its flavor there in placement.

        :param fields: the instance's states (``vm_state``, ...)
        :returns: the :class:`~shelvefix.objects.instance.Instance`
        """
        inst = instance_obj.Instance.create(
            self.store, uuidutils.generate_uuid(), host=SOURCE, node=SOURCE,
            project_id=scenario.PROJECT, user_id=scenario.USER,
            flavor=scenario.FLAVOR, **fields)
        self.client.claim_resources(
            self.ctx, inst.uuid,
            scenario.alloc_request(self.providers[SOURCE]),
            scenario.PROJECT, scenario.USER, scenario.CLAIM_VERSION)
        return inst


class Cloud(TwoHosts):
    """Two compute hosts, a conductor and a scheduler around one server.

    :param placement: a set-up placement fixture
    :param providers: ``(src, dst)`` from :func:`create_providers`
    :param start: :data:`ON_SOURCE` or :data:`OFFLOADED`
    :param manager_cls: the compute manager class of both hosts
    :param tracker_cls: the resource tracker class of both hosts
    :param binding_fails: neutron fails to bind ports on compute-2
    """

    def __init__(self, placement, providers, start=ON_SOURCE,
                 manager_cls=manager_mod.ComputeManager,
                 tracker_cls=resource_tracker.ResourceTracker,
                 binding_fails=False):
        self.network_apis = {
            SOURCE: collaborators.RecordingNetworkAPI(),
            DESTINATION: collaborators.RecordingNetworkAPI(
                binding_fails=binding_fails)}
        self._wire(placement, providers, placement.client, manager_cls,
                   tracker_cls, lambda host: (
                       {}, {'network_api': self.network_apis[host]}))
        self.instance = self._create_instance(start)

    def _create_instance(self, start):
        if start == OFFLOADED:
            return instance_obj.Instance.create(
                self.store, uuidutils.generate_uuid(),
                vm_state=vm_states.SHELVED_OFFLOADED,
                project_id=scenario.PROJECT, user_id=scenario.USER,
                flavor=scenario.FLAVOR)
        inst = self._server_on_source(
            vm_state=vm_states.SHELVED,
            task_state=task_states.SHELVING_OFFLOADING)
        self.rts[SOURCE].update_available_resource(self.ctx, SOURCE)
        return inst

    # -- the actors ---------------------------------------------------------

    def shelve_offload(self):
        """compute-1 offloads the server."""
        self.computes[SOURCE].shelve_offload_instance(
            self.ctx, self.instance.obj_clone(), clean_shutdown=True)
        return True

    def api_unshelve(self, timeout=60.0, poll_interval=0.001,
                     give_up=None):
        """The API client, then the conductor and scheduler.

        :returns: True once the conductor is done (it casts the unshelve
            to a host, or clears the task state when no host fits)
        """
        def unshelve(inst):
            self.conductor.unshelve_instance(
                self.ctx, inst, request_spec.RequestSpec.from_instance(inst))
            return True

        return client.unshelve(
            self.store, self.instance.uuid,
            lambda row: instance_obj.Instance(self.store, **row), unshelve,
            timeout=timeout, poll_interval=poll_interval, give_up=give_up,
            revert=False)

    # -- what happened --------------------------------------------------------

    def tracked(self):
        """``{host: uuids}`` each host's tracker counts on its node."""
        return {host: self.rts[host].tracked_on(host) for host in HOSTS}

    def remove_from_placement(self):
        """Free what the run left in placement (the providers stay)."""
        self.client.delete_allocation_for_instance(
            context.get_admin_context(), self.instance.uuid, force=True)
