"""Tests for shelvefix.placement.objects.state (providers and inventories)."""

import threading

import testtools

from shelvefix.placement import exception
from shelvefix.placement.objects import allocation
from shelvefix.placement.objects import models
from shelvefix.placement.objects import state as state_mod

RP1 = '11111111-1111-1111-1111-111111111111'
RP2 = '22222222-2222-2222-2222-222222222222'
RP3 = '33333333-3333-3333-3333-333333333333'
AGG1 = 'a1a1a1a1-0000-0000-0000-000000000001'
AGG2 = 'a2a2a2a2-0000-0000-0000-000000000002'
AVX, SSE, VMX = 'HW_CPU_X86_AVX', 'HW_CPU_X86_SSE', 'HW_CPU_X86_VMX'


def inv(total, **fields):
    return models.Inventory.build(total, **fields)


class ProvidersTestCase(testtools.TestCase):

    def setUp(self):
        super(ProvidersTestCase, self).setUp()
        self.state = state_mod.PlacementState()

    def test_create_and_get(self):
        created = self.state.create_provider('rp1', RP1)
        self.assertEqual(models.Provider(RP1, 'rp1', 0, None, RP1, {}),
                         created)
        self.assertEqual(created, self.state.get_provider(RP1))
        generated = self.state.create_provider('rp2')
        self.assertEqual(36, len(generated.uuid))
        self.assertEqual([RP1, generated.uuid], list(self.state.providers))

    def test_create_refusals(self):
        self.state.create_provider('rp1', RP1)
        cases = [
            (('', RP2), exception.ProviderActionError, 'name is required'),
            (('rp2', RP2, RP2), exception.ProviderActionError,
             'parent provider UUID cannot be same as UUID'),
            (('rp2', RP2, RP3), exception.ProviderActionError,
             'parent provider UUID does not exist.'),
            (('rp1', RP1), exception.ProviderNameExists,
             'Conflicting resource provider name: rp1 already exists.'),
            (('rpx', RP1), exception.ProviderUuidExists,
             'Conflicting resource provider uuid: %s already exists.' % RP1),
        ]
        for args, exc_class, message in cases:
            exc = self.assertRaises(exc_class, self.state.create_provider,
                                    *args)
            self.assertIn(message, str(exc))
        self.assertEqual([RP1], list(self.state.providers))

    def test_tree(self):
        self.state.create_provider('root', RP1)
        self.state.create_provider('child', RP2, RP1)
        self.state.create_provider('grandchild', RP3, RP2)
        self.assertEqual(RP1, self.state.get_provider(RP3).root_provider_uuid)
        self.assertEqual([RP1, RP2, RP3], [
            rp.uuid for rp in self.state.list_providers(in_tree=RP3)])
        self.assertRaises(exception.CannotDeleteParentResourceProvider,
                          self.state.delete_provider, RP2)
        # Moving the middle of the tree needs reparenting, loops never.
        self.assertRaises(exception.ProviderActionError,
                          self.state.update_provider, RP2, 'child', None)
        exc = self.assertRaises(exception.ProviderActionError,
                                self.state.update_provider, RP1, 'root', RP3,
                                allow_reparenting=True)
        self.assertIn('creating loop', str(exc))
        self.state.update_provider(RP2, 'child', None, allow_reparenting=True)
        self.assertEqual(RP2, self.state.get_provider(RP3).root_provider_uuid)
        self.assertEqual([RP1], [
            rp.uuid for rp in self.state.list_providers(in_tree=RP1)])

    def test_update_keeps_generation(self):
        self.state.create_provider('rp1', RP1)
        self.state.create_provider('rp2', RP2)
        self.state.update_provider(RP2, 'renamed', RP1)
        provider = self.state.get_provider(RP2)
        self.assertEqual(('renamed', RP1, 0), (
            provider.name, provider.parent_provider_uuid,
            provider.generation))
        self.assertRaises(exception.ProviderNameExists,
                          self.state.update_provider, RP2, 'rp1', RP1)
        self.assertRaises(exception.ResourceProviderNotFound,
                          self.state.update_provider, RP3, 'x', None)

    def test_list_filters(self):
        self.state.create_provider('rp1', RP1)
        self.state.create_provider('rp2', RP2)
        self.state.set_inventories(RP2, 0, {'VCPU': inv(4, max_unit=2)})
        self.assertEqual([RP2], [rp.uuid for rp in self.state.list_providers(
            name='rp2')])
        self.assertEqual([RP1], [rp.uuid for rp in self.state.list_providers(
            uuid=RP1)])
        self.assertEqual([RP2], [rp.uuid for rp in self.state.list_providers(
            resources={'VCPU': 2})])
        self.assertEqual([], self.state.list_providers(
            resources={'VCPU': 3}))
        self.assertEqual([], self.state.list_providers(in_tree=RP3))
        self.assertRaises(exception.ResourceClassNotFound,
                          self.state.list_providers, resources={'FOO': 1})

    def test_list_by_aggregates(self):
        for uuid in (RP1, RP2, RP3):
            self.state.create_provider(uuid[:3], uuid)
        self.state.set_provider_aggregates(RP1, [AGG1])
        self.state.set_provider_aggregates(RP2, [AGG1, AGG2])

        def found(**filters):
            return [rp.uuid for rp in self.state.list_providers(**filters)]
        self.assertEqual([RP1, RP2], found(member_of=[{AGG1}]))
        self.assertEqual([RP2], found(member_of=[{AGG1}, {AGG2, RP3}]))
        self.assertEqual([RP3], found(forbidden_aggregates={AGG1}))
        self.assertEqual([RP1], found(member_of=[{AGG1}],
                                      forbidden_aggregates={AGG2}))
        self.assertEqual([], found(member_of=[{AGG1.upper()}]))
        # Nobody in the aggregate: empty before the resource class.
        self.assertEqual([], found(member_of=[{RP3}], resources={'FOO': 1}))
        self.assertRaises(exception.ResourceClassNotFound, found,
                          member_of=[{AGG1}], name='nope',
                          resources={'FOO': 1})

    def test_list_by_traits(self):
        for uuid in (RP1, RP2, RP3):
            self.state.create_provider(uuid[:3], uuid)
        self.state.set_provider_traits(RP1, 0, [AVX])
        self.state.set_provider_traits(RP2, 0, [AVX, SSE])

        def found(**filters):
            return [rp.uuid for rp in self.state.list_providers(**filters)]
        self.assertEqual([RP1, RP2], found(required_traits=[{AVX}]))
        self.assertEqual([RP2], found(required_traits=[{AVX}, {SSE}]))
        self.assertEqual([RP2], found(required_traits=[{SSE, VMX}]))
        self.assertEqual([RP3], found(forbidden_traits={AVX}))
        self.assertEqual([RP1], found(required_traits=[{AVX}],
                                      forbidden_traits={SSE}))
        self.assertEqual([], found(required_traits=[{VMX}],
                                   resources={'FOO': 1}))
        exc = self.assertRaises(exception.TraitNotFound, found,
                                required_traits=[{'CUSTOM_B'}, {AVX}],
                                forbidden_traits={'CUSTOM_A'})
        self.assertEqual('No such trait(s): CUSTOM_B.', str(exc))
        exc = self.assertRaises(exception.TraitNotFound, found,
                                forbidden_traits={'CUSTOM_A'})
        self.assertEqual('No such trait(s): CUSTOM_A.', str(exc))
        # An unknown tree answers before any trait is looked at.
        self.assertEqual([], found(in_tree=RP3[:-1] + '0',
                                   required_traits=[{'CUSTOM_B'}]))

    def test_delete(self):
        self.state.create_provider('rp1', RP1)
        self.state.delete_provider(RP1)
        self.assertEqual({}, self.state.providers)
        self.assertRaises(exception.ResourceProviderNotFound,
                          self.state.delete_provider, RP1)


