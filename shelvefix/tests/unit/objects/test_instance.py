"""Tests for the instance model and its store."""

from oslo_utils import uuidutils

from shelvefix.compute import power_state
from shelvefix.compute import task_states
from shelvefix.compute import vm_states
from shelvefix import exception
from shelvefix.objects import instance as instance_obj
from shelvefix.tests import base


class FlavorTestCase(base.TestCase):

    def test_resources(self):
        flavor = instance_obj.Flavor(vcpus=2, memory_mb=2048, root_gb=10,
                                     ephemeral_gb=5)
        self.assertEqual({'VCPU': 2, 'MEMORY_MB': 2048, 'DISK_GB': 15},
                         flavor.resources)

    def test_resources_without_disk(self):
        flavor = instance_obj.Flavor(vcpus=1, memory_mb=64, root_gb=0)
        self.assertEqual({'VCPU': 1, 'MEMORY_MB': 64}, flavor.resources)

    def test_invalid_sizes(self):
        for kwargs in ({'vcpus': -1}, {'memory_mb': '512'},
                       {'root_gb': True}, {'vcpus': 0}):
            e = self.assertRaises(exception.Invalid, instance_obj.Flavor,
                                  **kwargs)
            self.assertIn('flavor m1.small', str(e))

    def test_equality_and_repr(self):
        self.assertEqual(instance_obj.Flavor(), instance_obj.Flavor())
        self.assertNotEqual(instance_obj.Flavor(vcpus=2),
                            instance_obj.Flavor())
        self.assertIn('vcpus=1', repr(instance_obj.Flavor()))


class InstanceTestCase(base.TestCase):

    def setUp(self):
        super(InstanceTestCase, self).setUp()
        self.store = instance_obj.InstanceStore()
        self.uuid = uuidutils.generate_uuid()
        self.inst = instance_obj.Instance.create(
            self.store, self.uuid, vm_state=vm_states.SHELVED,
            task_state=task_states.SHELVING_OFFLOADING, host='compute-1',
            node='node-1', project_id='p', user_id='u')

    def test_in_memory_change_is_invisible_until_saved(self):
        self.inst.vm_state = vm_states.SHELVED_OFFLOADED
        self.assertEqual(vm_states.SHELVED,
                         self.store.get(self.uuid)['vm_state'])
        self.assertEqual({'vm_state'}, self.inst.obj_what_changed())
        self.inst.save()
        self.assertEqual(vm_states.SHELVED_OFFLOADED,
                         self.store.get(self.uuid)['vm_state'])
        self.assertEqual(set(), self.inst.obj_what_changed())

    def test_save_checks_expected_task_state(self):
        self.inst.task_state = None
        self.inst.save(expected_task_state=[task_states.SHELVING,
                                            task_states.SHELVING_OFFLOADING])
        self.assertIsNone(self.store.get(self.uuid)['task_state'])

    def test_save_unexpected_task_state_changes_nothing(self):
        self.inst.vm_state = vm_states.SHELVED_OFFLOADED
        e = self.assertRaises(exception.UnexpectedTaskStateError,
                              self.inst.save,
                              expected_task_state=[task_states.SHELVING])
        self.assertIn(self.uuid, str(e))
        self.assertIn("'shelving_offloading'", str(e))
        self.assertEqual(vm_states.SHELVED,
                         self.store.get(self.uuid)['vm_state'])
        # The caller still holds its unsaved change.
        self.assertEqual({'vm_state'}, self.inst.obj_what_changed())

    def test_expected_none_task_state(self):
        self.assertRaises(exception.UnexpectedTaskStateError,
                          self.inst.save, expected_task_state=[None])
        self.inst.save(expected_task_state=task_states.SHELVING_OFFLOADING)

    def test_expected_vm_state(self):
        self.assertRaises(exception.InstanceUpdateConflict, self.inst.save,
                          expected_vm_state=[vm_states.ACTIVE])
        self.inst.save(expected_vm_state=vm_states.SHELVED)

    def test_refresh_and_get_by_uuid(self):
        other = instance_obj.Instance.get_by_uuid(self.store, self.uuid)
        other.host = 'elsewhere'
        other.save()
        self.assertEqual('compute-1', self.inst.host)
        self.inst.refresh()
        self.assertEqual('elsewhere', self.inst.host)
        self.assertEqual('elsewhere', self.inst.saved()['host'])

    def test_observers_see_saves_in_order(self):
        seen = []
        self.store.observers.append(
            lambda uuid, row: seen.append((uuid, row['host'])))
        self.inst.host = 'a'
        self.inst.save()
        self.inst.host = 'b'
        self.inst.save()
        self.assertEqual([(self.uuid, 'a'), (self.uuid, 'b')], seen)

    def test_bad_input(self):
        self.assertRaises(exception.InvalidUUID, instance_obj.Instance,
                          self.store, 'not-a-uuid')
        self.assertRaises(exception.Invalid, instance_obj.Instance,
                          self.store, uuidutils.generate_uuid(),
                          vm_state='bogus')
        self.assertRaises(exception.Invalid, instance_obj.Instance,
                          self.store, uuidutils.generate_uuid(),
                          task_state='bogus')
        self.assertRaises(AttributeError, setattr, self.inst, 'colour', 1)
        self.assertRaises(AttributeError, setattr, self.inst, 'uuid',
                          uuidutils.generate_uuid())
        e = self.assertRaises(exception.Invalid, instance_obj.Instance.create,
                              self.store, self.uuid)
        self.assertIn('already exists', str(e))

    def test_unknown_instance(self):
        uuid = uuidutils.generate_uuid()
        self.assertRaises(exception.InstanceNotFound, self.store.get, uuid)
        self.assertRaises(exception.InstanceNotFound, self.store.update,
                          uuid, {'host': None})

    def test_defaults_and_repr(self):
        inst = instance_obj.Instance(self.store, uuidutils.generate_uuid())
        self.assertEqual(power_state.RUNNING, inst.power_state)
        self.assertEqual(vm_states.ACTIVE, inst.vm_state)
        self.assertIn(inst.uuid, repr(inst))


