"""Tests for the harness that runs nova's code: its stubs bite like nova's.

A stub that accepted anything would let nova's method pass for the wrong
reasons; these tests show the stubbed ``Instance.save`` refuses what
nova's database refuses, and that nothing silently loads from a database.
"""

from shelvefix.tests.nova import base


class HarnessTestCase(base.NovaTestCase):

    def setUp(self):
        super(HarnessTestCase, self).setUp()
        self.scn = self.useFixture(self.harness.NovaShelveScenario())

    def test_save_enforces_the_expected_task_state(self):
        task_states = self.harness.task_states
        # The API took the instance over before compute saved.
        self.scn.store.update(self.scn.instance.uuid,
                              {'task_state': task_states.UNSHELVING})
        e = self.assertRaises(
            self.harness.nova_exception.UnexpectedTaskStateError,
            self.scn.shelve_offload)
        self.assertIn("'task_state': 'unshelving'", str(e))
        saved = self.scn.saved()
        self.assertEqual((self.harness.vm_states.SHELVED,
                          task_states.UNSHELVING),
                         (saved['vm_state'], saved['task_state']))
        # nova's decorators reported the failure through the stubs.
        kinds = [event[0] for event in self.scn.events]
        self.assertIn('notify.exception', kinds)
        self.assertIn('instance_fault', kinds)

    def test_unset_fields_are_never_loaded(self):
        e = self.assertRaises(AssertionError, getattr, self.scn.instance,
                              'flavor')
        self.assertEqual('nova read Instance.flavor, which the harness did '
                         'not set and would load from the database', str(e))

    def test_save_writes_the_changes_and_resets_them(self):
        self.scn.instance.power_state = self.harness.power_state.SHUTDOWN
        self.scn.instance.save()
        self.assertEqual([self.harness.power_state.SHUTDOWN],
                         [row['power_state'] for kind, row in
                          self.scn.timeline() if kind == 'save'])
        self.assertEqual(set(), self.scn.instance.obj_what_changed())
