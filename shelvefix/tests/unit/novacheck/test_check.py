"""Tests for the static check of nova's shelve-offload order.

The managers checked here are synthetic (see ``shapes``): one per shape the
method has had from Rocky to today, in both orders, plus the ways a tree
can leave the answer open. The installed nova and copies of it rewritten
to older shapes are checked in ``shelvefix/tests/nova``.
"""

import json

import testtools

from shelvefix.novacheck import check
from shelvefix.tests.unit.novacheck import shapes

FREE = 'self.rt.delete_allocation_for_shelve_offloaded_instance'
STATE = 'instance.vm_state = vm_states.SHELVED_OFFLOADED'
SAVE = 'instance.save(expected_task_state=SAVED_FROM)'
NIL_SAVE = 'instance.save(expected_task_state=None)'


def body(*statements):
    return shapes.module(shapes.method('\n'.join(statements) + '\n'))


class HistoricalShapesTestCase(testtools.TestCase):
    """Every shape from Rocky to today, in both orders."""

    def assertVerdict(self, status, text, free, save):
        result = check.check_source(text)
        self.assertEqual(status, result.status, result.render())
        self.assertEqual(shapes.line_of(text, free), result.free.node.lineno)
        self.assertEqual(shapes.line_of(text, save), result.save.node.lineno)
        return result

    def test_rocky_legacy(self):
        text = shapes.rocky_legacy()
        result = self.assertVerdict(check.LEGACY, text,
                                    'rt.delete_allocation_for',
                                    'instance.save(expected_task_state=SH')
        self.assertEqual(1, result.exit_code)
        self.assertEqual({'expression': 'rt',
                          'bound_at': shapes.line_of(
                              text, 'rt = self._get_resource_tracker()'),
                          'binding': 'rt = self._get_resource_tracker()'},
                         result.free.receiver)

    def test_rocky_fixed(self):
        result = self.assertVerdict(check.FIXED, shapes.rocky_fixed(),
                                    'rt.delete_allocation_for',
                                    'instance.save(expected_task_state=SH')
        self.assertEqual(0, result.exit_code)
        self.assertEqual('rt.delete_allocation_for_shelve_offloaded_instance'
                         '(context, instance)', result.free.source)

    def test_modern_fixed(self):
        result = self.assertVerdict(
            check.FIXED, shapes.modern_fixed(), FREE,
            'instance.save(expected_task_state=[task_states.SHELVING,')
        # The statement spans two lines; evidence shows it whole.
        self.assertEqual(FREE + '(context, instance)', result.free.source)
        self.assertEqual('instance.save(expected_task_state=[task_states.'
                         'SHELVING, task_states.SHELVING_OFFLOADING])',
                         result.save.source)
        self.assertIsNone(result.free.via)
        self.assertEqual('self.rt', result.free.receiver['expression'])
        self.assertIsNone(result.free.receiver['binding'])

    def test_modern_legacy(self):
        self.assertVerdict(
            check.LEGACY, shapes.modern_legacy(), FREE,
            'instance.save(expected_task_state=[task_states.SHELVING,')

    def test_report_client_shapes(self):
        for free in ('self.reportclient.delete_allocation_for_instance('
                     'context, instance.uuid)',
                     'self.scheduler_client.reportclient.'
                     'delete_allocation_for_instance(context, instance.uuid)'):
            for before, status in ((True, check.FIXED),
                                   (False, check.LEGACY)):
                self.assertVerdict(status,
                                   shapes.report_client(free, before),
                                   free, 'expected_task_state=SHELVING_ST')

    def test_tracker_fetched_inline(self):
        text = body('self._get_resource_tracker().delete_allocation_for_'
                    'shelve_offloaded_instance(context, instance)',
                    STATE, SAVE)
        result = self.assertVerdict(check.FIXED, text, 'delete_allocation',
                                    SAVE)
        self.assertEqual('self._get_resource_tracker()',
                         result.free.receiver['expression'])


