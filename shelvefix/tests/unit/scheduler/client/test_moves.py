"""Tests for the move-operation calls of SchedulerReportClient.

``move_allocations`` and ``remove_provider_tree_from_instance_allocation``
run against the placement double; races are made by a second client
writing between this client's read and its write, faults are injected at
the transport.
"""

from unittest import mock

import fixtures
from oslo_utils import uuidutils

from shelvefix.backends import fixture as placement_fixture
from shelvefix import exception
from shelvefix.scheduler.client import report
from shelvefix.tests import base

RESOURCES = {'VCPU': 1, 'MEMORY_MB': 512}
DISK = {'DISK_GB': 5}
INVENTORY = {'VCPU': 4, 'MEMORY_MB': 2048, 'DISK_GB': 20}
PROVIDER_CONFLICT = ('{"errors": [{"status": 409, "title": "Conflict", '
                     '"detail": "There was a conflict when trying to '
                     'complete your request.\\n\\n resource provider '
                     'generation conflict  ", "code": '
                     '"placement.concurrent_update", "request_id": "r"}]}')


class MovesTestCase(base.TestCase):

    def setUp(self):
        super(MovesTestCase, self).setUp()
        self.placement = self.useFixture(placement_fixture.PlacementFixture())
        self.sleep = mock.Mock()
        self.client = report.SchedulerReportClient(
            adapter=self.placement.adapter, sleep=self.sleep,
            jitter=lambda low, high: high)
        # Another actor, writing behind this client's back.
        self.other = report.SchedulerReportClient(
            adapter=self.placement.adapter)
        self.rp1 = self.placement.create_provider('host1',
                                                  inventory=INVENTORY)
        self.rp2 = self.placement.create_provider('host2',
                                                  inventory=INVENTORY)

    def write(self, consumer, allocations, generation=None,
              project='proj', user='user'):
        """Give ``consumer`` exactly ``{rp: resources}`` (another actor)."""
        self.other.put_allocations(self.context, consumer, {
            'allocations': {rp: {'resources': dict(res)}
                            for rp, res in allocations.items()},
            'consumer_generation': generation,
            'project_id': project, 'user_id': user})

    def held(self, consumer):
        """``{rp: resources}`` placement holds for ``consumer``."""
        body = self.other.get_allocs_for_consumer(self.context, consumer)
        return {rp: a['resources'] for rp, a in body['allocations'].items()}

    def methods(self):
        return [c.method for c in self.placement.calls]

    def race_after_read(self, nth, race):
        """Run ``race()`` right after this client's ``nth`` consumer read."""
        real_get = self.client.get_allocs_for_consumer
        reads = []

        def get_then_race(context, consumer):
            body = real_get(context, consumer)
            reads.append(consumer)
            if len(reads) == nth:
                race()
            return body
        self.useFixture(fixtures.MockPatchObject(
            self.client, 'get_allocs_for_consumer',
            side_effect=get_then_race))


