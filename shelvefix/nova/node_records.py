"""The cell database's service and compute node records, step by step.

The lifecycle harness (:class:`~.database.Database`) hands out its
compute node and service records without the explorer seeing it. The
scenarios about what a compute service reports of its node
(``service-disable``, ``ironic-rebalance``) need more: nova's inventory
report writes the records (:mod:`~.provider_report`), and an ironic
node's record is taken over and deleted. :class:`NodeRecords` makes every
read and write of those records an explorer step, and keeps them as
nova's database API does:

* a compute node is soft-deleted (``deleted`` set), found again by a
  context that reads deleted rows (``read_deleted='yes'``, as the
  tracker's ``_init_compute_node`` does), and saved only where such a
  context would find it; a host's list holds its live nodes, and none is
  ``ComputeHostNotFound``;
* nova's ``ComputeNode.destroy`` runs unchanged: what it hands the
  database API (``compute_node_delete`` with its host constraint, or
  none) is honoured as the real query does: a node whose host is no
  longer the one named is not deleted (``ConstraintNotMet``);
* a service record is read (``Service.get_by_compute_host``) and saved
  (``Service.save``) as a copy: an object nova holds keeps what it read.

The steps' resources: ``service:<host>``, ``compute_node:<node name>``,
and ``compute_node:*`` for a list or a create. :meth:`NodeRecords.step`
is also the step of :mod:`~.provider_report`'s cache
(``provider_tree:<host>``).

This module imports nova (see :mod:`shelvefix.nova`).
"""

import fixtures
from nova.db.main import api as db_api
from nova import exception as nova_exception
from nova import objects
from oslo_utils import timeutils

from shelvefix.explorer import model
from shelvefix.nova import doubles


def reading(context):
    """Which rows a query of ``context`` finds: ``no``, ``yes``, ``only``."""
    return getattr(context, 'read_deleted', None) or 'no'


def _visible(row, read_deleted):
    if read_deleted == 'yes':
        return True
    if read_deleted == 'only':
        return bool(row.deleted)
    return not row.deleted


def _meets(row, constraint):
    """Whether ``row`` meets a constraint of nova's database API."""
    for key, condition in constraint.conditions.items():
        value = getattr(row, key)
        if isinstance(condition, db_api.EqualityCondition):
            if value not in condition.values:
                return False
        elif isinstance(condition, db_api.InequalityCondition):
            if value in condition.values:
                return False
        else:
            raise AssertionError('a constraint the records do not know: %r'
                                 % (condition,))
    return True