class StateAndSaveShapesTestCase(testtools.TestCase):
    """The offloaded state may be set and saved in several ways."""

    def test_instance_update_helper_saves(self):
        update = ('self._instance_update(context, instance, '
                  'vm_state=vm_states.SHELVED_OFFLOADED, task_state=None)')
        for statements, status in (((FREE + '(context, instance)', update),
                                    check.FIXED),
                                   ((update, FREE + '(context, instance)'),
                                    check.LEGACY)):
            text = body(*statements)
            result = check.check_source(text)
            self.assertEqual(status, result.status)
            # The helper both sets and saves: it is the visible save.
            self.assertIs(result.state.node, result.save.node)
            self.assertEqual(shapes.line_of(text, '_instance_update'),
                             result.save.node.lineno)

    def test_other_manager_helpers_given_the_state_save(self):
        # Helpers the class does not define, so the check cannot read them.
        for call in ('self._set_state(instance, vm_state=vm_states.'
                     'SHELVED_OFFLOADED)',
                     'self._offloaded(vm_state=SHELVED_OFFLOADED)'):
            text = body("setattr(instance, 'task_state', None)",
                        FREE + '(context, instance)', call)
            result = check.check_source(text)
            self.assertEqual(check.FIXED, result.status, call)
            self.assertIs(result.state.node, result.save.node)
            legacy = check.check_source(body(
                call, FREE + '(context, instance)'))
            self.assertEqual(check.LEGACY, legacy.status, call)

    def test_update_with_a_dict_then_save(self):
        text = body("instance.update({'vm_state': vm_states."
                    "SHELVED_OFFLOADED, 'task_state': None})",
                    FREE + '(context, instance)', SAVE)
        result = check.check_source(text)
        # Setting fields is not visible; the save after the free is.
        self.assertEqual(check.FIXED, result.status)
        self.assertEqual(shapes.line_of(text, 'instance.update('),
                         result.state.node.lineno)

    def test_update_with_keywords_and_setattr(self):
        for setter in ('instance.update(vm_state=vm_states.SHELVED_OFFLOADED)',
                       "setattr(instance, 'vm_state', 'shelved_offloaded')",
                       'instance.vm_state = SHELVED_OFFLOADED'):
            text = body(setter, SAVE, FREE + '(context, instance)')
            result = check.check_source(text)
            self.assertEqual(check.LEGACY, result.status, setter)
            self.assertEqual(shapes.line_of(text, SAVE),
                             result.save.node.lineno)

    def test_free_between_state_change_and_save_is_fixed(self):
        # Nothing outside compute sees vm_state until it is saved.
        result = check.check_source(body(STATE, FREE + '(context, instance)',
                                         SAVE))
        self.assertEqual(check.FIXED, result.status)

    def test_free_of_another_object_does_not_count(self):
        text = body(FREE + '(context, inst)', STATE, SAVE)
        result = check.check_source(text)
        self.assertEqual(check.UNKNOWN, result.status)
        self.assertIn('allocations are never freed', result.reason)
        self.assertEqual(['line %d frees the allocations of inst, not of the '
                          'instance' % shapes.line_of(text, FREE)],
                         result.notes)

    def test_save_of_another_object_does_not_count(self):
        text = body(STATE, 'migration.save()', FREE + '(context, instance)',
                    SAVE)
        result = check.check_source(text)
        self.assertEqual(check.FIXED, result.status)
        self.assertEqual(shapes.line_of(text, SAVE), result.save.node.lineno)

    def test_first_save_after_the_state_counts(self):
        text = body('instance.save()', STATE, SAVE,
                    FREE + '(context, instance)', NIL_SAVE)
        result = check.check_source(text)
        self.assertEqual(check.LEGACY, result.status)
        self.assertEqual(shapes.line_of(text, SAVE), result.save.node.lineno)


