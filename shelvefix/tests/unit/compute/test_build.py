"""Tests for the compute host's build (:mod:`shelvefix.compute.build`).

On a :class:`~shelvefix.race.build.BuildCloud` whose conductor has run
``schedule_and_build_instances``: the server is in the cell
(``BUILDING``/``SCHEDULING``, no host), holds compute-1 in placement, and
``build_and_run_instance`` waits in compute-1's queue.
"""

from oslo_utils import uuidutils

from shelvefix.backends import fixture as placement_fixture
from shelvefix.compute import collaborators
from shelvefix.compute import rpcapi
from shelvefix.compute import task_states
from shelvefix.compute import vm_states
from shelvefix.conductor import rpcapi as conductor_rpcapi
from shelvefix import context
from shelvefix.objects import instance as instance_obj
from shelvefix.race import build
from shelvefix.race import scenario
from shelvefix.tests import base

SOURCE = build.SOURCE
DESTINATION = build.DESTINATION
RESOURCES = scenario.FLAVOR.resources


class BuildAndRunTestCase(base.TestCase):

    def cloud(self, failing=None):
        placement = self.useFixture(placement_fixture.PlacementFixture())
        cloud = build.BuildCloud(placement, build.create_providers(placement),
                                 failing=failing)
        self.addCleanup(cloud.remove_from_placement)
        cloud.schedule_and_build()
        return cloud

    def held(self, cloud):
        return {host for host, rp in cloud.providers.items()
                if rp in cloud.held()}

    def build(self, cloud, **changes):
        message = cloud.transport.receive(rpcapi.TOPIC, SOURCE, timeout=0)
        kwargs = dict(message.kwargs, **changes)
        return cloud.computes[SOURCE].build_and_run_instance(message.context,
                                                             **kwargs)

    def state(self, cloud):
        row = cloud.saved()
        return row['vm_state'], row['task_state'], row['host']

    def test_the_server_is_built_and_counted(self):
        cloud = self.cloud()
        self.assertEqual('active', self.build(cloud))
        self.assertEqual((vm_states.ACTIVE, None, SOURCE), self.state(cloud))
        self.assertEqual({SOURCE}, self.held(cloud))
        self.assertEqual({SOURCE: RESOURCES, DESTINATION: {}}, cloud.usage())
        self.assertEqual([('spawn', cloud.uuid)], [
            call for call in cloud.drivers[SOURCE].calls
            if call[0] == 'spawn'])

    def test_a_failed_spawn_is_rescheduled(self):
        cloud = self.cloud(failing={SOURCE: ('spawn',)})
        self.assertEqual('rescheduled', self.build(cloud))
        # The claim aborted (no host, not counted), this host's
        # allocations freed before the reschedule's cast.
        self.assertEqual((vm_states.BUILDING, task_states.SCHEDULING, None),
                         self.state(cloud))
        self.assertEqual(set(), self.held(cloud))
        self.assertEqual({}, cloud.usage()[SOURCE])
        message = cloud.transport.receive(
            conductor_rpcapi.TOPIC, conductor_rpcapi.SERVER, timeout=0)
        self.assertEqual('build_instances', message.method)
        self.assertEqual([[DESTINATION]], [
            [alt.service_host for alt in host_list]
            for host_list in message.kwargs['host_lists']])

    def test_no_retry_errors_the_server_holding_nothing(self):
        cloud = self.cloud(failing={SOURCE: ('spawn',)})
        self.assertEqual('failed', self.build(cloud, filter_properties={}))
        self.assertEqual((vm_states.ERROR, None, None), self.state(cloud))
        self.assertEqual(set(), self.held(cloud))
        self.assertEqual(0, cloud.transport.waiting(
            conductor_rpcapi.TOPIC, conductor_rpcapi.SERVER))

    def test_a_server_deleted_before_its_build_is_not_built(self):
        cloud = self.cloud()
        instance_obj.Instance.get_by_uuid(cloud.store, cloud.uuid).destroy()
        self.assertEqual('failed', self.build(cloud))
        self.assertEqual([], [call for call in cloud.drivers[SOURCE].calls
                              if call[0] == 'spawn'])
        self.assertEqual({}, cloud.usage()[SOURCE])

    def test_a_server_the_user_deletes_meanwhile_is_left_to_its_delete(self):
        cloud = self.cloud()
        driver = cloud.drivers[SOURCE]
        spawn = driver.spawn

        def deleted_while_spawning(context, instance, *args, **kwargs):
            spawn(context, instance, *args, **kwargs)
            # The API's delete of a server with a host: DELETING.
            saved = instance_obj.Instance.get_by_uuid(cloud.store,
                                                      instance.uuid)
            saved.task_state = task_states.DELETING
            saved.save()
        driver.spawn = deleted_while_spawning
        self.assertEqual('failed', self.build(cloud))
        # Not ERROR: terminate_instance, cast by the delete, ends it.
        self.assertEqual((vm_states.BUILDING, task_states.DELETING, None),
                         self.state(cloud))
        self.assertEqual({}, cloud.usage()[SOURCE])


