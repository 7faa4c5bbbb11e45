"""SchedulerReportClient against the placement double, success and failure.

Every request goes through keystoneauth1 and the in-process transport, as
it would against a real endpoint; failures are injected at the transport.
"""

import copy
from unittest import mock

from oslo_utils import uuidutils

from shelvefix.backends import fixture as placement_fixture
from shelvefix import conf
from shelvefix import exception
from shelvefix.scheduler.client import report
from shelvefix.tests import base

RESOURCES = {'VCPU': 1, 'MEMORY_MB': 512}
INVENTORY = {'VCPU': 4, 'MEMORY_MB': 2048, 'DISK_GB': 20}
PROVIDER_CONFLICT = ('{"errors": [{"status": 409, "title": "Conflict", '
                     '"detail": "There was a conflict when trying to '
                     'complete your request.\\n\\n resource provider '
                     'generation conflict  ", "code": '
                     '"placement.concurrent_update", "request_id": "r"}]}')


class ReportClientTestCase(base.TestCase):

    def setUp(self):
        super(ReportClientTestCase, self).setUp()
        self.placement = self.useFixture(placement_fixture.PlacementFixture())
        self.sleep = mock.Mock()
        self.client = report.SchedulerReportClient(
            adapter=self.placement.adapter, sleep=self.sleep,
            jitter=lambda low, high: high)
        self.rp1 = self.placement.create_provider('host1',
                                                  inventory=INVENTORY)
        self.rp2 = self.placement.create_provider('host2',
                                                  inventory=INVENTORY)
        self.consumer = uuidutils.generate_uuid()
        self.placement.reset_calls()

    def alloc_req(self, rp, resources=None):
        return {'allocations': {rp: {'resources': dict(resources or
                                                       RESOURCES)}}}

    def claim(self, rp=None, **kw):
        return self.client.claim_resources(
            self.context, self.consumer, self.alloc_req(rp or self.rp1),
            'proj', 'user', kw.pop('version', '1.28'), **kw)

    def assertNoCalls(self):
        self.assertEqual([], self.placement.calls)


class GetAllocationsTestCase(ReportClientTestCase):

    def test_unknown_consumer(self):
        self.assertEqual({'allocations': {}},
                         self.client.get_allocs_for_consumer(
                             self.context, self.consumer))
        call = self.placement.calls[0]
        self.assertEqual(('GET', '/allocations/%s' % self.consumer, '1.28',
                          200), (call.method, call.path, call.microversion,
                                 call.status))
        self.assertEqual(self.context.global_id, call.request_id)

    def test_known_consumer(self):
        self.claim()
        body = self.client.get_allocs_for_consumer(self.context,
                                                   self.consumer)
        self.assertEqual(1, body['consumer_generation'])
        self.assertEqual(('proj', 'user'),
                         (body['project_id'], body['user_id']))
        self.assertEqual(RESOURCES,
                         body['allocations'][self.rp1]['resources'])
        self.assertEqual(
            {self.rp1: body['allocations'][self.rp1]},
            self.client.get_allocations_for_consumer(self.context,
                                                     self.consumer))

    def test_failures(self):
        cases = [
            ({'status': 500}, 'HTTP 500 placement.undefined_code'),
            ({'status': 503, 'body': '<html>down</html>'},
             "HTTP 503: a body that is not a placement error "
             "document: '<html>down</html>'"),
            ({'status': 200, 'body': 'not json'},
             "placement answered 200 without an allocations document: "
             "'not json'"),
            ({'exception': 'connect'},
             'unable to communicate with the placement API '
             '(ConnectFailure'),
            ({'exception': 'timeout'},
             'unable to communicate with the placement API '
             '(ConnectTimeout'),
        ]
        for fault, message in cases:
            self.placement.inject_fault(method='GET', **fault)
            e = self.assertRaises(
                exception.ConsumerAllocationRetrievalFailed,
                self.client.get_allocs_for_consumer, self.context,
                self.consumer)
            self.assertIn('consumer %s' % self.consumer, str(e))
            self.assertIn(message, str(e))
            self.placement.clear_faults()

    def test_invalid_uuid(self):
        for bad in ('nope', None, 42):
            e = self.assertRaises(exception.InvalidUUID,
                                  self.client.get_allocs_for_consumer,
                                  self.context, bad)
            self.assertIn(repr(bad), str(e))
        self.assertNoCalls()


