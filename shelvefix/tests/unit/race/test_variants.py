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


TRACKER = '''\
class ResourceTracker(object):
    def _update_usage_from_instance(self, instance, is_removed=False):
        removed = is_removed or vm_states.allow_resource_removal(
            vm_state=instance['vm_state'],
            task_state=instance.task_state)
        return removed

    def _update_usage_from_instances(self, instances):
        return [i for i in instances
                if not vm_states.allow_resource_removal(i.vm_state,
                                                        i.task_state)]

    def untouched(self):
        return 1
'''


class OtherBugsTestCase(base.TestCase):
    """The rewrites of bugs 2025480 and 1862633."""

    def test_code_per_variant(self):
        for variant in race.VARIANTS:
            code = variants.code(variant)
            self.assertTrue(issubclass(code.manager_cls,
                                       manager.ComputeManager))
        self.assertIs(variants.untracking_resource_tracker(),
                      variants.code(race.PRE_2025480).tracker_cls)
        self.assertRaises(ValueError, variants.code, 'pre-0')

    def test_untrack_spawning_keeps_lines_and_drops_the_task_state(self):
        text = rewrite.untrack_spawning(TRACKER)
        self.assertEqual(len(TRACKER.splitlines()), len(text.splitlines()))
        self.assertNotIn('allow_resource_removal', text)
        self.assertIn("is_removed or (instance['vm_state'] in "
                      "(vm_states.DELETED, vm_states.SHELVED_OFFLOADED)",
                      text)
        self.assertIn('if not (i.vm_state in (vm_states.DELETED, '
                      'vm_states.SHELVED_OFFLOADED)', text)
        self.assertNotIn('task_state', text)
        namespace = {'vm_states': vm_states}
        exec(compile(text, '<rewritten>', 'exec'), namespace)
        tracker = namespace['ResourceTracker']()
        spawning = {'vm_state': vm_states.SHELVED_OFFLOADED,
                    'task_state': 'spawning'}

        class Spawning(dict):
            vm_state = vm_states.SHELVED_OFFLOADED
            task_state = 'spawning'
        self.assertTrue(tracker._update_usage_from_instance(
            Spawning(spawning)))
        self.assertEqual([], tracker._update_usage_from_instances(
            [Spawning(spawning)]))
        self.assertRaises(rewrite.RewriteError, rewrite.untrack_spawning,
                          'class ResourceTracker(object):\n    pass\n')

    def test_untracking_tracker_rewrites_both_methods(self):
        cls = variants.untracking_resource_tracker()
        self.assertEqual(
            {'_update_usage_from_instance', '_update_usage_from_instances'},
            {name for name in vars(cls) if name.startswith('_update')})

    def test_leak_on_bind_failure_moves_only_the_setup(self):
        corrected, _line = rewrite.class_source(manager.ComputeManager)
        leaking = variants.leaking_compute_manager().rewritten_source
        # The same lines (the moved ones dedented), in another order.
        self.assertEqual(sorted(line.strip() for line in
                                corrected.splitlines()),
                         sorted(line.strip() for line in
                                leaking.splitlines()))
        method = steps.find_method(ast.parse(leaking), 'ComputeManager',
                                   '_unshelve_instance')[1]
        texts = [ast.unparse(stmt) for stmt in method.body]
        try_at = [type(stmt) for stmt in method.body].index(ast.Try)
        setup_at = [i for i, text in enumerate(texts)
                    if 'setup_instance_network_on_host' in text]
        self.assertEqual([try_at - 1], setup_at)
        self.assertNotIn('setup_instance_network_on_host', texts[try_at])
        self.assertRaises(
            rewrite.RewriteError, rewrite.leak_on_bind_failure, leaking)
