"""The verdicts on bug 2025480, bug 1862633 and host lost, and the report.

Each check is tried on small nova-shaped modules written here: the shape
with the fix, the shape without it, and shapes the check must refuse to
decide on.
"""

import textwrap

import testtools

from shelvefix.novacheck import evaluate
from shelvefix.novacheck import fixes
from shelvefix.novacheck import outcome
from shelvefix.novacheck import rewrite
from shelvefix.tests.unit.novacheck import corpus
from shelvefix.tests.unit.novacheck.corpus import edits

TASK_STATES = textwrap.dedent('''\
    from nova.objects import fields

    SPAWNING = fields.InstanceTaskState.SPAWNING
    SHELVING = fields.InstanceTaskState.SHELVING
    ''')
VM_STATES = textwrap.dedent('''\
    from nova.compute import task_states
    from nova.objects import fields

    DELETED = fields.InstanceState.DELETED
    SHELVED_OFFLOADED = fields.InstanceState.SHELVED_OFFLOADED
    ALLOW_RESOURCE_REMOVAL = [DELETED, SHELVED_OFFLOADED]


    def allow_resource_removal(vm_state, task_state=None):
        """Whether the tracker may stop counting the server."""
        return (vm_state == DELETED or
                vm_state == SHELVED_OFFLOADED and
                task_state != task_states.SPAWNING)
    ''')
TRACKER = textwrap.dedent('''\
    from nova.compute import vm_states


    class ResourceTracker(object):

        def _update_usage_from_instance(self, context, instance, nodename,
                                        is_removed=False):
            is_new_instance = instance['uuid'] not in self.tracked_instances
            is_removed_instance = not is_new_instance and (is_removed or
                vm_states.allow_resource_removal(
                    vm_state=instance['vm_state'],
                    task_state=instance.task_state))
            return is_removed_instance

        def _update_usage_from_instances(self, context, instances, nodename):
            for instance in instances:
                if not vm_states.allow_resource_removal(
                        vm_state=instance['vm_state'],
                        task_state=instance.task_state):
                    self._update_usage_from_instance(context, instance,
                                                     nodename)
    ''')
UNSHELVE = '''\
    def _unshelve_instance(self, context, instance, image, filter_properties,
                           node, request_spec, accel_uuids):
        instance.task_state = task_states.SPAWNING
        instance.save()
        allocations = self.reportclient.get_allocations_for_consumer(
            context, instance.uuid)
        try:
            with self.rt.instance_claim(context, instance, node, allocations,
                                        {}):
                self.network_api.setup_instance_network_on_host(
                    context, instance, self.host)
                self.driver.spawn(context, instance, None)
        except Exception:
            with excutils.save_and_reraise_exception(logger=LOG):
                LOG.exception('Instance failed to spawn', instance=instance)
                self.reportclient.delete_allocation_for_instance(
                    context, instance.uuid, force=True)
                self._nil_out_instance_obj_host_and_node(instance)
        instance.save(expected_task_state=task_states.SPAWNING)
'''


def texts(manager=None, tracker=TRACKER, vm_states=VM_STATES,
          unshelve=UNSHELVE):
    """A tree's texts: nova 34's trimmed manager with ``unshelve`` added."""
    manager = manager or corpus.NOVA_34_MANAGER
    if unshelve:
        manager = edits.insert_helpers(manager, unshelve)
    return {'manager.py': manager, 'resource_tracker.py': tracker,
            'vm_states.py': vm_states, 'task_states.py': TASK_STATES}


def verdict(bug, **kwargs):
    return fixes.check_texts(texts(**kwargs), fixes.BUGS).verdicts[bug]