class MoveAllocationsTestCase(MovesTestCase):

    def setUp(self):
        super(MoveAllocationsTestCase, self).setUp()
        self.instance = uuidutils.generate_uuid()
        self.migration = uuidutils.generate_uuid()
        self.write(self.instance, {self.rp1: RESOURCES})
        self.rp1_generation = self.other.get_resource_provider(
            self.context, self.rp1)['generation']
        self.placement.reset_calls()

    def move(self, source=None, target=None):
        return self.client.move_allocations(
            self.context, source or self.instance, target or self.migration)

    def test_move_to_empty_target(self):
        self.assertTrue(self.move())
        get_source, get_target, post = self.placement.calls
        self.assertEqual(
            [('GET', '/allocations/%s' % self.instance, '1.28'),
             ('GET', '/allocations/%s' % self.migration, '1.28'),
             ('POST', '/allocations', '1.28')],
            [(c.method, c.path, c.microversion)
             for c in (get_source, get_target, post)])
        self.assertEqual(204, post.status)
        self.assertEqual(self.context.global_id, post.request_id)
        self.assertEqual({
            self.instance: {'allocations': {}, 'consumer_generation': 1,
                            'project_id': 'proj', 'user_id': 'user'},
            self.migration: {
                'allocations': {self.rp1: {
                    'resources': RESOURCES,
                    'generation': self.rp1_generation}},
                'consumer_generation': None,
                'project_id': 'proj', 'user_id': 'user'}}, post.body)
        self.assertEqual({}, self.held(self.instance))
        self.assertEqual({self.rp1: RESOURCES}, self.held(self.migration))
        body = self.other.get_allocs_for_consumer(self.context,
                                                  self.migration)
        self.assertEqual(('proj', 'user'),
                         (body['project_id'], body['user_id']))
        self.sleep.assert_not_called()

    def test_move_replaces_what_the_target_holds(self):
        self.write(self.migration, {self.rp2: DISK}, project='p2',
                   user='u2')
        self.placement.reset_calls()
        self.assertTrue(self.move())
        post = self.placement.calls[-1]
        self.assertEqual(1, post.body[self.migration]['consumer_generation'])
        self.assertEqual({}, self.held(self.instance))
        self.assertEqual({self.rp1: RESOURCES}, self.held(self.migration))
        self.assertEqual(0, self.other.get_provider_usages(
            self.context, self.rp2)['DISK_GB'])

    def test_already_moved(self):
        self.assertTrue(self.move())
        self.placement.reset_calls()
        self.assertTrue(self.move())
        self.assertEqual(['GET', 'GET'], self.methods())
        self.assertIn('taking them to be moved already', self.log.output)
        self.assertEqual({self.rp1: RESOURCES}, self.held(self.migration))

    def test_nothing_to_move(self):
        empty = uuidutils.generate_uuid()
        self.assertFalse(self.move(source=empty))
        self.assertEqual(['GET', 'GET'], self.methods())
        self.assertIn('WARNING shelvefix.scheduler.client.moves Consumer %s '
                      'holds no allocations to move' % empty,
                      self.log.output)

    def test_source_changed_raises(self):
        # Another actor changes the source after both reads.
        self.race_after_read(2, lambda: self.write(
            self.instance, {self.rp2: RESOURCES}, generation=1))
        e = self.assertRaises(exception.AllocationMoveFailed, self.move)
        self.assertIsInstance(e, exception.ConsumerGenerationConflict)
        self.assertEqual(
            'Failed to move allocations from consumer %s to consumer %s. '
            'Error: There was a conflict when trying to complete your '
            'request. consumer generation conflict - expected 2 but got 1'
            % (self.instance, self.migration), str(e))
        self.assertEqual(409, e.kwargs['placement_error'].status)
        # Both reads, the other actor's PUT, the move; not retried: the
        # other actor's write stands, nothing moved.
        self.assertEqual(['GET', 'GET', 'PUT', 'POST'], self.methods())
        self.sleep.assert_not_called()
        self.assertEqual({self.rp2: RESOURCES}, self.held(self.instance))
        self.assertEqual({}, self.held(self.migration))

    def test_target_claimed_meanwhile_raises(self):
        self.race_after_read(2, lambda: self.write(self.migration,
                                                   {self.rp2: DISK}))
        e = self.assertRaises(exception.AllocationMoveFailed, self.move)
        self.assertIsInstance(e, exception.ConsumerGenerationConflict)
        self.assertIn('consumer generation conflict', str(e))
        self.assertEqual({self.rp1: RESOURCES}, self.held(self.instance))
        self.assertEqual({self.rp2: DISK}, self.held(self.migration))

    def test_provider_generation_conflict_is_retried(self):
        fault = self.placement.inject_fault(method='POST', status=409,
                                            body=PROVIDER_CONFLICT)
        self.assertTrue(self.move())
        self.assertEqual(1, fault.fired)
        # Each attempt reads both consumers again.
        self.assertEqual(['GET', 'GET', 'POST'] * 2, self.methods())
        self.assertEqual([409, 204], [c.status for c in
                                      self.placement.calls_for('POST')])
        self.sleep.assert_called_once_with(2.0)
        self.assertEqual({self.rp1: RESOURCES}, self.held(self.migration))

    def test_provider_generation_conflict_out_of_retries(self):
        self.flags(group='placement', claim_retry_attempts=2)
        self.placement.inject_fault(method='POST', status=409,
                                    body=PROVIDER_CONFLICT, times=5)
        self.assertFalse(self.move())
        self.assertEqual(2, len(self.placement.calls_for('POST')))
        self.assertEqual(1, len(self.error_logs()))
        self.assertIn('out of retries', self.error_logs()[0])
        self.assertEqual({self.rp1: RESOURCES}, self.held(self.instance))

    def test_other_failure_returns_false(self):
        self.placement.inject_fault(method='POST', status=400)
        self.assertFalse(self.move())
        self.assertEqual(['GET', 'GET', 'POST'], self.methods())
        self.assertIn('WARNING shelvefix.scheduler.client.moves Unable to '
                      'move allocations from consumer %s to consumer %s: '
                      'HTTP 400' % (self.instance, self.migration),
                      self.log.output)
        self.sleep.assert_not_called()

    def test_lost_reply_that_landed(self):
        for fault in ({'exception': 'timeout'}, {'status': 503},
                      {'status': 502, 'body': '<html>Bad Gateway</html>'}):
            self.placement.reset_calls()
            self.placement.inject_fault(method='POST', when='after', **fault)
            self.assertTrue(self.move())
            self.placement.clear_faults()
            # The move, then both consumers read back.
            self.assertEqual(['GET', 'GET', 'POST', 'GET', 'GET'],
                             self.methods())
            self.assertEqual({}, self.held(self.instance))
            self.assertEqual({self.rp1: RESOURCES},
                             self.held(self.migration))
            # Back where it started, for the next case.
            self.assertTrue(self.move(self.migration, self.instance))
        self.assertIn('was lost but the move took effect', self.log.output)

    def test_lost_request_returns_false(self):
        for fault in ({'exception': 'connect'}, {'status': 500}):
            self.placement.inject_fault(method='POST', **fault)
            self.assertFalse(self.move())
            self.placement.clear_faults()
            self.assertEqual({self.rp1: RESOURCES}, self.held(self.instance))
            self.assertEqual({}, self.held(self.migration))
        self.assertNotIn('the move took effect', self.log.output)

    def test_lost_request_with_target_alike_returns_false(self):
        # The target already holds what the source holds; the source still
        # holding it shows the move never happened.
        self.write(self.migration, {self.rp1: RESOURCES})
        self.placement.inject_fault(method='POST', exception='timeout')
        self.assertFalse(self.move())
        self.assertEqual({self.rp1: RESOURCES}, self.held(self.instance))
        self.assertNotIn('the move took effect', self.log.output)

    def test_unverifiable_lost_reply_returns_false(self):
        self.placement.inject_fault(method='POST', when='after',
                                    exception='timeout')
        self.placement.inject_fault(method='GET', nth=3, status=500)
        self.assertFalse(self.move())
        self.assertIn('Could not verify whether allocations moved',
                      self.log.output)

    def test_read_failure_raises(self):
        self.placement.inject_fault(method='GET', status=500)
        self.assertRaises(exception.ConsumerAllocationRetrievalFailed,
                          self.move)
        self.assertEqual(['GET'], self.methods())

    def test_invalid_uuid(self):
        self.assertRaises(exception.InvalidUUID,
                          self.client.move_allocations, self.context,
                          self.instance, 'nope')
        self.assertEqual([], self.methods())


