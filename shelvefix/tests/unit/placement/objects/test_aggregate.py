"""Tests for shelvefix.placement.objects.aggregate."""

import testtools

from shelvefix.placement import exception
from shelvefix.placement.objects import state as state_mod

RP1 = '11111111-1111-1111-1111-111111111111'
RP2 = '22222222-2222-2222-2222-222222222222'
AGG1 = 'a1a1a1a1-0000-0000-0000-000000000001'
AGG2 = 'a2a2a2a2-0000-0000-0000-000000000002'
AGG3 = 'a3a3a3a3-0000-0000-0000-000000000003'


class AggregatesTestCase(testtools.TestCase):

    def setUp(self):
        super(AggregatesTestCase, self).setUp()
        self.state = state_mod.PlacementState()
        self.state.create_provider('rp1', RP1)
        self.state.create_provider('rp2', RP2)

    def test_new_provider_has_none(self):
        self.assertEqual(([], 0), self.state.get_provider_aggregates(RP1))

    def test_listed_in_first_seen_order(self):
        self.state.set_provider_aggregates(RP2, [AGG3])
        self.state.set_provider_aggregates(RP1, [AGG2])
        self.state.set_provider_aggregates(RP1, [AGG1, AGG2, AGG3])
        self.assertEqual([AGG3, AGG2, AGG1],
                         self.state.get_provider_aggregates(RP1)[0])
        self.assertEqual([AGG3], self.state.get_provider_aggregates(RP2)[0])

    def test_order_survives_removal(self):
        self.state.set_provider_aggregates(RP1, [AGG2])
        self.state.set_provider_aggregates(RP1, [])
        self.state.set_provider_aggregates(RP1, [AGG1])
        self.state.set_provider_aggregates(RP1, [AGG1, AGG2])
        self.assertEqual([AGG2, AGG1],
                         self.state.get_provider_aggregates(RP1)[0])

    def test_spelling_is_kept(self):
        upper, bare = AGG1.upper(), AGG1.replace('-', '')
        self.state.set_provider_aggregates(RP1, [AGG1, upper, bare])
        # Numbered as placement numbers the aggregates new in one write:
        # in the iteration order of the set of them it does not have.
        self.assertEqual(list(set([AGG1, upper, bare]) - set()),
                         self.state.get_provider_aggregates(RP1)[0])

    def test_association_rows(self):
        self.state.set_provider_aggregates(RP1, [AGG1])
        self.state.set_provider_aggregates(RP2, [AGG1, AGG2])
        self.state.set_provider_aggregates(RP1, [AGG2])
        rows = {uuid: rp.aggregate_rows
                for uuid, rp in self.state._providers.items()}
        # Each new association gets the highest row id plus one.
        self.assertEqual({AGG2: 4}, rows[RP1])
        self.assertEqual([2, 3], sorted(rows[RP2].values()))

    def test_without_generation_it_does_not_move(self):
        self.assertEqual(0, self.state.set_provider_aggregates(RP1, [AGG1]))
        self.assertEqual(0, self.state.get_provider(RP1).generation)

    def test_with_generation_it_moves_even_unchanged(self):
        self.assertEqual(1, self.state.set_provider_aggregates(
            RP1, [AGG1], generation=0))
        self.assertEqual(2, self.state.set_provider_aggregates(
            RP1, [AGG1], generation=1))
        self.assertEqual(([AGG1], 2), self.state.get_provider_aggregates(RP1))

    def test_stale_generation_changes_nothing(self):
        self.state.set_provider_aggregates(RP1, [AGG1], generation=0)
        for stale in (0, 2):
            self.assertRaises(exception.ProviderGenerationConflict,
                              self.state.set_provider_aggregates, RP1,
                              [AGG2], generation=stale)
        self.assertEqual(([AGG1], 1), self.state.get_provider_aggregates(RP1))
        self.state.set_provider_aggregates(RP2, [AGG3, AGG2])
        self.assertEqual(list(set([AGG3, AGG2]) - set()),
                         self.state.get_provider_aggregates(RP2)[0])

    def test_unknown_provider(self):
        missing = '99999999-9999-9999-9999-999999999999'
        self.assertRaises(exception.ResourceProviderNotFound,
                          self.state.get_provider_aggregates, missing)
        self.assertRaises(exception.ResourceProviderNotFound,
                          self.state.set_provider_aggregates, missing,
                          [AGG1])

    def test_deleted_provider_forgets_them(self):
        self.state.set_provider_aggregates(RP1, [AGG1])
        self.state.delete_provider(RP1)
        self.state.create_provider('rp1', RP1)
        self.assertEqual(([], 0), self.state.get_provider_aggregates(RP1))
