"""The records a server's build reads and writes, as the build lab keeps them.

A build begins in the API database and ends in a cell's: the API saves a
build request (the server as the user asked for it), a request spec and an
instance mapping with no cell yet; nova's conductor creates the server's
record in the cell of the host the scheduler chose, maps the server to the
cell, and destroys the build request. :class:`BuildDatabase` patches those
reads and writes onto the run's stores, so that the explorer schedules
each as it does the instance's:

* build requests and instance mappings are rows of an :class:`ApiStore`
  each (``get``, ``update``, ``destroy``: one step each), and raise
  nova's own ``BuildRequestNotFound`` and ``InstanceMappingNotFound``;
* ``Instance.create`` writes the server's row to the run's
  :class:`BuildInstanceStore`; ``Instance.destroy`` is nova's
  ``instance_destroy``: it reads the row (``InstanceNotFound`` if it is
  gone), then soft-deletes it only if a server it took for host-less still
  has no host, else ``ObjectActionError`` ("host changed"), as nova's
  constrained delete does; a racing destroy that got there first finds
  ``ObjectActionError`` too, as nova's re-read of the row inside its own
  transaction still sees it (the second test of nova's regression test of
  bug 1914777 raises that);
* ``Instance.save`` refuses a save whose expected task state finds the
  server ``DELETING`` with nova's ``UnexpectedDeletingTaskStateError``, as
  nova's database API does, and, as nova's, writes none of the server's
  PCI devices (their tracker does);
* the host mapping of every host is the cell's; the request spec's
  destroy and the records only operators read (the build's notifications)
  are recorded.

This module imports nova (see :mod:`shelvefix.nova`).
"""

import contextlib

import fixtures
from nova.compute import power_state
from nova.compute import task_states
from nova.compute import vm_states
from nova import exception as nova_exception
from nova import objects

from shelvefix import exception as shelvefix_exception
from shelvefix.nova import database as database_mod
from shelvefix.nova import doubles
from shelvefix.nova import harness
from shelvefix.nova import lifecycle
from shelvefix.objects import base
from shelvefix.objects import instance as instance_obj

#: The fields of a server's row ``Instance.create`` writes, if set.
ROW_FIELDS = (
    'uuid', 'project_id', 'user_id', 'availability_zone', 'vm_state',
    'task_state', 'power_state', 'host', 'node', 'launched_on',
    'compute_id', 'launched_at', 'flavor', 'old_flavor', 'new_flavor',
    'instance_type_id', 'vcpus', 'memory_mb', 'root_gb', 'ephemeral_gb',
    'system_metadata', 'trusted_certs', 'pci_requests', 'display_name')


def api_instance(uuid, pci_requests):
    """The server as nova's API puts it in the build request."""
    flavor = lifecycle.flavor()
    values = dict(lifecycle.static_fields(uuid))
    values.update(
        uuid=uuid, project_id=harness.PROJECT, user_id=harness.USER,
        vm_state=vm_states.BUILDING, task_state=task_states.SCHEDULING,
        power_state=power_state.NOSTATE, host=None, node=None,
        launched_on=None, compute_id=None, launched_at=None,
        availability_zone=None, flavor=flavor, old_flavor=None,
        new_flavor=None, instance_type_id=flavor.id, vcpus=flavor.vcpus,
        memory_mb=flavor.memory_mb, root_gb=flavor.root_gb,
        ephemeral_gb=flavor.ephemeral_gb, system_metadata={},
        trusted_certs=None, display_name='server', image_ref=lifecycle.IMAGE,
        pci_requests=pci_requests)
    instance = objects.Instance(**values)
    instance.obj_reset_changes()
    return instance


class RecordNotFound(shelvefix_exception.ShelvefixException):
    """No row of that uuid in an :class:`ApiStore`."""

    msg_fmt = '%(kind)s %(uuid)s could not be found.'


