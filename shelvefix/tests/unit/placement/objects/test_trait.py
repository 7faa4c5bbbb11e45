"""Tests for shelvefix.placement.objects.trait (through PlacementState)."""

import os_traits
import testtools

from shelvefix.placement import exception
from shelvefix.placement.objects import state as state_mod
from shelvefix.placement.objects import trait

RP1 = '11111111-1111-1111-1111-111111111111'
RP2 = '22222222-2222-2222-2222-222222222222'
MISSING = '99999999-9999-9999-9999-999999999999'


def names(traits):
    return [t.name for t in traits]


class StandardTraitsTestCase(testtools.TestCase):

    def test_placement_sync_order(self):
        # The iteration order of the set placement inserts them from.
        self.assertEqual(list(set(os_traits.get_traits()) - set()),
                         list(trait.STANDARD_TRAITS))
        self.assertEqual(sorted(os_traits.get_traits()),
                         sorted(trait.STANDARD_TRAITS))

    def test_like_prefix(self):
        cases = [('HW_', 'HW_CPU_X86_AVX', True),
                 ('hw_cpu', 'HW_CPU_X86_AVX', True),
                 ('HW_CPU_X86_AVX_12', 'HW_CPU_X86_AVX512F', True),
                 ('%AVX512', 'HW_CPU_X86_AVX512F', True),
                 ('', 'ANYTHING', True),
                 ('HW.CPU', 'HW_CPU_X86_AVX', False),
                 ('CPU', 'HW_CPU_X86_AVX', False),
                 ('\u00e9', '\u00c9', False)]
        for prefix, name, expected in cases:
            self.assertEqual(expected, bool(trait.like_prefix(prefix)(name)),
                             (prefix, name))


