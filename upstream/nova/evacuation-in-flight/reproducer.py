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
from nova import objects
from nova.tests.functional import integrated_helpers

CONF = cfg.CONF


class TestSourceStartsDuringEvacuation(
    integrated_helpers.ProviderUsageBaseTestCase
):
    """Regression test for bug @BUG@

    When the compute service of an evacuated host starts again,
    _destroy_evacuated_instances handles every evacuation away from it that
    is 'accepted', 'pre-migrating' or 'done' alike: it destroys the guest,
    removes the host from the server's allocations and saves the migration
    'completed'. An evacuation that is 'accepted' or 'pre-migrating' is
    still in flight: the destination may be rebuilding the server. Once the
    migration is 'completed' the destination's update_available_resource
    periodic no longer counts the incoming migration, and the server, still
    recorded on the source, is counted nowhere; the destination then makes
    the server its own without counting it either.
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

    def _memory_mb_used(self, host):
        """The memory the host's resource tracker counts for servers."""
        cn = self.computes[host].manager.rt.compute_nodes[host]
        return cn.memory_mb_used - CONF.reserved_host_memory_mb

    def test_source_starts_while_destination_rebuilds(self):
        server = self._create_server(
            flavor_id=self.flavor_id, host='compute1', networks='none')
        compute1_rp_uuid = self._get_provider_uuid_by_host('compute1')
        compute2_rp_uuid = self._get_provider_uuid_by_host('compute2')

        self.computes['compute1'].stop()
        service_id = self.admin_api.get_services(
            host='compute1', binary='nova-compute')[0]['id']
        self.admin_api.put_service_force_down(service_id, True)

        compute2_driver = self.computes['compute2'].driver
        orig_spawn = compute2_driver.spawn
        seen = {}

        def start_source_then_spawn(*args, **kwargs):
            # compute2 has claimed the server and is rebuilding it: the
            # migration is 'pre-migrating' and the server still recorded on
            # compute1. compute1 comes back now, and compute2's periodic
            # runs before the rebuild goes on.
            migration = objects.Migration.get_by_instance_and_status(
                self.ctxt, server['id'], 'pre-migrating')
            self.computes['compute1'] = self.restart_compute_service(
                self.computes['compute1'])
            seen['migration_status'] = objects.Migration.get_by_id(
                self.ctxt, migration.id).status
            seen['compute1_allocated'] = (
                compute1_rp_uuid in
                self._get_allocations_by_server_uuid(server['id']))
            self._run_periodic_on('compute2')
            seen['compute2_memory_mb_used'] = self._memory_mb_used(
                'compute2')
            return orig_spawn(*args, **kwargs)

        self.useFixture(fixtures.MockPatchObject(
            compute2_driver, 'spawn', side_effect=start_source_then_spawn))

        self.admin_api.post_server_action(server['id'], {'evacuate': {}})
        self.notifier.wait_for_versioned_notifications(
            'instance.rebuild.end', timeout=60)
        self._wait_for_migration_status(server, ['done'])
        server = self._wait_for_server_parameter(
            server, {'OS-EXT-SRV-ATTR:host': 'compute2', 'status': 'SHUTOFF'})
        self.assertIn('migration_status', seen)

        # compute1's guest is gone either way.
        compute1_driver = self.computes['compute1'].driver
        self.assertNotIn(server['id'], compute1_driver.list_instance_uuids())

        # FIXME(@NICK@): compute1's start-up completed the evacuation and
        # removed compute1 from the server's allocations while compute2 was
        # still rebuilding the server.
        self.assertEqual('completed', seen['migration_status'])
        self.assertFalse(seen['compute1_allocated'])
        # compute2's periodic then saw no migration in progress, and the
        # server not yet on compute2, and stopped counting it.
        self.assertEqual(0, seen['compute2_memory_mb_used'])

        # The server runs on compute2 and holds its allocation there, but
        # compute2's resource tracker counts none of it until its next
        # periodic.
        self.assertEqual('compute2', server['OS-EXT-SRV-ATTR:host'])
        self.assertEqual(
            {compute2_rp_uuid},
            set(self._get_allocations_by_server_uuid(server['id'])))
        self.assertFlavorMatchesUsage(compute2_rp_uuid, self.flavor)
        self.assertEqual(0, self._memory_mb_used('compute2'))

        self._run_periodic_on('compute2')
        self.assertEqual(self.flavor['ram'], self._memory_mb_used('compute2'))
