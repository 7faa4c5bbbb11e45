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
from oslo_concurrency import lockutils

from nova.compute import vm_states
from nova import context as nova_context
from nova import objects
from nova.tests.functional import integrated_helpers


class ShelveOffloadHostRaceTest(integrated_helpers._IntegratedTestBase):
    """Reproducer for bug #TBD

    ComputeManager._shelve_offload_instance makes the instance
    SHELVED_OFFLOADED with one save, while host and node are still set,
    then updates the resource tracker (which waits for the tracker's
    compute_resources lock, held for instance by a long running
    update_available_resource periodic) and only then nulls out host and
    node with a second save that checks no task state.

    As soon as the API shows SHELVED_OFFLOADED the server can be unshelved.
    If the unshelve is scheduled to another compute and that compute saves
    its host before the source compute's second save lands, that second
    save wipes the host and node: the server is ACTIVE on the destination
    but recorded on no host.
    """

    ADMIN_API = True
    CAST_AS_CALL = False
    REQUIRES_LOCKING = False
    microversion = 'latest'

    def _setup_compute_service(self):
        self._start_compute('compute1')
        self._start_compute('compute2')

    def _hold_offload_in_resource_tracker(self):
        """Hold compute1's resource tracker update of the offload.

        :returns: a (held, release) pair of events: held is set when the
            offload waits in the resource tracker, setting release lets it
            go on
        """
        held = threading.Event()
        release = threading.Event()
        self.addCleanup(release.set)
        rt = self.computes['compute1'].manager.rt
        real_update_usage = rt.update_usage

        def update_usage(context, instance, nodename):
            if instance.vm_state == vm_states.SHELVED_OFFLOADED:
                # NOTE: Both computes run in this one process, so they share
                # the in-process lock on the instance uuid that
                # shelve_instance and unshelve_instance take; separate
                # nova-compute processes do not. Let compute2 have it while
                # compute1 waits, as if for the compute_resources lock held
                # by its update_available_resource periodic.
                instance_lock = lockutils.internal_lock(instance.uuid)
                instance_lock.release()
                held.set()
                release.wait()
                instance_lock.acquire()
            return real_update_usage(context, instance, nodename)

        self.useFixture(fixtures.MockPatchObject(
            rt, 'update_usage', side_effect=update_usage))
        return held, release

    def test_unshelve_during_shelve_offload(self):
        server = self._create_server(networks='none', host='compute1')

        # Drain compute1 so that the unshelve is scheduled to compute2.
        service = self.api.get_services(
            binary='nova-compute', host='compute1')[0]
        self.api.put_service(service['id'], {'status': 'disabled'})

        held, release = self._hold_offload_in_resource_tracker()
        # With the default shelved_offload_time of 0 the shelve offloads
        # the server right away.
        self.api.post_server_action(server['id'], {'shelve': {}})
        self.assertTrue(held.wait(timeout=10))

        # compute1 waits in its resource tracker, and the API already shows
        # the server offloaded: a client unshelves it, to compute2.
        server = self._wait_for_state_change(server, 'SHELVED_OFFLOADED')
        server = self._unshelve_server(server)
        self.assertEqual('compute2', server['OS-EXT-SRV-ATTR:host'])

        # compute1 finishes the offload.
        release.set()
        self.notifier.wait_for_versioned_notifications(
            'instance.shelve_offload.end')

        # FIXME(shelvefix): The second save of the offload wiped the host and
        # node compute2 saved: the server runs on compute2 but is recorded on
        # no host. When bug #TBD is fixed this will be compute2, for the
        # server and the instance record alike.
        server = self.api.get_server(server['id'])
        self.assertEqual('ACTIVE', server['status'])
        self.assertIsNone(server['OS-EXT-SRV-ATTR:host'])
        self.assertIsNone(server['OS-EXT-SRV-ATTR:hypervisor_hostname'])
        instance = objects.Instance.get_by_uuid(
            nova_context.get_admin_context(), server['id'])
        self.assertEqual(vm_states.ACTIVE, instance.vm_state)
        self.assertIsNone(instance.host)
        self.assertIsNone(instance.node)
