"""Tests for shelvefix.race.client: the API side of an unshelve."""

from oslo_utils import uuidutils
import testtools

from shelvefix.compute import task_states
from shelvefix.compute import vm_states
from shelvefix.objects import instance as instance_obj
from shelvefix.race import client


class UnshelveTestCase(testtools.TestCase):

    def setUp(self):
        super().setUp()
        self.store = instance_obj.InstanceStore()
        self.uuid = uuidutils.generate_uuid()
        instance_obj.Instance.create(
            self.store, self.uuid, vm_state=vm_states.SHELVED_OFFLOADED,
            project_id='p', user_id='u')

    def load(self, row):
        return instance_obj.Instance.get_by_uuid(self.store, row['uuid'])

    def test_claims_with_the_task_state_set(self):
        seen = []
        self.assertEqual('claimed', client.unshelve(
            self.store, self.uuid, self.load,
            lambda inst: seen.append(inst.task_state) or 'claimed'))
        self.assertEqual([task_states.UNSHELVING], seen)
        self.assertEqual(task_states.UNSHELVING,
                         self.store.peek(self.uuid)['task_state'])

    def test_failed_claim_clears_the_task_state(self):
        def claim(inst):
            raise RuntimeError('no host')
        self.assertRaises(RuntimeError, client.unshelve, self.store,
                          self.uuid, self.load, claim)
        self.assertIsNone(self.store.peek(self.uuid)['task_state'])

    def test_gives_up_when_told(self):
        shelved = uuidutils.generate_uuid()
        instance_obj.Instance.create(self.store, shelved,
                                     vm_state=vm_states.SHELVED)
        self.assertRaises(client.GaveUp, client.unshelve, self.store,
                          shelved, self.load, lambda inst: True,
                          timeout=30, give_up=lambda: True)
        self.assertIsNone(self.store.peek(shelved)['task_state'])