class ControlFlowTestCase(testtools.TestCase):
    """Paths, not line order: branches, loops, handlers, dead code."""

    def assertPath(self, result, text, *expected):
        """The path shown holds ``(fragment, note)`` lines, in order."""
        shown = [(step.line, step.note) for step in result.path]
        wanted = [(shapes.line_of(text, fragment), note)
                  for fragment, note in expected]
        found = [item for item in shown if item in wanted]
        self.assertEqual(wanted, found, result.render())

    def test_free_in_try_or_with_block_runs_first(self):
        for wrapped in (
                ['try:', '    %s(context, instance)' % FREE,
                 'except Exception:', '    LOG.exception("failed")',
                 '    raise'],
                ['with utils.temporary_mutation(context, read_deleted="y"):',
                 '    %s(context, instance)' % FREE],
                ['try:', '    pass', 'finally:',
                 '    %s(context, instance)' % FREE]):
            result = check.check_source(body(*(wrapped + [STATE, SAVE])))
            self.assertEqual(check.FIXED, result.status, wrapped)
            self.assertIsNone(result.free.via)

    def test_free_in_finally_after_save_is_legacy(self):
        result = check.check_source(body(
            'try:', '    ' + STATE, '    ' + SAVE, 'finally:',
            '    %s(context, instance)' % FREE))
        self.assertEqual(check.LEGACY, result.status)

    def test_free_in_a_compound_statement_header(self):
        text = body('if %s(context, instance):' % FREE,
                    '    LOG.info("freed")', STATE, SAVE)
        result = check.check_source(text)
        self.assertEqual(check.FIXED, result.status)
        # The evidence is the call, not the whole if statement.
        self.assertEqual(FREE + '(context, instance)', result.free.source)
        self.assertEqual('<Site line %d: %s(context, instance)>'
                         % (shapes.line_of(text, FREE), FREE),
                         repr(result.free))

    def test_free_on_both_branches_is_fixed(self):
        # The source-order check said "on the other paths they are not
        # freed" here, which was false.
        text = body('if instance.host:', '    %s(context, instance)' % FREE,
                    'else:', '    self.reportclient.delete_allocation_for_'
                    'instance(context, instance.uuid)', STATE, SAVE)
        result = check.check_source(text)
        self.assertEqual(check.FIXED, result.status, result.render())
        self.assertIn('every path to a save of SHELVED_OFFLOADED frees the '
                      'allocations first', result.reason)

    def test_free_only_in_a_branch_is_legacy(self):
        text = body('if CONF.workarounds.free_early:',
                    '    %s(context, instance)' % FREE, STATE, SAVE)
        result = check.check_source(text)
        self.assertEqual(check.LEGACY, result.status)
        self.assertEqual(1, result.exit_code)
        self.assertEqual('on the path shown, the save at line %d makes '
                         'SHELVED_OFFLOADED visible and the allocations are '
                         'not freed at all' % shapes.line_of(text, SAVE),
                         result.reason)
        self.assertPath(result, text, ('if CONF', 'false'),
                        (STATE, 'sets the state'), (SAVE, 'saves it'))
        self.assertIn('  the path:\n    nova/compute/manager.py:%d: if '
                      'CONF.workarounds.free_early -> false'
                      % shapes.line_of(text, 'if CONF'), result.render())

    def test_branch_before_and_unconditional_after(self):
        text = body('if accel_uuids:', '    %s(context, instance)' % FREE,
                    STATE, SAVE, FREE + '(context, instance)')
        result = check.check_source(text)
        self.assertEqual(check.LEGACY, result.status)
        later = shapes.line_of(text, FREE, nth=2)
        self.assertEqual(later, result.free.node.lineno)
        self.assertIn('before the allocations are freed at line %d' % later,
                      result.reason)
        self.assertPath(result, text, ('if accel', 'false'),
                        (SAVE, 'saves it'))

    def test_unconditional_free_wins_over_a_branch(self):
        text = body('if accel_uuids:', '    %s(context, instance)' % FREE,
                    FREE + '(context, instance)', STATE, SAVE)
        result = check.check_source(text)
        self.assertEqual(check.FIXED, result.status)
        self.assertEqual(shapes.line_of(text, FREE, nth=2),
                         result.free.node.lineno)

    def test_early_return_after_saving_unfreed(self):
        text = body('if not instance.host:', '    ' + STATE,
                    '    ' + SAVE, '    return',
                    FREE + '(context, instance)', STATE, NIL_SAVE)
        result = check.check_source(text)
        self.assertEqual(check.LEGACY, result.status)
        self.assertPath(result, text, ('if not instance.host', 'true'),
                        (SAVE, 'saves it'))

    def test_conditional_early_save(self):
        text = body(STATE, 'if bdms:', '    ' + SAVE,
                    FREE + '(context, instance)', NIL_SAVE)
        result = check.check_source(text)
        self.assertEqual(check.LEGACY, result.status)
        self.assertPath(result, text, ('if bdms', 'true'),
                        (SAVE, 'saves it'),
                        (FREE, 'frees allocations'))

    def test_conditional_state_and_save_after_the_free(self):
        result = check.check_source(body(
            FREE + '(context, instance)', 'if instance.host:',
            '    ' + STATE, '    ' + SAVE))
        self.assertEqual(check.FIXED, result.status)

    def test_swallowed_exception_skips_the_free(self):
        text = body('try:', '    self.driver.destroy(context, instance)',
                    '    %s(context, instance)' % FREE,
                    'except exception.InstanceNotFound:',
                    '    LOG.debug("gone")', STATE, SAVE)
        result = check.check_source(text)
        self.assertEqual(check.LEGACY, result.status)
        self.assertPath(result, text, ('self.driver.destroy', 'raises'),
                        ('except exception', 'catches it'),
                        (SAVE, 'saves it'))

    def test_handler_the_body_cannot_reach(self):
        # Nothing in the try can raise: the handler never runs.
        text = body('try:', '    pass', 'except Exception:',
                    '    %s(context, instance)' % FREE, STATE, SAVE)
        result = check.check_source(text)
        self.assertEqual(check.UNKNOWN, result.status)
        self.assertIn('allocations are never freed', result.reason)

    def test_constants_prune_dead_branches(self):
        for dead in (['if False:', '    ' + SAVE],
                     ['debug = False', 'if debug:', '    ' + SAVE],
                     ['while 0:', '    ' + SAVE]):
            text = body(*([STATE] + dead + [FREE + '(context, instance)',
                                            SAVE]))
            result = check.check_source(text)
            self.assertEqual(check.FIXED, result.status, dead)

    def test_while_true_leaves_only_by_break(self):
        text = body('while True:', '    try:',
                    '        %s(context, instance)' % FREE,
                    '        break', '    except Exception:',
                    '        LOG.warning("retrying")', STATE, SAVE)
        self.assertEqual(check.FIXED, check.check_source(text).status)

    def test_other_ways_to_skip_the_free(self):
        cases = [
            ['try:', '    self.driver.destroy(context, instance)',
             'except exception.NotFound:',
             '    %s(context, instance)' % FREE],
            ['for bdm in bdms:', '    %s(context, instance)' % FREE],
            ['while retry():', '    %s(context, instance)' % FREE],
            ['if clean_shutdown:', '    pass', 'else:',
             '    %s(context, instance)' % FREE],
            ['done = clean_shutdown or %s(context, instance)' % FREE],
            ['done = %s(context, instance) if clean_shutdown else None'
             % FREE],
            ['match instance.host:', '    case "compute-1":',
             '        %s(context, instance)' % FREE],
            ['match instance.host:', '    case _ if clean_shutdown:',
             '        %s(context, instance)' % FREE],
            ['with contextlib.suppress(Exception):',
             '    self.driver.destroy(context, instance)',
             '    %s(context, instance)' % FREE],
        ]
        for statements in cases:
            result = check.check_source(body(*(statements + [STATE, SAVE])))
            self.assertEqual(check.LEGACY, result.status, statements)
            self.assertTrue(result.path, statements)

    def test_ways_that_never_free_this_instance(self):
        for statements in (
                ['def free():', '    %s(context, instance)' % FREE],
                ['[%s(context, i) for i in instances]' % FREE]):
            result = check.check_source(body(*(statements + [STATE, SAVE])))
            self.assertEqual(check.UNKNOWN, result.status, statements)
            self.assertIn('allocations are never freed', result.reason)

    def test_nested_functions_run_where_called(self):
        for statements in (
                ['def free():', '    %s(context, instance)' % FREE,
                 'free()'],
                ['@utils.synchronized(instance.uuid)', 'def free():',
                 '    %s(context, instance)' % FREE, 'free()'],
                ['(lambda: %s(context, instance))()' % FREE]):
            result = check.check_source(body(*(statements + [STATE, SAVE])))
            self.assertEqual(check.FIXED, result.status, statements)
            self.assertIsNotNone(result.free.via)

    def test_functions_run_out_of_sight_cannot_tell(self):
        text = body('@retrying.retry(stop_max_attempt_number=3)',
                    'def free():', '    %s(context, instance)' % FREE,
                    'free()', STATE, SAVE)
        result = check.check_source(text)
        self.assertEqual(check.UNKNOWN, result.status)
        self.assertIn('free (decorated with @retrying.retry(stop_max_'
                      'attempt_number=3), which the check does not know to '
                      'call it) may free the allocations when it is called',
                      result.reason)
        for statements in (
                ['callbacks.append(lambda: %s(context, instance))' % FREE],
                ['def free():', '    %s(context, instance)' % FREE,
                 'utils.spawn(free)']):
            result = check.check_source(body(*(statements + [STATE, SAVE])))
            self.assertEqual(check.UNKNOWN, result.status, statements)
            self.assertIn('may free the allocations when it is called',
                          result.reason)

    def test_instance_handed_out_while_offloaded_and_unfreed(self):
        text = body(STATE, 'self.driver.cleanup(context, instance)',
                    FREE + '(context, instance)', SAVE)
        result = check.check_source(text)
        self.assertEqual(check.UNKNOWN, result.status)
        self.assertEqual(
            'at line %d self.driver.cleanup is given the instance and may '
            'save it, with vm_state set to SHELVED_OFFLOADED and the '
            'allocations not freed' % shapes.line_of(text, 'cleanup'),
            result.reason)
        # Logging it, or handing it out before the state is set, is fine.
        for harmless in (
                [STATE, 'LOG.info("offloading", instance=instance)'],
                ['self.driver.cleanup(context, instance)', STATE]):
            result = check.check_source(body(
                *(harmless + [FREE + '(context, instance)', SAVE])))
            self.assertEqual(check.FIXED, result.status, harmless)


