"""Doubles of what nova's services reach outside the process.

Used by :mod:`shelvefix.nova.lifecycle`, which runs nova's compute,
conductor and scheduler code in one process:

* :class:`HostDriver` - a virt driver for one host: a hypervisor whose
  guests start, stop and move on request and whose node has fixed
  resources, and whose named calls can be made to fail
  (:class:`DriverFailed`);
* :class:`NetworkAPI` - neutron: one port per instance, and optionally a
  port binding that fails on this host (``PortBindingFailed``, bug
  1862633);
* :class:`SchedulerRPC` - the scheduler's RPC API as the compute and
  conductor services call it: instance info updates are recorded,
  ``select_destinations`` runs nova's own ``SchedulerManager`` in-process
  on a copy of the request spec, as the message bus would hand it over;
* :class:`ComputeRouter` - what ``nova.compute.rpcapi.ComputeAPI`` sends
  through (:mod:`~.bus`: casts, calls, and hosts not consuming);
* :class:`ServiceLocks` - nova's locks (``nova.utils.synchronized``, which
  ends in ``oslo_concurrency.lockutils.lock``) become the locks of the
  service process the calling thread belongs to, one
  :class:`shelvefix.utils.Locks` per service, so that two compute hosts
  never share a lock, and the explorer can schedule them.

This module imports nova (see :mod:`shelvefix.nova`).
"""

import threading

import fixtures
from nova.compute import power_state
from nova import exception as nova_exception
from nova.network import model as network_model
from nova import objects
from nova.virt import hardware
from oslo_concurrency import lockutils

from shelvefix.nova import bus
from shelvefix import utils

COMPUTE_TOPIC = bus.COMPUTE_TOPIC
#: Where :class:`~.lifecycle.NovaCloud` finds it (:mod:`~.bus`).
ComputeRouter = bus.ComputeRouter


def class_call(func):
    """``func`` in place of a class method; the class is not passed on.

    nova's objects read their records through class methods
    (``Instance.get_by_uuid``, ...). Patched with a ``staticmethod``,
    fixtures' ``MonkeyPatch`` wraps it in a ``classmethod`` again, and
    Python 3.13, which no longer chains the two, passes the class as the
    first argument. A ``classmethod`` object is set as it is, on every
    Python.
    """
    return classmethod(lambda cls, *args, **kwargs: func(*args, **kwargs))


