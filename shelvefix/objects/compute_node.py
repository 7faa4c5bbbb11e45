"""The cell's compute service and compute node records, through stores.

The scenarios about what a compute service reports of itself need the two
tables the other scenarios do without: the services (``disabled``, which
the ``COMPUTE_STATUS_DISABLED`` trait mirrors) and the compute nodes (an
ironic node's record moves from one service's host to another's). As
with :mod:`shelvefix.objects.instance`, an object is a copy: setting a
field changes nothing anyone else sees until ``save``.

A compute node is soft-deleted as nova's ``compute_node_delete`` does it:
its ``deleted`` field set, the row kept. A read finds it only when asked
to read deleted rows (``read_deleted='yes'``, as a tracker taking a node
over does); :meth:`ComputeNode.destroy` deletes only a row whose host is
still the object's (nova's constraint since bug 1853009's fix), else
raises :class:`~shelvefix.exception.ObjectActionError`.

Both stores are :class:`~shelvefix.objects.base.RowStore`\\ s, so that
the race lab makes each read and write an explorer step (kinds
``service`` and ``compute_node``).
"""

import copy

from shelvefix import exception
from shelvefix.objects import base
from shelvefix import utils

SERVICE_FIELDS = ('uuid', 'id', 'host', 'binary', 'disabled',
                  'disabled_reason')
NODE_FIELDS = ('uuid', 'id', 'host', 'hypervisor_hostname', 'service_id',
               'deleted')


class ServiceStore(base.RowStore):
    """The saved service records, by uuid."""

    kind = 'service'

    def _not_found(self, uuid):
        return exception.ComputeHostNotFound(host=uuid)

    def _describe(self, row):
        return '%s %s' % (row['host'],
                          'disabled' if row['disabled'] else 'enabled')

    def update(self, uuid, values):
        """Write ``values`` to the record; returns a copy of it."""
        return self._update(uuid, values)


class ComputeNodeStore(base.RowStore):
    """The saved compute node records, by uuid, soft-deleted ones kept."""

    kind = 'compute_node'

    def _not_found(self, uuid):
        return exception.ComputeHostNotFound(host=uuid)

    def _describe(self, row):
        return '%s of %s%s' % (row['hypervisor_hostname'], row['host'],
                               ' (deleted)' if row['deleted'] else '')

    def update(self, uuid, values, expected_host=None, expected_live=False):
        """Write ``values`` if the row's host is ``expected_host``.

        :param expected_host: None (not checked) or the host the row must
            still have: the database API's constraint
        :param expected_live: the row must not be deleted
        :raises ObjectActionError: the row's host is another one, or it is
            deleted and ``expected_live``; nothing is written
        """
        return self._update(uuid, values, expected_host=expected_host,
                            expected_live=expected_live)

    def _check_update(self, uuid, row, values, expected_host, expected_live):
        if expected_host is not None and row['host'] != expected_host:
            raise exception.ObjectActionError(
                action='save', reason='host is %s, not %s'
                % (row['host'], expected_host))
        if expected_live and row['deleted']:
            raise exception.ObjectActionError(action='save',
                                              reason='already deleted')


class _Record(object):
    """A row held in memory: fields set locally until :meth:`save`."""

    FIELDS = ()

    def __init__(self, store, **values):
        object.__setattr__(self, '_store', store)
        object.__setattr__(self, '_changed', set())
        self._load(values)

    def _load(self, values):
        for field in self.FIELDS:
            object.__setattr__(self, field, copy.deepcopy(values.get(field)))
        self._changed.clear()

    def __setattr__(self, name, value):
        if name not in self.FIELDS or name == 'uuid':
            raise AttributeError('%s cannot set %r'
                                 % (type(self).__name__, name))
        object.__setattr__(self, name, value)
        self._changed.add(name)

    def obj_what_changed(self):
        """The fields set since the last load."""
        return set(self._changed)

    def _values(self):
        return {field: getattr(self, field) for field in self.FIELDS}

    def _updates(self):
        return {field: getattr(self, field) for field in self._changed}


class Service(_Record):
    """A compute service's record (nova's ``Service``)."""

    FIELDS = SERVICE_FIELDS

    @classmethod
    def create(cls, store, uuid, host, id, disabled=False,
               disabled_reason=None):
        """Insert a ``nova-compute`` service record; returns it."""
        utils.validate_uuid(uuid)
        service = cls(store, uuid=uuid, id=id, host=host,
                      binary='nova-compute', disabled=disabled,
                      disabled_reason=disabled_reason)
        service._load(store.create(service._values()))
        return service

    @classmethod
    def get_by_compute_host(cls, store, host):
        """The service record of ``host`` (one read of the table).

        :raises ComputeHostNotFound: no service on ``host``
        """
        rows = store.query(host=host)
        if not rows:
            raise exception.ComputeHostNotFound(host=host)
        return cls(store, **rows[0])

    def save(self):
        """Write the changed fields, then reload the saved row."""
        self._load(self._store.update(self.uuid, self._updates()))


class ComputeNode(_Record):
    """A compute node's record (nova's ``ComputeNode``).

    :ivar read_deleted: what a read of this object found rows with
        (``'no'``: live ones only, ``'yes'``: deleted ones too)
    """

    FIELDS = NODE_FIELDS

    @classmethod
    def create(cls, store, uuid, host, hypervisor_hostname, service_id=None,
               id=None):
        """Insert a live node record; returns it.

        :raises Invalid: the uuid has a row already (deleted or not)
        """
        utils.validate_uuid(uuid)
        node = cls(store, uuid=uuid, host=host,
                   hypervisor_hostname=hypervisor_hostname,
                   service_id=service_id, deleted=False,
                   id=id if id is not None else len(store.uuids()) + 1)
        node._load(store.create(node._values()))
        return node

    @classmethod
    def get_by_uuid(cls, store, uuid, read_deleted='no'):
        """The node's record.

        :param read_deleted: ``'yes'`` to find a soft-deleted row too
        :raises ComputeHostNotFound: no such node (or deleted, unless
            ``read_deleted``)
        """
        row = store.get(uuid)
        if row['deleted'] and read_deleted != 'yes':
            raise exception.ComputeHostNotFound(host=uuid)
        return cls(store, **row)

    def save(self):
        """Write the changed fields, then reload the saved row."""
        self._load(self._store.update(self.uuid, self._updates()))

    def destroy(self):
        """Soft-delete the row, if its host is still this object's.

        :raises ObjectActionError: the row is another host's now (taken
            over since it was read), or already deleted; nothing changed
        """
        try:
            row = self._store.update(self.uuid, {'deleted': True},
                                     expected_host=self.host,
                                     expected_live=True)
        except exception.ObjectActionError as e:
            raise exception.ObjectActionError(
                action='destroy', reason=e.kwargs['reason'])
        self._load(row)

    def __repr__(self):
        return 'ComputeNode(%s of %s%s)' % (
            self.hypervisor_hostname, self.host,
            ', deleted' if self.deleted else '')


class ComputeNodeList(object):
    """Queries returning several compute nodes, named as nova names them."""

    @staticmethod
    def get_all_by_host(store, host):
        """The live nodes of ``host``, in uuid order (one read).

        :raises ComputeHostNotFound: ``host`` has none
        """
        nodes = [ComputeNode(store, **row)
                 for row in store.query(host=host, deleted=False)]
        if not nodes:
            raise exception.ComputeHostNotFound(host=host)
        return nodes
