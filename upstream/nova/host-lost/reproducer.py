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

from nova.compute import vm_states
from nova import context as nova_context
from nova import objects
from nova.tests.functional import integrated_helpers


class UnshelveDuringShelveOffloadTest(integrated_helpers._IntegratedTestBase):
    """Regression test for bug @BUG@

    ComputeManager._shelve_offload_instance saves the instance as
    SHELVED_OFFLOADED while its host and node are still set, updates the
    resource tracker and only then nulls out host, node, compute_id,
    launched_on and availability_zone in a second save which expects no
    particular task state. Once the first save is done the API accepts an
    unshelve, and if the unshelve completes on another host before the
    second save, that save wipes everything the unshelve recorded: the
    server is ACTIVE on the other host but recorded on none.
    """

    REQUIRES_LOCKING = False
    ADMIN_API = True
    CAST_AS_CALL = False
    # 2.91 lets an admin unshelve an offloaded server to a given host.
    microversion = '2.91'

    def _setup_compute_service(self):
        self._start_compute('compute1')
        self._start_compute('compute2')

    def _unshelve_on_compute2_without_instance_lock(self):
        # NOTE(@NICK@): Both compute services run in this one process and so
        # share the in-process lock on the instance uuid which
        # shelve_instance holds on compute1 for the whole offload and which
        # unshelve_instance takes on compute2. Separate nova-compute
        # processes do not share it, so let compute2 run the unshelve
        # without it.
        dest = self.computes['compute2'].manager

        def unshelve_instance(context, instance, image, filter_properties,
                              node, request_spec, accel_uuids):
            dest._unshelve_instance(
                context, instance, image, filter_properties or {}, node,
                request_spec, accel_uuids)

        self.useFixture(fixtures.MockPatchObject(
            dest, 'unshelve_instance', side_effect=unshelve_instance))

    def _unshelve_to_compute2_between_offload_saves(self, server):
        # The offload updates compute1's resource tracker after the save
        # that makes the server SHELVED_OFFLOADED: unshelve the server to
        # compute2 right there and let that unshelve complete before the
        # offload goes on.
        rt = self.computes['compute1'].manager.rt
        real_update_usage = rt.update_usage

        def update_usage(context, instance, nodename):
            offloaded = instance.vm_state == vm_states.SHELVED_OFFLOADED
            if instance.uuid == server['id'] and offloaded:
                self.api.post_server_action(
                    server['id'], {'unshelve': {'host': 'compute2'}})
                self.notifier.wait_for_versioned_notifications(
                    'instance.unshelve.end')
            return real_update_usage(context, instance, nodename)

        self.useFixture(fixtures.MockPatchObject(
            rt, 'update_usage', side_effect=update_usage))

    def test_unshelve_to_other_host_during_shelve_offload(self):
        server = self._create_server(networks='none', host='compute1')
        self.assertEqual('compute1', server['OS-EXT-SRV-ATTR:host'])

        self._unshelve_on_compute2_without_instance_lock()
        self._unshelve_to_compute2_between_offload_saves(server)

        # With the default shelved_offload_time of 0 the shelve offloads the
        # server right away.
        self.api.post_server_action(server['id'], {'shelve': {}})
        self.notifier.wait_for_versioned_notifications(
            'instance.shelve_offload.end')

        ctxt = nova_context.get_admin_context()
        compute2_rp_uuid = self._get_provider_uuid_by_host('compute2')
        server = self.api.get_server(server['id'])
        instance = objects.Instance.get_by_uuid(ctxt, server['id'])

        # The server runs on compute2, which placement accounts for.
        self.assertEqual('ACTIVE', server['status'])
        self.assertIsNone(server['OS-EXT-STS:task_state'])
        self.assertEqual(vm_states.ACTIVE, instance.vm_state)
        self.assertEqual(
            [compute2_rp_uuid],
            list(self._get_allocations_by_server_uuid(server['id'])))

        # FIXME(@NICK@): The second save of the offload wiped what the
        # unshelve recorded: the server is recorded on no host, no node and
        # in no availability zone. Once bug @BUG@ is fixed all of these are
        # compute2's.
        self.assertIsNone(server['OS-EXT-SRV-ATTR:host'])
        self.assertIsNone(server['OS-EXT-SRV-ATTR:hypervisor_hostname'])
        self.assertEqual('', server['OS-EXT-AZ:availability_zone'])
        self.assertIsNone(instance.host)
        self.assertIsNone(instance.node)
        self.assertIsNone(instance.compute_id)
        self.assertIsNone(instance.launched_on)
        self.assertIsNone(instance.availability_zone)
