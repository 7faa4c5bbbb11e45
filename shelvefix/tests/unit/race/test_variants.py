"""The pre-fix order is derived from the corrected code, never copied."""

import ast
import collections

from shelvefix.compute import manager
from shelvefix.compute import vm_states
from shelvefix.novacheck import check
from shelvefix.novacheck import rewrite
from shelvefix.novacheck import steps
from shelvefix import race
from shelvefix.race import scenario
from shelvefix.race import timeline
from shelvefix.race import variants
from shelvefix.tests import base


class ExtendedComputeManager(manager.ComputeManager):
    """The corrected order with one more step than the library has."""

    def _shelve_offload_instance(self, context, instance, clean_shutdown,
                                 bdms=None):
        self.rt.delete_allocation_for_shelve_offloaded_instance(context,
                                                                instance)
        instance.vm_state = vm_states.SHELVED_OFFLOADED
        instance.task_state = None
        instance.save(expected_task_state=manager.OFFLOADABLE_TASK_STATES)
        self.extra_step = 'ran'


def _statements(text):
    return [ast.dump(stmt) for stmt in
            steps.find_method(ast.parse(text))[1].body]


def _is_offloading_save(dump):
    return "attr='save'" in dump and 'OFFLOADABLE_TASK_STATES' in dump


class VariantsTestCase(base.TestCase):

    def test_compute_manager_per_ordering(self):
        self.assertIs(manager.ComputeManager,
                      variants.compute_manager(race.CORRECTED))
        legacy = variants.compute_manager(race.LEGACY)
        self.assertTrue(issubclass(legacy, manager.ComputeManager))
        self.assertIs(legacy, variants.compute_manager(race.LEGACY))
        self.assertRaises(ValueError, variants.compute_manager, 'sideways')

    def test_only_the_free_moved(self):
        corrected, _line = rewrite.class_source(manager.ComputeManager)
        legacy = variants.legacy_compute_manager().rewritten_source
        self.assertEqual(check.FIXED, check.check_source(corrected).status)
        result = check.check_source(legacy)
        self.assertEqual(check.LEGACY, result.status)
        before, after = _statements(corrected), _statements(legacy)
        self.assertNotEqual(before, after)
        self.assertEqual(collections.Counter(before),
                         collections.Counter(after))
        free = [s for s in before if '_free_allocations' in s]
        self.assertEqual(1, len(free))
        self.assertEqual([s for s in before if s not in free],
                         [s for s in after if s not in free])
        # Now right after the save that makes SHELVED_OFFLOADED visible.
        save = [i for i, s in enumerate(after) if _is_offloading_save(s)]
        self.assertEqual(save[0] + 1, after.index(free[0]))

    def test_the_variant_follows_the_code_it_derives_from(self):
        # A change to the corrected method shows up in its legacy variant:
        # nothing was copied that could drift.
        legacy = variants.legacy_compute_manager(ExtendedComputeManager)
        scn = self.useFixture(scenario.ShelveScenario(manager_cls=legacy))
        scn.shelve_offload()
        self.assertEqual('ran', scn.compute.extra_step)
        self.assertEqual(
            ['DELETE /allocations/%s came after the save that made '
             'SHELVED_OFFLOADED visible' % scn.instance.uuid],
            timeline.order_violations(scn.timeline(), scn.instance.uuid))

    def test_the_corrected_code_passes_the_same_check(self):
        scn = self.useFixture(scenario.ShelveScenario(
            manager_cls=ExtendedComputeManager))
        scn.shelve_offload()
        self.assertEqual([], timeline.order_violations(scn.timeline(),
                                                       scn.instance.uuid))
