"""Tests for shelvefix.placement.objects.inventory (through PlacementState)."""

import testtools

from shelvefix.placement import exception
from shelvefix.placement.objects import allocation
from shelvefix.placement.objects import models
from shelvefix.placement.objects import state as state_mod

RP1 = '11111111-1111-1111-1111-111111111111'


def inv(total, **fields):
    return models.Inventory.build(total, **fields)


class InventoriesTestCase(testtools.TestCase):

    def setUp(self):
        super(InventoriesTestCase, self).setUp()
        self.state = state_mod.PlacementState()
        self.state.create_provider('rp1', RP1)

    def test_set_bumps_generation_and_lists_by_class_id(self):
        self.assertEqual(1, self.state.set_inventories(
            RP1, 0, {'DISK_GB': inv(10), 'VCPU': inv(4)}))
        self.assertEqual(2, self.state.set_inventories(
            RP1, 1, {'VCPU': inv(8), 'MEMORY_MB': inv(64), 'DISK_GB': inv(5),
                     'PCPU': inv(2)}))
        generation, inventories = self.state.get_inventories(RP1)
        self.assertEqual(2, generation)
        # Placement's order: the classes' ids, not the order written.
        self.assertEqual(['VCPU', 'MEMORY_MB', 'DISK_GB', 'PCPU'],
                         list(inventories))
        self.assertEqual(8, inventories['VCPU'].total)

    def test_row_ids(self):
        # Placement's sqlite gives a row the highest id plus one, and
        # inserts a write's new classes in the order of its set of their
        # ids; an update keeps the row.
        rp2 = RP1.replace('1', '2')
        self.state.create_provider('rp2', rp2)
        self.state.set_inventories(RP1, 0, {'DISK_GB': inv(10),
                                            'VCPU': inv(4)})
        self.state.add_inventory(rp2, 'VCPU', inv(4))

        def rows(uuid):
            return {rc: stored.row_id for rc, stored
                    in self.state._providers[uuid].inventories.items()}

        self.assertEqual({'VCPU': 1, 'DISK_GB': 2}, rows(RP1))
        self.assertEqual({'VCPU': 3}, rows(rp2))
        self.state.delete_inventory(rp2, 'VCPU')
        self.state.set_inventories(RP1, 1, {'VCPU': inv(8),
                                            'MEMORY_MB': inv(64)})
        self.assertEqual({'VCPU': 1, 'MEMORY_MB': 2}, rows(RP1))

    def test_set_refusals_change_nothing(self):
        self.state.set_inventories(RP1, 0, {'VCPU': inv(4)})
        self.assertRaises(exception.ProviderGenerationConflict,
                          self.state.set_inventories, RP1, 0, {})
        self.assertRaises(exception.InvalidInventoryCapacity,
                          self.state.set_inventories, RP1, 1,
                          {'VCPU': inv(4, reserved=4)},
                          reserved_can_be_total=False)
        self.assertRaises(
            exception.InvalidInventoryCapacityReservedCanBeTotal,
            self.state.set_inventories, RP1, 1, {'VCPU': inv(4, reserved=5)})
        self.assertRaises(exception.ResourceClassNotFound,
                          self.state.set_inventories, RP1, 1,
                          {'CUSTOM_X': inv(1)})
        self.assertEqual((1, {'VCPU': inv(4)}),
                         self.state.get_inventories(RP1))

    def test_reserved_can_be_total_from_1_26(self):
        self.assertEqual(1, self.state.set_inventories(
            RP1, 0, {'VCPU': inv(4, reserved=4)}))

    def test_in_use_inventory_cannot_go(self):
        self.state.set_inventories(RP1, 0, {'VCPU': inv(4),
                                            'DISK_GB': inv(9)})
        self.state.replace_allocations([allocation.ConsumerWrite(
            'c', {RP1: {'DISK_GB': 1, 'VCPU': 1}}, 'p', 'u', None, None)])
        exc = self.assertRaises(exception.InventoryInUse,
                                self.state.set_inventories, RP1, 2, {})
        self.assertIn("'VCPU, DISK_GB'", str(exc))
        self.assertRaises(exception.InventoryInUse,
                          self.state.delete_inventory, RP1, 'VCPU')
        # Shrinking below usage is allowed (placement only logs it).
        self.assertEqual(3, self.state.set_inventories(
            RP1, 2, {'VCPU': inv(1), 'DISK_GB': inv(1)}))

    def test_single_inventory_operations(self):
        self.assertEqual(1, self.state.add_inventory(RP1, 'VCPU', inv(4)))
        self.assertRaises(exception.InventoryExists,
                          self.state.add_inventory, RP1, 'VCPU', inv(4))
        self.assertEqual(2, self.state.update_inventory(RP1, 1, 'VCPU',
                                                        inv(6)))
        self.assertRaises(exception.InventoryNotFound,
                          self.state.update_inventory, RP1, 2, 'DISK_GB',
                          inv(6))
        self.assertRaises(exception.ResourceClassNotFound,
                          self.state.update_inventory, RP1, 2, 'FOO', inv(6))
        self.assertEqual(3, self.state.delete_inventory(RP1, 'VCPU'))
        self.assertRaises(exception.NotFound, self.state.delete_inventory,
                          RP1, 'VCPU')
        self.assertIsNone(self.state.inventory_last_modified(RP1))

    def test_custom_resource_class(self):
        self.assertRaises(ValueError, self.state.add_resource_class, 'FOO')
        self.state.add_resource_class('CUSTOM_GOLD')
        self.state.add_resource_class('CUSTOM_GOLD')
        self.assertEqual(['CUSTOM_GOLD'], self.state.resource_classes[21:])
        self.assertEqual(10000, self.state.class_id('CUSTOM_GOLD'))
        self.state.set_inventories(RP1, 0, {'CUSTOM_GOLD': inv(1)})
