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
        self.assertEqual([], result.free.all_guards)
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
        for call, obj in (('self._set_state(instance, vm_state=vm_states.'
                           'SHELVED_OFFLOADED)', 'instance'),
                          ('self._offloaded(vm_state=SHELVED_OFFLOADED)',
                           None)):
            text = body("setattr(instance, 'task_state', None)",
                        FREE + '(context, instance)', call)
            result = check.check_source(text)
            self.assertEqual(check.FIXED, result.status, call)
            self.assertIs(result.state.node, result.save.node)
            self.assertEqual(obj, result.save.obj)

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
        result = check.check_source(body(STATE, FREE + '(context, inst)',
                                         SAVE))
        self.assertEqual(check.FIXED, result.status)

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
    """Blocks that always run, and branches that may not."""

    def test_free_in_try_or_with_block_runs_unconditionally(self):
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
            self.assertEqual([], result.free.all_guards)

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

    def test_decorated_nested_function(self):
        text = body('@utils.synchronized(instance.uuid)',
                    'def do_free():',
                    '    %s(context, instance)' % FREE,
                    'do_free()', STATE, SAVE)
        result = check.check_source(text)
        self.assertEqual(check.UNKNOWN, result.status)
        self.assertEqual(['nested function do_free (line %d)'
                          % shapes.line_of(text, 'def do_free')],
                         result.free.all_guards)

    def test_free_only_in_a_branch_cannot_tell(self):
        text = body('if CONF.workarounds.free_early:',
                    '    %s(context, instance)' % FREE, STATE, SAVE)
        result = check.check_source(text)
        self.assertEqual(check.UNKNOWN, result.status)
        self.assertEqual(2, result.exit_code)
        guard = 'if CONF.workarounds.free_early (line %d)' % (
            shapes.line_of(text, 'if CONF'))
        self.assertEqual([guard], result.free.all_guards)
        self.assertEqual(
            'allocations are freed before the save at line %d only in a '
            'branch (%s); on the other paths they are not freed in '
            '_shelve_offload_instance' % (shapes.line_of(text, SAVE), guard),
            result.reason)
        self.assertIn('  only when:         ' + guard, result.render())

    def test_branch_before_and_unconditional_after(self):
        text = body('if accel_uuids:', '    %s(context, instance)' % FREE,
                    STATE, SAVE, FREE + '(context, instance)')
        result = check.check_source(text)
        self.assertEqual(check.UNKNOWN, result.status)
        self.assertIn('on the other paths they are freed only after it '
                      '(line %d)' % shapes.line_of(text, FREE, nth=2),
                      result.reason)
        self.assertEqual(['allocations are also freed at '
                          'nova/compute/manager.py:%d: %s(context, instance)'
                          % (shapes.line_of(text, FREE, nth=2), FREE)],
                         result.notes)

    def test_unconditional_free_wins_over_a_branch(self):
        text = body('if accel_uuids:', '    %s(context, instance)' % FREE,
                    FREE + '(context, instance)', STATE, SAVE)
        result = check.check_source(text)
        self.assertEqual(check.FIXED, result.status)
        self.assertEqual(shapes.line_of(text, FREE, nth=2),
                         result.free.node.lineno)

    def test_free_in_a_branch_after_the_save_is_legacy(self):
        result = check.check_source(body(
            STATE, SAVE, 'if instance.host:',
            '    %s(context, instance)' % FREE))
        self.assertEqual(check.LEGACY, result.status)
        self.assertEqual(['even that free is conditional'], result.notes)

    def test_other_guards(self):
        cases = [
            (['try:', '    pass', 'except exception.NotFound:',
              '    %s(context, instance)' % FREE],
             'except exception.NotFound'),
            (['try:', '    pass', 'except:',
              '    %s(context, instance)' % FREE], 'except (line'),
            (['for bdm in bdms:', '    %s(context, instance)' % FREE],
             'for loop'),
            (['while retry():', '    %s(context, instance)' % FREE],
             'while loop'),
            (['if clean_shutdown:', '    pass', 'else:',
              '    %s(context, instance)' % FREE],
             'else of if clean_shutdown'),
            (['def free():', '    %s(context, instance)' % FREE, 'free()'],
             'nested function free'),
            (['callbacks.append(lambda: %s(context, instance))' % FREE],
             'lambda'),
            (['[%s(context, i) for i in instances]' % FREE],
             'comprehension'),
            (['done = clean_shutdown or %s(context, instance)' % FREE],
             'short-circuit or'),
            (['done = %s(context, instance) if clean_shutdown else None'
              % FREE], 'if clean_shutdown'),
            (['match instance.host:', '    case "compute-1":',
              '        %s(context, instance)' % FREE], 'case'),
            (['match instance.host:', '    case _ if clean_shutdown:',
              '        %s(context, instance)' % FREE], 'case _'),
        ]
        for statements, guard in cases:
            result = check.check_source(body(*(statements + [STATE, SAVE])))
            self.assertEqual(check.UNKNOWN, result.status, statements)
            self.assertEqual(1, len(result.free.all_guards), statements)
            self.assertIn(guard, result.free.all_guards[0])

    def test_conditional_state_and_save_are_noted(self):
        result = check.check_source(body(
            FREE + '(context, instance)', 'if instance.host:',
            '    ' + STATE, '    ' + SAVE))
        self.assertEqual(check.FIXED, result.status)
        self.assertEqual(2, len(result.notes))
        self.assertIn('vm_state is set to SHELVED_OFFLOADED only when if '
                      'instance.host', result.notes[0])
        self.assertIn('the save that makes SHELVED_OFFLOADED visible runs '
                      'only when if instance.host', result.notes[1])


