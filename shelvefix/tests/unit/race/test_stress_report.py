"""Tests for shelvefix.race.stress_report: what the stress report says."""

import argparse
import io

import testtools

from shelvefix.backends import transport
from shelvefix.race import outcomes
from shelvefix.race import stress
from shelvefix.race import stress_report

UUID = 'aaaaaaaa-1111-2222-3333-444444444444'


def result(**kwargs):
    values = dict(ordering='corrected', free='delete', servers=2, cycles=4,
                  elapsed=2.0, counts={outcomes.OK: 3},
                  usage_expected={'a': {'VCPU': 2}},
                  usage_actual={'a': {'VCPU': 2}}, lost={})
    values.update(kwargs)
    return stress.StressResult(**values)


class WriteTestCase(testtools.TestCase):

    def write(self, results, figures=()):
        out = io.StringIO()
        args = argparse.Namespace(servers=2, cycles=2, poll_interval=0.005,
                                  compute_latency=0)
        stress_report.write(args, 'placement', results, out, figures)
        return out.getvalue()

    def test_cycles_lost_are_said_by_cause(self):
        text = self.write([result(lost={'ConsumerAllocationRetrievalFailed':
                                        1})])
        self.assertIn('corrected/delete: 1 cycles lost '
                      '(ConsumerAllocationRetrievalFailed 1): each raised, '
                      "and its server's next cycle started from the state "
                      'it left', text)
        self.assertIn('Corrected order: no bad outcome', text)

    def test_the_fault_and_the_counters_under_the_table(self):
        figures = [{'requests': 40, 'requests_per_second': 20.0,
                    'database': 'galera',
                    'database_counters': {'deadlocks': 1,
                                          'nodes marked down': 3},
                    'ghost_consumers_left': 0,
                    'failed_requests': {'DELETE /allocations/{uuid} 500':
                                        2},
                    'fault': 'node 3 killed (SIGKILL) at 2.0 s',
                    'failed_over': {'http://127.0.0.1:1': 2}}]
        text = self.write([result()], figures)
        self.assertIn('corrected/delete: 40 requests, 20.0 requests/s; '
                      'galera: deadlocks 1, nodes marked down 3; ghost '
                      'consumers healed: 0, left: 0', text)
        self.assertIn('  placement failed: DELETE /allocations/{uuid} 500 '
                      'x2', text)
        self.assertIn('  fault: node 3 killed (SIGKILL) at 2.0 s; requests '
                      'failed per server: http://127.0.0.1:1 2', text)

    def test_a_mismatch_is_said(self):
        text = self.write([result(usage_actual={'a': {'VCPU': 3}})])
        self.assertIn('MISMATCH', text)
        self.assertIn('Corrected order: BAD OUTCOMES FOUND', text)


class AsJSONTestCase(testtools.TestCase):

    def test_lost_and_usage(self):
        data = stress_report.as_json(result(lost={'RuntimeError': 1}))
        self.assertEqual({'RuntimeError': 1}, data['cycles_lost'])
        self.assertTrue(data['usage_ok'])
        self.assertEqual(2.0, data['cycles_per_second'])
        self.assertEqual([], data['bad'])


class FailedRequestsTestCase(testtools.TestCase):

    def test_by_method_path_and_status(self):
        call = transport.Call
        calls = [call('GET', '/allocations/%s' % UUID, '1.28', None, 200,
                      None),
                 call('DELETE', '/allocations/%s' % UUID, None, None, 500,
                      None),
                 call('DELETE', '/allocations/%s' % UUID.replace('a', 'b'),
                      None, None, 500, None),
                 call('GET', '/resource_providers?name=x', None, None,
                      'Timeout', None),
                 call('PUT', '/allocations/%s' % UUID, '1.28', None, 409,
                      None)]
        self.assertEqual({'DELETE /allocations/{uuid} 500': 2,
                          'GET /resource_providers Timeout': 1},
                         stress_report.failed_requests(calls))
