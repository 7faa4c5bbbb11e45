"""Tests for the cells' stores and mappings (:mod:`~.objects.cells`)."""

from oslo_utils import uuidutils

from shelvefix import exception
from shelvefix.objects import cells as cells_obj
from shelvefix.objects import instance as instance_obj
from shelvefix.objects import migration as migration_obj
from shelvefix.tests import base


class Recorder(object):
    """An interceptor recording ``(op, uuid, result)``."""

    def __init__(self):
        self.seen = []

    def __call__(self, op, uuid, guard=None):
        recorder = self

        class Handle(object):
            def done(self, result=None):
                recorder.seen.append((op, uuid, result))
        return Handle()


class CellsTestCase(base.TestCase):

    def setUp(self):
        super(CellsTestCase, self).setUp()
        self.cells = cells_obj.Cells({'compute-1': cells_obj.CELL1,
                                      'compute-2': cells_obj.CELL2})
        self.cell1 = self.cells.cells[cells_obj.CELL1]
        self.uuid = uuidutils.generate_uuid()
        instance_obj.Instance.create(self.cell1.instances, self.uuid,
                                     host='compute-1', node='compute-1')

    def migration(self, cell, instance_uuid=None):
        return migration_obj.Migration.create(
            cell.migrations, uuidutils.generate_uuid(),
            instance_uuid=instance_uuid or self.uuid,
            source_compute='compute-1', migration_type=migration_obj.RESIZE)

    def test_host_mappings(self):
        self.assertIs(self.cell1, self.cells.of_host('compute-1'))
        self.assertEqual(cells_obj.CELL2,
                         self.cells.of_host('compute-2').name)
        self.assertRaises(exception.Invalid, self.cells.of_host, 'compute-3')
        self.assertRaises(exception.Invalid, cells_obj.Cells,
                          {'compute-1': 'cell9'})

    def test_instance_mapping(self):
        self.cells.map_instance(self.uuid, self.cell1)
        self.assertIs(self.cell1, self.cells.get_mapping(self.uuid))
        cell2 = self.cells.cells[cells_obj.CELL2]
        self.cells.update_mapping(self.uuid, cell2)
        self.assertIs(cell2, self.cells.mapped(self.uuid))
        self.assertRaises(exception.InstanceNotFound,
                          self.cells.get_mapping, uuidutils.generate_uuid())

    def test_hidden_is_an_intercepted_save(self):
        store = self.cell1.instances
        store.interceptor = Recorder()
        store.set_hidden(self.uuid, True)
        self.assertTrue(store.is_hidden(self.uuid))
        store.set_hidden(self.uuid, False)
        self.assertFalse(store.is_hidden(self.uuid))
        self.assertEqual([('update', self.uuid, 'hidden=True'),
                          ('update', self.uuid, 'hidden=False')],
                         store.interceptor.seen)
        # The row keeps the instance's fields only.
        instance_obj.Instance.get_by_uuid(store, self.uuid)
        self.assertRaises(exception.InstanceNotFound, store.set_hidden,
                          uuidutils.generate_uuid(), True)

    def test_a_copy_in_another_cell(self):
        cell2 = self.cells.cells[cells_obj.CELL2]
        cell2.instances.create_copy(self.cell1.instances.peek(self.uuid),
                                    hidden=True)
        self.assertTrue(cell2.instances.is_hidden(self.uuid))
        self.assertEqual(['cell1', 'cell2'], self.cells.holding(self.uuid))

    def test_hard_delete_takes_the_cells_migrations(self):
        mine = self.migration(self.cell1)
        other = self.migration(self.cell1, uuidutils.generate_uuid())
        cell2 = self.cells.cells[cells_obj.CELL2]
        elsewhere = self.migration(cell2)
        self.assertEqual([mine.uuid],
                         self.cell1.migrations.of_instance(self.uuid))
        store = self.cell1.instances
        store.interceptor = Recorder()
        store.hard_delete(self.uuid)
        self.assertEqual([('destroy', self.uuid, 'hard-deleted')],
                         store.interceptor.seen)
        # Gone for every read, read_deleted='yes' too.
        self.assertFalse(store.has(self.uuid))
        self.assertRaises(exception.InstanceNotFound, store.peek, self.uuid)
        self.assertEqual([other.uuid], self.cell1.migrations.uuids())
        self.assertEqual([elsewhere.uuid], cell2.migrations.uuids())
        self.assertRaises(exception.InstanceNotFound, store.hard_delete,
                          self.uuid)
        self.assertEqual([], self.cells.holding(self.uuid))

    def test_hard_delete_of_a_soft_deleted_row(self):
        store = self.cell1.instances
        store.soft_delete(self.uuid)
        self.assertFalse(store.has(self.uuid))
        self.assertRaises(exception.InstanceNotFound, store.hard_delete,
                          self.uuid)