class HelperMethodTestCase(testtools.TestCase):
    """Frees reached through other ComputeManager methods."""

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

    def test_guard_inside_a_helper_shows(self):
        text = shapes.module(
            shapes.method('self._free(context, instance)\n' + STATE + '\n' +
                          SAVE + '\n'),
            '    def _free(self, context, instance):\n'
            '        if CONF.free:\n'
            '            self._really_free(context, instance)\n',
            '    def _really_free(self, context, instance):\n'
            '        self.reportclient.delete_allocation_for_instance(\n'
            '            context, instance.uuid)\n')
        result = check.check_source(text)
        self.assertEqual(check.UNKNOWN, result.status)
        self.assertEqual(['in self._free: if CONF.free (line %d)'
                          % shapes.line_of(text, 'if CONF.free')],
                         result.free.all_guards)
        self.assertEqual('self._really_free(context, instance)',
                         result.free.via.source)
        self.assertEqual('self.reportclient.delete_allocation_for_instance('
                         'context, instance.uuid)',
                         result.free.via.via.source)

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
        self.assertEqual(check.UNKNOWN, check.check_source(text).status)


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
            'delete_allocation_for_instance, directly or through another '
            'ComputeManager method)', body(STATE, SAVE))
        # What was found is still shown.
        self.assertIsNotNone(result.save)

    def test_state_never_set(self):
        self.assertUnknown('vm_state is never set to SHELVED_OFFLOADED in '
                           '_shelve_offload_instance',
                           body(FREE + '(context, instance)', SAVE))

    def test_state_never_saved(self):
        text = body(FREE + '(context, instance)', STATE)
        self.assertUnknown('vm_state = SHELVED_OFFLOADED is set at line %d '
                           'but instance is not saved after it in '
                           '_shelve_offload_instance'
                           % shapes.line_of(text, STATE), text)

    def test_syntax_error(self):
        self.assertUnknown('syntax error in nova/compute/manager.py line 2: '
                           'invalid syntax',
                           'class ComputeManager:\n    def (self):\n')

    def test_one_helper_saves_and_frees(self):
        text = shapes.module(
            shapes.method('self._offload(context, instance, '
                          'vm_state=vm_states.SHELVED_OFFLOADED)\n'),
            '    def _offload(self, context, instance, **fields):\n'
            '        %s(context, instance)\n'
            '        instance.update(fields)\n'
            '        instance.save()\n' % FREE)
        self.assertUnknown('the call at line %d both saves SHELVED_OFFLOADED '
                           'and frees the allocations'
                           % shapes.line_of(text, 'self._offload('), text)

    def test_later_definition_wins(self):
        text = shapes.module(
            shapes.method(FREE + '(context, instance)\n' + STATE + '\n' +
                          SAVE + '\n'),
            shapes.method(STATE + '\n' + SAVE + '\n' + FREE +
                          '(context, instance)\n'))
        self.assertEqual(check.LEGACY, check.check_source(text).status)


class OutputTestCase(testtools.TestCase):
    """Text and JSON carry the same evidence."""

    def test_text_for_the_modern_fixed_shape(self):
        text = shapes.modern_fixed()
        result = check.check_source(text)
        rendered = result.render().splitlines()
        self.assertEqual(
            ['FIXED: ComputeManager._shelve_offload_instance frees the '
             'instance\'s allocations before the save that makes '
             'SHELVED_OFFLOADED visible.',
             '  frees allocations: nova/compute/manager.py:%d: %s(context, '
             'instance)' % (shapes.line_of(text, FREE), FREE),
             '  sets the state:    nova/compute/manager.py:%d: %s'
             % (shapes.line_of(text, STATE), STATE),
             '  saves it:          nova/compute/manager.py:%d: instance.save('
             'expected_task_state=[task_states.SHELVING, task_states.'
             'SHELVING_OFFLOADING])'
             % shapes.line_of(text, 'instance.save(expected_task_state=[')],
            rendered)

    def test_legacy_text_names_the_fix(self):
        rendered = check.check_source(shapes.modern_legacy()).render()
        self.assertTrue(rendered.startswith('LEGACY ORDER: '))
        self.assertIn('Backport change %s' % check.FIX_CHANGE_ID, rendered)

    def test_json(self):
        text = shapes.rocky_legacy()
        data = json.loads(json.dumps(check.check_source(text).to_dict()))
        free_line = shapes.line_of(text, 'rt.delete_allocation_for')
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
            'only_when': [],
            'receiver': {'expression': 'rt', 'bound_at': free_line - 1,
                         'binding': 'rt = self._get_resource_tracker()'}}
        self.assertEqual(expected, data['free'])
        self.assertEqual('instance.vm_state = vm_states.SHELVED_OFFLOADED',
                         data['state']['source'])
        self.assertEqual(shapes.line_of(text, 'expected_task_state=SHELV'),
                         data['save']['line'])
        self.assertIn('after the save at line %d' % data['save']['line'],
                      data['reason'])
        self.assertIsNone(data['file'])
        self.assertEqual('nova/compute/manager.py', data['path'])