class StatementKindsTestCase(testtools.TestCase):
    """Every kind of statement has its place in the graph."""

    def test_fixed_through_less_common_statements(self):
        cases = [
            ['assert instance.host, "no host"', FREE + '(context, instance)',
             STATE, SAVE],
            ['try:', '    if not instance.host:', '        ' + STATE,
             '        return', '    %s(context, instance)' % FREE,
             'finally:', '    LOG.debug("done")', STATE, SAVE],
            ['for attempt in range(3):', '    try:',
             '        %s(context, instance)' % FREE, '        break',
             '    except Exception:', '        continue',
             '    finally:', '        LOG.debug("attempt %d", attempt)',
             'else:', '    raise exception.NovaException()', STATE, SAVE],
            ['from nova import utils as nova_utils', 'attempts = 3',
             'attempts -= 1', 'marker: int = 0', 'del marker',
             'global _COUNTER', FREE + '(context, instance)', STATE, SAVE],
            ['with lockutils.lock(instance.uuid) as lock:',
             '    %s(context, instance)' % FREE, STATE, SAVE],
        ]
        for statements in cases:
            result = check.check_source(body(*statements))
            self.assertEqual(check.FIXED, result.status,
                             '%s\n%s' % (statements, result.render()))

    def test_legacy_through_less_common_statements(self):
        cases = [
            [STATE, 'if (inst := instance):', '    inst.save()',
             FREE + '(context, instance)'],
            [STATE, 'inst: objects.Instance = instance', 'inst.save()',
             FREE + '(context, instance)'],
            [STATE, 'try:', '    ' + SAVE, 'finally:',
             '    %s(context, instance)' % FREE],
            [STATE, 'for attempt in range(3):', '    ' + SAVE,
             '    break', FREE + '(context, instance)'],
            ['done = [%s(context, instance) for _ in attempts]' % FREE,
             STATE, SAVE],
        ]
        for statements in cases:
            result = check.check_source(body(*statements))
            self.assertEqual(check.LEGACY, result.status,
                             '%s\n%s' % (statements, result.render()))

    def test_a_save_only_in_the_exception_path_of_a_finally(self):
        text = body(STATE, 'try:', '    self.driver.destroy(context)',
                    'finally:', '    ' + SAVE, FREE + '(context, instance)',
                    NIL_SAVE)
        result = check.check_source(text)
        self.assertEqual(check.LEGACY, result.status)
        self.assertIn('runs', [step.note.split(';')[0]
                               for step in result.path])


