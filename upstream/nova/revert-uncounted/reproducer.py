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

from oslo_config import cfg

from nova.compute import manager as compute_manager
from nova import context as nova_context
from nova import objects
from nova.tests.functional import integrated_helpers

CONF = cfg.CONF


class TestRevertResizeSourceAudit(
    integrated_helpers.ProviderUsageBaseTestCase
):
    """Regression test for bug @BUG@

    The destination of a reverted resize marks the migration 'reverted' and
    drops its claim under its resource tracker's lock, then casts
    finish_revert_resize to the source. The source saves the instance's
    flavor, host and node back outside of its own tracker's lock and does
    not tell its tracker. If the source's update_available_resource periodic
    runs in between, it sees neither an instance on the source nor a
    migration in progress, so the source stops counting the server and does
    not count it again when the server comes back: the server runs on the
    source, holds its allocations there, and the source's tracker, which
    the claims on that host test against, counts none of it until the next
    periodic.
    """

    compute_driver = 'fake.MediumFakeDriver'

    def setUp(self):
        super().setUp()
        self._start_compute('compute1')
        self._start_compute('compute2')
        self.ctxt = nova_context.get_admin_context()
        self.old_flavor_id = self._create_flavor(
            memory_mb=1024, vcpu=1, disk=1, ephemeral=0)
        self.new_flavor_id = self._create_flavor(
            memory_mb=2048, vcpu=2, disk=1, ephemeral=0)
        self.old_flavor = self.api.get_flavor(self.old_flavor_id)

    def _assert_tracked_usage(self, host, server_id, flavor):
        """Assert what the host's resource tracker counts for a server.

        That is the given flavor, or nothing at all if flavor is None, both
        in memory and in the compute node record it saved.
        """
        rt = self.computes[host].manager.rt
        cn = rt.compute_nodes[host]
        db_cn = objects.ComputeNode.get_by_nodename(self.ctxt, host)
        memory_mb = CONF.reserved_host_memory_mb
        vcpus = CONF.reserved_host_cpus
        if flavor is None:
            self.assertNotIn(server_id, rt.tracked_instances)
        else:
            self.assertIn(server_id, rt.tracked_instances)
            memory_mb += flavor['ram']
            vcpus += flavor['vcpus']
        self.assertEqual(memory_mb, cn.memory_mb_used)
        self.assertEqual(vcpus, cn.vcpus_used)
        self.assertEqual(memory_mb, db_cn.memory_mb_used)
        self.assertEqual(vcpus, db_cn.vcpus_used)

    def _run_periodic_on(self, host):
        cell = self.host_mappings[host].cell_mapping
        with nova_context.target_cell(self.ctxt, cell) as cctxt:
            self.computes[host].manager.update_available_resource(cctxt)

    def test_revert_resize_audit_on_source_before_finish(self):
        server = self._create_server(
            flavor_id=self.old_flavor_id, host='compute1', networks='none')
        self._assert_tracked_usage('compute1', server['id'], self.old_flavor)

        self.api.post_server_action(
            server['id'], {'resize': {'flavorRef': self.new_flavor_id}})
        self.notifier.wait_for_versioned_notifications(
            'instance.resize_finish.end', timeout=60)
        server = self._wait_for_state_change(server, 'VERIFY_RESIZE')
        self.assertEqual('compute2', server['OS-EXT-SRV-ATTR:host'])

        orig_finish_revert_resize = (
            compute_manager.ComputeManager.finish_revert_resize)
        audited = []

        def audit_then_finish_revert_resize(_self, context, *args, **kwargs):
            # The destination has marked the migration reverted and dropped
            # its claim, the instance is still recorded on compute2: run the
            # periodic of the source now, before it takes the server back.
            self._run_periodic_on('compute1')
            rt = _self.rt
            audited.append((
                _self.host, server['id'] in rt.tracked_instances,
                rt.compute_nodes[_self.host].memory_mb_used))
            return orig_finish_revert_resize(_self, context, *args, **kwargs)

        self.stub_out(
            'nova.compute.manager.ComputeManager.finish_revert_resize',
            audit_then_finish_revert_resize)

        self.api.post_server_action(server['id'], {'revertResize': None})
        self.notifier.wait_for_versioned_notifications(
            'instance.resize_revert.end', timeout=60)
        server = self._wait_for_state_change(server, 'ACTIVE')
        # The periodic ran on compute1 and stopped counting the server there.
        self.assertEqual(
            [('compute1', False, CONF.reserved_host_memory_mb)], audited)

        # The server runs on compute1 with its old flavor and holds its
        # allocation there.
        self.assertEqual('ACTIVE', server['status'])
        self.assertEqual('compute1', server['OS-EXT-SRV-ATTR:host'])
        self.assertEqual(
            self.old_flavor['name'], server['flavor']['original_name'])
        compute1_rp_uuid = self._get_provider_uuid_by_host('compute1')
        compute2_rp_uuid = self._get_provider_uuid_by_host('compute2')
        self.assertFlavorMatchesAllocation(
            self.old_flavor, server['id'], compute1_rp_uuid)
        self.assertFlavorMatchesUsage(compute1_rp_uuid, self.old_flavor)
        self.assertEqual(
            {'VCPU': 0, 'MEMORY_MB': 0, 'DISK_GB': 0},
            self._get_provider_usages(compute2_rp_uuid))

        # FIXME(@NICK@): compute1's resource tracker should count the server
        # now that it is back there, but it counts none of it.
        self._assert_tracked_usage('compute1', server['id'], None)

        # Only its next periodic counts the server again.
        self._run_periodics()
        self._assert_tracked_usage('compute1', server['id'], self.old_flavor)
        self._assert_tracked_usage('compute2', server['id'], None)