class ClaimResourcesTestCase(ReportClientTestCase):

    def test_new_consumer(self):
        self.assertTrue(self.claim())
        get, put = self.placement.calls
        self.assertEqual(('GET', 200), (get.method, get.status))
        self.assertEqual(('PUT', 204, '1.28'),
                         (put.method, put.status, put.microversion))
        self.assertEqual({'allocations': {self.rp1: {'resources': RESOURCES}},
                          'project_id': 'proj', 'user_id': 'user',
                          'consumer_generation': None}, put.body)

    def test_move_doubles_up_with_generation_read(self):
        self.claim()
        self.placement.reset_calls()
        request = self.alloc_req(self.rp2)
        original = copy.deepcopy(request)
        self.assertTrue(self.client.claim_resources(
            self.context, self.consumer, request, 'proj', 'user', '1.28'))
        self.assertEqual(original, request)
        put = self.placement.calls[-1]
        self.assertEqual(1, put.body['consumer_generation'])
        self.assertEqual({self.rp1: {'resources': RESOURCES},
                          self.rp2: {'resources': RESOURCES}},
                         put.body['allocations'])
        body = self.client.get_allocs_for_consumer(self.context,
                                                   self.consumer)
        self.assertEqual(2, body['consumer_generation'])
        self.assertEqual({self.rp1, self.rp2}, set(body['allocations']))

    def test_move_keeps_current_amounts_on_shared_provider(self):
        self.claim()
        request = {'allocations': {
            self.rp1: {'resources': {'VCPU': 3}},
            self.rp2: {'resources': RESOURCES}}}
        self.client.claim_resources(self.context, self.consumer, request,
                                    'proj', 'user', '1.28')
        self.assertEqual(
            {self.rp1: {'resources': RESOURCES},
             self.rp2: {'resources': RESOURCES}},
            self.placement.calls[-1].body['allocations'])

    def test_move_uses_generation_from_request(self):
        self.claim()
        request = dict(self.alloc_req(self.rp2), consumer_generation=7)
        e = self.assertRaises(exception.AllocationUpdateFailed,
                              self.client.claim_resources, self.context,
                              self.consumer, request, 'proj', 'user', '1.28')
        # Placement says what it has first, then what it was sent.
        self.assertIn('consumer generation conflict - expected 1 but got 7',
                      str(e))

    def test_consumer_generation_conflict(self):
        self.claim()
        # A stale expectation that the consumer is new. (Placement words
        # this case "got None", the reverse one "expected null".)
        e = self.assertRaises(
            exception.AllocationUpdateFailed, self.client.put_allocations,
            self.context, self.consumer,
            dict(self.alloc_req(self.rp2), consumer_generation=None,
                 project_id='proj', user_id='user'))
        self.assertIn(
            'Failed to update allocations for consumer %s. Error: There was '
            'a conflict when trying to complete your request. consumer '
            'generation conflict - expected 1 but got None' % self.consumer,
            str(e))
        self.assertEqual(409, e.kwargs['placement_error'].status)
        # Typed, so callers need not read placement's text; still caught
        # by nova's name.
        self.assertIsInstance(e, exception.AllocationUpdateConflict)
        self.assertIsInstance(e, exception.ConsumerGenerationConflict)
        self.sleep.assert_not_called()

    def test_old_microversion_sends_no_generation(self):
        self.assertTrue(self.claim(version='1.27'))
        put = self.placement.calls[-1]
        self.assertEqual('1.27', put.microversion)
        self.assertNotIn('consumer_generation', put.body)

    def test_provider_generation_conflict_is_retried(self):
        fault = self.placement.inject_fault(method='PUT', status=409,
                                            body=PROVIDER_CONFLICT)
        self.assertTrue(self.claim())
        self.assertEqual(1, fault.fired)
        self.assertEqual(['GET', 'PUT', 'GET', 'PUT'],
                         [c.method for c in self.placement.calls])
        self.sleep.assert_called_once_with(2.0)

    def test_provider_generation_conflict_out_of_retries(self):
        self.flags(group='placement', claim_retry_attempts=3,
                   claim_retry_max_delay=0.5)
        self.placement.inject_fault(method='PUT', status=409,
                                    body=PROVIDER_CONFLICT, times=10)
        e = self.assertRaises(exception.AllocationUpdateFailed, self.claim)
        # A provider conflict is not the consumer's.
        self.assertNotIsInstance(e, exception.ConsumerGenerationConflict)
        self.assertIn('out of retries after 3 attempts', str(e))
        self.assertIn('resource provider generation conflict', str(e))
        self.assertEqual([mock.call(0.5), mock.call(1.0)],
                         self.sleep.call_args_list)
        self.assertIn('ERROR shelvefix.scheduler.client.writes Failed '
                      'scheduler client operation claim_resources for '
                      'consumer %s: out of retries' % self.consumer,
                      self.log.output)
        self.assertEqual({'allocations': {}},
                         self.client.get_allocs_for_consumer(
                             self.context, self.consumer))

    def test_capacity_exceeded(self):
        e = self.assertRaises(
            exception.AllocationUpdateFailed,
            self.client.claim_resources, self.context, self.consumer,
            self.alloc_req(self.rp1, {'VCPU': 5}), 'proj', 'user', '1.28')
        self.assertIn('HTTP 409', str(e))
        self.assertIn('Unable to allocate inventory', str(e))
        self.sleep.assert_not_called()

    def test_server_errors_and_transport_failures(self):
        cases = [({'status': 500}, 'HTTP 500'),
                 ({'status': 503, 'body': 'Service Unavailable'},
                  "HTTP 503: a body that is not a placement error document: "
                  "'Service Unavailable'"),
                 ({'exception': 'connect'}, 'ConnectFailure'),
                 ({'exception': 'timeout'}, 'ConnectTimeout')]
        for fault, message in cases:
            self.placement.inject_fault(method='PUT', **fault)
            e = self.assertRaises(exception.AllocationUpdateFailed,
                                  self.claim)
            self.assertIn(self.consumer, str(e))
            self.assertIn(message, str(e))
            self.placement.clear_faults()
        self.assertEqual({'allocations': {}},
                         self.client.get_allocs_for_consumer(
                             self.context, self.consumer))

    def test_initial_get_fails(self):
        self.placement.inject_fault(method='GET', status=500)
        self.assertRaises(exception.ConsumerAllocationRetrievalFailed,
                          self.claim)
        self.assertEqual(['GET'], [c.method for c in self.placement.calls])

    def test_schema_error_400(self):
        e = self.assertRaises(
            exception.AllocationUpdateFailed, self.client.put_allocations,
            self.context, self.consumer, self.alloc_req(self.rp1))
        self.assertIn('HTTP 400', str(e))
        self.assertIn('JSON does not validate', str(e))

    def test_unknown_provider(self):
        e = self.assertRaises(
            exception.AllocationUpdateFailed, self.claim,
            rp=uuidutils.generate_uuid())
        self.assertIn('HTTP 400', str(e))

    def test_bad_input_changes_nothing(self):
        rp = self.rp1
        bad_requests = [
            (None, 'expected a dict, got NoneType'),
            ({}, "missing or empty 'allocations' mapping"),
            ({'allocations': {}}, "missing or empty 'allocations'"),
            ({'allocations': {'not-a-uuid': {'resources': RESOURCES}}},
             "resource provider 'not-a-uuid' is not a uuid"),
            ({'allocations': {rp: {}}},
             "allocation for provider %s has no 'resources'" % rp),
            ({'allocations': {rp: {'resources': {}}}},
             "'resources' for provider %s is not a non-empty mapping" % rp),
            ({'allocations': {rp: {'resources': {'VCPU': 0}}}},
             'amount of VCPU on provider %s must be a positive integer, '
             'got 0' % rp),
            ({'allocations': {rp: {'resources': {'VCPU': '1'}}}},
             "got '1'"),
        ]
        for request, reason in bad_requests:
            e = self.assertRaises(exception.InvalidAllocationRequest,
                                  self.client.claim_resources, self.context,
                                  self.consumer, request, 'p', 'u', '1.28')
            self.assertIn('consumer %s' % self.consumer, str(e))
            self.assertIn(reason, str(e))
        self.assertRaises(exception.InvalidUUID, self.client.claim_resources,
                          self.context, 'bad', self.alloc_req(rp), 'p', 'u',
                          '1.28')
        e = self.assertRaises(exception.Invalid, self.claim, version='1.x')
        self.assertIn("must look like \"1.28\", got '1.x'", str(e))
        self.assertNoCalls()