class InitHostTestCase(base.TestCase):
    """compute-1 restarts once it took the build's cast."""

    def setUp(self):
        super(InitHostTestCase, self).setUp()
        placement = self.useFixture(placement_fixture.PlacementFixture())
        self.cloud = build.BuildCloud(placement,
                                      build.create_providers(placement))
        self.addCleanup(self.cloud.remove_from_placement)
        self.cloud.schedule_and_build()

    def test_a_build_lost_before_its_claim_errors_and_is_freed(self):
        self.cloud.restart(timeout=0)
        row = self.cloud.saved()
        self.assertEqual((vm_states.ERROR, None, None),
                         (row['vm_state'], row['task_state'], row['host']))
        self.assertEqual({}, self.cloud.held())

    def test_a_build_on_this_host_errors_and_keeps_its_host(self):
        instance = instance_obj.Instance.get_by_uuid(self.cloud.store,
                                                     self.cloud.uuid)
        instance.host = instance.node = SOURCE
        instance.task_state = task_states.SPAWNING
        instance.save()
        self.cloud.computes[SOURCE].init_host()
        row = self.cloud.saved()
        self.assertEqual((vm_states.ERROR, None, SOURCE),
                         (row['vm_state'], row['task_state'], row['host']))
        # Allowed on its host: its delete frees it.
        self.assertEqual([self.cloud.providers[SOURCE]],
                         list(self.cloud.held()))

    def test_other_consumers_and_hosts_are_left_alone(self):
        # compute-2's restart finds nothing of the build on its provider.
        self.cloud.computes[DESTINATION].init_host()
        row = self.cloud.saved()
        self.assertEqual(vm_states.BUILDING, row['vm_state'])
        self.assertEqual([self.cloud.providers[SOURCE]],
                         list(self.cloud.held()))

    def test_a_service_taking_no_builds_has_none_to_clean_up(self):
        compute = self.cloud.computes[SOURCE]
        compute.compute_task_api = None
        compute.init_host()
        self.assertEqual(vm_states.BUILDING, self.cloud.saved()['vm_state'])
        self.assertEqual([self.cloud.providers[SOURCE]],
                         list(self.cloud.held()))

    def test_the_provider_s_allocations_are_listed(self):
        self.assertEqual(
            {self.cloud.uuid: {'resources': RESOURCES}},
            self.cloud.client.get_allocations_for_resource_provider(
                context.get_admin_context(), self.cloud.providers[SOURCE]))


class RecordingDriverTestCase(base.TestCase):

    def test_spawn_fails_when_asked(self):
        driver = collaborators.RecordingDriver(failing=('spawn',))
        instance = instance_obj.Instance(instance_obj.InstanceStore(),
                                         uuidutils.generate_uuid())
        self.assertRaises(collaborators.DriverFailed, driver.spawn, None,
                          instance, None)
        self.assertEqual([('spawn', instance.uuid)], driver.calls)