class AliasTestCase(testtools.TestCase):
    """The instance under other names; other objects."""

    def test_saved_through_an_alias_before_the_free(self):
        for statements in (
                ['inst = instance', 'inst.save()'],
                ['inst, other = instance, None', 'inst.save()'],
                ['save = instance.save', 'save()'],
                ['copy = objects.Instance.get_by_uuid(context, '
                 'instance.uuid)', 'copy.vm_state = vm_states.'
                 'SHELVED_OFFLOADED', 'copy.save()']):
            result = check.check_source(body(
                *([STATE] + statements + [FREE + '(context, instance)'])))
            self.assertEqual(check.LEGACY, result.status, statements)

    def test_free_through_an_alias_or_the_uuid(self):
        for statements in (
                ['inst = instance', FREE + '(context, inst)'],
                ['uuid = instance.uuid',
                 'self.reportclient.delete_allocation_for_instance('
                 'context, uuid)'],
                ['free = self.rt.delete_allocation_for_shelve_offloaded_'
                 'instance', 'free(context, instance)']):
            result = check.check_source(body(*(statements + [STATE, SAVE])))
            self.assertEqual(check.FIXED, result.status, statements)

    def test_rebinding_ends_an_alias(self):
        text = body('inst = instance', 'inst = other', STATE,
                    'inst.save()', FREE + '(context, instance)', SAVE)
        result = check.check_source(text)
        self.assertEqual(check.FIXED, result.status)
        self.assertEqual(shapes.line_of(text, SAVE), result.save.node.lineno)

    def test_state_value_through_a_name(self):
        for value, status in (('vm_states.SHELVED_OFFLOADED', check.LEGACY),
                              ('vm_states.SHELVED', check.UNKNOWN)):
            text = body('new_state = %s' % value,
                        'instance.vm_state = new_state', SAVE,
                        FREE + '(context, instance)')
            self.assertEqual(status, check.check_source(text).status, value)


