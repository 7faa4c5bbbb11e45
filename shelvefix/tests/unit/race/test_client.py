"""Tests for shelvefix.race.client: the API side of an unshelve or a move."""

from oslo_utils import uuidutils
import testtools

from shelvefix.compute import task_states
from shelvefix.compute import vm_states
from shelvefix import exception
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


class MoveTestCase(testtools.TestCase):
    """``client.move``: a cold migration asked for as soon as it may be."""

    def setUp(self):
        super().setUp()
        self.store = instance_obj.InstanceStore()
        self.uuid = uuidutils.generate_uuid()
        instance_obj.Instance.create(
            self.store, self.uuid, vm_state=vm_states.ACTIVE,
            project_id='p', user_id='u')

    def load(self, row):
        return instance_obj.Instance.get_by_uuid(self.store, row['uuid'])

    def test_schedules_with_resize_prep_saved(self):
        seen = []
        self.assertEqual('cast', client.move(
            self.store, self.uuid, self.load,
            lambda inst: seen.append(
                self.store.peek(inst.uuid)['task_state']) or 'cast'))
        self.assertEqual([task_states.RESIZE_PREP], seen)

    def test_movable_states(self):
        row = {'vm_state': vm_states.ACTIVE, 'task_state': None}
        self.assertTrue(client.movable(row))
        self.assertTrue(client.movable(dict(row,
                                            vm_state=vm_states.STOPPED)))
        for other in ({'vm_state': vm_states.RESIZED},
                      {'vm_state': vm_states.ERROR},
                      {'task_state': task_states.RESIZE_PREP}):
            self.assertFalse(client.movable(dict(row, **other)))

    def test_waits_for_the_server_to_be_movable(self):
        self.store.update(self.uuid, {'vm_state': vm_states.RESIZED})
        polls = []

        def sleep(seconds):
            polls.append(seconds)
            if len(polls) == 3:
                self.store.update(self.uuid, {'vm_state': vm_states.ACTIVE})
        real_wait = self.store.wait_for
        self.store.wait_for = lambda *a, **kw: real_wait(
            *a, sleep=sleep, **kw)
        self.assertTrue(client.move(self.store, self.uuid, self.load,
                                    lambda inst: True))
        self.assertEqual(3, len(polls))

    def test_gives_up_when_told(self):
        self.store.update(self.uuid, {'vm_state': vm_states.ERROR})
        e = self.assertRaises(client.GaveUp, client.move, self.store,
                              self.uuid, self.load, lambda inst: True,
                              timeout=30, give_up=lambda: True)
        self.assertIn('cannot be moved: error, task None', str(e))
        self.assertIsNone(self.store.peek(self.uuid)['task_state'])

    def test_another_task_wins(self):
        def load(row):
            # Another request saved its task between the poll and the save.
            inst = self.load(row)
            self.store.update(self.uuid,
                              {'task_state': task_states.DELETING})
            return inst
        self.assertRaises(exception.UnexpectedTaskStateError, client.move,
                          self.store, self.uuid, load, lambda inst: True)
        self.assertEqual(task_states.DELETING,
                         self.store.peek(self.uuid)['task_state'])