class TrackerTestCase(testtools.TestCase):
    """Bug 2025480."""

    def test_allow_resource_removal_with_the_task_state_is_fixed(self):
        found = verdict('2025480')
        self.assertEqual(outcome.FIXED, found.status, found.reason)
        self.assertIn('nova/compute/resource_tracker.py:10', found.evidence)

    def test_the_list_of_vm_states_is_missing(self):
        found = verdict('2025480', tracker=rewrite.untrack_spawning(TRACKER))
        self.assertEqual(outcome.MISSING, found.status, found.reason)
        self.assertIn('task_states.SPAWNING', found.reason)
        self.assertIn('resource_tracker.py:10', found.evidence)

    def test_the_predicate_not_given_the_task_state_is_missing(self):
        tracker = TRACKER.replace(',\n                task_state=instance.'
                                  'task_state))', '))', 1)
        self.assertNotEqual(TRACKER, tracker)
        found = verdict('2025480', tracker=tracker)
        self.assertEqual(outcome.MISSING, found.status, found.reason)

    def test_a_predicate_ignoring_the_task_state_is_missing(self):
        found = verdict('2025480', vm_states=VM_STATES.replace(
            'task_state != task_states.SPAWNING', 'True'))
        self.assertEqual(outcome.MISSING, found.status, found.reason)

    def test_membership_in_the_list(self):
        tracker = TRACKER + textwrap.dedent('''\

                def _audit(self, instance):
                    if instance.vm_state not in \\
                            vm_states.ALLOW_RESOURCE_REMOVAL:
                        return True
            ''').replace('\n', '\n    ').replace('\n    \n', '\n\n')
        found = verdict('2025480', tracker=tracker)
        self.assertEqual(outcome.MISSING, found.status, found.reason)
        self.assertIn('ALLOW_RESOURCE_REMOVAL', found.evidence)

    def test_what_cannot_be_evaluated_cannot_tell(self):
        for old, new, what in (
                ('task_state != task_states.SPAWNING',
                 'task_state not in CONF.kept_states', 'CONF'),
                ('return (', 'LOG.debug(vm_state)\n    return (',
                 'a expr statement'),
                ('vm_state == DELETED or', 'vm_state > DELETED or',
                 'an ordering comparison')):
            vm_states = VM_STATES.replace(old, new, 1)
            self.assertNotEqual(VM_STATES, vm_states)
            found = verdict('2025480', vm_states=vm_states)
            self.assertEqual(outcome.UNKNOWN, found.status, found.reason)
            self.assertIn(what, found.reason)

    def test_no_tracker_beside_the_manager_cannot_tell(self):
        tree = texts()
        del tree['resource_tracker.py']
        found = fixes.check_texts(tree, fixes.BUGS).verdicts['2025480']
        self.assertEqual(outcome.UNKNOWN, found.status)
        self.assertIn('resource_tracker.py', found.reason)


class EvaluateTestCase(testtools.TestCase):

    def test_symbols_compare_by_name_and_not_with_literals(self):
        tree = evaluate.ast.parse(TASK_STATES)
        constants = evaluate.module_constants(tree)
        self.assertEqual(evaluate.Symbol('fields.InstanceTaskState.SPAWNING'),
                         constants['SPAWNING'])
        run = evaluate.Evaluator({}, {}, constants)
        node = evaluate.ast.parse('SPAWNING == SHELVING', mode='eval').body
        self.assertFalse(run.value(node, {}))
        node = evaluate.ast.parse("SPAWNING == 'spawning'", mode='eval').body
        self.assertRaises(evaluate.CannotEvaluate, run.value, node, {})


class UnshelveTestCase(testtools.TestCase):
    """Bug 1862633."""

    def test_network_set_up_inside_the_try_is_fixed(self):
        found = verdict('1862633')
        self.assertEqual(outcome.FIXED, found.status, found.reason)
        self.assertIn('setup_instance_network_on_host', found.evidence)

    def test_network_set_up_before_the_try_is_missing(self):
        manager = rewrite.leak_on_bind_failure(texts()['manager.py'])
        found = verdict('1862633', manager=manager, unshelve=None)
        self.assertEqual(outcome.MISSING, found.status, found.reason)
        self.assertIn('is in no try', found.reason)

    def test_a_handler_that_frees_only_sometimes_is_missing(self):
        found = verdict('1862633', unshelve=UNSHELVE.replace(
            '                self.reportclient', '                if image:\n'
            '                    self.reportclient').replace(
            '                    context, instance.uuid, force=True)',
            '                        context, instance.uuid, force=True)'))
        self.assertEqual(outcome.MISSING, found.status, found.reason)
        self.assertTrue(found.details)

    def test_a_free_on_another_object_cannot_tell(self):
        found = verdict('1862633', unshelve=UNSHELVE.replace(
            'self.reportclient.delete_allocation_for_instance',
            'self.driver.delete_allocation_for_instance'))
        self.assertEqual(outcome.UNKNOWN, found.status, found.reason)
        self.assertIn('self.driver', found.reason)

    def test_no_network_set_up_cannot_tell(self):
        found = verdict('1862633', unshelve=UNSHELVE.replace(
            'setup_instance_network_on_host', 'setup_networks'))
        self.assertEqual(outcome.UNKNOWN, found.status, found.reason)


