"""Tests for shelvefix.placement.objects.resource_class (via the state)."""

import os_resource_classes
import testtools

from shelvefix.placement import exception
from shelvefix.placement.objects import allocation
from shelvefix.placement.objects import models
from shelvefix.placement.objects import state as state_mod

RP1 = '11111111-1111-1111-1111-111111111111'
C1 = 'c1c1c1c1-0000-0000-0000-000000000001'
STANDARD_COUNT = len(os_resource_classes.STANDARDS)


def inv(total):
    return models.Inventory.build(total)


class ResourceClassesTestCase(testtools.TestCase):

    def setUp(self):
        super(ResourceClassesTestCase, self).setUp()
        self.state = state_mod.PlacementState()

    def names(self):
        return [rc.name for rc in self.state.list_resource_classes()]

    def test_standard_classes_come_from_the_package(self):
        self.assertEqual(list(os_resource_classes.STANDARDS), self.names())
        self.assertEqual(tuple(os_resource_classes.STANDARDS),
                         models.STANDARD_RESOURCE_CLASSES)
        for index, name in enumerate(os_resource_classes.STANDARDS):
            self.assertEqual(index, self.state.class_id(name))
        self.assertRaises(exception.ResourceClassNotFound,
                          self.state.class_id, 'CUSTOM_NOPE')
        self.assertEqual(float('inf'), self.state._class_order('NOPE'))

    def test_create_numbers_from_10000(self):
        gold = self.state.create_resource_class('CUSTOM_GOLD')
        self.assertEqual('CUSTOM_GOLD', gold.name)
        self.assertIsNotNone(gold.last_modified)
        self.state.create_resource_class('CUSTOM_SILVER')
        self.assertEqual((10000, 10001), (
            self.state.class_id('CUSTOM_GOLD'),
            self.state.class_id('CUSTOM_SILVER')))
        self.assertEqual(['CUSTOM_GOLD', 'CUSTOM_SILVER'],
                         self.names()[STANDARD_COUNT:])
        self.assertEqual(self.names(), self.state.resource_classes)

    def test_create_refusals(self):
        self.state.create_resource_class('CUSTOM_GOLD')
        for name in ('CUSTOM_GOLD', 'VCPU'):
            exc = self.assertRaises(exception.ResourceClassExists,
                                    self.state.create_resource_class, name)
            self.assertEqual('Resource class %s already exists.' % name,
                             str(exc))
        self.assertRaises(ValueError, self.state.create_resource_class,
                          'GOLD')
        self.assertEqual(STANDARD_COUNT + 1, len(self.names()))

    def test_ids_after_deletes(self):
        for name in ('CUSTOM_A', 'CUSTOM_B', 'CUSTOM_C'):
            self.state.create_resource_class(name)
        self.state.delete_resource_class('CUSTOM_C')
        self.state.create_resource_class('CUSTOM_D')
        self.assertEqual(10002, self.state.class_id('CUSTOM_D'))
        self.state.delete_resource_class('CUSTOM_A')
        self.state.create_resource_class('CUSTOM_A')
        self.assertEqual(10003, self.state.class_id('CUSTOM_A'))
        self.assertEqual(['CUSTOM_B', 'CUSTOM_D', 'CUSTOM_A'],
                         self.names()[STANDARD_COUNT:])

    def test_add_and_ensure(self):
        self.assertRaises(ValueError, self.state.add_resource_class, 'FOO')
        self.assertRaises(ValueError, self.state.add_resource_class,
                          'CUSTOM_a')
        self.state.add_resource_class('CUSTOM_GOLD')
        self.state.add_resource_class('CUSTOM_GOLD')
        created, was_created = self.state.ensure_resource_class('CUSTOM_X')
        self.assertTrue(was_created)
        again, was_created = self.state.ensure_resource_class('CUSTOM_X')
        self.assertFalse(was_created)
        self.assertEqual(created, again)
        self.assertEqual(
            (self.state.get_resource_class('VCPU'), False),
            self.state.ensure_resource_class('VCPU'))
        self.assertEqual(['CUSTOM_GOLD', 'CUSTOM_X'],
                         self.names()[STANDARD_COUNT:])

    def test_get(self):
        self.assertEqual('VCPU', self.state.get_resource_class('VCPU').name)
        exc = self.assertRaises(exception.ResourceClassNotFound,
                                self.state.get_resource_class, 'CUSTOM_X')
        self.assertEqual('No such resource class CUSTOM_X.', str(exc))

    def test_rename_everywhere(self):
        self.state.create_resource_class('CUSTOM_GOLD')
        self.state.create_resource_class('CUSTOM_SILVER')
        self.state.create_provider('rp1', RP1)
        self.state.set_inventories(RP1, 0, {'VCPU': inv(4),
                                            'CUSTOM_GOLD': inv(4),
                                            'DISK_GB': inv(4)})
        self.state.replace_allocations([allocation.ConsumerWrite(
            C1, {RP1: {'CUSTOM_GOLD': 2}}, 'p', 'u', None, None)])
        before = self.state.get_resource_class('CUSTOM_GOLD').last_modified
        renamed = self.state.rename_resource_class('CUSTOM_GOLD',
                                                   'CUSTOM_PLATINUM')
        self.assertEqual('CUSTOM_PLATINUM', renamed.name)
        self.assertGreaterEqual(renamed.last_modified, before)
        self.assertEqual(10000, self.state.class_id('CUSTOM_PLATINUM'))
        self.assertEqual(['CUSTOM_PLATINUM', 'CUSTOM_SILVER'],
                         self.names()[STANDARD_COUNT:])
        self.assertRaises(exception.ResourceClassNotFound,
                          self.state.class_id, 'CUSTOM_GOLD')
        generation, inventories = self.state.get_inventories(RP1)
        # Listed by class id: the custom class after the standard ones.
        self.assertEqual(['VCPU', 'DISK_GB', 'CUSTOM_PLATINUM'],
                         list(inventories))
        self.assertEqual(2, generation)
        self.assertEqual({RP1: {'CUSTOM_PLATINUM': 2}},
                         self.state.allocations_for(C1))
        self.assertEqual(2, self.state.usages(RP1)['CUSTOM_PLATINUM'])

    def test_rename_refusals(self):
        self.state.create_resource_class('CUSTOM_GOLD')
        self.state.create_resource_class('CUSTOM_SILVER')
        cases = [
            (('CUSTOM_NOPE', 'CUSTOM_X'), exception.ResourceClassNotFound,
             'No such resource class CUSTOM_NOPE.'),
            (('VCPU', 'CUSTOM_VCPU'),
             exception.ResourceClassCannotUpdateStandard,
             'Cannot update standard resource class VCPU.'),
            (('CUSTOM_GOLD', 'CUSTOM_SILVER'), exception.ResourceClassExists,
             'Resource class CUSTOM_SILVER already exists.'),
        ]
        for args, exc_class, message in cases:
            exc = self.assertRaises(exc_class,
                                    self.state.rename_resource_class, *args)
            self.assertEqual(message, str(exc))
        unchanged = self.state.rename_resource_class('CUSTOM_GOLD',
                                                     'CUSTOM_GOLD')
        self.assertEqual(self.state.get_resource_class('CUSTOM_GOLD'),
                         unchanged)
        self.assertEqual(['CUSTOM_GOLD', 'CUSTOM_SILVER'],
                         self.names()[STANDARD_COUNT:])

    def test_delete(self):
        self.state.create_resource_class('CUSTOM_GOLD')
        self.state.create_provider('rp1', RP1)
        self.state.set_inventories(RP1, 0, {'CUSTOM_GOLD': inv(1)})
        cases = [
            ('CUSTOM_NOPE', exception.ResourceClassNotFound,
             'No such resource class CUSTOM_NOPE.'),
            ('VCPU', exception.ResourceClassCannotDeleteStandard,
             'Cannot delete standard resource class VCPU.'),
            ('CUSTOM_GOLD', exception.ResourceClassInUse,
             'Cannot delete resource class CUSTOM_GOLD. Class is in use in '
             'inventory.'),
        ]
        for name, exc_class, message in cases:
            exc = self.assertRaises(exc_class,
                                    self.state.delete_resource_class, name)
            self.assertEqual(message, str(exc))
        self.state.set_inventories(RP1, 1, {})
        self.state.delete_resource_class('CUSTOM_GOLD')
        self.assertEqual(list(os_resource_classes.STANDARDS), self.names())
        self.assertRaises(exception.ResourceClassNotFound,
                          self.state.set_inventories, RP1, 2,
                          {'CUSTOM_GOLD': inv(1)})
