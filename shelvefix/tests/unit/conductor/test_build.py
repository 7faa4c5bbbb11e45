"""Tests for the conductor's build and reschedule, on the placement double.

The conductor of a :class:`~shelvefix.race.build.BuildCloud`: a boot the
API accepted (a build request, an instance mapping with no cell), both
hosts enabled with the same room (compute-1 chosen, compute-2 the
alternate).
"""

from shelvefix.backends import fixture as placement_fixture
from shelvefix.compute import rpcapi
from shelvefix.compute import task_states
from shelvefix.compute import vm_states
from shelvefix.conductor import rpcapi as conductor_rpcapi
from shelvefix import exception
from shelvefix.objects import build_request as build_request_obj
from shelvefix.objects import instance as instance_obj
from shelvefix.race import build
from shelvefix.race import build_program
from shelvefix.race import scenario
from shelvefix.tests import base

SOURCE = build.SOURCE
DESTINATION = build.DESTINATION
RESOURCES = scenario.FLAVOR.resources


class BuildTestBase(base.TestCase):

    def setUp(self):
        super(BuildTestBase, self).setUp()
        self.placement = self.useFixture(placement_fixture.PlacementFixture())
        self.providers = build.create_providers(self.placement)
        self.cloud = build.BuildCloud(self.placement, self.providers)
        self.addCleanup(self.cloud.remove_from_placement)
        self.conductor = self.cloud.conductor

    def held(self):
        return {host for host, rp in self.cloud.providers.items()
                if rp in self.cloud.held()}

    def message(self, host):
        return self.cloud.transport.receive(rpcapi.TOPIC, host, timeout=0)


class ScheduleAndBuildTestCase(BuildTestBase):

    def test_build_cast_to_the_chosen_host_with_the_alternate(self):
        self.cloud.schedule_and_build()
        row = self.cloud.saved()
        self.assertEqual((vm_states.BUILDING, task_states.SCHEDULING, None),
                         (row['vm_state'], row['task_state'], row['host']))
        self.assertTrue(self.cloud.build_requests.is_deleted(self.cloud.uuid))
        self.assertEqual(build_request_obj.CELL1,
                         self.cloud.mappings.peek(self.cloud.uuid)['cell'])
        self.assertEqual({SOURCE}, self.held())
        message = self.message(SOURCE)
        self.assertEqual('build_and_run_instance', message.method)
        self.assertEqual(SOURCE, message.kwargs['node'])
        self.assertEqual([DESTINATION], [
            alt.service_host for alt in message.kwargs['host_list']])
        self.assertEqual({'num_attempts': 1, 'hosts': [[SOURCE, SOURCE]]},
                         message.kwargs['filter_properties']['retry'])
        self.assertEqual(0, self.cloud.transport.waiting(rpcapi.TOPIC,
                                                         DESTINATION))

    def test_a_build_request_deleted_before_the_record_stops_the_build(self):
        # The user's delete destroyed the build request while the
        # scheduler claimed: nothing in the cell, the claim freed, the
        # mapping gone.
        request = build_request_obj.BuildRequest(
            self.cloud.build_requests, self.cloud.uuid,
            self.cloud.build_requests.peek(self.cloud.uuid)['instance'])
        request.destroy()
        self.conductor.schedule_and_build_instances(
            self.cloud.ctx, [request], [self.cloud.request_spec()], {}, None,
            [], [], [])
        self.assertIsNone(self.cloud.saved())
        self.assertEqual(set(), self.held())
        self.assertTrue(self.cloud.mappings.is_deleted(self.cloud.uuid))
        self.assertEqual(0, self.cloud.transport.waiting(rpcapi.TOPIC,
                                                         SOURCE))

    def test_a_build_request_deleted_after_the_record_destroys_it(self):
        # The delete got to the build request between the conductor's
        # check and its own destroy: the record created goes, no cast.
        original = self.conductor._map_instance_to_cell

        def deleted_meanwhile(context, instance, cell):
            original(context, instance, cell)
            build_request_obj.BuildRequest.get_by_instance_uuid(
                self.cloud.build_requests, instance.uuid).destroy()
        self.conductor._map_instance_to_cell = deleted_meanwhile
        self.cloud.schedule_and_build()
        self.assertTrue(self.cloud.deleted())
        self.assertEqual(0, self.cloud.transport.waiting(rpcapi.TOPIC,
                                                         SOURCE))
        # The scheduler's claim stays for the delete to free.
        self.assertEqual({SOURCE}, self.held())

    def test_no_host_buries_the_server_in_cell0(self):
        self.placement.set_traits(self.providers[0], ['CUSTOM_FULL'])
        self.placement.set_traits(self.providers[1], ['CUSTOM_FULL'])
        spec = self.cloud.request_spec()
        spec.root_forbidden = {'CUSTOM_FULL'}
        request = build_request_obj.BuildRequest(
            self.cloud.build_requests, self.cloud.uuid,
            self.cloud.build_requests.peek(self.cloud.uuid)['instance'])
        self.conductor.schedule_and_build_instances(
            self.cloud.ctx, [request], [spec], {}, None, [], [], [])
        self.assertIsNone(self.cloud.saved())
        buried = self.cloud.cells[build_request_obj.CELL0].peek(
            self.cloud.uuid)
        self.assertEqual((vm_states.ERROR, None),
                         (buried['vm_state'], buried['task_state']))
        self.assertEqual(build_request_obj.CELL0,
                         self.cloud.mappings.peek(self.cloud.uuid)['cell'])
        self.assertTrue(self.cloud.build_requests.is_deleted(self.cloud.uuid))
        self.assertEqual(set(), self.held())