class HelperMethodTestCase(testtools.TestCase):
    """ComputeManager methods the method calls, read inline."""

    def test_free_through_a_helper(self):
        text = shapes.module(
            shapes.method('self._free_allocations(context, instance)\n' +
                          STATE + '\n' + SAVE + '\n'),
            '    def _free_allocations(self, context, instance):\n'
            '        rt = self._get_resource_tracker()\n'
            '        rt.delete_allocation_for_shelve_offloaded_instance(\n'
            '            context, instance)\n')
        result = check.check_source(text)
        self.assertEqual(check.FIXED, result.status)
        self.assertEqual(shapes.line_of(text, 'self._free_allocations('),
                         result.free.node.lineno)
        inner = result.free.via
        self.assertEqual(shapes.line_of(text, 'rt.delete_allocation'),
                         inner.node.lineno)
        self.assertEqual('rt = self._get_resource_tracker()',
                         inner.receiver['binding'])
        self.assertIn('  which calls:       nova/compute/manager.py:%d: '
                      'rt.delete_allocation_for_shelve_offloaded_instance('
                      'context, instance)' % inner.node.lineno,
                      result.render())
        data = result.to_dict()['free']
        self.assertEqual(inner.node.lineno, data['via']['line'])

    def test_branch_inside_a_helper_shows_on_the_path(self):
        text = shapes.module(
            shapes.method('self._free(context, instance)\n' + STATE + '\n' +
                          SAVE + '\n'),
            '    def _free(self, context, server):\n'
            '        if CONF.free:\n'
            '            self._really_free(context, server)\n',
            '    def _really_free(self, context, instance):\n'
            '        self.reportclient.delete_allocation_for_instance(\n'
            '            context, instance.uuid)\n')
        result = check.check_source(text)
        self.assertEqual(check.LEGACY, result.status)
        branch = [step for step in result.path if step.source ==
                  'if CONF.free']
        self.assertEqual([(shapes.line_of(text, 'if CONF.free'), 'false',
                           1)], [(s.line, s.note, s.depth) for s in branch])
        fixed = text.replace('        if CONF.free:\n            self._rea',
                             '        self._rea')
        result = check.check_source(fixed)
        self.assertEqual(check.FIXED, result.status, result.render())
        self.assertEqual('self.reportclient.delete_allocation_for_instance('
                         'context, instance.uuid)',
                         result.free.via.via.source)

    def test_helper_that_saves_then_frees(self):
        helper = ('    def _offload(self, context, instance, **fields):\n'
                  '        instance.update(fields)\n'
                  '        instance.save()\n'
                  '        %s(context, instance)\n' % FREE)
        text = shapes.module(shapes.method(
            'self._offload(context, instance, '
            'vm_state=vm_states.SHELVED_OFFLOADED)\n'), helper)
        result = check.check_source(text)
        self.assertEqual(check.LEGACY, result.status)
        self.assertEqual(shapes.line_of(text, 'instance.save()'),
                         result.save.via.node.lineno)
        swapped = text.replace(
            '        instance.save()\n        %s(context, instance)\n' % FREE,
            '        %s(context, instance)\n        instance.save()\n' % FREE)
        self.assertEqual(check.FIXED, check.check_source(swapped).status)
        # Given another vm_state, the helper's save shows nothing.
        other = text.replace('vm_state=vm_states.SHELVED_OFFLOADED',
                             'vm_state=vm_states.SHELVED')
        self.assertIn('never set to SHELVED_OFFLOADED',
                      check.check_source(other).reason)

    def test_recursive_helpers_terminate(self):
        text = shapes.module(
            shapes.method('self._a(context, instance)\n' + STATE + '\n' +
                          SAVE + '\n'),
            '    def _a(self, context, instance):\n'
            '        self._b(context, instance)\n',
            '    def _b(self, context, instance):\n'
            '        self._a(context, instance)\n'
            '        self._shelve_offload_instance(context, instance, 1)\n')
        result = check.check_source(text)
        self.assertEqual(check.UNKNOWN, result.status)
        self.assertIn('allocations are never freed', result.reason)

    def test_helpers_deeper_than_the_limit_are_not_followed(self):
        helpers = ['    def _h%d(self):\n        self._h%d()\n' % (i, i + 1)
                   for i in range(5)]
        helpers.append('    def _h5(self):\n        %s(None, None)\n' % FREE)
        text = shapes.module(shapes.method(
            'self._h0()\n' + STATE + '\n' + SAVE + '\n'), *helpers)
        result = check.check_source(text)
        self.assertEqual(check.UNKNOWN, result.status)
        self.assertIn('self._h3 is more than 3 helper calls deep',
                      result.reason)

    def test_a_deep_helper_that_may_free_leaves_doubt(self):
        helpers = ['    def _h%d(self, inst):\n        self._h%d(inst)\n'
                   % (i, i + 1) for i in range(3)]
        helpers.append('    def _h3(self, inst):\n'
                       '        %s(None, inst)\n' % FREE)
        text = shapes.module(shapes.method(
            FREE + '(context, instance)\n' + 'self._h0(instance)\n' +
            STATE + '\n' + SAVE + '\n'), *helpers)
        self.assertEqual(check.FIXED, check.check_source(text).status)
        text = text.replace(FREE + '(context, instance)\n        self._h0',
                            'self._h0')
        result = check.check_source(text)
        self.assertEqual(check.UNKNOWN, result.status)
        self.assertIn('allocations are never freed', result.reason)


