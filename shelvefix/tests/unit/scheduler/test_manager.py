"""Tests for the scheduler: candidates from placement, then the claim.

Run against the placement double, which answers GET
/allocation_candidates as placement does.
"""

from unittest import mock

import os_traits
from oslo_utils import uuidutils

from shelvefix.backends import fixture as placement_fixture
from shelvefix import exception
from shelvefix.objects import instance as instance_obj
from shelvefix.scheduler import host_manager
from shelvefix.scheduler import manager
from shelvefix.scheduler import request_spec
from shelvefix.scheduler import utils
from shelvefix.tests import base

INVENTORY = {'VCPU': 4, 'MEMORY_MB': 4096, 'DISK_GB': 50}
FLAVOR = instance_obj.Flavor(vcpus=1, memory_mb=512, root_gb=10)


class SchedulerTestCase(base.TestCase):

    def setUp(self):
        super(SchedulerTestCase, self).setUp()
        self.placement = self.useFixture(placement_fixture.PlacementFixture())
        self.client = self.placement.client
        self.rps = {name: self.placement.create_provider(
            name, inventory=INVENTORY) for name in ('h1', 'h2', 'h3')}
        self.hosts = host_manager.HostManager(
            [host_manager.ComputeNode(rp, name, name + '-node')
             for name, rp in self.rps.items() if name != 'h3'])
        self.scheduler = manager.SchedulerManager(self.client, self.hosts)
        self.uuid = uuidutils.generate_uuid()
        self.spec = request_spec.RequestSpec(self.uuid, 'p', 'u', FLAVOR)

    def select(self, **kwargs):
        return self.scheduler.select_destinations(
            self.context, self.spec, None, spec_obj=self.spec,
            instance_uuids=[self.uuid], **kwargs)

    def held(self, uuid=None):
        allocations = self.client.get_allocs_for_consumer(
            self.context, uuid or self.uuid)['allocations']
        return {rp: alloc['resources'] for rp, alloc in allocations.items()}

    def test_query_string(self):
        spec = request_spec.RequestSpec(self.uuid, 'p', 'u', FLAVOR)
        spec.root_forbidden.add('COMPUTE_STATUS_DISABLED')
        request = utils.resources_from_request_spec(self.context, spec)
        self.assertEqual(
            'limit=1000&resources=DISK_GB%3A10%2CMEMORY_MB%3A512%2CVCPU%3A1'
            '&root_required=%21COMPUTE_STATUS_DISABLED',
            request.to_querystring())
        self.assertEqual('RequestGroup(use_same_provider=False, '
                         'resources={DISK_GB:10, MEMORY_MB:512, VCPU:1})',
                         str(request))

    def test_most_free_host_is_chosen_and_claimed(self):
        # h1 is the fuller one; h3 is no compute node of ours.
        other = uuidutils.generate_uuid()
        self.client.claim_resources(
            self.context, other,
            {'allocations': {self.rps['h1']: {
                'resources': {'VCPU': 1, 'MEMORY_MB': 1024}}}},
            'p', 'u', '1.36')
        [[selection]] = self.select(return_objects=True)
        self.assertEqual(('h2', 'h2-node', self.rps['h2']),
                         (selection.service_host, selection.nodename,
                          selection.compute_node_uuid))
        self.assertEqual('1.36', selection.allocation_request_version)
        self.assertEqual({self.rps['h2']: FLAVOR.resources}, self.held())
        self.assertEqual(
            '/allocation_candidates?limit=1000&resources=DISK_GB%3A10%2C'
            'MEMORY_MB%3A512%2CVCPU%3A1&root_required=%21'
            'COMPUTE_STATUS_DISABLED',
            [call.path for call in self.placement.calls_for('GET')
             if call.path.startswith('/allocation_candidates')][0])

    def test_disabled_host_is_left_out(self):
        self.placement.set_traits(self.rps['h2'],
                                  [os_traits.COMPUTE_STATUS_DISABLED])
        self.assertEqual([{'host': 'h1', 'nodename': 'h1-node',
                           'limits': {}}], self.select())
        self.assertEqual({self.rps['h1']: FLAVOR.resources}, self.held())

    def test_ignored_hosts_are_left_out(self):
        # h2 has the most free: ignored, the request goes to h1.
        self.spec.ignore_hosts = ['h2']
        self.assertEqual([{'host': 'h1', 'nodename': 'h1-node',
                           'limits': {}}], self.select())
        self.assertEqual({self.rps['h1']: FLAVOR.resources}, self.held())

    def test_every_host_ignored_is_no_valid_host(self):
        self.spec.ignore_hosts = ['h1', 'h2']
        self.assertRaises(exception.NoValidHost, self.select)
        self.assertEqual({}, self.held())

    def test_no_candidates(self):
        spec = request_spec.RequestSpec(
            self.uuid, 'p', 'u', instance_obj.Flavor(vcpus=64))
        self.assertRaises(exception.NoValidHost,
                          self.scheduler.select_destinations, self.context,
                          spec, instance_uuids=[self.uuid])
        self.assertEqual({}, self.held())

    def test_placement_refusing_the_query_is_no_valid_host(self):
        self.placement.inject_fault('GET', '/allocation_candidates',
                                    status=503)
        error = self.assertRaises(exception.NoValidHost, self.select)
        self.assertIn('Failed to retrieve allocation candidates', str(error))

    def test_failed_claim_tries_the_next_host(self):
        real = utils.claim_resources
        tried = []

        def claim(ctx, client, spec, uuid, alloc_req, **kwargs):
            rp = list(alloc_req['allocations'])[0]
            tried.append(rp)
            if len(tried) == 1:
                raise exception.AllocationUpdateFailed(consumer_uuid=uuid,
                                                       error='full')
            return real(ctx, client, spec, uuid, alloc_req, **kwargs)
        with mock.patch.object(utils, 'claim_resources', claim):
            [[selection]] = self.select(return_objects=True)
        self.assertEqual(2, len(set(tried)))
        self.assertEqual(tried[1], selection.compute_node_uuid)
        self.assertEqual({tried[1]: FLAVOR.resources}, self.held())

    def test_no_host_claimed(self):
        with mock.patch.object(
                utils, 'claim_resources',
                side_effect=exception.AllocationUpdateFailed(
                    consumer_uuid=self.uuid, error='full')):
            error = self.assertRaises(exception.NoValidHost, self.select)
        self.assertIn('Unable to successfully claim against any host',
                      str(error))

    def test_consumer_generation_conflict_is_raised(self):
        conflict = exception.AllocationUpdateConflict(
            consumer_uuid=self.uuid, error='expected null but got 1')
        with mock.patch.object(utils, 'claim_resources',
                               side_effect=conflict) as claim:
            self.assertRaises(exception.AllocationUpdateConflict,
                              self.select)
        # Not tried on the next host: someone else owns the consumer.
        self.assertEqual(1, claim.call_count)

    def test_without_instance_uuids_nothing_is_claimed(self):
        [[selection]] = self.scheduler.select_destinations(
            self.context, spec_obj=self.spec, return_objects=True)
        self.assertEqual('h1', selection.service_host)
        self.assertEqual({}, self.held())