class RescheduleTestCase(BuildTestBase):
    """``build_instances``: compute-1 freed its claim and cast it back."""

    def setUp(self):
        super(RescheduleTestCase, self).setUp()
        self.cloud.schedule_and_build()
        self.cast = self.message(SOURCE)
        self.cloud.client.delete_allocation_for_instance(
            self.cloud.ctx, self.cloud.uuid, force=True)

    def reschedule(self):
        kwargs = self.cast.kwargs
        self.conductor.build_instances(
            self.cloud.ctx, [instance_obj.Instance.get_by_uuid(
                self.cloud.store, self.cloud.uuid)], {},
            kwargs['filter_properties'], None, [], [], [], [],
            request_spec=kwargs['request_spec'],
            host_lists=[kwargs['host_list']])

    def test_the_alternate_is_claimed_and_built(self):
        self.reschedule()
        self.assertEqual({DESTINATION}, self.held())
        message = self.message(DESTINATION)
        self.assertEqual('build_and_run_instance', message.method)
        self.assertEqual([], message.kwargs['host_list'])
        self.assertEqual(2, message.kwargs['filter_properties']['retry'][
            'num_attempts'])

    def test_a_refused_alternate_errors_the_server(self):
        self.placement.inject_fault(**dict(
            build_program.PLACEMENT_FAULTS[
                build_program.race.ALTERNATE_CLAIM_FAILS], nth=1))
        self.reschedule()
        row = self.cloud.saved()
        self.assertEqual((vm_states.ERROR, None, None),
                         (row['vm_state'], row['task_state'], row['host']))
        self.assertEqual(set(), self.held())
        self.assertEqual(0, self.cloud.transport.waiting(rpcapi.TOPIC,
                                                         DESTINATION))

    def test_a_server_deleted_meanwhile_frees_the_alternate(self):
        instance_obj.Instance.get_by_uuid(self.cloud.store,
                                          self.cloud.uuid).destroy()
        kwargs = self.cast.kwargs
        instance = instance_obj.Instance(
            self.cloud.store, **self.cloud.store.peek(self.cloud.uuid))
        self.conductor.build_instances(
            self.cloud.ctx, [instance], {}, kwargs['filter_properties'],
            None, [], [], [], [], request_spec=kwargs['request_spec'],
            host_lists=[kwargs['host_list']])
        self.assertEqual(set(), self.held())
        self.assertEqual(0, self.cloud.transport.waiting(rpcapi.TOPIC,
                                                         DESTINATION))

    def test_only_a_reschedule_is_built_here(self):
        self.assertRaises(exception.Invalid, self.conductor.build_instances,
                          self.cloud.ctx, [], {}, {}, None, [], [], [], [])

    def test_the_compute_casts_the_reschedule_to_the_conductor(self):
        api = conductor_rpcapi.ComputeTaskAPI(self.cloud.transport)
        instance = instance_obj.Instance.get_by_uuid(self.cloud.store,
                                                     self.cloud.uuid)
        api.build_instances(self.cloud.ctx, [instance], {}, {}, None, [],
                            [], [], [], host_lists=[[]])
        message = self.cloud.transport.receive(
            conductor_rpcapi.TOPIC, conductor_rpcapi.SERVER, timeout=0)
        self.assertEqual('build_instances', message.method)
        # Each instance travels as a copy of its own.
        self.assertIsNot(instance, message.kwargs['instances'][0])
        self.assertEqual(instance.uuid, message.kwargs['instances'][0].uuid)