class DeleteAllocationTestCase(ReportClientTestCase):

    def setUp(self):
        super(DeleteAllocationTestCase, self).setUp()
        self.claim()
        self.placement.reset_calls()

    def delete(self, force, uuid=None):
        return self.client.delete_allocation_for_instance(
            self.context, uuid or self.consumer, force=force)

    def test_force_delete(self):
        self.assertTrue(self.delete(True))
        self.assertEqual([('DELETE', 204)], [(c.method, c.status)
                                             for c in self.placement.calls])
        self.assertFalse(self.delete(True))
        self.assertEqual(404, self.placement.calls[-1].status)
        self.assertIn('Deleted allocations for instance %s' % self.consumer,
                      self.log.output)

    def test_get_put_empty(self):
        self.assertTrue(self.delete(False))
        get, put = self.placement.calls
        self.assertEqual({'allocations': {}, 'consumer_generation': 1,
                          'project_id': 'proj', 'user_id': 'user'}, put.body)
        self.assertEqual(('GET', 'PUT', 204),
                         (get.method, put.method, put.status))
        self.placement.reset_calls()
        self.assertFalse(self.delete(False))
        self.assertEqual(['GET'], [c.method for c in self.placement.calls])

    def test_get_put_empty_generation_conflict(self):
        # Another actor writes between compute's GET and PUT.
        other = report.SchedulerReportClient(adapter=self.placement.adapter)
        real_get = self.client.get_allocs_for_consumer

        def get_then_race(context, consumer):
            body = real_get(context, consumer)
            other.claim_resources(self.context, consumer,
                                  self.alloc_req(self.rp2), 'proj', 'user',
                                  '1.28')
            return body
        self.client.get_allocs_for_consumer = get_then_race
        e = self.assertRaises(exception.AllocationDeleteFailed, self.delete,
                              False)
        self.assertIn('Failed to delete allocations for consumer %s. Error: '
                      'There was a conflict when trying to complete your '
                      'request. consumer generation conflict - expected 2 '
                      'but got 1' % self.consumer, str(e))
        self.assertIsInstance(e, exception.AllocationDeleteConflict)
        self.assertIsInstance(e, exception.ConsumerGenerationConflict)
        self.assertEqual(2, len(real_get(self.context,
                                         self.consumer)['allocations']))

    def test_failures(self):
        cases = [
            (True, {'method': 'DELETE', 'status': 500}, 'HTTP 500'),
            (True, {'method': 'DELETE', 'status': 409,
                    'body': 'conflict!'}, "'conflict!'"),
            (True, {'method': 'DELETE', 'exception': 'connect'},
             'ConnectFailure'),
            (True, {'method': 'DELETE', 'exception': 'timeout'},
             'ConnectTimeout'),
            (False, {'method': 'GET', 'status': 500},
             'while reading the consumer generation'),
            (False, {'method': 'GET', 'exception': 'connect'},
             'while reading the consumer generation'),
            (False, {'method': 'PUT', 'status': 503}, 'HTTP 503'),
            (False, {'method': 'PUT', 'exception': 'timeout'},
             'ConnectTimeout'),
            (False, {'method': 'PUT', 'status': 400,
                     'body': '{"errors": [{"status": 400, "code": '
                             '"placement.undefined_code", "detail": '
                             '"JSON does not validate: x"}]}'},
             'JSON does not validate: x'),
        ]
        for force, fault, message in cases:
            self.placement.inject_fault(**fault)
            e = self.assertRaises(exception.AllocationDeleteFailed,
                                  self.delete, force)
            self.assertIn('consumer %s' % self.consumer, str(e))
            self.assertIn(message, str(e))
            self.placement.clear_faults()
            # Nothing was lost: the allocations are still there.
            self.assertEqual(
                [self.rp1], list(self.client.get_allocations_for_consumer(
                    self.context, self.consumer)))
        self.assertIn('WARNING shelvefix.scheduler.client.report Unable to '
                      'delete allocation for instance %s' % self.consumer,
                      self.log.output)

    def test_invalid_uuid(self):
        self.assertRaises(exception.InvalidUUID, self.delete, True,
                          uuid='x' * 36)
        self.assertNoCalls()