class ApiStore(base.RowStore):
    """Rows of one table of the API database, by the server's uuid.

    :param kind: what its rows are (``'build request'``,
        ``'instance mapping'``), for the explorer's labels
    """

    def __init__(self, kind):
        super(ApiStore, self).__init__()
        self.kind = kind

    def _not_found(self, uuid):
        return RecordNotFound(kind=self.kind, uuid=uuid)

    def _describe(self, row):
        return ' '.join('%s=%s' % (name, row[name]) for name in sorted(row)
                        if name not in ('uuid', 'instance')) or 'found'

    def update(self, uuid, values):
        """Write ``values`` to the row (an intercepted ``'update'``)."""
        return self._update(uuid, values)


class BuildInstanceStore(instance_obj.InstanceStore):
    """The cell's instance table, with nova's constrained destroy."""

    def destroy_where(self, uuid, hostless):
        """Soft-delete the row, if ``hostless``, only if it has no host.

        One intercepted ``'destroy'``: nova's ``UPDATE ... SET deleted``
        with its constraint, in one statement.

        :returns: True, or False if no row was deleted (gone already, or
            given a host meanwhile)
        """
        handle = self._intercept('destroy', uuid)
        with self._lock:
            row = self._rows.get(uuid)
            if (row is None or uuid in self._deleted or
                    (hostless and row['host'] is not None)):
                handle.done('not deleted')
                return False
            self._deleted.add(uuid)
        handle.done('deleted')
        return True


@contextlib.contextmanager
def _recorded(events, name):
    events.append((name, 'start'))
    yield
    events.append((name, 'end'))


