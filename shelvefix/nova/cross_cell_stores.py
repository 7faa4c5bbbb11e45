"""The two cells of a cross-cell resize, and which one an access is for.

A cross-cell resize leaves one server in two cell databases: ``cell1``
(compute-1's) and ``cell2`` (compute-2's) each have an instance row and a
migration row of it, and the API database's instance mapping says which
cell the server is in. :class:`Cells` holds, per run, each cell's
instance store (:class:`CellInstanceStore`) and migration store
(:class:`CellMigrationStore`), and the mapping (:class:`MappingStore`):
every read and write of them is a step of the explorer
(:class:`CellStepper`, :func:`instrument`), each cell's rows under names
of their own (``cell1 instance:{instance}``, ``cell2
migration:{migration}``, ``instance mapping:{instance}``), since they are
different records.

Which cell an access is for is decided as in a deployment
(:meth:`Cells.current`):

* a context targeted at a cell (``nova.context.set_target_cell``: the API,
  and the conductor's ``targets_cell`` and its tasks' contexts) reads and
  writes that cell's database;
* a compute service (the thread runs as compute-1's or compute-2's
  service, :class:`~.doubles.ServiceLocks`) reads and writes the database
  of its own cell, whatever the context (RPC drops the target);
* a thread running for no service (the run's set-up and judge) reads the
  cell the instance mapping points to;
* the conductor with a context targeting no cell has no database: an
  error of the harness.

This module imports nova (see :mod:`shelvefix.nova`).
"""

import contextlib
import threading

from nova import objects

from shelvefix import exception as shelvefix_exception
from shelvefix.explorer import model
from shelvefix.objects import base
from shelvefix.objects import instance as instance_obj
from shelvefix.objects import migration as migration_obj
from shelvefix.race import steps
from shelvefix import utils

CELL1 = 'cell1'
CELL2 = 'cell2'
CELLS = (CELL1, CELL2)
#: The cell each compute host's service is in.
HOST_CELLS = {'compute-1': CELL1, 'compute-2': CELL2}


class CellMigrationStore(migration_obj.MigrationStore):
    """A cell's migration table."""

    def purge(self, instance_uuid):
        """Remove the instance's rows (part of its hard delete's step)."""
        with self._lock:
            for uuid, row in list(self._rows.items()):
                if row['instance_uuid'] == instance_uuid:
                    del self._rows[uuid]
                    self._deleted.discard(uuid)


class CellInstanceStore(instance_obj.InstanceStore):
    """A cell's instance table, whose rows nova can also hard-delete.

    :param migrations: the cell's :class:`CellMigrationStore`
    """

    def __init__(self, migrations):
        super(CellInstanceStore, self).__init__()
        self.migrations = migrations

    def hard_delete(self, uuid):
        """nova's ``instance_destroy(hard_delete=True)``: one transaction.

        The row goes (a read with ``read_deleted='yes'`` finds nothing
        any more), and with it the instance's migrations in this cell.
        An intercepted ``'destroy'``.

        :raises InstanceNotFound: no such row, or soft-deleted already
        """
        handle = self._intercept('destroy', uuid)
        with self._lock:
            if uuid not in self._rows or uuid in self._deleted:
                handle.done('InstanceNotFound')
                raise self._not_found(uuid)
            del self._rows[uuid]
            self.migrations.purge(uuid)
        handle.done('hard-deleted')

    def has(self, uuid):
        """True if the row is there, not deleted (never intercepted)."""
        with self._lock:
            return uuid in self._rows and uuid not in self._deleted


class MappingStore(base.RowStore):
    """The API database's instance mappings: ``{'uuid', 'cell'}`` rows."""

    kind = 'instance mapping'

    def _not_found(self, uuid):
        return shelvefix_exception.InstanceNotFound(instance_id=uuid)

    def _describe(self, row):
        return 'cell=%s' % row['cell']

    def update(self, uuid, values):
        """Write ``values`` (the mapping's cell): an intercepted save."""
        return self._update(uuid, values)


class CellStepper(steps.StoreStepper):
    """One explorer step per access to one cell's table (or the mapping).

    As :class:`~shelvefix.race.steps.StoreStepper`, the rows named after
    the table (``kind``: ``cell2 instance``...); an instance's destroy
    also writes the cell's migration table and the instance's migrations
    there (``also``), which nova's hard delete removes with it.

    :param also: None, or ``also(uuid)``: more resources a destroy writes
    """

    def __init__(self, controller, store, names, kind, also=None):
        super(CellStepper, self).__init__(controller, store, 'wait', names,
                                          kind=kind)
        self.also = also

    def __call__(self, op, uuid, guard=None):
        if op != 'destroy' or self.also is None:
            return super(CellStepper, self).__call__(op, uuid, guard)
        resource = {self.names('%s:%s' % (self.kind, uuid)),
                    '%s:*' % self.kind}
        resource.update(self.also(uuid))
        return self.controller.step(
            self.kind, frozenset(resource), access=model.WRITE,
            label='destroy %s' % self.kind)


