"""Tests for the API's delete of a server still building.

:mod:`shelvefix.compute.build_api` on a
:class:`~shelvefix.race.build.BuildCloud`: the boot accepted, and the
conductor's ``schedule_and_build_instances`` run (or not) first.
"""

from oslo_utils import uuidutils

from shelvefix.backends import fixture as placement_fixture
from shelvefix.compute import rpcapi
from shelvefix.compute import task_states
from shelvefix import exception
from shelvefix.objects import build_request as build_request_obj
from shelvefix.objects import instance as instance_obj
from shelvefix.race import build
from shelvefix.tests import base

SOURCE = build.SOURCE


class DeleteTestCase(base.TestCase):

    def setUp(self):
        super(DeleteTestCase, self).setUp()
        placement = self.useFixture(placement_fixture.PlacementFixture())
        self.cloud = build.BuildCloud(placement,
                                      build.create_providers(placement))
        self.addCleanup(self.cloud.remove_from_placement)
        self.api = self.cloud.api

    def mapping(self):
        return self.cloud.mappings.peek(self.cloud.uuid)

    def test_a_server_not_in_a_cell_is_read_from_its_build_request(self):
        instance = self.api.get(self.cloud.ctx, self.cloud.uuid)
        self.assertEqual(('building', 'scheduling', None),
                         (instance.vm_state, instance.task_state,
                          instance.host))
        self.assertIsNone(self.cloud.saved())

    def test_a_server_in_a_cell_is_read_from_there(self):
        self.cloud.schedule_and_build()
        instance = self.api.get(self.cloud.ctx, self.cloud.uuid)
        self.assertEqual(self.cloud.saved()['uuid'], instance.uuid)
        self.assertEqual(instance.saved(), self.cloud.saved())

    def test_no_server_is_not_found(self):
        self.assertRaises(exception.InstanceNotFound, self.api.get,
                          self.cloud.ctx, uuidutils.generate_uuid())

    def test_delete_while_booting_stops_the_build(self):
        self.assertTrue(self.cloud.delete())
        self.assertTrue(self.cloud.build_requests.is_deleted(
            self.cloud.uuid))
        self.assertTrue(self.mapping()['queued_for_delete'])
        # The conductor then builds nothing and frees its claim.
        self.cloud.schedule_and_build()
        self.assertIsNone(self.cloud.saved())
        self.assertEqual({}, self.cloud.held())
        self.assertEqual(0, self.cloud.transport.waiting(rpcapi.TOPIC,
                                                         SOURCE))

    def test_delete_of_a_server_in_its_cell_with_no_host(self):
        self.cloud.schedule_and_build()
        self.assertTrue(self.cloud.delete())
        self.assertTrue(self.cloud.deleted())
        self.assertEqual({}, self.cloud.held())
        self.assertTrue(self.mapping()['queued_for_delete'])
        # compute-1 then finds the server gone.
        self.assertEqual({}, self.cloud.finish_casts())
        self.assertEqual({}, self.cloud.usage()[SOURCE])
        self.assertEqual([], self.cloud.drivers[SOURCE].calls)

    def test_the_view_read_before_the_conductor_built_it(self):
        # The API read the build request; the conductor then built the
        # server into the cell and destroyed the build request.
        instance = self.api.get(self.cloud.ctx, self.cloud.uuid)
        self.cloud.schedule_and_build()
        self.api.delete(self.cloud.ctx, instance)
        self.assertTrue(self.cloud.deleted())
        self.assertEqual({}, self.cloud.held())

    def test_a_server_with_a_host_is_deleted_by_its_host(self):
        self.cloud.schedule_and_build()
        self.assertEqual({}, self.cloud.finish_casts())
        self.assertEqual('active', self.cloud.saved()['vm_state'])
        instance = self.api.get(self.cloud.ctx, self.cloud.uuid)
        self.api.delete(self.cloud.ctx, instance)
        self.assertEqual(task_states.DELETING,
                         self.cloud.saved()['task_state'])
        message = self.cloud.transport.receive(rpcapi.TOPIC, SOURCE,
                                               timeout=0)
        self.assertEqual('terminate_instance', message.method)

    def test_the_mapping_may_be_gone(self):
        build_request_obj.InstanceMapping.get_by_instance_uuid(
            self.cloud.mappings, self.cloud.uuid).destroy()
        self.api._local_delete_cleanup(self.cloud.ctx, self.cloud.uuid)
        self.assertRaises(exception.InstanceNotFound, self.api.get,
                          self.cloud.ctx, self.cloud.uuid)

    def test_a_record_gaining_a_host_is_deleted_by_its_host(self):
        # The record got a host after the API read it host-less (the
        # library's stand-in for nova's destroy constraint).
        instance = self.api.get(self.cloud.ctx, self.cloud.uuid)
        self.cloud.schedule_and_build()
        saved = instance_obj.Instance.get_by_uuid(self.cloud.store,
                                                  self.cloud.uuid)
        saved.host = saved.node = SOURCE
        saved.save()
        self.api.delete(self.cloud.ctx, instance)
        self.assertFalse(self.cloud.deleted())
        self.assertEqual(task_states.DELETING,
                         self.cloud.saved()['task_state'])
