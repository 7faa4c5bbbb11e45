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
from shelvefix import rpc
from shelvefix.scheduler import host_manager
from shelvefix.scheduler import manager as scheduler_mod
from shelvefix.scheduler import request_spec
from shelvefix import utils

SOURCE = 'compute-1'
DESTINATION = 'compute-2'
HOSTS = (SOURCE, DESTINATION)

ON_SOURCE = 'on-source'
OFFLOADED = 'offloaded'


def create_providers(placement):
    """Both hosts' providers, compute-1's marked disabled."""
    src, dst = scenario.create_providers(placement, names=HOSTS)
    placement.set_traits(src, [os_traits.COMPUTE_STATUS_DISABLED])
    return src, dst


class Cloud(object):
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
        self.placement = placement
        self.client = placement.client
        self.providers = dict(zip(HOSTS, providers))
        self.store = instance_obj.InstanceStore()
        self.transport = rpc.Transport()
        self.ctx = context.RequestContext(
            user_id=scenario.USER, project_id=scenario.PROJECT,
            request_id='req-%s' % uuidutils.generate_uuid())
        self.locks = {host: utils.Locks() for host in HOSTS}
        self.rts = {host: tracker_cls(host, reportclient=self.client,
                                      store=self.store,
                                      locks=self.locks[host])
                    for host in HOSTS}
        self.network_apis = {
            SOURCE: collaborators.RecordingNetworkAPI(),
            DESTINATION: collaborators.RecordingNetworkAPI(
                binding_fails=binding_fails)}
        self.computes = {host: manager_cls(
            host=host, reportclient=self.client, rt=self.rts[host],
            network_api=self.network_apis[host], locks=self.locks[host])
            for host in HOSTS}
        self.scheduler = scheduler_mod.SchedulerManager(
            self.client, host_manager.HostManager(
                [host_manager.ComputeNode(rp, host, host)
                 for host, rp in self.providers.items()]))
        self.conductor = conductor_mod.ComputeTaskManager(
            self.scheduler, rpcapi.ComputeAPI(self.transport))
        self.instance = self._create_instance(start)

    def _create_instance(self, start):
        uuid = uuidutils.generate_uuid()
        if start == OFFLOADED:
            return instance_obj.Instance.create(
                self.store, uuid, vm_state=vm_states.SHELVED_OFFLOADED,
                project_id=scenario.PROJECT, user_id=scenario.USER,
                flavor=scenario.FLAVOR)
        inst = instance_obj.Instance.create(
            self.store, uuid, vm_state=vm_states.SHELVED,
            task_state=task_states.SHELVING_OFFLOADING, host=SOURCE,
            node=SOURCE, project_id=scenario.PROJECT, user_id=scenario.USER,
            flavor=scenario.FLAVOR)
        self.client.claim_resources(
            self.ctx, uuid, scenario.alloc_request(self.providers[SOURCE]),
            scenario.PROJECT, scenario.USER, scenario.CLAIM_VERSION)
        self.rts[SOURCE].update_available_resource(self.ctx, SOURCE)
        return inst

    # -- the actors ---------------------------------------------------------

    def shelve_offload(self):
        """compute-1 offloads the server."""
        self.computes[SOURCE].shelve_offload_instance(
            self.ctx, self.instance.obj_clone(), clean_shutdown=True)
        return True

    def periodic(self, host):
        """``update_available_resource`` on ``host``'s node."""
        self.rts[host].update_available_resource(self.ctx, host)
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

    def serve(self, host=DESTINATION, timeout=60.0, give_up=None):
        """``host``'s compute service runs the next message cast to it."""
        rpc.Server(self.transport, rpcapi.TOPIC, host,
                   self.computes[host]).handle_one(timeout=timeout,
                                                   give_up=give_up)
        return True

    # -- what happened --------------------------------------------------------

    def held(self):
        """``{rp_uuid: resources}`` placement holds for the server."""
        allocations = self.client.get_allocs_for_consumer(
            context.get_admin_context(), self.instance.uuid)['allocations']
        return {rp: alloc['resources'] for rp, alloc in allocations.items()}

    def tracked(self):
        """``{host: uuids}`` each host's tracker counts on its node."""
        return {host: self.rts[host].tracked_on(host) for host in HOSTS}

    def saved(self):
        return self.store.peek(self.instance.uuid)

    def remove_from_placement(self):
        """Free what the run left in placement (the providers stay)."""
        self.client.delete_allocation_for_instance(
            context.get_admin_context(), self.instance.uuid, force=True)