class HostDriver(object):
    """The virt driver of one host, with one node named like the host.

    :param host: the host (and node) name
    :param node_uuid: the node's uuid (its resource provider's)
    :param inventory: ``{'VCPU': n, 'MEMORY_MB': n, 'DISK_GB': n}``
    :param events: a list the calls are recorded in

    :ivar failing: names of the move calls that raise :class:`DriverFailed`
    :ivar checks_shared_storage: the driver answers nova's check of
        whether a server's disk is on shared storage (an RPC call to the
        other host); False: it does not implement it
    """

    def __init__(self, host, node_uuid, inventory, events):
        self.host = host
        self.node_uuid = node_uuid
        self.inventory = inventory
        self.events = events
        self.running = set()
        self.failing = ()
        self.checks_shared_storage = False

    def _record(self, name, *args):
        self.events.append(('%s driver.%s' % (self.host, name),) + args)

    def _move(self, name):
        self._record(name)
        if name in self.failing:
            raise DriverFailed(name)

    def get_available_nodes(self, refresh=False):
        return [self.host]

    def get_nodenames_by_uuid(self, refresh=False):
        return {self.node_uuid: self.host}

    def node_is_available(self, nodename):
        return nodename == self.host

    def get_available_resource(self, nodename):
        """What the hypervisor reports; usage is left to the tracker."""
        return {
            'uuid': self.node_uuid, 'hypervisor_hostname': nodename,
            'vcpus': self.inventory['VCPU'],
            'memory_mb': self.inventory['MEMORY_MB'],
            'local_gb': self.inventory['DISK_GB'],
            'vcpus_used': 0, 'memory_mb_used': 0, 'local_gb_used': 0,
            'disk_available_least': self.inventory['DISK_GB'],
            'hypervisor_type': 'fake', 'hypervisor_version': 1,
            'cpu_info': '', 'numa_topology': None,
            'supported_instances': [],
        }

    def get_info(self, instance, use_cache=True):
        state = (power_state.RUNNING if instance.uuid in self.running
                 else power_state.SHUTDOWN)
        return hardware.InstanceInfo(state=state)

    def power_off(self, instance, timeout=0, retry_interval=0):
        self._record('power_off')
        self.running.discard(instance.uuid)

    def destroy(self, context, instance, network_info, block_device_info=None,
                destroy_disks=True, destroy_secrets=True):
        self._record('destroy', destroy_disks)
        self.running.discard(instance.uuid)

    def spawn(self, context, instance, image_meta, injected_files,
              admin_password, allocations, network_info=None,
              block_device_info=None, power_on=True, accel_info=None):
        self._record('spawn', sorted(allocations))
        if 'spawn' in self.failing:
            raise DriverFailed('spawn')
        self.running.add(instance.uuid)

    def plug_vifs(self, instance, network_info):
        self._record('plug_vifs')

    def get_volume_connector(self, instance):
        return {'host': self.host}

    def confirm_migration(self, context, migration, instance, network_info):
        self._move('confirm_migration')
        self.running.discard(instance.uuid)

    def migrate_disk_and_power_off(self, context, instance, dest, flavor,
                                   network_info, block_device_info=None,
                                   timeout=0, retry_interval=0):
        """The source's half of a resize: the guest is off, disk sent."""
        self._move('migrate_disk_and_power_off')
        self.running.discard(instance.uuid)
        return 'disk of %s for %s' % (instance.uuid, dest)

    def finish_migration(self, context, migration, instance, disk_info,
                         network_info, image_meta, resize_instance,
                         allocations, block_device_info=None, power_on=True,
                         share_info=None):
        """The destination's half: the guest starts here."""
        self._move('finish_migration')
        if power_on:
            self.running.add(instance.uuid)

    def finish_revert_migration(self, context, instance, network_info,
                                migration, block_device_info=None,
                                power_on=True, share_info=None):
        self._move('finish_revert_migration')
        self.running.add(instance.uuid)

    #: What nova asks of a driver before it evacuates to its host.
    capabilities = {'supports_evacuate': True}

    def list_instance_uuids(self):
        return sorted(self.running)

    def instance_exists(self, instance):
        return instance.uuid in self.running

    def instance_on_disk(self, instance):
        return False

    def get_host_ip_addr(self):
        return '127.0.0.1'

    def rebuild(self, **kwargs):
        # No driver-specific rebuild: nova's default destroys and spawns.
        raise NotImplementedError()

    def check_instance_shared_storage_local(self, context, instance):
        """What a host asking whether a disk is shared hands the other.

        Local disks only: the other host's answer
        (:meth:`check_instance_shared_storage_remote`) is always no.
        Unless :attr:`checks_shared_storage`, the check is not implemented
        and nova takes the disk for local without asking (a revert
        destroys the destination's).
        """
        if not self.checks_shared_storage:
            raise NotImplementedError()
        self._record('check_instance_shared_storage_local')
        return {'filename': 'shared-check-of-%s' % instance.uuid}

    def check_instance_shared_storage_remote(self, context, data):
        self._record('check_instance_shared_storage_remote')
        return False

    def check_instance_shared_storage_cleanup(self, context, data):
        self._record('check_instance_shared_storage_cleanup')


class DriverFailed(Exception):
    """A virt driver call failed (a fault a scenario injects)."""


class NetworkAPI(object):
    """neutron for one host: one port per instance.

    :param binding_fails: binding ports to this host fails
    """

    def __init__(self, host, events, binding_fails=False):
        self.host = host
        self.events = events
        self.binding_fails = binding_fails

    @staticmethod
    def port_of(instance_uuid):
        return 'port-of-%s' % instance_uuid

    def get_instance_nw_info(self, context, instance, **kwargs):
        return network_model.NetworkInfo([network_model.VIF(
            id=self.port_of(instance.uuid))])

    def unbind_ports(self, context, ports, detach=True):
        self.events.append(('%s network.unbind_ports' % self.host,
                            list(ports)))

    def setup_instance_network_on_host(self, context, instance, host,
                                       migration=None,
                                       provider_mappings=None):
        if self.binding_fails:
            raise nova_exception.PortBindingFailed(
                port_id=self.port_of(instance.uuid))
        self.events.append(('%s network.setup' % self.host, host))

    def _record(self, name):
        self.events.append(('%s network.%s' % (self.host, name),))

    def setup_networks_on_host(self, context, instance, host=None,
                               teardown=False):
        self._record('setup_networks_on_host')

    def deallocate_for_instance(self, context, instance, **kwargs):
        self._record('deallocate_for_instance')

    def migrate_instance_start(self, context, instance, migration):
        self._record('migrate_instance_start')

    def migrate_instance_finish(self, context, instance, migration,
                                provider_mappings):
        self._record('migrate_instance_finish')

    def get_requested_resource_for_instance(self, context, instance_uuid):
        # The port has no QoS or other resource request.
        return [], objects.RequestLevelParams()


