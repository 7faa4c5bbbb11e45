# Licensed under the Apache License, Version 2.0 (the "License"); you may
# not use this file except in compliance with the License. You may obtain
# a copy of the License at
#
#      http://www.apache.org/licenses/LICENSE-2.0
#
# Unless required by applicable law or agreed to in writing, software
# distributed under the License is distributed on an "AS IS" BASIS, WITHOUT
# WARRANTIES OR CONDITIONS OF ANY KIND, either express or implied. See the
# License for the specific language governing permissions and limitations
# under the License.

import threading

import fixtures

from nova.scheduler.client import report
from nova.tests.functional import integrated_helpers


class TestEvacuatedSourceAllocationLeak(
    integrated_helpers.ProviderUsageBaseTestCase,
):
    """Regression test for bug @BUG@

    When an evacuated compute comes back, _destroy_evacuated_instances
    removes the host from the server's allocations with
    remove_provider_tree_from_instance_allocation: a GET of the allocations
    then a PUT at the consumer generation that GET returned. If the
    scheduler's claim of the evacuation destination writes the consumer in
    between, the PUT fails with a consumer generation conflict, which is not
    retried, and the start-up saves the migration 'completed' anyway. No
    later start-up looks at a completed evacuation, so the allocation on
    the source host is never removed.
    """

    compute_driver = 'fake.MediumFakeDriver'

    # How long a paused step waits for the other one, in seconds.
    TIMEOUT = 60

    def setUp(self):
        super().setUp()
        self.compute1 = self._start_compute('compute1')
        self.compute2 = self._start_compute('compute2')
        self.flavor = self.api.get_flavors()[0]

    def test_source_restarts_while_the_destination_is_claimed(self):
        server = self._create_server(
            flavor_id=self.flavor['id'], host='compute1', networks='none')
        source_rp = self._get_provider_uuid_by_host('compute1')
        dest_rp = self._get_provider_uuid_by_host('compute2')
        self.assertFlavorMatchesAllocation(self.flavor, server['id'],
                                           source_rp)

        # compute1 goes down; the admin forces it down and evacuates.
        self.compute1.stop()
        service_id = self.api.get_services(
            host='compute1', binary='nova-compute')[0]['id']
        self.api.put_service_force_down(service_id, True)

        source_has_read = threading.Event()
        claimed = []

        # The scheduler's claim of compute2 waits until compute1's start-up
        # has read the server's allocations.
        orig_claim = report.SchedulerReportClient.claim_resources

        def claim_after_the_source_read(_self, context, consumer_uuid,
                                        *args, **kwargs):
            if consumer_uuid == server['id'] and not claimed:
                claimed.append(source_has_read.wait(self.TIMEOUT))
            return orig_claim(_self, context, consumer_uuid, *args, **kwargs)

        self.useFixture(fixtures.MonkeyPatch(
            'nova.scheduler.client.report.SchedulerReportClient.'
            'claim_resources', claim_after_the_source_read))

        # compute1's start-up reads the allocations, then lets the claim
        # and the rest of the evacuation run before it writes its own.
        orig_tree = report.SchedulerReportClient.get_providers_in_tree
        paused = []

        def write_after_the_evacuation(_self, context, uuid):
            if uuid == source_rp and not paused:
                paused.append(uuid)
                source_has_read.set()
                self._wait_for_migration_status(server, ['done'])
            return orig_tree(_self, context, uuid)

        self.useFixture(fixtures.MonkeyPatch(
            'nova.scheduler.client.report.SchedulerReportClient.'
            'get_providers_in_tree', write_after_the_evacuation))

        self.api.post_server_action(server['id'], {'evacuate': {}})
        self.compute1 = self.restart_compute_service(self.compute1)

        self.assertEqual([True], claimed)
        self.assertEqual([source_rp], paused)
        server = self._wait_for_server_parameter(
            server, {'OS-EXT-SRV-ATTR:host': 'compute2',
                     'OS-EXT-STS:task_state': None})
        self._wait_for_migration_status(server, ['completed'])

        # FIXME(@NICK@): The removal's PUT met the claim's consumer
        # generation and was given up: the server runs on compute2 and still
        # holds its resources on compute1, and since the migration is
        # completed no start-up of compute1 will remove them.
        self.assertIn('consumer generation conflict',
                      self.stdlog.logger.output)
        self.assertIn(
            'Failed to clean allocation of evacuated instance on the source '
            'node', self.stdlog.logger.output)
        allocations = self._get_allocations_by_server_uuid(server['id'])
        self.assertEqual({source_rp, dest_rp}, set(allocations))
        self.assertFlavorMatchesUsage(source_rp, self.flavor)
        self.assertFlavorMatchesUsage(dest_rp, self.flavor)

        # A later restart of compute1 does not look at the migration again.
        self.compute1 = self.restart_compute_service(self.compute1)
        allocations = self._get_allocations_by_server_uuid(server['id'])
        self.assertEqual({source_rp, dest_rp}, set(allocations))