class ProviderTestCase(ReportClientTestCase):

    def test_create_get_inventory_usages(self):
        uuid = uuidutils.generate_uuid()
        rp = self.client.create_resource_provider(self.context, uuid, 'h3')
        self.assertEqual((uuid, 'h3', 0),
                         (rp['uuid'], rp['name'], rp['generation']))
        self.assertEqual(1, self.client.set_inventory_for_provider(
            self.context, uuid, {'VCPU': {'total': 2}}))
        self.assertEqual(uuid, self.client.get_resource_provider(
            self.context, uuid)['uuid'])
        self.assertEqual({'VCPU': 0}, self.client.get_provider_usages(
            self.context, uuid))

    def test_delete_provider(self):
        self.assertTrue(self.client.delete_resource_provider(self.context,
                                                             self.rp2))
        self.assertFalse(self.client.delete_resource_provider(self.context,
                                                              self.rp2))
        self.claim()
        e = self.assertRaises(exception.ResourceProviderUpdateFailed,
                              self.client.delete_resource_provider,
                              self.context, self.rp1)
        self.assertIn('HTTP 409', str(e))
        self.placement.inject_fault(exception='connect')
        e = self.assertRaises(exception.ResourceProviderUpdateFailed,
                              self.client.delete_resource_provider,
                              self.context, self.rp1)
        self.assertIn('ConnectFailure', str(e))

    def test_failures(self):
        e = self.assertRaises(exception.ResourceProviderCreationFailed,
                              self.client.create_resource_provider,
                              self.context, uuidutils.generate_uuid(),
                              'host1')
        self.assertIn('Failed to create resource provider host1: HTTP 409',
                      str(e))
        missing = uuidutils.generate_uuid()
        self.assertRaises(exception.ResourceProviderRetrievalFailed,
                          self.client.get_resource_provider, self.context,
                          missing)
        self.assertRaises(exception.ResourceProviderRetrievalFailed,
                          self.client.get_provider_usages, self.context,
                          missing)
        self.placement.inject_fault(method='PUT', status=409,
                                    body=PROVIDER_CONFLICT)
        e = self.assertRaises(exception.ResourceProviderUpdateFailed,
                              self.client.set_inventory_for_provider,
                              self.context, self.rp1,
                              {'VCPU': {'total': 1}})
        self.assertIn('resource provider generation conflict', str(e))
        for call, args in (
                (self.client.create_resource_provider,
                 (uuidutils.generate_uuid(), 'h9')),
                (self.client.get_resource_provider, (self.rp1,)),
                (self.client.get_provider_usages, (self.rp1,)),
                (self.client.set_inventory_for_provider,
                 (self.rp1, {'VCPU': {'total': 1}}))):
            self.placement.inject_fault(exception='connect', times=2)
            e = self.assertRaises(exception.ShelvefixException, call,
                                  self.context, *args)
            self.assertIn('ConnectFailure', str(e))
            self.placement.clear_faults()


