"""One configuration path: ``--config-file`` reaches the report client.

``[placement]`` in the files given on the command line says where
placement is (for ``--backend remote``) and how the report client retries
claims that lose a provider generation race (for every backend). Both must
come from the same file: a client that fell back to the global CONF would
retry four times whatever the file says.
"""

import os

import fixtures
import testscenarios

from shelvefix.cmd import common
from shelvefix import context
from shelvefix import exception
from shelvefix.placement import deploy
from shelvefix.tests import base
from shelvefix.tests.functional import wsgi_server

load_tests = testscenarios.load_tests_apply_scenarios


class RetryOptionsFromConfigFileTestCase(testscenarios.WithScenarios,
                                         base.TestCase):

    scenarios = [('remote', {'backend': 'remote'}),
                 ('double', {'backend': 'double'})]

    def setUp(self):
        super().setUp()
        lines = ['[placement]', 'claim_retry_attempts = 1',
                 'claim_retry_max_delay = 0']
        if self.backend == 'remote':
            server = self.useFixture(
                wsgi_server.WSGIServerFixture(deploy.PlacementApp()))
            lines += ['auth_type = admin_token', 'token = admin',
                      'endpoint_override = %s' % server.url]
        self.path = os.path.join(self.useFixture(fixtures.TempDir()).path,
                                 'shelvefix.conf')
        with open(self.path, 'w') as f:
            f.write('\n'.join(lines) + '\n')
        # The global CONF says otherwise: the file must win.
        self.flags(group='placement', claim_retry_attempts=4)

    def test_claim_retries_as_the_file_says(self):
        placement = self.useFixture(
            common.make_backend(self.backend, [self.path]))
        rp = placement.create_provider('host-%s' % self.backend,
                                       inventory={'VCPU': 2})
        placement.inject_fault(
            method='PUT', path='^/allocations/', status=409, times=10,
            body='{"errors": [{"status": 409, "title": "Conflict", '
                 '"code": "placement.concurrent_update", "detail": '
                 '"resource provider generation conflict"}]}')
        consumer = 'd1d6d3a4-93b5-4a4c-a9b5-8c0e1a7f0a11'
        self.assertRaises(
            exception.AllocationUpdateFailed, placement.client.claim_resources,
            context.get_admin_context(), consumer,
            {'allocations': {rp: {'resources': {'VCPU': 1}}}},
            'project', 'user', '1.28')
        self.assertEqual(1, len(placement.calls_for('PUT', '^/allocations/')))
        self.assertEqual(1, placement.client._conf.placement
                         .claim_retry_attempts)
