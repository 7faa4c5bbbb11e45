"""The API database's records of a boot: build requests, instance mappings.

When nova's API accepts a boot it saves no server in a cell yet: a *build
request* holds the server as the API will show it until the conductor has
placed it, and an *instance mapping* says which cell the server is in
(none yet). The conductor creates the server in a cell, points the
mapping at that cell and destroys the build request; a user deleting the
server meanwhile destroys the build request instead, and the conductor,
finding it gone, builds nothing.

Both are :class:`~shelvefix.objects.base.RowStore` tables, so that every
read and write of them is an explorer step as the instance store's are.
:class:`BuildRequest` and :class:`InstanceMapping` are the objects over
them, with nova's method names.
"""

import copy

from shelvefix.compute import power_state
from shelvefix.compute import task_states
from shelvefix.compute import vm_states
from shelvefix import exception
from shelvefix.objects import base
from shelvefix.objects import instance as instance_obj

#: The cell every compute host of the library's clouds is in.
CELL1 = 'cell1'
#: Where nova buries a server that could not be scheduled.
CELL0 = 'cell0'


class BuildRequestStore(base.RowStore):
    """The API database's build requests: ``{'uuid', 'instance'}`` rows.

    ``instance`` holds the server's fields as the API accepted it
    (:data:`~shelvefix.objects.instance.FIELDS`).
    """

    kind = 'build request'

    def _not_found(self, uuid):
        return exception.BuildRequestNotFound(uuid=uuid)

    def _describe(self, row):
        return 'vm_state=%s task_state=%s' % (row['instance']['vm_state'],
                                              row['instance']['task_state'])


class InstanceMappingStore(base.RowStore):
    """The API database's instance mappings.

    Rows ``{'uuid', 'cell', 'queued_for_delete'}``: ``cell`` is None until
    the conductor maps the server to a cell.
    """

    kind = 'instance mapping'

    def _not_found(self, uuid):
        return exception.InstanceMappingNotFound(uuid=uuid)

    def _describe(self, row):
        return 'cell=%s queued_for_delete=%s' % (row['cell'],
                                                 row['queued_for_delete'])

    def update(self, uuid, values):
        """Write ``values`` to the mapping; a copy of the new row.

        :raises InstanceMappingNotFound: no such mapping, or destroyed
        """
        return self._update(uuid, values)


class BuildRequest(object):
    """A boot the API accepted, before the server is in a cell.

    :ivar instance_uuid: the server's uuid
    :ivar instance: ``{field: value}`` of the server as the API shows it
    """

    def __init__(self, store, instance_uuid, instance):
        self._store = store
        self.instance_uuid = instance_uuid
        self.instance = instance

    @classmethod
    def create(cls, store, uuid, project_id, user_id, flavor):
        """Save the build request of a new server, ``BUILDING``/``SCHEDULING``.

        :returns: the :class:`BuildRequest`
        """
        instance = {'uuid': uuid, 'vm_state': vm_states.BUILDING,
                    'task_state': task_states.SCHEDULING,
                    'power_state': power_state.NOSTATE, 'host': None,
                    'node': None,
                    'project_id': project_id, 'user_id': user_id,
                    'flavor': flavor}
        store.create({'uuid': uuid, 'instance': instance})
        return cls(store, uuid, instance)

    @classmethod
    def get_by_instance_uuid(cls, store, instance_uuid):
        """The build request of a server.

        :raises BuildRequestNotFound: none (built, or deleted)
        """
        row = store.get(instance_uuid)
        return cls(store, instance_uuid, row['instance'])

    def get_new_instance(self, cell_store):
        """The server as an (unsaved) instance of the cell ``cell_store``.

        :returns: an :class:`~shelvefix.objects.instance.Instance` whose
            ``create`` the caller does
        """
        return instance_obj.Instance(cell_store,
                                     **copy.deepcopy(self.instance))

    def destroy(self):
        """Delete the build request.

        :raises BuildRequestNotFound: deleted already (by the conductor
            that built the server, or by the user's delete)
        """
        self._store.soft_delete(self.instance_uuid)


class InstanceMapping(object):
    """Which cell a server is in (``cell`` None: not scheduled yet)."""

    def __init__(self, store, instance_uuid, cell=None,
                 queued_for_delete=False):
        self._store = store
        self.instance_uuid = instance_uuid
        self.cell = cell
        self.queued_for_delete = queued_for_delete

    @classmethod
    def create(cls, store, instance_uuid):
        """Save the mapping of a server the API accepted: no cell yet."""
        store.create({'uuid': instance_uuid, 'cell': None,
                      'queued_for_delete': False})
        return cls(store, instance_uuid)

    @classmethod
    def get_by_instance_uuid(cls, store, instance_uuid):
        """The mapping of a server.

        :raises InstanceMappingNotFound: none
        """
        row = store.get(instance_uuid)
        return cls(store, instance_uuid, row['cell'],
                   row['queued_for_delete'])

    def save(self):
        """Write the mapping's cell and deletion mark."""
        row = self._store.update(self.instance_uuid, {
            'cell': self.cell, 'queued_for_delete': self.queued_for_delete})
        self.cell = row['cell']
        self.queued_for_delete = row['queued_for_delete']

    def destroy(self):
        """Delete the mapping.

        :raises InstanceMappingNotFound: deleted already
        """
        self._store.soft_delete(self.instance_uuid)