class RemoveProviderTreeTestCase(MovesTestCase):

    def setUp(self):
        super(RemoveProviderTreeTestCase, self).setUp()
        self.child = uuidutils.generate_uuid()
        resp = self.placement.admin_adapter.post(
            '/resource_providers', microversion='1.20',
            json={'name': 'host1-child', 'uuid': self.child,
                  'parent_provider_uuid': self.rp1})
        self.assertEqual(200, resp.status_code, resp.text)
        self.placement.set_inventory(self.child, {'DISK_GB': 20})
        self.consumer = uuidutils.generate_uuid()
        self.placement.reset_calls()

    def remove(self, root=None):
        return self.client.remove_provider_tree_from_instance_allocation(
            self.context, self.consumer, root or self.rp1)

    def test_keeps_other_providers(self):
        self.write(self.consumer, {self.rp1: RESOURCES, self.child: DISK,
                                   self.rp2: DISK})
        self.placement.reset_calls()
        self.assertTrue(self.remove())
        get, tree, put = self.placement.calls
        self.assertEqual(
            [('GET', '/allocations/%s' % self.consumer, '1.28', 200),
             ('GET', '/resource_providers?in_tree=%s' % self.rp1, '1.14',
              200),
             ('PUT', '/allocations/%s' % self.consumer, '1.28', 204)],
            [(c.method, c.path, c.microversion, c.status)
             for c in (get, tree, put)])
        self.assertEqual({'allocations', 'consumer_generation',
                          'project_id', 'user_id'}, set(put.body))
        self.assertEqual(1, put.body['consumer_generation'])
        self.assertEqual(('proj', 'user'),
                         (put.body['project_id'], put.body['user_id']))
        self.assertEqual({self.rp2: DISK},
                         {rp: a['resources']
                          for rp, a in put.body['allocations'].items()})
        self.assertEqual({self.rp2: DISK}, self.held(self.consumer))

    def test_removes_the_last_provider(self):
        self.write(self.consumer, {self.rp1: RESOURCES, self.child: DISK})
        self.placement.reset_calls()
        self.assertTrue(self.remove())
        put = self.placement.calls[-1]
        self.assertEqual(('PUT', 204), (put.method, put.status))
        self.assertEqual({'allocations': {}, 'consumer_generation': 1,
                          'project_id': 'proj', 'user_id': 'user'}, put.body)
        self.assertEqual({'allocations': {}},
                         self.other.get_allocs_for_consumer(self.context,
                                                            self.consumer))

    def test_child_root_removes_only_the_child(self):
        # in_tree names the whole tree whichever provider of it is given.
        self.write(self.consumer, {self.rp1: RESOURCES, self.rp2: DISK})
        self.assertTrue(self.remove(root=self.child))
        self.assertEqual({self.rp2: DISK}, self.held(self.consumer))

    def test_nothing_on_the_tree(self):
        self.write(self.consumer, {self.rp2: DISK})
        self.placement.reset_calls()
        self.assertTrue(self.remove())
        self.assertEqual(['GET', 'GET'], self.methods())
        self.assertIn('holds no allocations on the provider tree',
                      self.log.output)
        self.assertEqual({self.rp2: DISK}, self.held(self.consumer))

    def test_no_allocations(self):
        self.assertFalse(self.remove())
        self.assertEqual(['GET'], self.methods())
        self.assertEqual(1, len(self.error_logs()))
        self.assertIn('Consumer %s holds no allocations' % self.consumer,
                      self.error_logs()[0])

    def test_consumer_generation_conflict_is_retried(self):
        self.write(self.consumer, {self.rp1: RESOURCES, self.rp2: DISK})
        # After the first read, another actor adds an allocation on rp2.
        self.race_after_read(1, lambda: self.write(
            self.consumer, {self.rp1: RESOURCES, self.rp2: {'DISK_GB': 7}},
            generation=1))
        self.placement.reset_calls()
        self.assertTrue(self.remove())
        # Read, the other actor's PUT, tree, our PUT (refused); then again.
        self.assertEqual(['GET', 'PUT', 'GET', 'PUT', 'GET', 'GET', 'PUT'],
                         self.methods())
        first, second = self.placement.calls_for(
            'PUT', '/allocations/%s' % self.consumer)[-2:]
        self.assertEqual((409, 1), (first.status,
                                    first.body['consumer_generation']))
        self.assertEqual((204, 2), (second.status,
                                    second.body['consumer_generation']))
        self.sleep.assert_called_once_with(2.0)
        # The other actor's write is kept, not overwritten by a stale one.
        self.assertEqual({self.rp2: {'DISK_GB': 7}},
                         self.held(self.consumer))

    def test_provider_generation_conflict_is_retried(self):
        self.write(self.consumer, {self.rp1: RESOURCES, self.rp2: DISK})
        self.placement.reset_calls()
        fault = self.placement.inject_fault(method='PUT', status=409,
                                            body=PROVIDER_CONFLICT)
        self.assertTrue(self.remove())
        self.assertEqual(1, fault.fired)
        self.assertEqual(['GET', 'GET', 'PUT'] * 2, self.methods())
        self.assertEqual({self.rp2: DISK}, self.held(self.consumer))

    def test_out_of_retries(self):
        self.flags(group='placement', claim_retry_attempts=3)
        self.write(self.consumer, {self.rp1: RESOURCES})
        self.placement.reset_calls()
        self.placement.inject_fault(method='PUT', status=409,
                                    body=PROVIDER_CONFLICT, times=10)
        self.assertFalse(self.remove())
        self.assertEqual(3, len(self.placement.calls_for('PUT')))
        self.assertEqual([mock.call(2.0), mock.call(4.0)],
                         self.sleep.call_args_list)
        self.assertIn('out of retries', self.error_logs()[0])
        self.assertEqual({self.rp1: RESOURCES}, self.held(self.consumer))

    def test_refused_returns_false(self):
        self.write(self.consumer, {self.rp1: RESOURCES})
        for fault in ({'status': 400}, {'exception': 'connect'}):
            self.placement.inject_fault(method='PUT', **fault)
            self.assertFalse(self.remove())
            self.placement.clear_faults()
            self.assertEqual({self.rp1: RESOURCES}, self.held(self.consumer))
        self.assertIn('Unable to remove the allocations of consumer %s'
                      % self.consumer, self.log.output)
        self.sleep.assert_not_called()

    def test_lost_reply_that_landed(self):
        self.write(self.consumer, {self.rp1: RESOURCES, self.rp2: DISK})
        self.placement.inject_fault(method='PUT', when='after',
                                    exception='timeout')
        self.assertTrue(self.remove())
        self.assertEqual({self.rp2: DISK}, self.held(self.consumer))

    def test_tree_read_failure_raises(self):
        self.write(self.consumer, {self.rp1: RESOURCES})
        self.placement.inject_fault(method='GET', path='in_tree',
                                    status=500)
        self.assertRaises(exception.ResourceProviderRetrievalFailed,
                          self.remove)
