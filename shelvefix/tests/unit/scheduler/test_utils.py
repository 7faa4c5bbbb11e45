"""Tests for scheduler.utils.claim_resources."""

from unittest import mock

from oslo_utils import uuidutils

from shelvefix import exception
from shelvefix.scheduler import request_spec
from shelvefix.scheduler import utils
from shelvefix.tests import base


class ClaimResourcesTestCase(base.TestCase):

    def setUp(self):
        super(ClaimResourcesTestCase, self).setUp()
        self.client = mock.Mock()
        self.uuid = uuidutils.generate_uuid()
        self.alloc_req = {'allocations': {uuidutils.generate_uuid(): {
            'resources': {'VCPU': 1}}}}

    def test_new_consumer_generation_none(self):
        spec = request_spec.RequestSpec(self.uuid, 'proj', 'user')
        self.client.claim_resources.return_value = True
        self.assertTrue(utils.claim_resources(
            self.context, self.client, spec, self.uuid, self.alloc_req,
            allocation_request_version='1.36'))
        self.client.claim_resources.assert_called_once_with(
            self.context, self.uuid, self.alloc_req, 'proj', 'user',
            allocation_request_version='1.36', consumer_generation=None)

    def test_user_from_context_for_old_spec(self):
        spec = request_spec.RequestSpec(self.uuid, 'proj')
        utils.claim_resources(self.context, self.client, spec, self.uuid,
                              self.alloc_req)
        self.assertEqual(
            'fake-user', self.client.claim_resources.call_args[0][4])

    def test_failure_is_logged_and_raised(self):
        spec = request_spec.RequestSpec(self.uuid, 'proj', 'user')
        self.client.claim_resources.side_effect = (
            exception.AllocationUpdateFailed(consumer_uuid=self.uuid,
                                             error='boom'))
        self.assertRaises(exception.AllocationUpdateFailed,
                          utils.claim_resources, self.context, self.client,
                          spec, self.uuid, self.alloc_req)
        (line,) = self.error_logs()
        self.assertIn('consumer %s' % self.uuid, line)
        self.assertIn('boom', line)

    def test_rebuild_claims_nothing(self):
        spec = request_spec.RequestSpec(
            self.uuid, 'proj', 'user',
            scheduler_hints={'_nova_check_type': ['rebuild']})
        self.assertTrue(utils.claim_resources(
            self.context, self.client, spec, self.uuid, self.alloc_req))
        self.client.claim_resources.assert_not_called()

    def test_spec_from_instance(self):
        inst = mock.Mock(uuid=self.uuid, project_id='p', user_id='u',
                         flavor='f')
        spec = request_spec.RequestSpec.from_instance(inst)
        self.assertEqual((self.uuid, 'p', 'u', 'f'),
                         (spec.instance_uuid, spec.project_id, spec.user_id,
                          spec.flavor))
