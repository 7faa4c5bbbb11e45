"""The node audit, the status trait and the orphan clean-up of a host.

:mod:`shelvefix.compute.nodes` (the tracker's records and report),
:mod:`shelvefix.compute.node_manager` (the manager's audit and
``set_host_enabled``) and :mod:`shelvefix.compute.host_api`, against the
placement double, run one after the other.
"""

from unittest import mock

import os_traits
from oslo_utils import uuidutils

from shelvefix.backends import fixture as placement_fixture
from shelvefix.compute import host_api
from shelvefix.compute import manager as manager_mod
from shelvefix.compute import nodes
from shelvefix.compute import rpcapi
from shelvefix import exception
from shelvefix.objects import compute_node as node_obj
from shelvefix.objects import instance as instance_obj
from shelvefix import rpc
from shelvefix.scheduler.client import report
from shelvefix.tests import base
from shelvefix import utils

TRAIT = os_traits.COMPUTE_STATUS_DISABLED
TOTALS = {'VCPU': 4, 'MEMORY_MB': 2048, 'DISK_GB': 20}
HOSTS = ('compute-1', 'compute-2')


class NodesTestCase(base.TestCase):
    """Two hosts sharing an ironic-like node, each its own report client."""

    def setUp(self):
        super(NodesTestCase, self).setUp()
        self.placement = self.useFixture(placement_fixture.PlacementFixture())
        self.node_uuid = uuidutils.generate_uuid()
        self.services = node_obj.ServiceStore()
        self.node_store = node_obj.ComputeNodeStore()
        self.transport = rpc.Transport()
        self.computes, self.drivers = {}, {}
        for number, host in enumerate(HOSTS, 1):
            driver = nodes.NodeDriver({'node-1': self.node_uuid}, TOTALS)
            driver.available = ['node-1'] if host == 'compute-1' else []
            client = report.SchedulerReportClient(
                adapter=self.placement.adapter)
            locks = utils.Locks()
            rt = nodes.NodeResourceTracker(
                host, driver, reportclient=client,
                store=instance_obj.InstanceStore(), locks=locks,
                node_store=self.node_store, service_store=self.services)
            rt.set_service_ref(node_obj.Service.create(
                self.services, uuidutils.generate_uuid(), host, number))
            self.computes[host] = manager_mod.ComputeManager(
                host=host, driver=driver, reportclient=client, rt=rt,
                locks=locks)
            self.transport.serve_calls(rpcapi.TOPIC, host,
                                       self.computes[host])
            self.drivers[host] = driver
        self.api = host_api.HostAPI(rpcapi.ComputeAPI(self.transport),
                                    self.services)
        self.audit('compute-1')

    def audit(self, host):
        self.computes[host].update_available_resource(self.context)

    def record(self):
        return node_obj.ComputeNode.get_by_uuid(self.node_store,
                                                self.node_uuid,
                                                read_deleted='yes')

    def traits(self):
        return self.placement.client.get_provider_traits(
            self.context, self.node_uuid).traits

    def inventory(self):
        found = self.placement.admin_adapter.get(
            '/resource_providers/%s/inventories' % self.node_uuid)
        if found.status_code == 404:
            return None
        return {rc: inv['total']
                for rc, inv in found.json()['inventories'].items()}

    def move_node(self):
        self.drivers['compute-1'].available = []
        self.drivers['compute-2'].available = ['node-1']


class AuditTestCase(NodesTestCase):

    def test_the_first_audit_makes_the_record_and_the_provider(self):
        record = self.record()
        self.assertEqual(('compute-1', False, 'node-1'),
                         (record.host, record.deleted,
                          record.hypervisor_hostname))
        self.assertEqual(TOTALS, self.inventory())
        self.assertEqual(set(), self.traits())

    def test_the_audit_syncs_the_trait_with_the_service(self):
        service = node_obj.Service.get_by_compute_host(self.services,
                                                       'compute-1')
        service.disabled = True
        service.save()
        self.audit('compute-1')
        self.assertEqual({TRAIT}, self.traits())
        service.disabled = False
        service.save()
        self.audit('compute-1')
        self.assertEqual(set(), self.traits())

    def test_a_report_error_is_logged_for_the_next_audit(self):
        service = node_obj.Service.get_by_compute_host(self.services,
                                                       'compute-1')
        service.disabled = True
        service.save()
        client = self.computes['compute-1'].reportclient
        refused = exception.ResourceProviderUpdateConflict(url='u',
                                                           error='409')
        with mock.patch.object(client, 'set_traits_for_provider',
                               side_effect=refused):
            self.audit('compute-1')
        # The cache is emptied; the next audit reads it again and heals.
        self.assertFalse(client._provider_tree.exists(self.node_uuid))
        self.assertEqual(set(), self.traits())
        self.audit('compute-1')
        self.assertEqual({TRAIT}, self.traits())


