"""Tests for shelvefix.placement.objects.reshaper (the state's reshape)."""

import collections

import testtools

from shelvefix.placement import exception
from shelvefix.placement.objects import allocation
from shelvefix.placement.objects import models
from shelvefix.placement.objects import state as state_mod

RP1 = '11111111-1111-1111-1111-111111111111'
RP2 = '22222222-2222-2222-2222-222222222222'
C1 = 'c1c1c1c1-0000-0000-0000-000000000001'
C2 = 'c2c2c2c2-0000-0000-0000-000000000002'


def inv(total):
    return models.Inventory.build(total)


def write(consumer, allocations, generation):
    return allocation.ConsumerWrite(consumer, allocations, 'proj', 'user',
                                    generation, None)


class ReshapeTestCase(testtools.TestCase):

    def setUp(self):
        super(ReshapeTestCase, self).setUp()
        self.state = state_mod.PlacementState()
        self.state.create_provider('cn', RP1)
        self.state.create_provider('child', RP2, parent_provider_uuid=RP1)
        self.state.set_inventories(RP1, 0, {'VCPU': inv(8),
                                            'MEMORY_MB': inv(64)})
        self.state.replace_allocations([write(
            C1, {RP1: {'VCPU': 2, 'MEMORY_MB': 16}}, None)])

    def contents(self):
        return (self.state.get_inventories(RP1),
                self.state.get_inventories(RP2),
                self.state.allocations_for(C1),
                self.state.consumers)

    def reshape(self, generation):
        self.state.reshape(
            collections.OrderedDict([
                (RP1, (generation, {'MEMORY_MB': inv(64)})),
                (RP2, (0, {'VCPU': inv(8)}))]),
            [write(C1, {RP1: {'MEMORY_MB': 16}, RP2: {'VCPU': 2}}, 1),
             write(C2, {RP2: {'VCPU': 1}}, None)])

    def test_a_stale_generation_is_a_concurrent_update(self):
        # The generation the handler saw (2) has moved on by the time the
        # state is reached: a write came in between.
        self.state.set_inventories(RP1, 2, {'VCPU': inv(8),
                                            'MEMORY_MB': inv(128)})
        before = self.contents()
        error = self.assertRaises(
            exception.ResourceProviderConcurrentUpdateDetected,
            self.reshape, 2)
        self.assertEqual('Another thread concurrently updated the resource '
                         'provider data. Please retry your update',
                         str(error))
        self.assertEqual(before, self.contents())
        self.assertNotIn(C2, self.state.consumers)

    def test_the_current_generation_reshapes(self):
        self.reshape(2)
        self.assertEqual({RP1: {'MEMORY_MB': 16}, RP2: {'VCPU': 2}},
                         self.state.allocations_for(C1))
        self.assertIn(C2, self.state.consumers)
