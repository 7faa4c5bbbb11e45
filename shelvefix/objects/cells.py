"""Two cell databases and the API database's mappings, for cross-cell moves.

nova keeps each cell's instances and migrations in that cell's own
database; the API database maps every instance to the cell it lives in
(``InstanceMapping``) and every compute host to its cell
(``HostMapping``). A resize across cells leaves one server in two cell
databases for a while: the copy the user sees, and the other one marked
``hidden``.

Here each :class:`Cell` is a pair of stores (:class:`CellInstanceStore`,
:class:`CellMigrationStore`), :class:`InstanceMappingStore` holds the
instance mappings, and :class:`Cells` ties them together with the host
mappings, which never change during a run. A service of a compute host
reads and writes only its own cell's stores (its resource tracker is
given them); the conductor picks a cell by the instance mapping or by a
host's mapping, as nova's targets its context.

What the cell stores add to the plain ones:

* ``hidden``, kept beside the instance rows (the rows keep the fields of
  :class:`~shelvefix.objects.instance.Instance`): set and cleared by an
  intercepted update, as nova's ``Instance.save`` of that field is;
* :meth:`CellInstanceStore.hard_delete`, nova's ``instance_destroy`` with
  ``hard_delete=True``: the row and the instance's migrations in that
  cell go in one transaction (one intercepted ``'destroy'``).
"""

import copy

from shelvefix import exception
from shelvefix.objects import base
from shelvefix.objects import instance as instance_obj
from shelvefix.objects import migration as migration_obj

CELL1 = 'cell1'
CELL2 = 'cell2'
CELLS = (CELL1, CELL2)


class CellMigrationStore(migration_obj.MigrationStore):
    """One cell's migration table."""

    def purge(self, instance_uuid):
        """Drop every row of ``instance_uuid`` (within a hard delete).

        Not intercepted: the instance's hard delete, whose step it is part
        of, is.
        """
        with self._lock:
            for uuid in [uuid for uuid, row in self._rows.items()
                         if row['instance_uuid'] == instance_uuid]:
                del self._rows[uuid]
                self._deleted.discard(uuid)

    def of_instance(self, instance_uuid):
        """The uuids of the instance's rows (never intercepted)."""
        with self._lock:
            return sorted(uuid for uuid, row in self._rows.items()
                          if row['instance_uuid'] == instance_uuid)


class CellInstanceStore(instance_obj.InstanceStore):
    """One cell's instance table, with ``hidden`` and hard deletes.

    :param migrations: the cell's :class:`CellMigrationStore`, whose rows
        of an instance its hard delete removes
    """

    def __init__(self, migrations):
        super(CellInstanceStore, self).__init__()
        self.migrations = migrations
        self._hidden = set()

    def set_hidden(self, uuid, hidden):
        """Save the row's ``hidden`` flag (an intercepted ``'update'``).

        :raises InstanceNotFound: no such row, or it is deleted
        """
        handle = self._intercept('update', uuid)
        with self._lock:
            if uuid not in self._rows or uuid in self._deleted:
                handle.done('InstanceNotFound')
                raise self._not_found(uuid)
            if hidden:
                self._hidden.add(uuid)
            else:
                self._hidden.discard(uuid)
        handle.done('hidden=%s' % bool(hidden))

    def is_hidden(self, uuid):
        """The row's ``hidden`` flag (never intercepted)."""
        with self._lock:
            return uuid in self._hidden

    def create_copy(self, row, hidden=False):
        """Insert a copy of a row of another cell (``hidden`` or not)."""
        saved = self.create(copy.deepcopy(row))
        if hidden:
            with self._lock:
                self._hidden.add(row['uuid'])
        return saved

    def has(self, uuid):
        """True if the row is there and not deleted (never intercepted)."""
        with self._lock:
            return uuid in self._rows and uuid not in self._deleted

    def hard_delete(self, uuid):
        """Remove the row and the instance's migrations of this cell.

        One intercepted ``'destroy'``: nova's hard delete is one
        transaction. Nothing reads the row afterwards, not even with
        ``read_deleted='yes'`` (:meth:`peek` raises too).

        :raises InstanceNotFound: no such row, or it is deleted
        """
        handle = self._intercept('destroy', uuid)
        with self._lock:
            if uuid not in self._rows or uuid in self._deleted:
                handle.done('InstanceNotFound')
                raise self._not_found(uuid)
            del self._rows[uuid]
            self._hidden.discard(uuid)
            self.migrations.purge(uuid)
        handle.done('hard-deleted')


class InstanceMappingStore(base.RowStore):
    """The API database's instance mappings: ``{'uuid', 'cell'}`` rows."""

    kind = 'instance mapping'

    def _not_found(self, uuid):
        return exception.InstanceNotFound(instance_id=uuid)

    def _describe(self, row):
        return 'cell=%s' % row['cell']

    def update(self, uuid, values):
        """Point the mapping at another cell (an intercepted update)."""
        return self._update(uuid, values)


class Cell(object):
    """One cell: its name and its two tables.

    :ivar instances: the :class:`CellInstanceStore`
    :ivar migrations: the :class:`CellMigrationStore`
    """

    def __init__(self, name):
        self.name = name
        self.migrations = CellMigrationStore()
        self.instances = CellInstanceStore(self.migrations)

    def __repr__(self):
        return 'Cell(%s)' % self.name


class Cells(object):
    """The cells, the host mappings and the instance mappings.

    :param host_cells: ``{compute host: cell name}``
    :ivar cells: ``{name: Cell}``
    :ivar mappings: the :class:`InstanceMappingStore`
    """

    def __init__(self, host_cells, names=CELLS):
        self.cells = {name: Cell(name) for name in names}
        unknown = sorted(set(host_cells.values()) - set(self.cells))
        if unknown:
            raise exception.Invalid(reason='hosts mapped to unknown '
                                    'cell(s) %s' % unknown)
        self.host_cells = dict(host_cells)
        self.mappings = InstanceMappingStore()

    def of_host(self, host):
        """The :class:`Cell` a compute host is mapped to (``HostMapping``).

        :raises Invalid: the host has no mapping
        """
        try:
            return self.cells[self.host_cells[host]]
        except KeyError:
            raise exception.Invalid(reason='compute host %s is not mapped '
                                    'to a cell' % host)

    def map_instance(self, uuid, cell):
        """Create the instance's mapping to ``cell`` (a :class:`Cell`)."""
        self.mappings.create({'uuid': uuid, 'cell': cell.name})

    def get_mapping(self, uuid):
        """The :class:`Cell` the instance is mapped to (an intercepted read).

        :raises InstanceNotFound: the instance has no mapping
        """
        return self.cells[self.mappings.get(uuid)['cell']]

    def update_mapping(self, uuid, cell):
        """Point the instance's mapping at ``cell`` (intercepted)."""
        self.mappings.update(uuid, {'cell': cell.name})

    def mapped(self, uuid):
        """The :class:`Cell` the instance is mapped to (never intercepted)."""
        return self.cells[self.mappings.peek(uuid)['cell']]

    def holding(self, uuid):
        """The names of the cells that have the instance, in order."""
        return [name for name, cell in sorted(self.cells.items())
                if cell.instances.has(uuid)]
