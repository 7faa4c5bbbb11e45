"""A build that asks for a PCI device: the hosts' devices and the judge.

With the ``pci-build-fails`` fault the ``build`` scenario's server asks,
through its flavor's PCI alias (``[pci] alias``), for one passthrough
device, and each host's hypervisor has one to pass through (``[pci]
device_spec``): its driver reports it as libvirt's does
(``pci_passthrough_devices``), nova's PCI tracker of the host's resource
tracker takes it in at the host's first audit, and the scheduler's host
records carry the node's device pool, which ``PciPassthroughFilter``
reads. compute-1's spawn fails, so nova's claim of compute-1's device is
aborted and the build rescheduled to compute-2, which claims its own.

:func:`end_labels` then checks the devices the guest of a server
``ACTIVE`` on a host was started with (what its hypervisor would pass
through): as many as the server asked for, all of that host's node
(:data:`PCI_MISMATCH` otherwise), as bug 1860555's were not.

This module imports nova (see :mod:`shelvefix.nova`).
"""

import itertools

import fixtures
from nova.compute import vm_states
from nova import objects
from nova.objects import pci_device
from oslo_serialization import jsonutils

from shelvefix.nova import doubles
from shelvefix.nova import harness
from shelvefix import utils

VENDOR_ID = '8086'
PRODUCT_ID = '1563'
#: The flavors' aliases of the device (one flavor asks for one device
#: through the first; another for two, one through each).
ALIAS = 'nic'
ALIASES = (ALIAS, 'nic-b')
#: The id nova's API gives each alias's request.
REQUEST_IDS = {alias: utils.fixed_uuid('pci-request-' + alias)
               for alias in ALIASES}
#: What the judge says of a server whose PCI devices are not its host's.
PCI_MISMATCH = 'PCI devices mismatch'


def devices_json(host, count=1):
    """The JSON of ``host``'s passthrough devices, as its driver says."""
    return jsonutils.dumps([{
        'address': '0000:81:00.%d' % function, 'vendor_id': VENDOR_ID,
        'product_id': PRODUCT_ID, 'dev_type': 'type-PCI',
        'numa_node': None, 'label': 'label_%s_%s' % (VENDOR_ID, PRODUCT_ID),
        'dev_id': 'pci_0000_81_00_%d_%s' % (function, host),
        'parent_addr': None} for function in range(count)])


def requests(uuid, aliases=(ALIAS,)):
    """A server's PCI requests: one device through each of ``aliases``."""
    return objects.InstancePCIRequests(instance_uuid=uuid, requests=[
        objects.InstancePCIRequest(
            count=1, alias_name=alias, request_id=REQUEST_IDS[alias],
            numa_policy=None,
            spec=[{'vendor_id': VENDOR_ID, 'product_id': PRODUCT_ID}])
        for alias in aliases])


def device_pools(count=1):
    """The node's device pool, as its record holds it for the scheduler."""
    return objects.PciDevicePoolList(objects=[objects.PciDevicePool(
        vendor_id=VENDOR_ID, product_id=PRODUCT_ID, numa_node=None,
        tags={'dev_type': 'type-PCI'}, count=count)])


class PciConfig(fixtures.Fixture):
    """nova's ``[pci]`` options, and the scheduler's PCI filter.

    :param cloud: the :class:`~shelvefix.nova.build.BuildCloud`; its
        hosts' records get their device pools
    :param devices: how many devices each host passes through
    """

    def __init__(self, cloud, devices=1):
        super(PciConfig, self).__init__()
        self.cloud = cloud
        self.devices = devices

    def _setUp(self):
        conf = self.useFixture(harness.NovaConfig())
        conf.config(device_spec=[jsonutils.dumps(
            {'vendor_id': VENDOR_ID, 'product_id': PRODUCT_ID})],
            alias=[jsonutils.dumps(
                {'vendor_id': VENDOR_ID, 'product_id': PRODUCT_ID,
                 'name': alias, 'device_type': 'type-PCI'})
                for alias in ALIASES],
            group='pci')
        filters = list(conf.conf.filter_scheduler.enabled_filters)
        conf.config(enabled_filters=filters + ['PciPassthroughFilter'],
                    group='filter_scheduler')
        for node in self.cloud.database.compute_nodes.values():
            node.pci_device_pools = device_pools(self.devices)
        # A device the tracker takes in gets the id of its database row
        # (the tracker's save, which writes it, is the stubbed report).
        create = pci_device.PciDevice.create
        ids = itertools.count(1)

        def created(context, dev_dict):
            device = create(context, dev_dict)
            device.id = next(ids)
            return device
        self.useFixture(fixtures.MonkeyPatch(
            'nova.objects.pci_device.PciDevice.create',
            doubles.class_call(created)))
        self.useFixture(fixtures.MonkeyPatch(
            'nova.objects.pci_device.PciDevice.save', lambda device: None))


def end_labels(run):
    """:data:`PCI_MISMATCH` if an active server's guest got other devices.

    The guest its host's hypervisor started must have been given as many
    devices as the server asked for, all of that host's node.

    :param run: the :class:`~.build.BuildRun`
    """
    for uuid in run.servers():
        row = run.saved(uuid)
        if (row is None or run.deleted(uuid) or
                row['vm_state'] != vm_states.ACTIVE or row['host'] is None):
            continue
        node = run.cloud.database.compute_nodes[run.providers[row['host']]]
        given = run.computes[row['host']].driver.spawned_pci.get(uuid, [])
        wanted = sum(request.count for request in run.pci_of[uuid].requests)
        if (len(given) != wanted or
                any(node_id != node.id for node_id, _address in given)):
            return [PCI_MISMATCH]
    return []
