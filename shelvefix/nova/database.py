"""nova's database, as the lifecycle harness stands in for it.

:class:`Database` patches every database read and write nova's code makes
on the shelve/unshelve path, and nothing else:

* the instance: ``Instance.save`` writes the changed fields to a shelvefix
  :class:`~shelvefix.objects.instance.InstanceStore` (enforcing
  ``expected_task_state`` and ``expected_vm_state``, as nova's database
  layer does, and raising nova's own exceptions), and
  ``InstanceList.get_by_host_and_node`` and ``Instance.get_by_uuid`` read
  it (``query`` and ``get``), so every access the explorer must schedule
  goes through the store's interceptor; a field nova would lazy-load is an
  error, so nothing is read behind the store's back;
* the cell database: compute node records (``ComputeNode.get_by_uuid``,
  which the resource tracker reads once, when it starts tracking its
  node), no migrations, PCI devices, block device or share mappings;
* the API database: the one cell, the instance's mapping to it, no
  server group, no aggregates (the availability zone is then nova's default);
* the scheduler host manager's scatter-gather over the cells for compute
  nodes and services (:meth:`Database.computes_for_cells`), and its
  per-host instance lists, which only the server group filters read (the
  request has no group): they would be instance store reads of the
  scheduler unrelated to the races;
* records that go to the database or the notification bus only for
  operators: instance action events, faults and notifications are
  appended to :attr:`Database.events`.

This module imports nova (see :mod:`shelvefix.nova`).
"""

import copy

import fixtures
from nova import exception as nova_exception
from nova import objects
from oslo_utils import timeutils
from oslo_utils import uuidutils

from shelvefix import exception as shelvefix_exception
from shelvefix.nova import doubles
from shelvefix import utils

CELL_UUID = utils.fixed_uuid('cell1')


def cell_mapping():
    """The deployment's one cell (its database is never opened)."""
    return objects.CellMapping(
        uuid=CELL_UUID, name='cell1', database_connection='sqlite://',
        transport_url='none://', disabled=False)


def compute_node(host, uuid, node_id, inventory):
    """A compute node record as nova's database holds it."""
    now = timeutils.utcnow()
    return objects.ComputeNode(
        id=node_id, uuid=uuid, host=host, hypervisor_hostname=host,
        service_id=node_id, vcpus=inventory['VCPU'],
        memory_mb=inventory['MEMORY_MB'], local_gb=inventory['DISK_GB'],
        vcpus_used=0, memory_mb_used=0, local_gb_used=0,
        free_ram_mb=inventory['MEMORY_MB'], free_disk_gb=inventory['DISK_GB'],
        disk_available_least=inventory['DISK_GB'], current_workload=0,
        running_vms=0, hypervisor_type='fake', hypervisor_version=1,
        cpu_info='', host_ip='127.0.0.1', numa_topology=None,
        supported_hv_specs=[], pci_device_pools=objects.PciDevicePoolList(),
        stats={}, metrics='[]', cpu_allocation_ratio=16.0,
        ram_allocation_ratio=1.5, disk_allocation_ratio=1.0,
        deleted=False, created_at=now, updated_at=now)


def service(host, service_id, disabled=False):
    """The nova-compute service record of ``host``, just heard from."""
    now = timeutils.utcnow()
    return objects.Service(
        id=service_id, uuid=uuidutils.generate_uuid(), host=host,
        binary='nova-compute', topic='compute', report_count=1,
        disabled=disabled, disabled_reason='drained' if disabled else None,
        forced_down=False, last_seen_up=now, created_at=now, updated_at=now,
        deleted=False)