class TraitsTestCase(testtools.TestCase):

    def setUp(self):
        super(TraitsTestCase, self).setUp()
        self.state = state_mod.PlacementState()
        self.state.create_provider('rp1', RP1)
        self.state.create_provider('rp2', RP2)

    def test_names_and_missing(self):
        self.state.ensure_trait('CUSTOM_B')
        self.state.ensure_trait('CUSTOM_A')
        self.assertEqual(list(trait.STANDARD_TRAITS) + ['CUSTOM_B',
                                                        'CUSTOM_A'],
                         self.state.trait_names())
        self.assertEqual(['CUSTOM_C', 'NOPE'], self.state.missing_traits(
            ['NOPE', 'CUSTOM_A', 'COMPUTE_NODE', 'CUSTOM_C', 'NOPE']))

    def test_ensure_get_and_delete(self):
        created, was_created = self.state.ensure_trait('CUSTOM_GOLD')
        self.assertTrue(was_created)
        self.assertEqual((created, False),
                         self.state.ensure_trait('CUSTOM_GOLD'))
        self.assertEqual(created, self.state.get_trait('CUSTOM_GOLD'))
        self.assertEqual(('COMPUTE_NODE', False), (
            self.state.ensure_trait('COMPUTE_NODE')[0].name,
            self.state.ensure_trait('COMPUTE_NODE')[1]))
        self.assertRaises(ValueError, self.state.ensure_trait, 'GOLD')
        self.state.delete_trait('CUSTOM_GOLD')
        exc = self.assertRaises(exception.TraitNotFound,
                                self.state.get_trait, 'CUSTOM_GOLD')
        self.assertEqual('No such trait(s): CUSTOM_GOLD.', str(exc))

    def test_delete_refusals(self):
        self.state.ensure_trait('CUSTOM_GOLD')
        self.state.set_provider_traits(RP1, 0, ['CUSTOM_GOLD'])
        cases = [
            ('CUSTOM_NOPE', exception.TraitNotFound,
             'No such trait(s): CUSTOM_NOPE.'),
            ('COMPUTE_NODE', exception.TraitCannotDeleteStandard,
             'Cannot delete standard trait COMPUTE_NODE.'),
            ('CUSTOM_GOLD', exception.TraitInUse,
             'The trait CUSTOM_GOLD is in use by a resource provider.'),
        ]
        for name, exc_class, message in cases:
            exc = self.assertRaises(exc_class, self.state.delete_trait, name)
            self.assertEqual(message, str(exc))
        self.state.delete_provider(RP1)
        self.state.delete_trait('CUSTOM_GOLD')
        self.assertNotIn('CUSTOM_GOLD', self.state.trait_names())

    def test_custom_ids_follow_creation(self):
        for name in ('CUSTOM_C', 'CUSTOM_A', 'CUSTOM_B'):
            self.state.ensure_trait(name)
        self.state.delete_trait('CUSTOM_A')
        self.state.ensure_trait('CUSTOM_A')
        self.assertEqual(['CUSTOM_C', 'CUSTOM_B', 'CUSTOM_A'], names(
            self.state.list_traits(prefix='CUSTOM')))
        self.state.set_provider_traits(
            RP1, 0, ['CUSTOM_A', 'CUSTOM_B', trait.STANDARD_TRAITS[5],
                     'CUSTOM_C', trait.STANDARD_TRAITS[2]])
        self.assertEqual(
            [trait.STANDARD_TRAITS[2], trait.STANDARD_TRAITS[5],
             'CUSTOM_C', 'CUSTOM_B', 'CUSTOM_A'],
            names(self.state.provider_traits(RP1)[1]))

    def test_list_filters(self):
        for name in ('CUSTOM_Z', 'CUSTOM_A', 'CUSTOM_FREE'):
            self.state.ensure_trait(name)
        self.state.set_provider_traits(RP1, 0, ['CUSTOM_Z', 'COMPUTE_NODE'])
        self.state.set_provider_traits(RP2, 0, ['CUSTOM_A', 'CUSTOM_Z'])
        self.assertEqual(self.state.trait_names(),
                         names(self.state.list_traits()))
        self.assertEqual(['CUSTOM_A', 'CUSTOM_Z'], names(
            self.state.list_traits(name_in=['CUSTOM_Z', 'NOPE', 'CUSTOM_A',
                                            'CUSTOM_Z'])))
        self.assertEqual(['CUSTOM_Z', 'CUSTOM_A', 'CUSTOM_FREE'], names(
            self.state.list_traits(prefix='custom_')))
        self.assertEqual(['CUSTOM_FREE'], names(
            self.state.list_traits(prefix='CUSTOM', associated=False)))
        associated = [name for name in self.state.trait_names()
                      if name in ('COMPUTE_NODE', 'CUSTOM_Z', 'CUSTOM_A')]
        self.assertEqual(associated, names(
            self.state.list_traits(associated=True)))
        self.assertEqual(['COMPUTE_NODE', 'CUSTOM_A'], names(
            self.state.list_traits(name_in=['CUSTOM_FREE', 'COMPUTE_NODE',
                                            'CUSTOM_A', 'HW_NOPE'],
                                   associated=True)))
        self.assertEqual(['CUSTOM_FREE'], names(
            self.state.list_traits(name_in=['CUSTOM_FREE', 'CUSTOM_A'],
                                   associated=False)))
        self.assertEqual([], self.state.list_traits(name_in=['']))

    def test_set_provider_traits(self):
        self.state.ensure_trait('CUSTOM_GOLD')
        generation, traits = self.state.set_provider_traits(
            RP1, 0, ['HW_CPU_X86_SSE', 'CUSTOM_GOLD', 'COMPUTE_NODE',
                     'COMPUTE_NODE'])
        self.assertEqual(1, generation)
        self.assertEqual(['COMPUTE_NODE', 'CUSTOM_GOLD', 'HW_CPU_X86_SSE'],
                         names(traits))
        self.assertEqual({'HW_CPU_X86_SSE', 'CUSTOM_GOLD', 'COMPUTE_NODE'},
                         self.state._providers[RP1].traits)
        self.assertEqual(1, self.state.set_provider_traits(
            RP1, 1, ['COMPUTE_NODE', 'CUSTOM_GOLD', 'HW_CPU_X86_SSE'])[0])
        self.assertEqual(1, self.state.get_provider(RP1).generation)
        self.assertEqual(2, self.state.clear_provider_traits(RP1))
        self.assertEqual(2, self.state.clear_provider_traits(RP1))
        self.assertEqual((2, []), self.state.provider_traits(RP1))

    def test_set_provider_traits_refusals(self):
        self.state.set_provider_traits(RP1, 0, ['COMPUTE_NODE'])
        self.assertRaises(exception.ResourceProviderNotFound,
                          self.state.set_provider_traits, MISSING, 0, [])
        self.assertRaises(exception.ResourceProviderNotFound,
                          self.state.provider_traits, MISSING)
        self.assertRaises(exception.ProviderGenerationConflict,
                          self.state.set_provider_traits, RP1, 0,
                          ['CUSTOM_NOPE'])
        wanted = ['CUSTOM_X', 'COMPUTE_NODE', 'CUSTOM_Y', 'CUSTOM_X']
        exc = self.assertRaises(exception.TraitNotFound,
                                self.state.set_provider_traits, RP1, 1,
                                wanted)
        # Listed in the order of placement's own set difference.
        self.assertEqual(', '.join(set(wanted) - {'COMPUTE_NODE'}),
                         exc.kwargs['name'])
        self.assertEqual((1, ['COMPUTE_NODE']), (
            self.state.provider_traits(RP1)[0],
            names(self.state.provider_traits(RP1)[1])))