class CannotTellTestCase(testtools.TestCase):
    """Exit 2, with the reason."""

    def assertUnknown(self, reason, text):
        result = check.check_source(text)
        self.assertEqual(check.UNKNOWN, result.status)
        self.assertEqual(2, result.exit_code)
        self.assertEqual(reason, result.reason)
        self.assertIn('CANNOT TELL: ' + reason, result.render())
        return result

    def test_no_method(self):
        self.assertUnknown('no _shelve_offload_instance in ComputeManager',
                           shapes.module('    def shelve(self):\n'
                                         '        pass\n'))

    def test_no_class(self):
        self.assertUnknown('no class ComputeManager in '
                           'nova/compute/manager.py',
                           'class ComputeAPI(object):\n    pass\n')

    def test_never_freed(self):
        result = self.assertUnknown(
            'allocations are never freed in _shelve_offload_instance (no '
            'call of delete_allocation_for_shelve_offloaded_instance or '
            'delete_allocation_for_instance given this instance, directly '
            'or through another ComputeManager method)', body(STATE, SAVE))
        # What was found is still shown.
        self.assertIsNotNone(result.save)

    def test_state_never_set(self):
        self.assertUnknown('vm_state is never set to SHELVED_OFFLOADED in '
                           '_shelve_offload_instance',
                           body(FREE + '(context, instance)', SAVE))

    def test_state_never_saved(self):
        text = body(FREE + '(context, instance)', STATE)
        self.assertUnknown('vm_state = SHELVED_OFFLOADED is set at line %d '
                           'but the instance is not saved after it in '
                           '_shelve_offload_instance'
                           % shapes.line_of(text, STATE), text)

    def test_state_maybe_set_before_the_save(self):
        text = body('instance.vm_state = self._next_state(instance)', SAVE,
                    FREE + '(context, instance)', STATE, NIL_SAVE)
        result = self.assertUnknown(
            'the save at line %d may make SHELVED_OFFLOADED visible (vm_state '
            'may have been set to it) before the allocations are freed'
            % shapes.line_of(text, SAVE), text)
        self.assertTrue(result.path)

    def test_syntax_error(self):
        self.assertUnknown('syntax error in nova/compute/manager.py line 2: '
                           'invalid syntax',
                           'class ComputeManager:\n    def (self):\n')

    def test_later_definition_wins(self):
        text = shapes.module(
            shapes.method(FREE + '(context, instance)\n' + STATE + '\n' +
                          SAVE + '\n'),
            shapes.method(STATE + '\n' + SAVE + '\n' + FREE +
                          '(context, instance)\n'))
        self.assertEqual(check.LEGACY, check.check_source(text).status)