class HostStatusTestCase(NodesTestCase):

    def test_disabling_adds_the_trait_with_a_fresh_generation(self):
        # Something bumps the provider's generation behind compute-1's
        # cache (a server's claim): bug 1886418's stale generation.
        self.placement.set_traits(self.node_uuid, ['CUSTOM_MINE'])
        self.api.update_service_status(self.context, 'compute-1', True,
                                       'maintenance')
        self.assertTrue(node_obj.Service.get_by_compute_host(
            self.services, 'compute-1').disabled)
        self.assertEqual({TRAIT, 'CUSTOM_MINE'}, self.traits())

    def test_enabling_removes_it(self):
        self.api.update_service_status(self.context, 'compute-1', True)
        self.api.update_service_status(self.context, 'compute-1', False)
        self.assertEqual(set(), self.traits())
        self.audit('compute-1')
        self.assertEqual(set(), self.traits())

    def test_no_call_if_disabled_did_not_change(self):
        calls = len(self.placement.calls)
        service = self.api.service_get_by_compute_host(self.context,
                                                       'compute-1')
        service.disabled_reason = 'why not'
        self.api.service_update(self.context, service)
        self.assertEqual(calls, len(self.placement.calls))
        # Enabled again while enabled: the traits read, nothing written.
        self.api.update_service_status(self.context, 'compute-1', False)
        self.assertEqual(['GET'], [call[0] for call in
                                   self.placement.calls[calls:]])

    def test_set_host_enabled_without_a_node(self):
        # compute-2 has audited nothing: no node, the trait left to it.
        self.assertEqual('disabled', self.computes['compute-2'].
                         set_host_enabled(self.context, False))


class RebalanceTestCase(NodesTestCase):

    def test_the_node_moves(self):
        self.move_node()
        self.audit('compute-2')
        self.audit('compute-1')
        record = self.record()
        self.assertEqual(('compute-2', False), (record.host, record.deleted))
        self.assertEqual(TOTALS, self.inventory())
        self.assertIn('node-1', self.computes['compute-2'].rt.compute_nodes)
        self.assertNotIn('node-1',
                         self.computes['compute-1'].rt.compute_nodes)

    def test_an_orphan_is_deleted_record_and_provider(self):
        self.move_node()
        self.audit('compute-1')
        self.assertTrue(self.record().deleted)
        self.assertIsNone(self.inventory())
        # compute-2 takes the deleted record over and makes the provider.
        self.audit('compute-2')
        record = self.record()
        self.assertEqual(('compute-2', False), (record.host, record.deleted))
        self.assertEqual(TOTALS, self.inventory())

    def test_no_delete_of_an_orphan_taken_over_meanwhile(self):
        self.move_node()
        compute = self.computes['compute-1']
        listed = compute._get_compute_nodes_in_db(self.context, set())
        self.audit('compute-2')
        # compute-1 goes on with the list it read before the take-over.
        compute._delete_orphan(self.context, listed[0], set())
        record = self.record()
        self.assertEqual(('compute-2', False), (record.host, record.deleted))
        self.assertEqual(TOTALS, self.inventory())
        self.assertNotIn('node-1', compute.rt.compute_nodes)

    def test_a_driver_that_says_not_deleted_keeps_the_orphan(self):
        self.move_node()
        self.drivers['compute-1'].is_node_deleted = lambda name: False
        self.audit('compute-1')
        self.assertEqual(('compute-1', False),
                         (self.record().host, self.record().deleted))
        self.assertEqual(TOTALS, self.inventory())

    def test_a_provider_delete_placement_refuses_is_logged(self):
        self.move_node()
        client = self.computes['compute-1'].reportclient
        refused = exception.ResourceProviderUpdateFailed(url='u', error='409')
        with mock.patch.object(client, 'delete_resource_provider',
                               side_effect=refused) as delete:
            self.audit('compute-1')
        delete.assert_called_once_with(self.context, mock.ANY, cascade=True)
        self.assertTrue(self.record().deleted)
        self.assertEqual(TOTALS, self.inventory())