class Notifier(object):
    """An oslo.messaging notifier that records the event types."""

    def __init__(self, events, publisher):
        self.events = events
        self.publisher = publisher

    def info(self, context, event_type, payload):
        self.events.append(('%s notify' % self.publisher, event_type))

    def error(self, context, event_type, payload):
        self.events.append(('%s notify error' % self.publisher, event_type))


class SchedulerRPC(object):
    """The scheduler as its RPC clients see it.

    :param events: a list the casts are recorded in
    :param scheduler: a nova ``SchedulerManager`` (for the conductor's
        ``select_destinations``), or None
    :ivar instance_info: None, or the scheduler's view of the servers on
        each host, ``{host: set of instance uuids}``, shared by the run's
        clients: what nova's ``HostManager`` keeps from these casts
        (an update adds the servers listed, a delete removes one; no host
        is unknown to it, none needs re-creating from the database)
    """

    def __init__(self, events, scheduler=None):
        self.events = events
        self.scheduler = scheduler
        self.instance_info = None

    def update_instance_info(self, context, host_name, instance_info):
        self.events.append(('scheduler.update_instance_info', host_name))
        if self.instance_info is not None:
            self.instance_info.setdefault(host_name, set()).update(
                instance.uuid for instance in instance_info.objects)

    def delete_instance_info(self, context, host_name, instance_uuid):
        self.events.append(('scheduler.delete_instance_info', host_name))
        if self.instance_info is not None:
            self.instance_info.setdefault(host_name, set()).discard(
                instance_uuid)

    def select_destinations(self, context, spec_obj, instance_uuids,
                            return_objects=False, return_alternates=False):
        # An RPC call: the scheduler gets its own copies.
        return self.scheduler.select_destinations(
            bus.received(context), spec_obj=spec_obj.obj_clone(),
            instance_uuids=instance_uuids, return_objects=return_objects,
            return_alternates=return_alternates)


class ServiceLocks(fixtures.Fixture):
    """nova's locks, one set per service process.

    While installed, ``lockutils.lock`` (which ``nova.utils.synchronized``
    calls) takes the lock from the :class:`~shelvefix.utils.Locks` of the
    service the calling thread runs for (see :meth:`running`); threads
    running for no service (test set-up, checks) get oslo.concurrency's
    own lock.

    :ivar locks: ``{service: Locks}``; :meth:`reset` makes new ones
    """

    def __init__(self, services):
        super(ServiceLocks, self).__init__()
        self.services = tuple(services)
        self._local = threading.local()
        self.reset()

    def reset(self):
        """Fresh locks for every service (none held)."""
        self.locks = {service: utils.Locks() for service in self.services}

    def _setUp(self):
        original = lockutils.lock

        def lock(name, lock_file_prefix=None, external=False, lock_path=None,
                 do_log=True, semaphores=None, delay=0.01, fair=False,
                 blocking=True):
            service = getattr(self._local, 'service', None)
            if service is None:
                return original(name, lock_file_prefix, external, lock_path,
                                do_log=do_log, semaphores=semaphores,
                                delay=delay, fair=fair, blocking=blocking)
            # Fairness is an order among waiters; the explorer tries every
            # order anyway.
            return self.locks[service].lock(name)

        self.useFixture(fixtures.MonkeyPatch(
            'oslo_concurrency.lockutils.lock', lock))

    def running(self, service, func):
        """``func`` wrapped to run as a thread of ``service``."""
        def run():
            outer = getattr(self._local, 'service', None)
            self._local.service = service
            try:
                return func()
            finally:
                self._local.service = outer
        return run
