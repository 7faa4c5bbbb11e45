"""The differential fixture on nova's own ``PlacementFixture``.

In a subprocess: importing nova's functional tests patches eventlet in,
which must not happen to the test runner's process. nova's report client
sends through the fixture as nova's tests send, and a provider deleted
behind the double's back shows as a differing answer. The fixture is
started as nova's tests start it once :func:`differential.use_in_nova`
has swapped it in: by the name nova's own class looks itself up by.
"""

import json
import os
import subprocess
import sys

import testtools

from shelvefix.tests.nova import base

PROGRAM = r'''
import json
from unittest import mock

import nova.tests.functional.fixtures  # noqa: eventlet first
from nova import conf as nova_conf
from nova.scheduler.client import report

from shelvefix.backends import differential

nova_conf.CONF([], default_config_files=[])
RP = '11111111-1111-1111-1111-111111111111'
# As the tool's workers do: every test's PlacementFixture() is ours.
differential.use_in_nova()
placement = nova.tests.functional.fixtures.PlacementFixture(test_id='t1')
placement.setUp()
client = report.SchedulerReportClient(adapter=mock.Mock())
out = {'real': '%s.%s' % (type(placement.real).__module__,
                          type(placement.real).__name__)}
out['statuses'] = [
    client.post('/resource_providers', {'name': 'cn1', 'uuid': RP},
                version='1.20').status_code,
    client.get('/resource_providers/%s' % RP, version='1.20').status_code,
    placement.api.get('/resource_providers').status]
out['identical'] = dict(placement.counts)
placement.real._fake_delete(None, '/resource_providers/%s' % RP)
out['after'] = client.get('/resource_providers/%s' % RP).status_code
out['differences'] = [(found['test'], found['field'], found['real'],
                       found['double'])
                      for found in placement.differences][:1]
out['counts'] = placement.counts
placement.cleanUp()
print(json.dumps(out))
'''


class DifferentialOnNovaTestCase(testtools.TestCase):

    def test_novas_fixture_serves_and_the_double_is_compared(self):
        base.load('nova.scheduler.client.report')
        result = subprocess.run(
            (sys.executable, '-c', PROGRAM), capture_output=True, text=True,
            timeout=300, env=dict(os.environ, PYTHONWARNINGS='ignore'))
        self.assertEqual(0, result.returncode, result.stderr[-3000:])
        out = json.loads(result.stdout.strip().splitlines()[-1])
        self.assertEqual('nova.tests.functional.fixtures.PlacementFixture',
                         out['real'])
        self.assertEqual([200, 200, 200], out['statuses'])
        self.assertEqual({'compared': 3, 'identical': 3, 'differing': 0,
                          'not_replayed': 0}, out['identical'])
        self.assertEqual(404, out['after'])
        self.assertEqual([['t1', 'status', '404', '200']],
                         out['differences'])
        self.assertEqual({'compared': 4, 'identical': 3, 'differing': 1,
                          'not_replayed': 0}, out['counts'])