class NodeRecords(fixtures.Fixture):
    """Service and compute node records whose every access is a step.

    :param database: the cloud's :class:`~.database.Database`; its
        ``services`` (``{host: Service}``) and ``compute_nodes`` (``{uuid:
        ComputeNode}``, deleted ones too) are the tables

    :ivar controller: the explorer's controller of the run under way, or
        None (set-up, checks): no step
    """

    def __init__(self, database):
        super(NodeRecords, self).__init__()
        self.database = database
        self.controller = None

    def step(self, kind, resources, access, label):
        """Announce an access; returns the handle to say what it found."""
        if self.controller is None:
            return _Done()
        return self.controller.step(kind, frozenset(resources),
                                    access=access, label=label)

    # -- services -----------------------------------------------------------

    def service_by_host(self, context, host, use_slave=False):
        """``Service.get_by_compute_host``: a copy of the record."""
        handle = self.step('service', ['service:%s' % host], model.READ,
                           'read service %s' % host)
        record = self.database.services.get(host)
        if record is None:
            handle.done('not found')
            raise nova_exception.ComputeHostNotFound(host=host)
        handle.done('disabled' if record.disabled else 'enabled')
        found = record.obj_clone()
        found._context = context
        found.obj_reset_changes()
        return found

    def save_service(self, service):
        """``Service.save``: the changed fields, into a new record."""
        changes = service.obj_get_changes()
        handle = self.step('service', ['service:%s' % service.host],
                           model.WRITE, 'save service %s' % service.host)
        record = self.database.services[service.host].obj_clone()
        for field, value in changes.items():
            setattr(record, field, value)
        record.updated_at = timeutils.utcnow()
        record.obj_reset_changes()
        self.database.services[service.host] = record
        service.obj_reset_changes()
        handle.done(', '.join('%s=%s' % item for item in sorted(
            changes.items())))

    # -- compute nodes ------------------------------------------------------

    def _node(self, row, context):
        node = row.obj_clone()
        node._context = context
        node.obj_reset_changes()
        return node

    def nodes_by_uuids(self, context, uuids):
        """``ComputeNodeList.get_all_by_uuids``, per ``read_deleted``."""
        table = self.database.compute_nodes
        names = [table[uuid].hypervisor_hostname for uuid in uuids
                 if uuid in table]
        handle = self.step('compute_node', ['compute_node:%s' % name
                                            for name in names] or
                           ['compute_node:*'], model.READ,
                           'read compute node %s' % ', '.join(names))
        read_deleted = reading(context)
        found = [self._node(table[uuid], context) for uuid in uuids
                 if uuid in table and _visible(table[uuid], read_deleted)]
        handle.done(', '.join('%s%s' % (node.host, ' (deleted)'
                                        if node.deleted else '')
                              for node in found) or 'none')
        return objects.ComputeNodeList(objects=found)

    def node_by_uuid(self, context, uuid):
        """``ComputeNode.get_by_uuid``, per ``read_deleted``."""
        nodes = self.nodes_by_uuids(context, [uuid])
        if not nodes:
            raise nova_exception.ComputeHostNotFound(host=uuid)
        return nodes[0]

    def nodes_by_host(self, context, host, use_slave=False):
        """``ComputeNodeList.get_all_by_host``: none is an error."""
        table = self.database.compute_nodes
        handle = self.step('compute_node', ['compute_node:*'] + [
            'compute_node:%s' % row.hypervisor_hostname
            for row in table.values()], model.READ,
            'list compute nodes of %s' % host)
        read_deleted = reading(context)
        found = [self._node(row, context) for _uuid, row in
                 sorted(table.items()) if row.host == host and
                 _visible(row, read_deleted)]
        handle.done(', '.join(node.hypervisor_hostname for node in found) or
                    'none')
        if not found:
            raise nova_exception.ComputeHostNotFound(host=host)
        return objects.ComputeNodeList(objects=found)

    def save_node(self, node, prune_stats=False):
        """``ComputeNode.save``: only where its context finds the row."""
        changes = node.obj_get_changes()
        changes.pop('id', None)
        handle = self.step('compute_node',
                           ['compute_node:%s' % node.hypervisor_hostname],
                           model.WRITE, 'save compute node %s'
                           % node.hypervisor_hostname)
        row = self.database.compute_nodes.get(node.uuid)
        if row is None or not _visible(row, reading(node._context)):
            handle.done('not found')
            raise nova_exception.ComputeHostNotFound(host=node.id)
        row = row.obj_clone()
        for field, value in changes.items():
            setattr(row, field, value)
        row.updated_at = timeutils.utcnow()
        row.obj_reset_changes()
        self.database.compute_nodes[node.uuid] = row
        node.obj_reset_changes()
        handle.done(', '.join(sorted(
            '%s=%s' % (field, changes[field]) for field in
            ('host', 'deleted') if field in changes)) or 'saved')

    def create_node(self, node):
        """``ComputeNode.create``: a new row, unless the uuid has one."""
        handle = self.step('compute_node', [
            'compute_node:*',
            'compute_node:%s' % node.hypervisor_hostname], model.WRITE,
            'create compute node %s' % node.hypervisor_hostname)
        table = self.database.compute_nodes
        if node.uuid in table:
            handle.done('duplicate')
            raise nova_exception.DuplicateRecord(target=node.uuid)
        node.id = max([row.id for row in table.values()] + [0]) + 1
        node.deleted = False
        node.obj_reset_changes()
        table[node.uuid] = node.obj_clone()
        handle.done('created for %s' % node.host)

    def delete_node(self, context, compute_id, constraint=None):
        """nova's ``compute_node_delete``: a soft delete, constrained."""
        table = self.database.compute_nodes
        rows = [row for row in table.values()
                if row.id == compute_id and not row.deleted]
        name = (rows[0].hypervisor_hostname if rows else
                'of id %s' % compute_id)
        handle = self.step('compute_node', ['compute_node:%s' % name],
                           model.WRITE, 'delete compute node %s' % name)
        if not rows:
            handle.done('not found')
            raise nova_exception.ComputeHostNotFound(host=compute_id)
        row = rows[0]
        if constraint is not None and not _meets(row, constraint):
            handle.done('constraint not met (host %s)' % row.host)
            raise nova_exception.ConstraintNotMet()
        row = row.obj_clone()
        row.deleted = True
        row.deleted_at = timeutils.utcnow()
        row.obj_reset_changes()
        table[row.uuid] = row
        handle.done('deleted (host %s)' % row.host)

    def _setUp(self):
        patches = [
            ('nova.objects.service.Service.get_by_compute_host',
             doubles.class_call(self.service_by_host)),
            ('nova.objects.service.Service.save', _method(self.save_service)),
            ('nova.objects.compute_node.ComputeNode.get_by_uuid',
             doubles.class_call(self.node_by_uuid)),
            ('nova.objects.compute_node.ComputeNodeList.get_all_by_uuids',
             doubles.class_call(self.nodes_by_uuids)),
            ('nova.objects.compute_node.ComputeNodeList.get_all_by_host',
             doubles.class_call(self.nodes_by_host)),
            ('nova.objects.compute_node.ComputeNode.save',
             _method(self.save_node)),
            ('nova.objects.compute_node.ComputeNode.create',
             _method(self.create_node)),
            ('nova.db.main.api.compute_node_delete', self.delete_node),
        ]
        for name, value in patches:
            self.useFixture(fixtures.MonkeyPatch(name, value))


def _method(func):
    """``func`` as a method: the object it is called on comes first."""
    return lambda obj, *args, **kwargs: func(obj, *args, **kwargs)


class _Done(object):
    """The handle of an access outside an explored run."""

    def done(self, result=None):
        """Nothing to say."""
        pass