class AdapterFromConfigTestCase(base.TestCase):

    def test_adapter_from_placement_options(self):
        from keystoneauth1 import loading as ks_loading
        placement = self.useFixture(placement_fixture.PlacementFixture())
        conf.placement.register_ksa_opts(self.flags_fixture.conf)
        self.flags_fixture.register_opts(
            ks_loading.get_auth_plugin_conf_options('admin_token'),
            group='placement')
        self.flags(group='placement', auth_type='admin_token',
                   token='admin', endpoint_override=placement.endpoint)
        client = report.SchedulerReportClient()
        client.adapter.session.session.mount(placement.endpoint,
                                             placement.transport)
        consumer = uuidutils.generate_uuid()
        self.assertEqual({'allocations': {}},
                         client.get_allocs_for_consumer(self.context,
                                                        consumer))
        self.assertEqual('/allocations/%s' % consumer,
                         placement.calls[-1].path)


class LostReplyTestCase(ReportClientTestCase):
    """Placement committed the write but the client never saw the reply."""

    def test_claim_reply_lost_is_recognised(self):
        for fault in ({'exception': 'timeout'}, {'status': 503},
                      {'status': 502, 'body': '<html>Bad Gateway</html>'}):
            consumer = uuidutils.generate_uuid()
            self.placement.inject_fault(method='PUT', when='after', **fault)
            self.assertTrue(self.client.claim_resources(
                self.context, consumer, self.alloc_req(self.rp1), 'proj',
                'user', '1.28'))
            self.placement.clear_faults()
            self.assertEqual([self.rp1], list(
                self.client.get_allocations_for_consumer(self.context,
                                                         consumer)))
        self.assertIn('was lost but its allocations were written as '
                      'requested', self.log.output)

    def test_claim_not_landed_still_fails(self):
        self.placement.inject_fault(method='PUT', exception='timeout')
        e = self.assertRaises(exception.AllocationUpdateFailed, self.claim)
        self.assertIn('ConnectTimeout', str(e))
        # The verification read came after the failed PUT.
        self.assertEqual(['GET', 'PUT', 'GET'],
                         [c.method for c in self.placement.calls])

    def test_verification_read_fails(self):
        self.placement.inject_fault(method='PUT', exception='timeout',
                                    when='after')
        self.placement.inject_fault(method='GET', nth=2, status=500)
        e = self.assertRaises(exception.AllocationUpdateFailed, self.claim)
        self.assertIn('ConnectTimeout', str(e))
        self.assertIn('Could not verify the allocations of consumer %s'
                      % self.consumer, self.log.output)

    def test_delete_reply_lost_is_recognised(self):
        for force, method in ((True, 'DELETE'), (False, 'PUT')):
            self.claim()
            self.placement.inject_fault(method=method, when='after',
                                        exception='timeout')
            self.assertTrue(self.client.delete_allocation_for_instance(
                self.context, self.consumer, force=force))
            self.placement.clear_faults()
            self.assertEqual({'allocations': {}},
                             self.client.get_allocs_for_consumer(
                                 self.context, self.consumer))
            self.claim()
            self.placement.inject_fault(method=method, when='after',
                                        status=500)
            self.assertTrue(self.client.delete_allocation_for_instance(
                self.context, self.consumer, force=force))
            self.placement.clear_faults()