class Cell(object):
    """One cell: its mapping (fixed) and, per run, its tables."""

    def __init__(self, name):
        self.name = name
        self.mapping = objects.CellMapping(
            uuid=utils.fixed_uuid('cross-cell-' + name), name=name,
            database_connection='sqlite://', transport_url='none://',
            disabled=False)
        self.reset()

    def reset(self):
        """Empty tables for a new run."""
        self.migrations = CellMigrationStore()
        self.instances = CellInstanceStore(self.migrations)


class Cells(object):
    """The two cells, the mapping, and which cell an access is for.

    :param locks: the cloud's :class:`~.doubles.ServiceLocks` (which
        service the calling thread runs as)

    :ivar cells: ``{name: Cell}``
    :ivar mappings: the run's :class:`MappingStore`
    """

    def __init__(self, locks):
        self.locks = locks
        self.cells = {name: Cell(name) for name in CELLS}
        self.by_uuid = {cell.mapping.uuid: name
                        for name, cell in self.cells.items()}
        self.mappings = MappingStore()
        self.uuid = None
        self._local = threading.local()

    def reset(self, uuid, cell):
        """New tables for a run whose server ``uuid`` is in ``cell``."""
        for each in self.cells.values():
            each.reset()
        self.mappings = MappingStore()
        self.mappings.create({'uuid': uuid, 'cell': cell})
        self.uuid = uuid

    def of_host(self, host):
        """The :class:`Cell` of a compute host."""
        return self.cells[HOST_CELLS[host]]

    def mapped(self):
        """The cell the mapping points to (read without a step)."""
        return self.cells[self.mappings.peek(self.uuid)['cell']]

    def _service(self):
        return getattr(self.locks._local, 'service', None)

    def current(self):
        """The :class:`Cell` the calling thread's access is for.

        :raises AssertionError: the conductor (or API) with a context
            targeting no cell
        """
        name = getattr(self._local, 'cell', None)
        if name is not None:
            return self.cells[name]
        service = self._service()
        if service in HOST_CELLS:
            return self.cells[HOST_CELLS[service]]
        if service is None:
            return self.mapped()
        raise AssertionError('%s accessed a cell database with a context '
                             'targeting no cell' % service)

    @contextlib.contextmanager
    def targeting(self, context):
        """Accesses within are for ``context``'s cell, if it targets one."""
        cell_uuid = getattr(context, 'cell_uuid', None)
        if cell_uuid is None:
            yield
            return
        name = self.by_uuid[cell_uuid]
        service = self._service()
        if service in HOST_CELLS and HOST_CELLS[service] != name:
            raise AssertionError('%s accessed %s, not its own cell'
                                 % (service, name))
        outer = getattr(self._local, 'cell', None)
        self._local.cell = name
        try:
            yield
        finally:
            self._local.cell = outer


class Routed(object):
    """A store that is the current cell's (:meth:`Cells.current`).

    What the lifecycle's and the moves' stubs read and write as their one
    instance store (``Database.store``) or migration store
    (``MoveDatabase.migrations``).

    :param table: ``'instances'`` or ``'migrations'``
    """

    def __init__(self, cells, table):
        self._cells = cells
        self._table = table

    def __getattr__(self, name):
        return getattr(getattr(self._cells.current(), self._table), name)


def instrument(controller, cells, names):
    """Make every access to the cells' tables and the mapping a step.

    :returns: a callable that undoes it
    """
    stores = [(cells.mappings, 'instance mapping', None)]
    for name, cell in sorted(cells.cells.items()):
        def also(uuid, cell=cell, name=name):
            kind = '%s migration' % name
            return ['%s:*' % kind] + [
                names('%s:%s' % (kind, each))
                for each in cell.migrations.uuids()
                if cell.migrations.peek(each)['instance_uuid'] == uuid]
        stores += [(cell.instances, '%s instance' % name, also),
                   (cell.migrations, '%s migration' % name, None)]
    for store, kind, also in stores:
        store.interceptor = CellStepper(controller, store, names, kind, also)

    def undo():
        for store, _kind, _also in stores:
            store.interceptor = None
    return undo