class DestroyTestCase(base.TestCase):
    """``Instance.destroy``: nova's soft delete of the instance's row."""

    def setUp(self):
        super(DestroyTestCase, self).setUp()
        self.store = instance_obj.InstanceStore()
        self.inst = instance_obj.Instance.create(
            self.store, uuidutils.generate_uuid(), host='compute-1',
            node='compute-1', vm_state=vm_states.DELETED)
        self.other = self.inst.obj_clone()

    def test_destroy(self):
        self.assertFalse(self.inst.deleted)
        self.inst.destroy()
        self.assertTrue(self.inst.deleted)
        # Another copy does not know, as nova's objects do not.
        self.assertFalse(self.other.deleted)
        self.assertTrue(self.store.is_deleted(self.inst.uuid))
        self.assertEqual(vm_states.DELETED,
                         self.store.peek(self.inst.uuid)['vm_state'])

    def test_nothing_finds_a_destroyed_instance(self):
        self.inst.destroy()
        uuid = self.inst.uuid
        self.assertRaises(exception.InstanceNotFound,
                          instance_obj.Instance.get_by_uuid, self.store, uuid)
        self.assertRaises(exception.InstanceNotFound, self.other.refresh)
        self.assertRaises(exception.InstanceNotFound, self.other.saved)
        self.assertEqual([], instance_obj.InstanceList.get_by_host_and_node(
            self.store, 'compute-1', 'compute-1'))

    def test_a_save_after_the_destroy_writes_nothing(self):
        # A confirm's save racing the delete: ACTIVE does not come back.
        self.inst.destroy()
        self.other.vm_state = vm_states.ACTIVE
        self.other.task_state = None
        self.assertRaises(
            exception.InstanceNotFound, self.other.save,
            expected_task_state=[None, task_states.DELETING,
                                 task_states.SOFT_DELETING])
        self.assertEqual(vm_states.DELETED,
                         self.store.peek(self.inst.uuid)['vm_state'])

    def test_destroyed_once(self):
        self.inst.destroy()
        self.assertRaises(exception.InstanceNotFound, self.other.destroy)
        self.assertRaises(exception.InstanceNotFound, self.inst.destroy)
        self.assertFalse(self.other.deleted)

    def test_deleted_is_not_a_field(self):
        self.assertRaises(AttributeError, setattr, self.inst, 'deleted',
                          True)
        self.assertNotIn('deleted', instance_obj.FIELDS)
        self.assertNotIn('deleted', self.store.peek(self.inst.uuid))


