"""Tests for shelvefix.placement.objects.capacity."""

import testtools

from shelvefix.placement import exception
from shelvefix.placement.objects import capacity
from shelvefix.placement.objects import models

ORDER = {'VCPU': 0, 'MEMORY_MB': 1, 'DISK_GB': 2}.get


class CapacityTestCase(testtools.TestCase):

    def setUp(self):
        super(CapacityTestCase, self).setUp()
        self.inventories = {
            ('rp1', 'VCPU'): models.Inventory.build(4, max_unit=4),
            ('rp1', 'MEMORY_MB'): models.Inventory.build(
                1024, reserved=512, step_size=256),
            ('rp2', 'DISK_GB'): models.Inventory.build(
                10, allocation_ratio=1.5),
        }
        self.used = {}
        self.before = {}

    def check(self, allocations):
        return capacity.check(
            allocations, lambda rp, rc: self.inventories.get((rp, rc)),
            lambda rp, rc: self.used.get((rp, rc), 0), self.before, ORDER)

    def test_fits_returns_providers_in_order(self):
        self.assertEqual(['rp2', 'rp1'], self.check(
            [('rp2', 'DISK_GB', 15), ('rp1', 'VCPU', 4),
             ('rp1', 'MEMORY_MB', 512)]))

    def test_provider_without_any_requested_class(self):
        exc = self.assertRaises(exception.InvalidInventory, self.check,
                                [('rp4', 'DISK_GB', 1), ('rp3', 'VCPU', 1),
                                 ('rp1', 'VCPU', 1)])
        self.assertEqual("Inventory for 'VCPU, DISK_GB' on resource "
                         "provider 'rp4, rp3' invalid.", str(exc))

    def test_missing_class_on_provider(self):
        exc = self.assertRaises(exception.InvalidInventory, self.check,
                                [('rp1', 'VCPU', 1), ('rp1', 'DISK_GB', 1)])
        self.assertEqual("Inventory for 'DISK_GB' on resource provider "
                         "'rp1' invalid.", str(exc))

    def test_unit_constraints(self):
        for amount_by_class in (('VCPU', 5), ('MEMORY_MB', 100)):
            self.assertRaises(exception.InvalidAllocationConstraintsViolated,
                              self.check, [('rp1',) + amount_by_class])

    def test_capacity_exceeded_counts_other_usage(self):
        self.used[('rp1', 'VCPU')] = 2
        self.assertEqual(['rp1'], self.check([('rp1', 'VCPU', 2)]))
        self.assertRaises(exception.InvalidAllocationCapacityExceeded,
                          self.check, [('rp1', 'VCPU', 3)])

    def test_capacity_accumulates_within_the_write(self):
        self.assertRaises(exception.InvalidAllocationCapacityExceeded,
                          self.check, [('rp2', 'DISK_GB', 10),
                                       ('rp2', 'DISK_GB', 6)])

    def test_over_capacity_may_shrink(self):
        # Inventory shrank under existing allocations: 6 used of 4.
        self.before[('rp1', 'VCPU')] = 6
        self.assertEqual(['rp1'], self.check([('rp1', 'VCPU', 4)]))
        self.used[('rp1', 'VCPU')] = 2
        self.before[('rp1', 'VCPU')] = 5
        self.assertEqual(['rp1'], self.check([('rp1', 'VCPU', 3)]))
        self.before[('rp1', 'VCPU')] = 4
        self.assertRaises(exception.InvalidAllocationCapacityExceeded,
                          self.check, [('rp1', 'VCPU', 3)])

    def test_zero_amounts_only_touch_providers(self):
        self.used[('rp1', 'VCPU')] = 100
        self.assertEqual(['rp1'], self.check([('rp1', 'VCPU', 0)]))