class BuildDatabase(fixtures.Fixture):
    """The API database and the cell's instance table of a build.

    :param database: the :class:`~.database.Database` (its ``store`` is
        the run's :class:`BuildInstanceStore`)

    :ivar build_requests: the run's build requests (an :class:`ApiStore`;
        set it, with :attr:`mappings`, before each run)
    :ivar mappings: the run's instance mappings
    """

    def __init__(self, database):
        super(BuildDatabase, self).__init__()
        self.database = database
        self.build_requests = None
        self.mappings = None

    def build_request(self, context, row):
        """A nova ``BuildRequest`` of a row: the server the API holds."""
        instance = row['instance'].obj_clone()
        instance._context = context
        request = objects.BuildRequest(
            context=context, id=1, instance_uuid=row['uuid'],
            project_id=instance.project_id, instance=instance,
            block_device_mappings=objects.BlockDeviceMappingList(),
            tags=objects.TagList())
        request.obj_reset_changes()
        return request

    def _setUp(self):
        database = self
        events = self.database.events

        def get_build_request(context, instance_uuid):
            try:
                row = database.build_requests.get(instance_uuid)
            except RecordNotFound:
                raise nova_exception.BuildRequestNotFound(uuid=instance_uuid)
            return database.build_request(context, row)

        def destroy_build_request(request):
            try:
                database.build_requests.soft_delete(request.instance_uuid)
            except RecordNotFound:
                raise nova_exception.BuildRequestNotFound(
                    uuid=request.instance_uuid)

        def get_mapping(context, instance_uuid):
            try:
                row = database.mappings.get(instance_uuid)
            except RecordNotFound:
                raise nova_exception.InstanceMappingNotFound(
                    uuid=instance_uuid)
            mapping = objects.InstanceMapping(
                context=context, id=1, instance_uuid=instance_uuid,
                cell_mapping=(database_mod.cell_mapping() if row['cell']
                              else None),
                project_id=row['project_id'], user_id=row['user_id'],
                queued_for_delete=row['queued_for_delete'])
            mapping.obj_reset_changes()
            return mapping

        def save_mapping(mapping):
            changes = mapping.obj_get_changes()
            values = {}
            if 'cell_mapping' in changes:
                values['cell'] = (changes['cell_mapping'].uuid
                                  if changes['cell_mapping'] else None)
            if 'queued_for_delete' in changes:
                values['queued_for_delete'] = changes['queued_for_delete']
            try:
                database.mappings.update(mapping.instance_uuid, values)
            except RecordNotFound:
                raise nova_exception.InstanceMappingNotFound(
                    uuid=mapping.instance_uuid)
            mapping.obj_reset_changes()

        def destroy_mapping(mapping):
            try:
                database.mappings.soft_delete(mapping.instance_uuid)
            except RecordNotFound:
                raise nova_exception.InstanceMappingNotFound(
                    uuid=mapping.instance_uuid)

        def host_mapping(context, host):
            return objects.HostMapping(
                host=host, cell_mapping=database_mod.cell_mapping())

        def create(instance):
            if instance.obj_attr_is_set('id'):
                raise nova_exception.ObjectActionError(
                    action='create', reason='already created')
            row = {field: (getattr(instance, field)
                           if instance.obj_attr_is_set(field) else None)
                   for field in ROW_FIELDS}
            row['id'] = 1
            database.database.store.create(row)
            instance.id = 1
            instance.deleted = False
            instance.obj_reset_changes()

        def destroy(instance, hard_delete=False):
            if not instance.obj_attr_is_set('id'):
                raise nova_exception.ObjectActionError(
                    action='destroy', reason='already destroyed')
            store = database.database.store
            hostless = (not instance.obj_attr_is_set('host') or
                        not instance.host)
            # nova's instance_destroy reads the row first...
            try:
                store.get(instance.uuid)
            except shelvefix_exception.InstanceNotFound:
                raise nova_exception.InstanceNotFound(
                    instance_id=instance.uuid)
            # ... then deletes it under its constraint; no row deleted, its
            # re-read in the same transaction still finds the row it read.
            if not store.destroy_where(instance.uuid, hostless):
                raise nova_exception.ObjectActionError(
                    action='destroy', reason='host changed')
            instance.deleted = True
            del instance.id
            instance.obj_reset_changes()

        def save(instance, expected_vm_state=None, expected_task_state=None,
                 admin_state_reset=False):
            # nova saves no PCI device with the instance: the PCI tracker
            # writes them, and the instance reads them back.
            if instance.obj_attr_is_set('pci_devices'):
                instance.obj_reset_changes(['pci_devices'], recursive=True)
            try:
                database.database._save(instance, expected_vm_state,
                                        expected_task_state)
            except nova_exception.UnexpectedTaskStateError as e:
                actual = e.kwargs.get('actual', {}).get('task_state')
                if actual == task_states.DELETING:
                    raise nova_exception.UnexpectedDeletingTaskStateError(
                        **e.kwargs) from e
                raise

        def by_host(context, host, expected_attrs=None, use_slave=False):
            return objects.InstanceList(objects=[
                database.database.load(context, row)
                for row in database.database.store.query(host=host)])

        def notify_delete(notifier, context, instance, delete_type='delete',
                          source=None):
            return _recorded(events, 'notify.delete')

        record = self.database._record
        patches = [
            ('nova.objects.build_request.BuildRequest.get_by_instance_uuid',
             doubles.class_call(get_build_request)),
            ('nova.objects.build_request.BuildRequest.destroy',
             destroy_build_request),
            ('nova.objects.instance_mapping.InstanceMapping.'
             'get_by_instance_uuid', doubles.class_call(get_mapping)),
            ('nova.objects.instance_mapping.InstanceMapping.save',
             save_mapping),
            ('nova.objects.instance_mapping.InstanceMapping.destroy',
             destroy_mapping),
            ('nova.objects.host_mapping.HostMapping.get_by_host',
             doubles.class_call(host_mapping)),
            ('nova.objects.instance.Instance.create', create),
            ('nova.objects.instance.Instance.destroy', destroy),
            ('nova.objects.instance.Instance.save', save),
            ('nova.objects.instance.InstanceList.get_by_host',
             doubles.class_call(by_host)),
            ('nova.objects.request_spec.RequestSpec.destroy',
             record('request_spec.destroy')),
            ('nova.compute.utils.notify_about_instance_delete',
             notify_delete),
            ('nova.compute.utils.notify_about_instance_create',
             record('notify.create')),
        ]
        for name, value in patches:
            self.useFixture(fixtures.MonkeyPatch(name, value))
