"""The fault matrix: every fault at every request, nothing lost.

The checks must be able to fail: with the legacy order, or without the
report client's lost-reply verification, cases are reported lost.
"""

import io
import json
from unittest import mock

import testscenarios

from shelvefix import backends
from shelvefix.backends import real
from shelvefix.cmd import main
from shelvefix.compute import manager
from shelvefix import exception
from shelvefix import race
from shelvefix.race import fault_matrix
from shelvefix.race import scenario
from shelvefix.race import variants
from shelvefix.scheduler.client import report
from shelvefix.tests import base

load_tests = testscenarios.load_tests_apply_scenarios


class FaultMatrixTestCase(testscenarios.WithScenarios, base.TestCase):

    scenarios = [('double', {'backend': 'double'}),
                 ('real', {'backend': 'real'})]

    def setUp(self):
        super(FaultMatrixTestCase, self).setUp()
        if self.backend == 'real' and not real.available():
            self.skipTest(real.INSTALL_HINT)
        self.placement = self.useFixture(backends.make_backend(self.backend))

    def test_nothing_lost(self):
        cases = fault_matrix.run_matrix(self.placement)
        self.assertEqual(
            [], [(c.free, c.point, c.kind.name, c.violations)
                 for c in cases if c.violations])
        summary = fault_matrix.summary(cases)
        # Every transport fault at the 3 + 4 requests of both ways of
        # freeing, and the partly committed DELETE at the one DELETE.
        self.assertEqual((len(fault_matrix.KINDS) - 1) * (3 + 4) + 1,
                         summary['faults_tried'])
        self.assertEqual(0, summary['lost'])
        # Most faults surface as failures; lost replies of committed
        # writes are recognised and absorbed.
        absorbed = {(c.point.phase, c.point.method, c.kind.name)
                    for c in cases if not c.failed}
        self.assertIn(('claim', 'PUT', 'timeout after commit'), absorbed)
        self.assertIn(('offload', 'DELETE', '500 after commit'), absorbed)
        # A ghost consumer left by placement: absorbed by the offload
        # (the allocations are gone), healed by the claim.
        self.assertIn(('offload', 'DELETE', 'DELETE partly committed'),
                      absorbed)
        for case in cases:
            if case.failed:
                self.assertIsInstance(case.error,
                                      exception.ShelvefixException)


class FaultChecksCanFailTestCase(base.TestCase):

    def setUp(self):
        super(FaultChecksCanFailTestCase, self).setUp()
        self.placement = self.useFixture(backends.make_backend('double'))

    def test_legacy_order_is_caught(self):
        with mock.patch.object(scenario.ShelveScenario, '__init__',
                               autospec=True,
                               side_effect=self._legacy_init):
            cases = fault_matrix.run_matrix(self.placement, frees=('delete',))
        lost = [c for c in cases if c.violations]
        self.assertTrue(lost)
        self.assertTrue(any('SHELVED_OFFLOADED while holding' in v
                            for c in lost for v in c.violations))

    _real_init = scenario.ShelveScenario.__init__

    def _legacy_init(self_, scn, **kwargs):
        kwargs['manager_cls'] = variants.legacy_compute_manager()
        FaultChecksCanFailTestCase._real_init(scn, **kwargs)

    def test_lost_reply_without_verification_is_caught(self):
        with mock.patch.object(report.SchedulerReportClient, '_landed',
                               return_value=False):
            case = fault_matrix.run_case(
                self.placement, race.DELETE,
                fault_matrix.Point('claim', 'PUT', 1),
                fault_matrix.KINDS[2])
        self.assertEqual('timeout after commit', case.kind.name)
        self.assertIn('failed claim left allocations', case.violations[0])

    def test_ghost_without_healing_is_caught(self):
        def no_healing(self_, context, consumer_uuid, payload, version,
                       conflict):
            raise conflict
        ghost = [k for k in fault_matrix.KINDS
                 if k.when == fault_matrix.INSIDE][0]
        with mock.patch.object(report.SchedulerReportClient, '_claim_ghost',
                               no_healing):
            case = fault_matrix.run_case(
                self.placement, race.DELETE,
                fault_matrix.Point('offload', 'DELETE', 1), ghost)
        self.assertIn('claim retry failed', ' '.join(case.violations))
        self.assertIn('expected 1 but got None', ' '.join(case.violations))

    def test_unclear_failure_is_caught(self):
        def silent_free(self_, context, instance):
            raise RuntimeError('boom')
        with mock.patch.object(manager.ComputeManager, '_free_allocations',
                               silent_free):
            case = fault_matrix.run_case(
                self.placement, race.DELETE,
                fault_matrix.Point('offload', 'DELETE', 1),
                fault_matrix.KINDS[0])
        self.assertIn('not a shelvefix exception', ' '.join(case.violations))
        self.assertIn('no ERROR log naming the consumer',
                      ' '.join(case.violations))


class NotInjectedTestCase(base.TestCase):
    """A placement in another process takes no fault inside it."""

    def test_inside_faults_are_said_not_run(self):
        placement = self.useFixture(backends.make_backend('double'))
        inside = [k for k in fault_matrix.KINDS
                  if k.when == fault_matrix.INSIDE]
        kinds = inside + [fault_matrix.KINDS[0]]
        with mock.patch.object(placement, 'fail_consumer_cleanup',
                               side_effect=NotImplementedError('remote')):
            cases = fault_matrix.run_matrix(placement, frees=[race.DELETE],
                                            kinds=kinds)
        skipped = [c for c in cases if c.not_injected]
        self.assertEqual([('offload', 'DELETE')],
                         [(c.point.phase, c.point.method) for c in skipped])
        self.assertEqual(fault_matrix.NOT_IN_THIS_PROCESS,
                         skipped[0].not_injected)
        summary = fault_matrix.summary(cases)
        # The connection-refused kind at the delete way's 3 requests.
        self.assertEqual(3, summary['faults_tried'])
        self.assertEqual(1, summary['not_injected'])
        self.assertEqual(0, summary['lost'])

    def test_the_command_says_what_did_not_run(self):
        out = io.StringIO()
        with mock.patch.object(
                backends.fixture.PlacementFixture, 'fail_consumer_cleanup',
                side_effect=NotImplementedError('remote')):
            rc = main.main(['faults', '--backend', 'double', '--free',
                            'delete'], out=out)
        self.assertEqual(0, rc)
        self.assertIn('double: 1 case not applicable, excluded (DELETE '
                      'partly committed): '
                      "placement's database is another process's",
                      out.getvalue())


class FaultsCommandTestCase(base.TestCase):

    def test_text_and_json(self):
        out = io.StringIO()
        self.assertEqual(0, main.main(['faults', '--backend', 'double',
                                       '--free', 'delete'], out=out))
        text = out.getvalue()
        self.assertIn('double             28', text)
        self.assertIn('Lost: 0 (must be 0)', text)
        out = io.StringIO()
        self.assertEqual(0, main.main(['faults', '--backend', 'double',
                                       '--json', '--free', 'get-put'],
                                      out=out))
        data = json.loads(out.getvalue())['double']
        self.assertEqual(36, data['summary']['faults_tried'])
        self.assertEqual(36, len(data['cases']))

    def test_lost_exits_non_zero(self):
        out = io.StringIO()
        with mock.patch.object(report.SchedulerReportClient, '_landed',
                               return_value=False):
            rc = main.main(['faults', '--backend', 'double', '--free',
                            'delete', '--verbose'], out=out)
        self.assertEqual(1, rc)
        self.assertIn('failed claim left allocations', out.getvalue())
        self.assertNotIn('Lost: 0 ', out.getvalue())
