"""Tests for the conductor's side of an unshelve."""

from unittest import mock

from oslo_utils import uuidutils

from shelvefix.compute import rpcapi
from shelvefix.compute import task_states
from shelvefix.compute import vm_states
from shelvefix.conductor import manager
from shelvefix import exception
from shelvefix.objects import instance as instance_obj
from shelvefix import rpc
from shelvefix.scheduler import request_spec
from shelvefix.tests import base


class Selection(object):
    service_host = 'compute-2'
    nodename = 'node-2'
    limits = {'memory_mb': 1024}


class ConductorTestCase(base.TestCase):

    def setUp(self):
        super(ConductorTestCase, self).setUp()
        self.store = instance_obj.InstanceStore()
        self.inst = instance_obj.Instance.create(
            self.store, uuidutils.generate_uuid(),
            vm_state=vm_states.SHELVED_OFFLOADED,
            task_state=task_states.UNSHELVING, project_id='p', user_id='u')
        self.transport = rpc.Transport()
        self.scheduler = mock.Mock()
        self.scheduler.select_destinations.return_value = [[Selection()]]
        self.conductor = manager.ComputeTaskManager(
            self.scheduler, rpcapi.ComputeAPI(self.transport))
        self.spec = request_spec.RequestSpec(self.inst.uuid, None, None)

    def unshelve(self):
        self.conductor.unshelve_instance(self.context, self.inst, self.spec)

    def test_schedules_and_casts(self):
        self.unshelve()
        self.scheduler.select_destinations.assert_called_once_with(
            self.context, self.spec, None, spec_obj=self.spec,
            instance_uuids=[self.inst.uuid], return_objects=True,
            return_alternates=False)
        self.assertEqual(('p', 'u'), (self.spec.project_id,
                                      self.spec.user_id))
        message = self.transport.receive('compute', 'compute-2', timeout=0)
        self.assertEqual('unshelve_instance', message.method)
        self.assertEqual('node-2', message.kwargs['node'])
        self.assertEqual({'limits': {'memory_mb': 1024}},
                         message.kwargs['filter_properties'])
        self.assertEqual(self.inst.uuid, message.kwargs['instance'].uuid)
        # The task state stays UNSHELVING for the compute host.
        self.assertEqual(task_states.UNSHELVING,
                         self.store.peek(self.inst.uuid)['task_state'])

    def test_no_valid_host_clears_the_task_state_quietly(self):
        self.scheduler.select_destinations.side_effect = (
            exception.NoValidHost(reason=''))
        self.unshelve()
        self.assertIsNone(self.store.peek(self.inst.uuid)['task_state'])
        self.assertEqual(0, self.transport.waiting('compute', 'compute-2'))
        self.assertIn('No valid host found for unshelve instance',
                      self.log.output)

    def test_other_failures_clear_the_task_state_and_raise(self):
        self.scheduler.select_destinations.side_effect = (
            exception.AllocationUpdateConflict(consumer_uuid=self.inst.uuid,
                                               error='conflict'))
        self.assertRaises(exception.AllocationUpdateConflict, self.unshelve)
        self.assertIsNone(self.store.peek(self.inst.uuid)['task_state'])
        self.assertEqual(0, self.transport.waiting('compute', 'compute-2'))

    def test_shelved_instance_is_powered_on_where_it_is(self):
        self.store.update(self.inst.uuid, {'vm_state': vm_states.SHELVED,
                                           'host': 'compute-1'})
        self.inst.refresh()
        self.unshelve()
        self.scheduler.select_destinations.assert_not_called()
        self.assertEqual(task_states.POWERING_ON,
                         self.store.peek(self.inst.uuid)['task_state'])
        message = self.transport.receive('compute', 'compute-1', timeout=0)
        self.assertEqual('start_instance', message.method)

    def test_other_states_are_refused(self):
        self.store.update(self.inst.uuid, {'vm_state': vm_states.ACTIVE})
        self.inst.refresh()
        self.unshelve()
        self.scheduler.select_destinations.assert_not_called()
        self.assertIn('Unshelve attempted on instance', self.log.output)
