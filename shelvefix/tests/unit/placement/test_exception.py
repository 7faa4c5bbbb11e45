"""Tests for shelvefix.placement.exception."""

import testtools

from shelvefix.placement import exception


class ExceptionTestCase(testtools.TestCase):

    def test_messages_are_placements(self):
        cases = [
            (exception.ResourceProviderNotFound(uuid='u'),
             'No resource provider with uuid u found'),
            (exception.ResourceClassNotFound(name='FOO'),
             'No such resource class FOO.'),
            (exception.InvalidInventory(resource_class='VCPU',
                                        resource_provider='u'),
             "Inventory for 'VCPU' on resource provider 'u' invalid."),
            (exception.InvalidAllocationCapacityExceeded(
                resource_class='VCPU', resource_provider='u'),
             "Unable to create allocation for 'VCPU' on resource provider "
             "'u'. The requested amount would exceed the capacity."),
            (exception.InventoryInUse(resource_classes='VCPU, DISK_GB',
                                      resource_provider='u'),
             "Inventory for 'VCPU, DISK_GB' on resource provider 'u' in "
             "use."),
            (exception.AllocationProviderNotFound(rp_uuid='u'),
             "Allocation for resource provider 'u' that does not exist."),
            (exception.ProviderGenerationConflict(),
             'resource provider generation conflict'),
            (exception.NotFound('custom'), 'custom'),
        ]
        for exc, message in cases:
            self.assertEqual(message, str(exc))

    def test_consumer_generation_conflict(self):
        exc = exception.ConsumerGenerationConflict(None, 1)
        self.assertEqual(
            'consumer generation conflict - expected null but got 1',
            str(exc))
        exc = exception.ConsumerGenerationConflict(0, None)
        self.assertEqual(
            'consumer generation conflict - expected 0 but got None',
            str(exc))
        self.assertEqual((0, None), (exc.expected, exc.got))

    def test_hierarchy(self):
        self.assertTrue(issubclass(exception.InvalidAllocationCapacityExceeded,
                                   exception.InvalidInventory))
        self.assertTrue(issubclass(exception.ResourceClassNotFound,
                                   exception.NotFound))
        self.assertTrue(issubclass(
            exception.InvalidInventoryCapacityReservedCanBeTotal,
            exception.InvalidInventoryCapacity))
