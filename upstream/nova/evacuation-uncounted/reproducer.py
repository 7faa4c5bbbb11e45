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
from oslo_config import cfg

from nova import context as nova_context
from nova.tests.functional import integrated_helpers
from nova import utils

CONF = cfg.CONF


class TestEvacuateDestinationAudit(
    integrated_helpers.ProviderUsageBaseTestCase
):
    """Regression test for bug @BUG@

    The destination of an evacuation saves the end of the rebuild (no task
    state any more) while the instance is still recorded on the evacuated
    host, and only then does ResourceTracker.finish_evacuation record the
    instance on the destination and mark the migration 'done'. An
    update_available_resource periodic of the destination in between skips
    the migration, as the instance is no longer rebuilding, and does not
    find the instance on its host, so it stops counting the server;
    finish_evacuation does not count it either. The server runs on the
    destination, holds its allocation there, and the destination's tracker
    counts none of it until its next periodic.
    """

    compute_driver = 'fake.MediumFakeDriver'

    def setUp(self):
        super().setUp()
        self._start_compute('compute1')
        self._start_compute('compute2')
        self.ctxt = nova_context.get_admin_context()
        self.flavor_id = self._create_flavor(
            memory_mb=1024, vcpu=1, disk=1, ephemeral=0)
        self.flavor = self.api.get_flavor(self.flavor_id)

    def _run_periodic_on(self, host):
        cell = self.host_mappings[host].cell_mapping
        with nova_context.target_cell(self.ctxt, cell) as cctxt:
            self.computes[host].manager.update_available_resource(cctxt)

    def _assert_tracked_usage(self, host, server_id, flavor):
        """Assert what the host's resource tracker counts for a server.

        That is the given flavor, or nothing at all if flavor is None.
        """
        rt = self.computes[host].manager.rt
        cn = rt.compute_nodes[host]
        memory_mb = CONF.reserved_host_memory_mb
        vcpus = CONF.reserved_host_cpus
        if flavor is not None:
            memory_mb += flavor['ram']
            vcpus += flavor['vcpus']
        self.assertEqual(memory_mb, cn.memory_mb_used)
        self.assertEqual(vcpus, cn.vcpus_used)

    def test_evacuate_audit_on_destination_before_finish(self):
        server = self._create_server(
            flavor_id=self.flavor_id, host='compute1', networks='none')
        compute2_rp_uuid = self._get_provider_uuid_by_host('compute2')

        self.computes['compute1'].stop()
        service_id = self.admin_api.get_services(
            host='compute1', binary='nova-compute')[0]['id']
        self.admin_api.put_service_force_down(service_id, True)

        compute2_rt = self.computes['compute2'].manager.rt
        orig_finish_evacuation = compute2_rt.finish_evacuation
        seen = {}

        def audit_then_finish_evacuation(instance, node, migration):
            # The rebuild on compute2 is over and saved, the server is
            # still recorded on compute1: run compute2's periodic now.
            seen['task_state'] = instance.task_state
            seen['host'] = instance.host
            self._run_periodic_on('compute2')
            seen['tracked'] = (
                instance.uuid in compute2_rt.tracked_instances or
                instance.uuid in compute2_rt.tracked_migrations)
            return orig_finish_evacuation(instance, node, migration)

        self.useFixture(fixtures.MockPatchObject(
            compute2_rt, 'finish_evacuation',
            side_effect=audit_then_finish_evacuation))

        # Before 2.95 the evacuated server keeps its ACTIVE state.
        with utils.temporary_mutation(self.api, microversion='2.94'):
            self.api.post_server_action(server['id'], {'evacuate': {}})
        self.notifier.wait_for_versioned_notifications(
            'instance.rebuild.end', timeout=60)
        self._wait_for_migration_status(server, ['done'])
        server = self._wait_for_server_parameter(
            server, {'OS-EXT-SRV-ATTR:host': 'compute2', 'status': 'ACTIVE'})

        self.assertEqual(
            {'task_state': None, 'host': 'compute1', 'tracked': False}, seen)

        # The server runs on compute2 and holds its allocation there.
        self.assertEqual('compute2', server['OS-EXT-SRV-ATTR:host'])
        self.assertFlavorMatchesUsage(compute2_rp_uuid, self.flavor)

        # FIXME(@NICK@): compute2's resource tracker should count the server
        # now that it is recorded there, but it counts none of it.
        self._assert_tracked_usage('compute2', server['id'], None)

        # Only its next periodic counts the server.
        self._run_periodic_on('compute2')
        self._assert_tracked_usage('compute2', server['id'], self.flavor)
