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
        # A lost cycle is no evidence: the verdict says so, and why.
        self.assertNotIn('no bad outcome', text)
        self.assertIn('Corrected order: NOT SHOWN CLEAN (every cycle of '
                      'every ordering must complete, and a corrected one '
                      'end ok): corrected/delete: 1 '
                      'of 4 cycles lost (ConsumerAllocationRetrievalFailed '
                      '1)\n', text)

    def test_several_causes_in_each_ordering(self):
        # Each run's line names every cause, sorted, with its count; the
        # verdict line names every run's, the corrected order's first.
        lost = {'ValueError': 2, 'UnexpectedTaskStateError': 1,
                'ConsumerAllocationRetrievalFailed': 3}
        results = [result(lost=lost, counts={}, completed=0, cycles=6),
                   result(ordering='legacy', counts={outcomes.OK: 2},
                          lost={'TimeoutError': 1, 'RuntimeError': 1},
                          completed=2)]
        text = self.write(results)
        lines = text.splitlines()
        self.assertIn(
            'corrected/delete: 6 cycles lost '
            '(ConsumerAllocationRetrievalFailed 3, UnexpectedTaskStateError '
            "1, ValueError 2): each raised, and its server's next cycle "
            'started from the state it left', lines)
        self.assertIn(
            'legacy/delete: 2 cycles lost (RuntimeError 1, TimeoutError 1): '
            "each raised, and its server's next cycle started from the "
            'state it left', lines)
        self.assertEqual(
            'Corrected order: NOT SHOWN CLEAN (every cycle of every '
            'ordering must complete, and a corrected one '
            'end ok): corrected/delete: 6 of 6 cycles lost '
            '(ConsumerAllocationRetrievalFailed 3, UnexpectedTaskStateError '
            '1, ValueError 2); legacy/delete: 2 of 4 cycles lost '
            '(RuntimeError 1, TimeoutError 1)', lines[-1])

    def test_only_the_legacy_order_lost_cycles(self):
        # The corrected order's own cycles all completed, but the run did
        # not do what it was asked: not clean either.
        text = self.write([result(completed=4, counts={outcomes.OK: 4}),
                           result(ordering='legacy', completed=3,
                                  lost={'RuntimeError': 1})])
        self.assertEqual(
            'Corrected order: NOT SHOWN CLEAN (every cycle of every '
            'ordering must complete, and a corrected one '
            'end ok): legacy/delete: 1 of 4 cycles lost '
            '(RuntimeError 1)', text.splitlines()[-1])

    def test_bad_outcomes_and_lost_cycles(self):
        text = self.write([result(counts={outcomes.SCHEDULER_409: 3},
                                  completed=3, lost={'RuntimeError': 1})])
        self.assertEqual(
            'Corrected order: BAD OUTCOMES FOUND: corrected/delete: '
            'scheduler 409; corrected/delete: 1 of 4 cycles lost '
            '(RuntimeError 1)', text.splitlines()[-1])

    def test_clean(self):
        text = self.write([result(completed=4, counts={outcomes.OK: 4})])
        self.assertEqual('Corrected order: no bad outcome',
                         text.splitlines()[-1])

    def test_legacy_only(self):
        text = self.write([result(ordering='legacy', completed=4,
                                  counts={outcomes.CLAIM_WIPED: 4})])
        self.assertEqual('Corrected order: not run (only --ordering '
                         'legacy), so no verdict on it',
                         text.splitlines()[-1])
        text = self.write([result(ordering='legacy', completed=0,
                                  counts={}, lost={'ValueError': 4})])
        self.assertEqual('Corrected order: not run (only --ordering '
                         'legacy), so no verdict on it; NOT A CLEAN RUN '
                         '(every cycle must complete): legacy/delete: 4 of '
                         '4 cycles lost (ValueError 4)',
                         text.splitlines()[-1])

    def test_placement_failed_in_every_corrected_cycle(self):
        # Every cycle completed; none ended ok: not clean, and the line
        # says why rather than that a cycle was lost.
        text = self.write([result(counts={outcomes.PLACEMENT_FAILED: 4},
                                  completed=4)])
        self.assertIn('\nCorrected order: NOT SHOWN CLEAN (every cycle of '
                      'every ordering must complete, and a corrected one '
                      'end ok): corrected/delete: no cycle ended ok '
                      '(placement failed 4): nothing shows the order\n',
                      text)

    def test_nothing_ran(self):
        self.assertEqual('Corrected order: NOT SHOWN CLEAN (every cycle of '
                         'every ordering must complete, and a corrected one '
                         'end ok): no ordering ran',
                         self.write([]).splitlines()[-1])

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
        text = self.write([result(ghosts_left=0, ghosts_left_by_cleanup=1,
                                  checked=4)], figures)
        self.assertIn('corrected/delete: 40 requests, 20.0 requests/s; '
                      'galera: deadlocks 1, nodes marked down 3\n', text)
        self.assertIn('  ghost consumers healed: 0, left by the run: 0, by '
                      'the clean-up: 1; cycle judgements cross-checked: 4, '
                      'disagreed: 0\n', text)
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
        self.assertEqual(3, data['cycles_completed'])
        self.assertFalse(data['complete'])
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
