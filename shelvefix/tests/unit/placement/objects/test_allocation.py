"""Tests for shelvefix.placement.objects.allocation, through the state."""

import testtools

from shelvefix.placement import exception
from shelvefix.placement.objects import allocation
from shelvefix.placement.objects import models
from shelvefix.placement.objects import state as state_mod

RP1 = '11111111-1111-1111-1111-111111111111'
RP2 = '22222222-2222-2222-2222-222222222222'
MISSING = '99999999-9999-9999-9999-999999999999'


def write(consumer, allocs, generation=None, project='p', user='u',
          consumer_type=None):
    return allocation.ConsumerWrite(consumer, allocs, project, user,
                                    generation, consumer_type)


class AllocationsTestCase(testtools.TestCase):

    def setUp(self):
        super(AllocationsTestCase, self).setUp()
        self.state = state_mod.PlacementState()
        for uuid in (RP1, RP2):
            self.state.create_provider(uuid[:3], uuid)
            self.state.set_inventories(uuid, 0, {
                'VCPU': models.Inventory.build(8),
                'DISK_GB': models.Inventory.build(100)})

    def replace(self, *writes, **kwargs):
        self.state.replace_allocations(list(writes), **kwargs)

    def generations(self):
        return [self.state.get_provider(rp).generation for rp in (RP1, RP2)]

    def test_first_write_creates_consumer_at_generation_1(self):
        self.replace(write('c', {RP1: {'VCPU': 2}}))
        self.assertEqual(models.Consumer(1, 'p', 'u', None),
                         self.state.get_consumer('c'))
        self.assertEqual({RP1: {'VCPU': 2}}, self.state.allocations_for('c'))
        self.assertEqual([2, 1], self.generations())

    def test_every_allocation_at_once(self):
        self.assertEqual({}, self.state.allocations)
        self.replace(write('c', {RP1: {'VCPU': 2}}),
                     write('d', {RP2: {'VCPU': 1, 'DISK_GB': 10}}))
        # An empty write for an unknown consumer leaves a record, without
        # allocations.
        self.replace(write('e', {}))
        self.assertIsNotNone(self.state.get_consumer('e'))
        snapshot = self.state.allocations
        self.assertEqual({'c': {RP1: {'VCPU': 2}},
                          'd': {RP2: {'VCPU': 1, 'DISK_GB': 10}}}, snapshot)
        self.assertEqual(['c', 'd'], list(snapshot))
        self.replace(write('c', {}, 1))
        self.assertEqual(['d'], list(self.state.allocations))
        self.assertIn('c', snapshot)

    def test_generation_checks(self):
        self.replace(write('c', {RP1: {'VCPU': 2}}))
        exc = self.assertRaises(exception.ConsumerGenerationConflict,
                                self.replace, write('c', {}, 0))
        self.assertEqual((1, 0), (exc.expected, exc.got))
        exc = self.assertRaises(exception.ConsumerGenerationConflict,
                                self.replace, write('new', {}, 1))
        self.assertEqual((None, 1), (exc.expected, exc.got))
        self.assertIsNone(self.state.get_consumer('new'))
        # Without generation checking (before 1.28) anything goes.
        self.replace(write('c', {RP1: {'VCPU': 1}}, 42),
                     check_generation=False)
        self.assertEqual(2, self.state.get_consumer('c').generation)

    def test_moving_bumps_only_the_new_provider(self):
        self.replace(write('c', {RP1: {'VCPU': 2}}))
        self.replace(write('c', {RP2: {'VCPU': 2}}, 1))
        self.assertEqual([2, 2], self.generations())
        self.assertEqual({'VCPU': 0, 'DISK_GB': 0}, self.state.usages(RP1))

    def test_emptying_bumps_old_providers_and_deletes_consumer(self):
        self.replace(write('c', {RP1: {'VCPU': 2}, RP2: {'DISK_GB': 1}}))
        self.replace(write('c', {}, 1))
        self.assertEqual([3, 3], self.generations())
        self.assertEqual({}, self.state.consumers)
        self.assertEqual({}, self.state.allocations_for('c'))

    def test_failed_consumer_cleanup_leaves_a_ghost(self):
        self.replace(write('c', {RP1: {'VCPU': 2}}))
        self.state.fail_consumer_cleanup()
        exc = self.assertRaises(exception.DatabaseError,
                                self.state.delete_allocations, 'c')
        self.assertIn('database is locked', str(exc))
        self.assertIn('DELETE FROM consumers', str(exc))
        # The first step held: no allocations. The consumer stays.
        self.assertEqual({}, self.state.allocations_for('c'))
        self.assertEqual(models.Consumer(1, 'p', 'u', None),
                         self.state.get_consumer('c'))
        # The ghost refuses a claim for a new consumer...
        exc = self.assertRaises(exception.ConsumerGenerationConflict,
                                self.replace, write('c', {RP1: {'VCPU': 1}}))
        self.assertEqual((1, None), (exc.expected, exc.got))
        # ... and takes one with its generation. One failure only.
        self.replace(write('c', {RP1: {'VCPU': 1}}, 1))
        self.state.delete_allocations('c')
        self.assertEqual({}, self.state.consumers)

    def test_cleanup_faults_can_be_disarmed(self):
        self.replace(write('c', {RP1: {'VCPU': 2}}))
        self.state.fail_consumer_cleanup(2)
        self.state.fail_consumer_cleanup(0)
        self.state.delete_allocations('c')
        self.assertEqual({}, self.state.consumers)

    def test_delete_moves_no_generation(self):
        self.replace(write('c', {RP1: {'VCPU': 2}}))
        self.state.delete_allocations('c')
        self.assertEqual([2, 1], self.generations())
        self.assertEqual({}, self.state.consumers)
        exc = self.assertRaises(exception.NotFound,
                                self.state.delete_allocations, 'c')
        self.assertEqual("No allocations for consumer 'c'", str(exc))

    def test_empty_write_for_unknown_consumer_leaves_record(self):
        self.replace(write('c', {}))
        self.assertEqual(models.Consumer(0, 'p', 'u', None),
                         self.state.get_consumer('c'))
        self.assertEqual([1, 1], self.generations())
        exc = self.assertRaises(exception.ConsumerGenerationConflict,
                                self.replace, write('c', {RP1: {'VCPU': 1}}))
        self.assertEqual('consumer generation conflict - expected 0 but got '
                         'None', str(exc))
        self.replace(write('c', {RP1: {'VCPU': 1}}, 0))
        self.assertEqual(1, self.state.get_consumer('c').generation)

    def test_unknown_provider_keeps_new_consumer(self):
        self.assertRaises(exception.AllocationProviderNotFound, self.replace,
                          write('c', {MISSING: {'VCPU': 1}}))
        self.assertEqual(0, self.state.get_consumer('c').generation)

    def test_capacity_failure_rolls_back_everything(self):
        self.replace(write('old', {RP1: {'VCPU': 2}}))
        self.assertRaises(
            exception.InvalidAllocationCapacityExceeded, self.replace,
            write('old', {RP1: {'VCPU': 1}}, 1, project='other'),
            write('new', {RP1: {'VCPU': 8}}))
        self.assertEqual(['old'], list(self.state.consumers))
        self.assertEqual(models.Consumer(1, 'p', 'u', None),
                         self.state.get_consumer('old'))
        self.assertEqual({RP1: {'VCPU': 2}},
                         self.state.allocations_for('old'))
        self.assertEqual([2, 1], self.generations())

    def test_unknown_class_rolls_back(self):
        self.assertRaises(exception.ResourceClassNotFound, self.replace,
                          write('c', {RP1: {'FOO': 1}}))
        self.assertEqual({}, self.state.consumers)

    def test_conflict_in_multi_write_forgets_created_consumers(self):
        self.replace(write('known', {RP1: {'VCPU': 1}}))
        self.assertRaises(exception.ConsumerGenerationConflict, self.replace,
                          write('fresh', {RP1: {'VCPU': 1}}),
                          write('known', {RP1: {'VCPU': 1}}, 7))
        self.assertEqual(['known'], list(self.state.consumers))

    def test_multi_write_is_atomic_and_checks_sum(self):
        self.replace(write('a', {RP1: {'VCPU': 4}}), write('b', {}))
        self.replace(write('a', {}, 1), write('b', {RP1: {'VCPU': 8}}, 0))
        self.assertEqual(['b'], list(self.state.consumers))
        self.assertRaises(exception.InvalidAllocationCapacityExceeded,
                          self.replace, write('b', {RP1: {'VCPU': 5}}, 1),
                          write('a', {RP1: {'VCPU': 4}}))

    def test_project_user_and_type_updates(self):
        self.replace(write('c', {RP1: {'VCPU': 1}}, project=None, user=None))
        self.assertEqual(models.Consumer(
            1, models.INCOMPLETE_CONSUMER_ID, models.INCOMPLETE_CONSUMER_ID,
            None), self.state.get_consumer('c'))
        self.replace(write('c', {RP1: {'VCPU': 1}}, 1, project='p2',
                           user='u2', consumer_type='INSTANCE'))
        self.replace(write('c', {RP1: {'VCPU': 1}}, 2, project='p2',
                           user='u2'))
        self.assertEqual(models.Consumer(3, 'p2', 'u2', 'INSTANCE'),
                         self.state.get_consumer('c'))

    def test_reads(self):
        self.replace(write('b', {RP1: {'VCPU': 3}}))
        self.replace(write('a', {RP1: {'DISK_GB': 5, 'VCPU': 1}}))
        consumer, rows = self.state.consumer_allocation_rows('a')
        self.assertEqual(1, consumer.generation)
        self.assertEqual([(RP1, 3, 'DISK_GB', 5), (RP1, 3, 'VCPU', 1)],
                         [row[:4] for row in rows])
        self.assertEqual((None, []),
                         self.state.consumer_allocation_rows('x'))
        generation, rows = self.state.provider_allocation_rows(RP1)
        self.assertEqual(3, generation)
        # Class, then amount, then insertion order (placement's sqlite).
        self.assertEqual([('a', 'VCPU', 1), ('b', 'VCPU', 3),
                          ('a', 'DISK_GB', 5)],
                         [(row[0], row[2], row[3]) for row in rows])

    def test_total_usages(self):
        self.replace(write('a', {RP1: {'VCPU': 1}}, consumer_type='INSTANCE'),
                     write('b', {RP2: {'VCPU': 2, 'DISK_GB': 3}}),
                     write('c', {RP2: {'VCPU': 4}}, project='q'),
                     write('d', {RP1: {'VCPU': 1}}, user='v'))
        state = self.state
        self.assertEqual({'VCPU': 4, 'DISK_GB': 3}, state.total_usages('p'))
        self.assertEqual({'VCPU': 3, 'DISK_GB': 3},
                         state.total_usages('p', user_id='u'))
        self.assertEqual(
            {'INSTANCE': {'VCPU': 1, 'consumer_count': 1},
             'unknown': {'VCPU': 3, 'DISK_GB': 3, 'consumer_count': 2}},
            state.total_usages('p', by_type=True))
        self.assertEqual(
            {'all': {'VCPU': 4, 'DISK_GB': 3, 'consumer_count': 3}},
            state.total_usages('p', by_type=True, consumer_type='all'))
        self.assertEqual(
            {'INSTANCE': {'VCPU': 1, 'consumer_count': 1}},
            state.total_usages('p', by_type=True, consumer_type='INSTANCE'))
        self.assertEqual({}, state.total_usages('nobody', by_type=True))
