"""Tests for the conductor's cross-cell revert and confirm, and the hosts'.

On a :class:`~shelvefix.race.cross_cell_cloud.CrossCellCloud` (placement
double): the server resized from compute-1 in cell1 to compute-2 in cell2,
not yet confirmed; the conductor's tasks call both hosts.
"""

from shelvefix.backends import fixture as placement_fixture
from shelvefix.compute import collaborators
from shelvefix.compute import power_state
from shelvefix.compute import task_states
from shelvefix.compute import vm_states
from shelvefix.conductor import cross_cell
from shelvefix.conductor import manager as conductor_mod
from shelvefix import exception
from shelvefix.objects import instance as instance_obj
from shelvefix.objects import migration as migration_obj
from shelvefix.race import cross_cell_cloud
from shelvefix.tests import base

SOURCE = cross_cell_cloud.SOURCE
DESTINATION = cross_cell_cloud.DESTINATION
OLD = cross_cell_cloud.OLD_FLAVOR.resources
NEW = cross_cell_cloud.NEW_FLAVOR.resources


class CrossCellTestCase(base.TestCase):

    def setUp(self):
        super(CrossCellTestCase, self).setUp()
        self.placement = self.useFixture(placement_fixture.PlacementFixture())

    def cloud(self, **kwargs):
        cloud = cross_cell_cloud.CrossCellCloud(
            self.placement,
            cross_cell_cloud.move_cloud.create_providers(self.placement),
            **kwargs)
        self.addCleanup(cloud.remove_from_placement)
        self.src_rp = cloud.providers[SOURCE]
        self.dst_rp = cloud.providers[DESTINATION]
        return cloud

    def cell(self, cloud, name):
        return cloud.cells.cells[name]

    def row(self, cloud, name):
        return self.cell(cloud, name).instances.peek(cloud.instance.uuid)

    def status(self, cloud, name):
        return self.cell(cloud, name).migrations.peek(
            cloud.migration_uuid)['status']

    def test_the_start(self):
        cloud = self.cloud()
        uuid = cloud.instance.uuid
        cell1 = self.cell(cloud, 'cell1')
        cell2 = self.cell(cloud, 'cell2')
        self.assertIs(cell2, cloud.cells.mapped(uuid))
        target, source = self.row(cloud, 'cell2'), self.row(cloud, 'cell1')
        self.assertEqual((vm_states.RESIZED, None, DESTINATION, 'm1.medium'),
                         (target['vm_state'], target['task_state'],
                          target['host'], target['flavor'].name))
        self.assertEqual((vm_states.ACTIVE, task_states.RESIZE_MIGRATED,
                          power_state.SHUTDOWN, SOURCE, 'm1.small'),
                         (source['vm_state'], source['task_state'],
                          source['power_state'], source['host'],
                          source['flavor'].name))
        self.assertEqual((False, True), (cell2.instances.is_hidden(uuid),
                                         cell1.instances.is_hidden(uuid)))
        self.assertEqual(('finished', 'post-migrating'),
                         (self.status(cloud, 'cell2'),
                          self.status(cloud, 'cell1')))
        self.assertEqual({self.dst_rp: NEW}, cloud.held())
        self.assertEqual({self.src_rp: OLD}, cloud.held(cloud.migration_uuid))
        # Each audit counted its cell's copy.
        self.assertEqual({SOURCE: OLD, DESTINATION: NEW}, cloud.usage())
        self.assertEqual({SOURCE: {uuid}, DESTINATION: {uuid}},
                         dict(cloud.query_client.instance_info))
        # The prep_resize cast was not served.
        self.assertEqual(0, cloud.transport.waiting('compute', DESTINATION))

    def test_revert(self):
        cloud = self.cloud()
        self.assertTrue(cloud.revert())
        uuid = cloud.instance.uuid
        self.assertEqual(['cell1'], cloud.copies())
        self.assertEqual('cell1', cloud.cells.mapped(uuid).name)
        row = self.row(cloud, 'cell1')
        self.assertEqual((vm_states.ACTIVE, None, power_state.RUNNING,
                          SOURCE, 'm1.small'),
                         (row['vm_state'], row['task_state'],
                          row['power_state'], row['host'],
                          row['flavor'].name))
        self.assertFalse(self.cell(cloud, 'cell1').instances.is_hidden(uuid))
        self.assertEqual('reverted', self.status(cloud, 'cell1'))
        self.assertEqual({self.src_rp: OLD}, cloud.held())
        self.assertEqual({}, cloud.held(cloud.migration_uuid))
        self.assertEqual({SOURCE: OLD, DESTINATION: {}}, cloud.usage())
        self.assertEqual({SOURCE: {uuid}, DESTINATION: set()},
                         dict(cloud.query_client.instance_info))
        self.assertIn(('destroy', uuid), cloud.drivers[DESTINATION].calls)
        self.assertIn(('finish_revert_migration', uuid),
                      cloud.drivers[SOURCE].calls)
        self.assertIn(('cleanup_instance_network_on_host', uuid,
                       DESTINATION),
                      cloud.computes[DESTINATION].network_api.calls)

    def test_confirm(self):
        cloud = self.cloud()
        self.assertTrue(cloud.confirm())
        uuid = cloud.instance.uuid
        self.assertEqual(['cell2'], cloud.copies())
        row = self.row(cloud, 'cell2')
        self.assertEqual((vm_states.ACTIVE, None, DESTINATION),
                         (row['vm_state'], row['task_state'], row['host']))
        self.assertEqual('confirmed', self.status(cloud, 'cell2'))
        # cell1's migration went with its copy.
        self.assertEqual([], self.cell(cloud, 'cell1').migrations.uuids())
        self.assertEqual({self.dst_rp: NEW}, cloud.held())
        self.assertEqual({}, cloud.held(cloud.migration_uuid))
        # compute-1 stopped counting the old flavor at once (the copy's
        # flavor was still stashed), not at its next audit.
        self.assertEqual({SOURCE: {}, DESTINATION: NEW}, cloud.usage())
        self.assertEqual({SOURCE: set(), DESTINATION: {uuid}},
                         dict(cloud.query_client.instance_info))
        self.assertIn(('cleanup', uuid), cloud.drivers[SOURCE].calls)

    def test_the_api_refuses_a_second_time(self):
        cloud = self.cloud()
        self.assertTrue(cloud.confirm())
        self.assertFalse(cloud.confirm())
        self.assertFalse(cloud.revert())

    def test_revert_failing_at_the_source(self):
        # Mapped back to cell1 already: the source cell's records fail.
        cloud = self.cloud(failing={SOURCE: ('finish_revert_migration',)})
        self.assertRaises(collaborators.DriverFailed, cloud.revert)
        self.assertEqual(['cell1'], cloud.copies())
        self.assertEqual('cell1', cloud.cells.mapped(
            cloud.instance.uuid).name)
        row = self.row(cloud, 'cell1')
        self.assertEqual((vm_states.ERROR, None),
                         (row['vm_state'], row['task_state']))
        self.assertEqual('error', self.status(cloud, 'cell1'))
        # The allocations had moved back before the guest failed.
        self.assertEqual({self.src_rp: OLD}, cloud.held())
        self.assertEqual({}, cloud.held(cloud.migration_uuid))

    def test_confirm_failing_at_the_source(self):
        cloud = self.cloud(failing={SOURCE: ('cleanup',)})
        self.assertRaises(collaborators.DriverFailed, cloud.confirm)
        # The source's allocations and scheduler entry go anyway.
        self.assertEqual({}, cloud.held(cloud.migration_uuid))
        self.assertEqual(set(), cloud.query_client.instance_info[SOURCE])
        # The task stopped before destroying cell1's copy; the target
        # cell's records are in error.
        self.assertEqual(['cell1', 'cell2'], cloud.copies())
        row = self.row(cloud, 'cell2')
        self.assertEqual((vm_states.ERROR, None),
                         (row['vm_state'], row['task_state']))
        self.assertEqual('error', self.status(cloud, 'cell2'))
        self.assertEqual(vm_states.ERROR,
                         self.row(cloud, 'cell1')['vm_state'])

    def test_source_copy_from_the_host_mapping(self):
        cloud = self.cloud()
        instance, cell = cross_cell.get_inst_and_cell_map_from_source(
            cloud.cells, SOURCE, cloud.instance.uuid)
        self.assertEqual('cell1', cell.name)
        self.assertEqual(task_states.RESIZE_MIGRATED, instance.task_state)
        self.assertRaises(exception.Invalid,
                          cross_cell.get_inst_and_cell_map_from_source,
                          cloud.cells, 'compute-3', cloud.instance.uuid)

    def test_a_conductor_without_cells(self):
        cloud = self.cloud()
        conductor = conductor_mod.ComputeTaskManager(cloud.scheduler,
                                                     cloud.compute_rpcapi)
        instance = instance_obj.Instance.get_by_uuid(
            self.cell(cloud, 'cell2').instances, cloud.instance.uuid)
        migration = migration_obj.Migration.get_by_uuid(
            self.cell(cloud, 'cell2').migrations, cloud.migration_uuid)
        for method in (conductor.revert_snapshot_based_resize,
                       conductor.confirm_snapshot_based_resize):
            self.assertRaises(exception.Invalid, method, cloud.ctx,
                              instance, migration)
        # Nothing changed.
        self.assertEqual(['cell1', 'cell2'], cloud.copies())
        self.assertEqual('finished', self.status(cloud, 'cell2'))
