"""Tests for the resource tracker's shelve path."""

from unittest import mock

from oslo_utils import uuidutils

from shelvefix.compute import resource_tracker
from shelvefix.compute import task_states
from shelvefix.compute import vm_states
from shelvefix.objects import instance as instance_obj
from shelvefix.tests import base


class ResourceTrackerTestCase(base.TestCase):

    def setUp(self):
        super(ResourceTrackerTestCase, self).setUp()
        self.client = mock.Mock()
        self.inst = instance_obj.Instance(
            instance_obj.InstanceStore(), uuidutils.generate_uuid(),
            flavor=instance_obj.Flavor(vcpus=2, memory_mb=1024, root_gb=5))

    def test_default_strategy_is_delete(self):
        rt = resource_tracker.ResourceTracker('h', reportclient=self.client)
        rt.delete_allocation_for_shelve_offloaded_instance(self.context,
                                                           self.inst)
        self.client.delete_allocation_for_instance.assert_called_once_with(
            self.context, self.inst.uuid, force=True)

    def test_get_and_put_empty_strategy(self):
        rt = resource_tracker.ResourceTracker(
            'h', reportclient=self.client, force_delete_allocations=False)
        rt.delete_allocation_for_shelve_offloaded_instance(self.context,
                                                           self.inst)
        self.client.delete_allocation_for_instance.assert_called_once_with(
            self.context, self.inst.uuid, force=False)

    def test_usage_tracking(self):
        rt = resource_tracker.ResourceTracker('h', reportclient=self.client)
        rt.instance_claim(self.context, self.inst, 'n1')
        self.assertEqual({'VCPU': 2, 'MEMORY_MB': 1024, 'DISK_GB': 5},
                         rt.usage('n1'))
        self.assertEqual({}, rt.usage('n2'))
        # Not offloaded yet: still counted.
        rt.update_usage(self.context, self.inst, 'n1')
        self.assertIn(self.inst.uuid, rt.tracked_instances)
        # Offloaded but being spawned again by an unshelve: still counted.
        self.inst.vm_state = vm_states.SHELVED_OFFLOADED
        self.inst.task_state = task_states.SPAWNING
        rt.update_usage(self.context, self.inst, 'n1')
        self.assertIn(self.inst.uuid, rt.tracked_instances)
        self.inst.task_state = None
        rt.update_usage(self.context, self.inst, 'n1')
        self.assertEqual({}, rt.usage('n1'))
        self.assertIn('Stopped tracking instance %s' % self.inst.uuid,
                      self.log.output)