class RecordingInterceptor(object):
    """Records intercepted accesses and their results."""

    def __init__(self):
        self.events = []

    def __call__(self, op, uuid, guard=None):
        entry = [op, uuid, guard, None]
        self.events.append(entry)

        class Handle(object):
            def done(self, result=None):
                entry[3] = result
        return Handle()


class StoreInterceptorTestCase(base.TestCase):

    def setUp(self):
        super(StoreInterceptorTestCase, self).setUp()
        self.store = instance_obj.InstanceStore()
        self.uuid = uuidutils.generate_uuid()
        instance_obj.Instance.create(self.store, self.uuid,
                                     task_state=task_states.SHELVING)
        self.interceptor = RecordingInterceptor()
        self.store.interceptor = self.interceptor

    def test_get_update_and_failures_are_intercepted(self):
        self.store.get(self.uuid)
        self.store.update(self.uuid, {'host': 'h'})
        self.assertRaises(exception.UnexpectedTaskStateError,
                          self.store.update, self.uuid, {'host': 'x'},
                          expected_task_state=[None])
        self.store.peek(self.uuid)
        self.assertEqual(
            [('get', 'vm_state=active task_state=shelving host=None'),
             ('update', 'vm_state=active task_state=shelving host=h'),
             ('update', 'UnexpectedTaskStateError')],
            [(e[0], e[3]) for e in self.interceptor.events])

    def test_wait_is_one_guarded_step(self):
        row = self.store.wait_for(self.uuid, lambda r: True)
        self.assertEqual(self.uuid, row['uuid'])
        (op, uuid, guard, result), = self.interceptor.events
        self.assertEqual(('wait', self.uuid), (op, uuid))
        self.assertFalse(guard() is False)
        self.store.interceptor = None
        self.store.update(self.uuid, {'vm_state': vm_states.ERROR})
        self.store.interceptor = self.interceptor
        self.store.wait_for(self.uuid, lambda r: r['vm_state'] == 'active')
        self.assertFalse(self.interceptor.events[-1][2]())


class StoreWaitForTestCase(base.TestCase):

    def setUp(self):
        super(StoreWaitForTestCase, self).setUp()
        self.store = instance_obj.InstanceStore()
        self.uuid = uuidutils.generate_uuid()
        instance_obj.Instance.create(self.store, self.uuid)

    def test_polls_until_true(self):
        polls = []

        def sleep(seconds):
            polls.append(seconds)
            if len(polls) == 3:
                self.store.update(self.uuid, {'vm_state': vm_states.ERROR})
        row = self.store.wait_for(
            self.uuid, lambda r: r['vm_state'] == vm_states.ERROR,
            poll_interval=0.5, sleep=sleep)
        self.assertEqual(vm_states.ERROR, row['vm_state'])
        self.assertEqual([0.5, 0.5, 0.5], polls)

    def test_times_out(self):
        now = [0.0]

        def sleep(seconds):
            now[0] += seconds
        e = self.assertRaises(TimeoutError, self.store.wait_for, self.uuid,
                              lambda r: False, timeout=1.0,
                              poll_interval=0.25, sleep=sleep,
                              clock=lambda: now[0])
        self.assertIn('condition not met within 1.0 s', str(e))