class HostLostTestCase(testtools.TestCase):
    """Host lost."""

    NIL_CALL = '''\
        # No more RPC for this instance to this host.
        self._nil_out_instance_obj_host_and_node(instance)
'''

    def test_nova_34_clears_the_host_in_an_unguarded_save(self):
        found = verdict('host-lost')
        self.assertEqual(outcome.MISSING, found.status, found.reason)
        self.assertIn('instance.save(expected_task_state=None)',
                      found.evidence)

    def test_cleared_before_the_visible_save_is_fixed(self):
        manager = edits.rewrite(
            corpus.NOVA_34_MANAGER, (self.NIL_CALL, ''),
            (corpus.nova_34.STATE, corpus.nova_34.STATE +
             '        self._nil_out_instance_obj_host_and_node(instance)\n'))
        found = verdict('host-lost', manager=manager)
        self.assertEqual(outcome.FIXED, found.status, found.reason)

    def test_a_guarded_later_save_is_fixed(self):
        manager = edits.rewrite(corpus.NOVA_34_MANAGER, (
            corpus.nova_34.NIL_SAVE,
            '        instance.save(expected_task_state=[None])\n'))
        found = verdict('host-lost', manager=manager)
        self.assertEqual(outcome.FIXED, found.status, found.reason)

    def test_clearing_one_field_only_is_missing(self):
        manager = edits.rewrite(
            corpus.NOVA_34_MANAGER, (self.NIL_CALL, ''),
            ('        instance.node = None\n', ''),
            (corpus.nova_34.STATE, corpus.nova_34.STATE +
             '        self._nil_out_instance_obj_host_and_node(instance)\n'))
        found = verdict('host-lost', manager=manager)
        self.assertEqual(outcome.MISSING, found.status, found.reason)
        self.assertIn('node', found.reason)

    def test_never_cleared_is_missing(self):
        manager = edits.rewrite(corpus.NOVA_34_MANAGER, (self.NIL_CALL, ''))
        found = verdict('host-lost', manager=manager)
        self.assertEqual(outcome.MISSING, found.status, found.reason)
        self.assertIn('not cleared', found.reason)

    def test_cleared_out_of_sight_cannot_tell(self):
        manager = edits.insert_helpers(edits.rewrite(
            corpus.NOVA_34_MANAGER, (
                self.NIL_CALL, '        self._forget_host(instance)\n')),
            """\
    @hooks.add_hook('forget_host')
    def _forget_host(self, instance):
        instance.host = instance.node = None
""")
        found = verdict('host-lost', manager=manager)
        self.assertEqual(outcome.UNKNOWN, found.status, found.reason)


class ReportTestCase(testtools.TestCase):

    def test_four_lines_and_the_exit_status_for_the_fixes_asked(self):
        tree = texts()
        report = fixes.check_texts(tree)
        self.assertEqual(('1798688',), report.asked)
        self.assertEqual(0, report.exit_code)
        lines = report.render().splitlines()
        self.assertEqual(['bug 1798688  FIXED', 'bug 2025480  FIXED',
                          'bug 1862633  FIXED', 'host lost    MISSING'],
                         [' '.join(line.split()[:3]).replace(
                             'lost MISSING', 'lost    MISSING').replace(
                             ' FIXED', '  FIXED')
                          for line in lines[:4]])
        self.assertEqual(1, fixes.check_texts(tree, fixes.BUGS).exit_code)
        tree['vm_states.py'] = 'def allow_resource_removal(:\n'
        asked = fixes.check_texts(tree, ('2025480', 'host-lost'))
        self.assertEqual(2, asked.exit_code)
        data = asked.to_dict()
        self.assertEqual(['2025480', 'host-lost'], data['asked'])
        self.assertIn('syntax error', data['fixes']['2025480']['reason'])
        self.assertEqual('fixed', data['status'])