class IntrospectionTestCase(testtools.TestCase):

    def test_snapshots_do_not_change(self):
        state = state_mod.PlacementState()
        state.create_provider('rp1', RP1)
        before = state.providers
        state.set_inventories(RP1, 0, {'VCPU': inv(4)})
        self.assertEqual(0, before[RP1].generation)
        self.assertEqual({}, before[RP1].inventories)
        self.assertEqual(1, state.providers[RP1].generation)

    def test_concurrent_writers_are_serialized(self):
        state = state_mod.PlacementState()
        state.create_provider('rp1', RP1)
        state.set_inventories(RP1, 0, {'VCPU': inv(1000)})
        errors = []

        def writer(n):
            consumer = 'c%d' % n
            try:
                for i in range(25):
                    generation = None if i == 0 else i
                    state.replace_allocations([allocation.ConsumerWrite(
                        consumer, {RP1: {'VCPU': 1 + i % 3}}, 'p', 'u',
                        generation, None)])
            except Exception as exc:
                errors.append(exc)

        threads = [threading.Thread(target=writer, args=(n,))
                   for n in range(4)]
        for thread in threads:
            thread.start()
        for thread in threads:
            thread.join()
        self.assertEqual([], errors)
        self.assertEqual(1 + 4 * 25, state.get_provider(RP1).generation)
        self.assertEqual({'c%d' % n: 25 for n in range(4)},
                         {c: v.generation
                          for c, v in state.consumers.items()})
        self.assertEqual({'VCPU': 4 * (1 + 24 % 3)}, dict(state.usages(RP1)))
