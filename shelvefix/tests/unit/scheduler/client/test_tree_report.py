"""The report client's provider tree calls, against the placement double."""

import os_traits
from oslo_utils import uuidutils

from shelvefix.backends import fixture as placement_fixture
from shelvefix.compute import nodes
from shelvefix import exception
from shelvefix.scheduler.client import report
from shelvefix.tests import base

TRAIT = os_traits.COMPUTE_STATUS_DISABLED
TOTALS = {'VCPU': 4, 'MEMORY_MB': 2048}


class ProviderTreeCallsTestCase(base.TestCase):

    def setUp(self):
        super(ProviderTreeCallsTestCase, self).setUp()
        self.placement = self.useFixture(placement_fixture.PlacementFixture())
        self.client = report.SchedulerReportClient(
            adapter=self.placement.adapter)
        self.uuid = uuidutils.generate_uuid()

    def report(self, traits=()):
        tree = self.client.get_provider_tree_and_ensure_root(
            self.context, self.uuid, name='node-1')
        tree.update_inventory('node-1', nodes.full_inventory(TOTALS))
        tree.update_traits('node-1', traits)
        self.client.update_from_provider_tree(self.context, tree)

    def placement_traits(self):
        return self.client.get_provider_traits(self.context,
                                               self.uuid).traits

    def test_the_root_is_made_then_reported(self):
        self.report(traits=[TRAIT])
        provider = self.client.get_resource_provider(self.context, self.uuid)
        self.assertEqual('node-1', provider['name'])
        self.assertEqual({TRAIT}, self.placement_traits())
        calls = len(self.placement.calls)
        self.report(traits=[TRAIT])
        # Nothing changed: the provider read again, nothing written.
        self.assertEqual(['GET', 'GET'],
                         [call[0] for call in self.placement.calls[calls:]])

    def test_a_report_after_another_writer_uses_the_new_generation(self):
        self.report()
        # A claim, or the API's trait update, bumps the generation.
        self.placement.set_traits(self.uuid, [TRAIT])
        self.report(traits=[])
        self.assertEqual(set(), self.placement_traits())

    def test_a_provider_deleted_behind_the_cache_is_made_again(self):
        self.report()
        self.placement.delete_provider(self.uuid)
        self.report()
        inventory = self.placement.admin_adapter.get(
            '/resource_providers/%s/inventories' % self.uuid).json()
        self.assertEqual(TOTALS, {rc: inv['total'] for rc, inv in
                                  inventory['inventories'].items()})

    def test_a_stale_generation_is_a_conflict_and_empties_the_cache(self):
        self.report()
        stale = self.client.get_provider_traits(self.context, self.uuid)
        self.placement.set_traits(self.uuid, [TRAIT])
        self.assertRaises(exception.ResourceProviderUpdateConflict,
                          self.client.set_traits_for_provider, self.context,
                          self.uuid, set(), generation=stale.generation)
        self.assertFalse(self.client._provider_tree.exists(self.uuid))
        self.assertEqual({TRAIT}, self.placement_traits())

    def test_delete_forgets_the_provider(self):
        self.report()
        self.assertTrue(self.client.delete_resource_provider(
            self.context, self.uuid, cascade=True))
        self.assertFalse(self.client._provider_tree.exists(self.uuid))
        self.assertFalse(self.client.delete_resource_provider(self.context,
                                                              self.uuid))