class DeleteProviderConflictTestCase(ReportClientTestCase):
    """GET + PUT empty retries placement's provider generation races."""

    def setUp(self):
        super(DeleteProviderConflictTestCase, self).setUp()
        self.claim()
        self.placement.reset_calls()

    def test_retried_then_freed(self):
        fault = self.placement.inject_fault(method='PUT', status=409,
                                            body=PROVIDER_CONFLICT)
        self.assertTrue(self.client.delete_allocation_for_instance(
            self.context, self.consumer))
        self.assertEqual(1, fault.fired)
        self.assertEqual(['GET', 'PUT', 'PUT'],
                         [c.method for c in self.placement.calls])
        self.sleep.assert_called_once_with(2.0)
        self.assertEqual({'allocations': {}},
                         self.client.get_allocs_for_consumer(
                             self.context, self.consumer))

    def test_out_of_retries(self):
        self.flags(group='placement', claim_retry_attempts=2)
        self.placement.inject_fault(method='PUT', status=409,
                                    body=PROVIDER_CONFLICT, times=5)
        e = self.assertRaises(exception.AllocationDeleteFailed,
                              self.client.delete_allocation_for_instance,
                              self.context, self.consumer)
        self.assertIn('out of retries after 2 attempts', str(e))
        self.assertEqual([self.rp1], list(
            self.client.get_allocations_for_consumer(self.context,
                                                     self.consumer)))
