"""Doubles of what a server's build reaches outside nova's services.

Used by :mod:`~.build`:

* :class:`BuildDriver` - a host's hypervisor, as a build asks it to
  prepare and spawn a guest (and ``init_host`` to start);
* :class:`NetworkAPI` - neutron allocating the server its one port;
* :func:`task_api` - nova's conductor API as a compute service calls it
  (the reschedule's ``build_instances``): nova's own ``ComputeTaskAPI``
  and its RPC API, whose client puts the casts on the run's bus.

This module imports nova (see :mod:`shelvefix.nova`).
"""

from nova.conductor import api as conductor_api
from nova.conductor import rpcapi as conductor_rpcapi
from nova.network import model as network_model

from shelvefix.nova import bus
from shelvefix.nova import doubles


class BuildDriver(doubles.HostDriver):
    """A hypervisor that spawns guests, with what a build asks of it."""

    capabilities = dict(doubles.HostDriver.capabilities,
                        supports_device_tagging=False,
                        supports_trusted_certs=False)
    #: None, or the JSON of the PCI devices the host passes through
    #: (reported to the tracker as libvirt's driver reports them).
    pci_devices = None

    def __init__(self, host, node_uuid, inventory, events):
        super(BuildDriver, self).__init__(host, node_uuid, inventory, events)
        self.spawned_pci = {}

    def spawn(self, context, instance, image_meta, injected_files,
              admin_password, allocations, network_info=None,
              block_device_info=None, power_on=True, accel_info=None):
        """A guest starts, with the PCI devices the instance holds.

        What it was given is kept in :attr:`spawned_pci`: ``{uuid:
        [(compute node id, address)]}`` of each guest that started.
        """
        devices = [(device.compute_node_id, device.address)
                   for device in instance.pci_devices or []]
        super(BuildDriver, self).spawn(
            context, instance, image_meta, injected_files, admin_password,
            allocations, network_info=network_info,
            block_device_info=block_device_info, power_on=power_on,
            accel_info=accel_info)
        self.spawned_pci[instance.uuid] = devices

    def get_available_resource(self, nodename):
        """The node's resources, its passthrough PCI devices too."""
        resources = super(BuildDriver, self).get_available_resource(
            nodename)
        if self.pci_devices is not None:
            resources['pci_passthrough_devices'] = self.pci_devices
        return resources

    def init_host(self, host):
        """The hypervisor at its service's start: recorded."""
        self._record('init_host')

    def register_event_listener(self, callback):
        """No lifecycle events: the lab's guests change on request only."""
        pass

    def process_instances_at_startup(self, context, instances):
        """Every instance the host lists, as it is."""
        return instances

    def network_binding_host_id(self, context, instance):
        """Ports are bound to the server's host."""
        return instance.get('host')

    def prepare_for_spawn(self, instance):
        """Recorded; nothing to prepare."""
        self._record('prepare_for_spawn')

    def prepare_networks_before_block_device_mapping(self, instance,
                                                     network_info):
        """Nothing to prepare."""
        pass

    def clean_networks_preparation(self, instance, network_info):
        """Nothing was prepared."""
        pass

    def unplug_vifs(self, instance, network_info):
        """Recorded (a failed build's clean-up)."""
        self._record('unplug_vifs')

    def failed_spawn_cleanup(self, instance):
        """Recorded (a failed build's clean-up)."""
        self._record('failed_spawn_cleanup')

    def default_root_device_name(self, instance, image_meta, root_bdm):
        """Not implemented: nova's default names the root device."""
        raise NotImplementedError()

    def default_device_names_for_instance(self, instance, root_device_name,
                                          *block_device_lists):
        """Not implemented: nova's default names the devices."""
        raise NotImplementedError()


class NetworkAPI(doubles.NetworkAPI):
    """neutron, allocating the server its one port."""

    def allocate_for_instance(self, context, instance, **kwargs):
        """The server's one port, allocated."""
        self._record('allocate_for_instance')
        return network_model.NetworkInfo([network_model.VIF(
            id=self.port_of(instance.uuid))])

    def cleanup_instance_network_on_host(self, context, instance, host):
        """Recorded."""
        self._record('cleanup_instance_network_on_host')


class _ConductorCall(object):
    def __init__(self, client):
        self.client = client

    def cast(self, ctxt, method, **kwargs):
        self.client.transport.cast(self.client.topic, self.client.server,
                                   method, bus.received(ctxt), **kwargs)


class ConductorClient(object):
    """The RPC client of nova's conductor API: casts on the run's bus.

    :param transport: the run's :class:`shelvefix.rpc.Transport`
    :param topic: the conductor's topic
    :param server: the conductor service that takes the casts
    """

    def __init__(self, transport, topic, server):
        self.transport = transport
        self.topic = topic
        self.server = server

    def can_send_version(self, version):
        """Every version: the conductor is as new as the computes."""
        return True

    def prepare(self, **kwargs):
        """A client of the conductor, whatever version it asks for."""
        return _ConductorCall(self)


def task_api(transport, topic, server):
    """nova's ``conductor.ComputeTaskAPI``, its casts on ``transport``."""
    rpcapi = conductor_rpcapi.ComputeTaskAPI.__new__(
        conductor_rpcapi.ComputeTaskAPI)
    rpcapi.client = ConductorClient(transport, topic, server)
    api = conductor_api.ComputeTaskAPI.__new__(conductor_api.ComputeTaskAPI)
    api.conductor_compute_rpcapi = rpcapi
    return api
