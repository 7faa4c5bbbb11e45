"""Tests for POST /reshaper in the placement double (HTTP)."""

from shelvefix.placement import errors
from shelvefix.placement.objects import models
from shelvefix.tests.unit.placement import base


def inventories(generation, **totals):
    return {'resource_provider_generation': generation,
            'inventories': {rc: {'total': total}
                            for rc, total in totals.items()}}


class ReshaperTestCase(base.PlacementTestCase):

    def setUp(self):
        super(ReshaperTestCase, self).setUp()
        self.make_provider(base.RP1, inventory={'VCPU': 8, 'MEMORY_MB': 64})
        self.placement.create_provider('child', uuid=base.RP2)
        self.state.update_provider(base.RP2, 'child', base.RP1)
        self.put_allocations(base.C1, {base.RP1: {'resources': {
            'VCPU': 2, 'MEMORY_MB': 16}}})

    def reshape(self, body, version='1.30'):
        return self.post('/reshaper', body, version=version)

    def test_moves_inventory_and_allocations_together(self):
        resp = self.reshape({
            'inventories': {base.RP1: inventories(2, MEMORY_MB=64),
                            base.RP2: inventories(0, VCPU=8)},
            'allocations': {base.C1: base.alloc_body(
                {base.RP1: {'resources': {'MEMORY_MB': 16}},
                 base.RP2: {'resources': {'VCPU': 2}}}, generation=1)}})
        self.assertStatus(204, resp)
        # Interim inventory, allocations, final inventory: three moves
        # for the compute node, three for the child.
        self.assertEqual(5, self.provider_generation(base.RP1))
        self.assertEqual(3, self.provider_generation(base.RP2))
        self.assertEqual({'VCPU': 2}, self.state.usages(base.RP2))
        self.assertEqual(['MEMORY_MB'],
                         list(self.state.get_inventories(base.RP1)[1]))

    def test_a_refused_reshape_changes_nothing(self):
        before = (self.provider_generation(base.RP1),
                  self.state.get_inventories(base.RP1),
                  self.state.allocations_for(base.C1))
        new = base.C2
        resp = self.reshape({
            'inventories': {base.RP1: inventories(2, MEMORY_MB=64)},
            'allocations': {new: base.alloc_body(
                {base.RP1: {'resources': {'MEMORY_MB': 1}}})}})
        self.assertError(resp, 409, code=errors.INVENTORY_INUSE,
                         detail="update conflict: Inventory for 'VCPU'")
        self.assertEqual(before, (self.provider_generation(base.RP1),
                                  self.state.get_inventories(base.RP1),
                                  self.state.allocations_for(base.C1)))
        self.assertNotIn(new, self.state.consumers)

    def test_checks_before_the_transaction(self):
        self.assertError(self.reshape({'inventories': {
            base.MISSING: inventories(0, VCPU=1)}, 'allocations': {}}), 400,
            code=errors.RESOURCE_PROVIDER_NOT_FOUND,
            detail='Resource provider %s in inventories not found'
                   % base.MISSING)
        self.assertError(self.reshape({'inventories': {
            base.RP2: inventories(5, VCPU=1)}, 'allocations': {}}), 409,
            code=errors.CONCURRENT_UPDATE,
            detail='actual: 0, given: 5')
        self.assertError(self.reshape({'inventories': {
            base.RP2: inventories(0, NOPE=1)}, 'allocations': {}}), 400,
            detail='malformed reshaper data: No such resource class NOPE.')
        self.assertError(self.reshape({'inventories': {
            base.RP2: inventories(0, VCPU=1)}, 'allocations': {}},
            version='1.29'), 404)

    def test_a_write_after_the_check_is_a_concurrent_update(self):
        # Another request writes the compute node after the handler checked
        # its generation and before the reshape takes the state's lock: the
        # check under the lock, not the handler's, has to refuse it.
        real = self.state.reshape
        seen = []

        def racing(inventories, writes):
            seen.append(self.state.set_inventories(
                base.RP1, 2, {'VCPU': models.Inventory.build(8),
                              'MEMORY_MB': models.Inventory.build(128)}))
            return real(inventories, writes)

        self.patch(self.state, 'reshape', racing)
        resp = self.reshape({
            'inventories': {base.RP1: inventories(2, MEMORY_MB=64),
                            base.RP2: inventories(0, VCPU=8)},
            'allocations': {
                base.C1: base.alloc_body(
                    {base.RP1: {'resources': {'MEMORY_MB': 16}},
                     base.RP2: {'resources': {'VCPU': 2}}}, generation=1),
                base.C2: base.alloc_body(
                    {base.RP2: {'resources': {'VCPU': 1}}})}})
        self.assertEqual([3], seen)
        self.assertError(
            resp, 409, code=errors.CONCURRENT_UPDATE,
            detail='update conflict: Another thread concurrently updated '
                   'the resource provider data. Please retry your update')
        # Nothing of the reshape was written: the racing write stands, the
        # allocations and the child are as they were, no consumer is new.
        generation, stored = self.state.get_inventories(base.RP1)
        self.assertEqual(3, generation)
        self.assertEqual(128, stored['MEMORY_MB'].total)
        self.assertEqual(8, stored['VCPU'].total)
        self.assertEqual((0, {}), self.state.get_inventories(base.RP2))
        self.assertEqual({base.RP1: {'VCPU': 2, 'MEMORY_MB': 16}},
                         self.state.allocations_for(base.C1))
        self.assertEqual(1, self.state.consumers[base.C1].generation)
        self.assertNotIn(base.C2, self.state.consumers)