class Database(fixtures.Fixture):
    """The stubs; what they read is set per run.

    :ivar store: the run's instance store (set it before each run)
    :ivar static: fields every instance row lacks, e.g. the flavor, given
        to every ``Instance`` loaded from the store
    :ivar static_of: ``{uuid: fields}`` for a run with more than one
        server: a server's own, instead of :attr:`static`
    :ivar compute_nodes: ``{uuid: ComputeNode}``
    :ivar services: ``{host: Service}``
    :ivar events: what was recorded instead of written
    """

    def __init__(self):
        super(Database, self).__init__()
        self.store = None
        self.static = {}
        self.static_of = {}
        self.compute_nodes = {}
        self.services = {}
        self.events = []

    def load(self, context, row):
        """A nova ``Instance`` of a store row, with no pending changes."""
        values = dict(self.static_of.get(row['uuid'], self.static))
        values.update(row)
        instance = objects.Instance(context=context, **values)
        instance.obj_reset_changes(recursive=True)
        return instance

    def _save(self, instance, expected_vm_state=None,
              expected_task_state=None, admin_state_reset=False):
        changes = {field: copy.deepcopy(getattr(instance, field))
                   for field in instance.obj_what_changed()}
        try:
            row = self.store.update(instance.uuid, changes,
                                    expected_task_state=expected_task_state,
                                    expected_vm_state=expected_vm_state)
        except shelvefix_exception.InstanceUpdateConflict as e:
            # Same names, hierarchy and arguments as nova's, which nova's
            # callers catch.
            raise getattr(nova_exception, type(e).__name__)(
                **e.kwargs) from e
        except shelvefix_exception.InstanceNotFound as e:
            # Deleted (nova's save of a destroyed instance finds no row).
            raise nova_exception.InstanceNotFound(
                instance_id=instance.uuid) from e
        # Like nova's, the object then holds what the row holds, changes
        # other services saved included.
        for field, value in row.items():
            if field not in ('id', 'uuid') and (
                    not instance.obj_attr_is_set(field) or
                    getattr(instance, field) != value):
                setattr(instance, field, value)
        instance.obj_reset_changes(recursive=True)

    def deleted(self, uuid):
        """True if the store has the instance, destroyed (soft-deleted)."""
        try:
            return self.store.is_deleted(uuid)
        except shelvefix_exception.InstanceNotFound:
            return False

    def _record(self, name):
        def record(*args, **kwargs):
            self.events.append((name, kwargs.get('phase')))
        return record

    def _setUp(self):
        database = self

        def save(instance, expected_vm_state=None, expected_task_state=None,
                 admin_state_reset=False):
            database._save(instance, expected_vm_state, expected_task_state)

        def lazy_load(instance, attrname):
            raise AssertionError(
                'nova read Instance.%s, which the harness did not set and '
                'would load from the database' % attrname)

        def by_host_and_node(context, host, node, expected_attrs=None,
                             use_slave=False):
            return objects.InstanceList(objects=[
                database.load(context, row)
                for row in database.store.query(host=host, node=node)])

        def by_uuid(context, uuid, expected_attrs=None, use_slave=False):
            try:
                row = database.store.get(uuid)
            except shelvefix_exception.InstanceNotFound:
                # A destroyed instance is found with read_deleted='yes'.
                if (getattr(context, 'read_deleted', 'no') != 'yes' or
                        not database.deleted(uuid)):
                    raise nova_exception.InstanceNotFound(instance_id=uuid)
                row = dict(database.store.peek(uuid), deleted=True)
            return database.load(context, row)

        def compute_node_by_uuid(context, uuid, read_deleted=None):
            try:
                return database.compute_nodes[uuid].obj_clone()
            except KeyError:
                raise nova_exception.ComputeHostNotFound(host=uuid)

        def compute_nodes_by_host(context, host, use_slave=False):
            nodes = [node.obj_clone()
                     for node in database.compute_nodes.values()
                     if node.host == host]
            if not nodes:
                raise nova_exception.ComputeHostNotFound(host=host)
            return objects.ComputeNodeList(objects=nodes)

        def compute_nodes_by_uuids(context, uuids):
            return objects.ComputeNodeList(objects=[
                database.compute_nodes[uuid].obj_clone() for uuid in uuids
                if uuid in database.compute_nodes])

        def no_pci_requests(context, instance_uuid):
            return objects.InstancePCIRequests(requests=[],
                                               instance_uuid=instance_uuid)

        def minimum_version(context, binaries, require_all=False):
            # nova reads the cells' service versions from their databases,
            # which the lab does not have, and takes a cell that fails to
            # answer for one with no service: 0. The same, without the
            # failure logged at each scheduling (the scheduler's owner
            # filter then asks for no OWNER_NOVA trait, which the stubbed
            # inventory reports never set).
            return 0

        def empty(list_cls):
            return doubles.class_call(
                lambda *args, **kwargs: list_cls(objects=[]))

        def no_group(context, instance_uuid):
            raise nova_exception.InstanceGroupNotFound(
                group_uuid='of %s' % instance_uuid)

        def instance_mapping(context, instance_uuid):
            return objects.InstanceMapping(
                instance_uuid=instance_uuid, cell_mapping=cell_mapping(),
                project_id='', queued_for_delete=False)

        patches = [
            ('nova.objects.instance.Instance.save', save),
            ('nova.objects.instance.Instance.obj_load_attr', lazy_load),
            ('nova.objects.instance.InstanceList.get_by_host_and_node',
             doubles.class_call(by_host_and_node)),
            ('nova.objects.instance.Instance.get_by_uuid',
             doubles.class_call(by_uuid)),
            ('nova.objects.compute_node.ComputeNode.get_by_uuid',
             doubles.class_call(compute_node_by_uuid)),
            ('nova.objects.compute_node.ComputeNodeList.get_all_by_uuids',
             doubles.class_call(compute_nodes_by_uuids)),
            ('nova.objects.compute_node.ComputeNodeList.get_all_by_host',
             doubles.class_call(compute_nodes_by_host)),
            ('nova.objects.service.get_minimum_version_all_cells',
             minimum_version),
            ('nova.objects.instance_pci_requests.InstancePCIRequests.'
             'get_by_instance_uuid', doubles.class_call(no_pci_requests)),
            ('nova.objects.migration.MigrationList.'
             'get_in_progress_and_error', empty(objects.MigrationList)),
            ('nova.objects.pci_device.PciDeviceList.get_by_compute_node',
             empty(objects.PciDeviceList)),
            ('nova.objects.block_device.BlockDeviceMappingList.'
             'get_by_instance_uuid', empty(objects.BlockDeviceMappingList)),
            ('nova.objects.share_mapping.ShareMappingList.'
             'get_by_instance_uuid', empty(objects.ShareMappingList)),
            ('nova.objects.instance_mapping.InstanceMapping.'
             'get_by_instance_uuid', doubles.class_call(instance_mapping)),
            ('nova.objects.instance_group.InstanceGroup.'
             'get_by_instance_uuid', doubles.class_call(no_group)),
            ('nova.objects.cell_mapping.CellMappingList.get_all',
             doubles.class_call(lambda context: objects.CellMappingList(
                 objects=[cell_mapping()]))),
            ('nova.objects.aggregate.AggregateList.get_all',
             empty(objects.AggregateList)),
            ('nova.objects.aggregate.AggregateList.get_by_host',
             empty(objects.AggregateList)),
            ('nova.scheduler.host_manager.HostManager.'
             '_get_computes_for_cells', self.computes_for_cells),
            ('nova.scheduler.host_manager.HostManager.'
             '_get_instances_by_host',
             lambda manager, context, host_name: {}),
            ('nova.objects.instance_action.InstanceActionEvent.event_start',
             doubles.class_call(self._record('action_event.start'))),
            ('nova.objects.instance_action.InstanceActionEvent.'
             'event_finish_with_failure',
             doubles.class_call(self._record('action_event.finish'))),
            ('nova.compute.utils.notify_about_instance_usage',
             self._record('notify.usage')),
            ('nova.compute.utils.notify_about_instance_action',
             self._record('notify.action')),
            ('nova.compute.utils.notify_about_scheduler_action',
             self._record('notify.scheduler')),
            ('nova.compute.utils.add_instance_fault_from_exc',
             self._record('instance_fault')),
            ('nova.exception_wrapper._emit_legacy_exception_notification',
             self._record('notify.exception')),
            ('nova.exception_wrapper._emit_versioned_exception_notification',
             self._record('notify.exception')),
        ]
        for name, value in patches:
            self.useFixture(fixtures.MonkeyPatch(name, value))

    @property
    def computes_for_cells(self):
        """``HostManager._get_computes_for_cells``, from the records."""
        database = self

        def computes(manager, context, cells, compute_uuids):
            nodes = [node.obj_clone()
                     for uuid, node in sorted(database.compute_nodes.items())
                     if compute_uuids is None or uuid in compute_uuids]
            services = {}
            for host, record in database.services.items():
                # The services report every few seconds: they are up.
                services[host] = record.obj_clone()
                services[host].last_seen_up = timeutils.utcnow()
            return {CELL_UUID: nodes}, services
        return computes
