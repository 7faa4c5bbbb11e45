"""Tests for shelvefix.placement.objects.models."""

import testtools

from shelvefix.placement.objects import models


class ModelsTestCase(testtools.TestCase):

    def test_inventory_defaults(self):
        inv = models.Inventory.build(8)
        self.assertEqual(models.Inventory(8, 0, 1, 2147483647, 1, 1.0), inv)

    def test_capacity(self):
        self.assertEqual(112, models.Inventory.build(
            8, reserved=1, allocation_ratio=16).capacity)
        self.assertEqual(0, models.Inventory.build(8, reserved=8).capacity)
        self.assertEqual(1, models.Inventory.build(
            3, allocation_ratio=0.5).capacity)

    def test_inventory_record_stores_ratio_as_float(self):
        record = models.InventoryRecord(
            models.Inventory.build(8, allocation_ratio=16))
        self.assertIsInstance(record.inventory.allocation_ratio, float)
        self.assertIsNone(record.updated_at)
        record.update(models.Inventory.build(4, allocation_ratio=2))
        self.assertEqual(2.0, record.inventory.allocation_ratio)
        self.assertIsNotNone(record.updated_at)

    def test_provider_record_generation(self):
        record = models.ProviderRecord('u', 'name')
        self.assertEqual(0, record.generation)
        self.assertEqual(record.created_at, record.last_modified)
        record.bump()
        self.assertEqual(1, record.generation)
        self.assertEqual(record.updated_at, record.last_modified)

    def test_consumer_record_starts_at_zero(self):
        record = models.ConsumerRecord('c', 'p', 'u')
        self.assertEqual(models.Consumer(0, 'p', 'u', None),
                         record.snapshot())

    def test_standard_classes(self):
        self.assertEqual(('VCPU', 'MEMORY_MB', 'DISK_GB'),
                         models.STANDARD_RESOURCE_CLASSES[:3])
        self.assertEqual(21, len(models.STANDARD_RESOURCE_CLASSES))
