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

import fixtures

from nova import exception
from nova.tests.functional import integrated_helpers


class UnshelveAllocationReadFailureTest(
        integrated_helpers._IntegratedTestBase):
    """Regression test for bug @BUG@

    ComputeManager._unshelve_instance reads the instance's allocations
    before the try block whose except hands the scheduler's allocations
    back to placement, and it reads them with the report client's legacy
    get_allocations_for_consumer, which turns a failed read into an empty
    result. When placement fails that read the unshelve carries on as if
    the instance had no allocations: the resource claim and the driver's
    spawn get none, although placement holds the ones the scheduler made
    on this host.
    """

    REQUIRES_LOCKING = False
    ADMIN_API = True
    CAST_AS_CALL = False
    # 2.91 lets an admin unshelve an offloaded server to a given host.
    microversion = '2.91'

    def _setup_compute_service(self):
        self._start_compute('compute1')
        self._start_compute('compute2')

    def _fail_first_allocation_read(self, host, server):
        """Make placement fail host's first read of server's allocations."""
        reportclient = self.computes[host].manager.reportclient
        real_get_allocs = reportclient.get_allocs_for_consumer
        failed = []

        def get_allocs_for_consumer(context, consumer):
            if consumer == server['id'] and not failed:
                failed.append(consumer)
                raise exception.ConsumerAllocationRetrievalFailed(
                    consumer_uuid=consumer, error='503 Service Unavailable')
            return real_get_allocs(context, consumer)

        self.useFixture(fixtures.MockPatchObject(
            reportclient, 'get_allocs_for_consumer',
            side_effect=get_allocs_for_consumer))
        return failed

    def test_unshelve_when_allocation_read_fails(self):
        server = self._create_server(networks='none', host='compute1')
        # With the default shelved_offload_time of 0 the shelve offloads the
        # server right away.
        self.api.post_server_action(server['id'], {'shelve': {}})
        self.notifier.wait_for_versioned_notifications(
            'instance.shelve_offload.end')

        compute2_rp_uuid = self._get_provider_uuid_by_host('compute2')
        driver = self.computes['compute2'].manager.driver
        spawn = self.useFixture(fixtures.MockPatchObject(
            driver, 'spawn', wraps=driver.spawn)).mock
        failed = self._fail_first_allocation_read('compute2', server)

        # The API sets the task state to unshelving, compute2 clears it when
        # it is done, whatever the outcome.
        self.api.post_server_action(
            server['id'], {'unshelve': {'host': 'compute2'}})
        server = self._wait_for_server_parameter(
            server, {'OS-EXT-STS:task_state': None}, max_retries=20)
        self.assertEqual([server['id']], failed)

        # FIXME(@NICK@): compute2 took the failed read for "no allocations"
        # and unshelved the server anyway: the guest was spawned without the
        # allocations placement holds for it on compute2, which a guest with
        # e.g. a vGPU needs. Once bug @BUG@ is fixed the unshelve fails on
        # the read and gives the allocations back.
        self.assertEqual('ACTIVE', server['status'])
        self.assertEqual('compute2', server['OS-EXT-SRV-ATTR:host'])
        allocations = self._get_allocations_by_server_uuid(server['id'])
        self.assertEqual([compute2_rp_uuid], list(allocations))
        spawn.assert_called_once()
        self.assertEqual({}, spawn.call_args.kwargs['allocations'])