class OutputTestCase(testtools.TestCase):
    """Text and JSON carry the same evidence, path included."""

    def test_text_for_the_modern_fixed_shape(self):
        text = shapes.modern_fixed()
        result = check.check_source(text)
        rendered = result.render().splitlines()
        free = shapes.line_of(text, FREE)
        state = shapes.line_of(text, STATE)
        save = shapes.line_of(text, 'instance.save(expected_task_state=[')
        self.assertEqual(
            ['FIXED: ComputeManager._shelve_offload_instance frees the '
             'instance\'s allocations before the save that makes '
             'SHELVED_OFFLOADED visible, on every path.',
             '  every path to a save of SHELVED_OFFLOADED frees the '
             'allocations first (%d program states explored); the first '
             'save is at line %d, after the free at line %d'
             % (result.states, save, free),
             '  frees allocations: nova/compute/manager.py:%d: %s(context, '
             'instance)' % (free, FREE),
             '  sets the state:    nova/compute/manager.py:%d: %s'
             % (state, STATE),
             '  saves it:          nova/compute/manager.py:%d: instance.save('
             'expected_task_state=[task_states.SHELVING, task_states.'
             'SHELVING_OFFLOADING])' % save,
             '  one such path:',
             '    nova/compute/manager.py:%d: if bdms is None -> false'
             % shapes.line_of(text, 'if bdms is None'),
             '    nova/compute/manager.py:%d: if accel_uuids -> false'
             % shapes.line_of(text, 'if accel_uuids'),
             '    nova/compute/manager.py:%d: %s(context, instance) -> frees '
             'allocations' % (free, FREE),
             '    nova/compute/manager.py:%d: %s -> sets the state'
             % (state, STATE),
             '    nova/compute/manager.py:%d: instance.save(expected_task_'
             'state=[task_states.SHELVING, task_states.SHELVING_OFFLOADING])'
             ' -> saves it' % save],
            rendered)
        self.assertGreater(result.states, 10)

    def test_legacy_text_names_the_fix(self):
        rendered = check.check_source(shapes.modern_legacy()).render()
        self.assertTrue(rendered.startswith('LEGACY ORDER: '))
        self.assertIn('Backport change %s' % check.FIX_CHANGE_ID, rendered)

    def test_json(self):
        text = shapes.rocky_legacy()
        result = check.check_source(text)
        data = json.loads(json.dumps(result.to_dict()))
        free_line = shapes.line_of(text, 'rt.delete_allocation_for')
        save_line = shapes.line_of(text, 'expected_task_state=SHELV')
        self.assertEqual('legacy', data['status'])
        self.assertEqual(1, data['exit_code'])
        self.assertEqual('ComputeManager._shelve_offload_instance',
                         data['method'])
        self.assertEqual(shapes.line_of(text, 'def _shelve_offload_instance'),
                         data['method_line'])
        expected = {
            'line': free_line, 'end_line': free_line,
            'source': 'rt.delete_allocation_for_shelve_offloaded_instance('
                      'context, instance)',
            'evidence': 'nova/compute/manager.py:%d: rt.delete_allocation_for'
                        '_shelve_offloaded_instance(context, instance)'
                        % free_line,
            'receiver': {'expression': 'rt', 'bound_at': free_line - 1,
                         'binding': 'rt = self._get_resource_tracker()'}}
        self.assertEqual(expected, data['free'])
        self.assertEqual('instance.vm_state = vm_states.SHELVED_OFFLOADED',
                         data['state']['source'])
        self.assertEqual(save_line, data['save']['line'])
        self.assertIn('the save at line %d makes SHELVED_OFFLOADED visible '
                      'before the allocations are freed at line %d'
                      % (save_line, free_line), data['reason'])
        self.assertEqual([{'line': s.line, 'source': s.source,
                           'note': s.note, 'depth': s.depth}
                          for s in result.path], data['witness'])
        self.assertEqual([save_line, free_line],
                         [s['line'] for s in data['witness']
                          if s['note'] in ('saves it',
                                           'frees allocations')])
        self.assertEqual(result.states, data['states_explored'])
        self.assertIsNone(data['file'])
        self.assertEqual('nova/compute/manager.py', data['path'])
