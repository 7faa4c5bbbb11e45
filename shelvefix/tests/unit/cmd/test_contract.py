"""Tests for ``shelvefix contract`` (the runner is stubbed out here)."""

import collections
import io
import json
import logging
from unittest import mock

import fixtures
import testtools

from shelvefix.backends import real
from shelvefix.cmd import contract
from shelvefix.cmd import main
from shelvefix.contract import runner
from shelvefix.contract import scenarios


#: Every registered scenario, before a test stubs the list.
ALL_NAMES = scenarios.names


def _result(disagree=False, names=('first', 'second'), requests=3):
    def transcript(backend, wall):
        return runner.Transcript('s', backend, [object()] * requests, wall,
                                 wall / 2, None)

    def item(name, differences):
        return runner.ScenarioResult(
            name, 'what %s shows' % name,
            collections.OrderedDict([('double', transcript('double', 0.2)),
                                     ('real', transcript('real', 3.0))]),
            differences)

    differences = []
    if disagree:
        differences = [runner.Difference(
            2, 'PUT /allocations/<c1> @1.28', 'status', 409, 400, 'double',
            'real'), runner.Difference(
            3, 'HEAD /', 'header vary', runner.ABSENT, 'x', 'double',
            'real')]
    return runner.RunResult(
        ('double', 'real'),
        [item(names[0], []), item(names[1], differences)],
        collections.OrderedDict([('double', 0.41), ('real', 6.2)]),
        collections.OrderedDict([('double', 0.205), ('real', 3.1)]))


class ContractCommandTestCase(testtools.TestCase):

    def setUp(self):
        super(ContractCommandTestCase, self).setUp()
        self.run_all = self.useFixture(fixtures.MockPatchObject(
            runner, 'run_all', return_value=_result())).mock
        self.available = self.useFixture(fixtures.MockPatchObject(
            real, 'available', return_value=True)).mock
        self.stderr = self.useFixture(fixtures.MockPatch(
            'sys.stderr', io.StringIO())).mock
        # The scenarios the stubbed run played are all there are.
        self.names = self.useFixture(fixtures.MockPatchObject(
            scenarios, 'names', return_value=['first', 'second'])).mock

    def main(self, *argv):
        out = io.StringIO()
        with mock.patch('sys.stdout', out):
            try:
                rc = main.main(['contract'] + list(argv), out=out)
            except SystemExit as e:
                # argparse: --help, or a usage error.
                rc = e.code
        return rc, out.getvalue()

    def test_all_agree(self):
        rc, out = self.main()
        self.assertEqual(0, rc)
        self.assertEqual(
            '2 contract scenarios, 2 agree\n'
            'double: 0.41 s  real: 6.20 s  (real/double 15.1x)\n'
            'requests only: double 0.20 s  real 3.10 s  (real/double '
            '15.1x)\n', out)
        self.run_all.assert_called_once_with(('double', 'real'), None,
                                             progress=mock.ANY)

    def test_disagreement(self):
        self.run_all.return_value = _result(disagree=True)
        rc, out = self.main()
        self.assertEqual(1, rc)
        self.assertIn('2 contract scenarios, 1 agree\n\n'
                      'DISAGREE second: what second shows\n'
                      '  #2 PUT /allocations/<c1> @1.28: status: double '
                      '409, real 400\n'
                      '  #3 HEAD /: header vary: double <absent>, real '
                      '"x"\n\ndouble: 0.41 s', out)

    def test_json(self):
        self.run_all.return_value = _result(disagree=True)
        rc, out = self.main('--json')
        self.assertEqual(1, rc)
        report = json.loads(out)
        self.assertEqual((2, 1), (report['scenarios'], report['agree']))
        self.assertEqual({'double': 0.41, 'real': 6.2}, report['wall_time'])
        self.assertAlmostEqual(6.2 / 0.41, report['ratio'])
        (bad,) = report['disagreeing']
        self.assertEqual('second', bad['name'])
        self.assertEqual(
            [{'index': 2, 'request': 'PUT /allocations/<c1> @1.28',
              'field': 'status', 'value_a': 409, 'value_b': 400,
              'backend_a': 'double', 'backend_b': 'real'},
             {'index': 3, 'request': 'HEAD /', 'field': 'header vary',
              'value_a': '<absent>', 'value_b': 'x',
              'backend_a': 'double', 'backend_b': 'real'}],
            bad['differences'])
        self.assertEqual(
            [{'name': 'first', 'agrees': True,
              'requests': {'double': 3, 'real': 3},
              'wall_time': {'double': 0.2, 'real': 3.0}},
             {'name': 'second', 'agrees': False,
              'requests': {'double': 3, 'real': 3},
              'wall_time': {'double': 0.2, 'real': 3.0}}],
            report['results'])

    def test_scenario_option(self):
        self.run_all.return_value = _result(
            names=('allocations_delete', 'allocations_get_known'))
        rc, _out = self.main('--scenario', 'allocations_delete',
                             '--scenario', 'allocations_get_known',
                             '--scenario', 'allocations_delete')
        self.assertEqual(0, rc)
        self.run_all.assert_called_once_with(
            ('double', 'real'), ['allocations_delete',
                                 'allocations_get_known'],
            progress=mock.ANY)
        # Progress on stderr counts the scenarios that will run.
        progress = self.run_all.call_args[1]['progress']
        self.assertEqual((2, 'scenarios'), (progress.total, progress.unit))

    def test_unknown_scenario(self):
        rc, out = self.main('--scenario', 'nope')
        self.assertEqual((2, ''), (rc, out))
        self.assertIn("unknown contract scenario 'nope'",
                      self.stderr.getvalue())
        self.run_all.assert_not_called()

    def test_placement_not_installed(self):
        self.available.return_value = False
        rc, out = self.main()
        self.assertEqual((2, ''), (rc, out))
        self.assertEqual(
            'shelvefix contract: the real placement backend needs '
            'openstack-placement: pip install "shelvefix[placement]"\n',
            self.stderr.getvalue())
        self.run_all.assert_not_called()

    def test_usage_error(self):
        rc, out = self.main('--bogus')
        self.assertEqual((2, ''), (rc, out))
        self.assertIn('unrecognized arguments: --bogus',
                      self.stderr.getvalue())

    def test_help_and_list(self):
        self.names.side_effect = ALL_NAMES
        rc, out = self.main('--help')
        self.assertEqual(0, rc)
        self.assertIn('usage: shelvefix contract', out)
        self.assertIn('--scenario NAME', out)
        rc, out = self.main('--list')
        self.assertEqual(0, rc)
        lines = out.splitlines()
        self.assertEqual(len(scenarios.names()), len(lines))
        self.assertTrue(lines[0].startswith('allocations_get_unknown '))
        self.run_all.assert_not_called()
        self.available.assert_not_called()

    def test_placement_logs_silenced_only_while_running(self):
        logger = logging.getLogger('placement')
        seen = []
        self.run_all.side_effect = lambda *a, **kw: (
            seen.append((logger.propagate, list(logger.handlers))) or
            _result())
        handlers = list(logger.handlers)
        self.main()
        ((propagate, during),) = seen
        self.assertFalse(propagate)
        self.assertTrue(any(isinstance(h, logging.NullHandler)
                            for h in during))
        self.assertTrue(logger.propagate)
        self.assertEqual(handlers, logger.handlers)

    def test_ratio_needs_both_backends(self):
        self.assertIsNone(contract._ratio({'double': 0.0, 'real': 1.0}))
        self.assertIsNone(contract._ratio({'double': 1.0}))
        self.assertEqual(2.0, contract._ratio({'double': 1.0, 'real': 2.0}))

    def test_argv_defaults_to_sys_argv(self):
        self.names.side_effect = ALL_NAMES
        with mock.patch('sys.argv', ['shelvefix', 'contract', '--list']):
            self.assertEqual(0, main.main(out=io.StringIO()))

    def test_a_scenario_not_played_is_no_verdict(self):
        # Exit 0 needs every scenario played, with requests, on both
        # sides.
        self.run_all.return_value = _result(names=('first', 'third'))
        rc, out = self.main()
        self.assertEqual(1, rc)
        self.assertEqual('No verdict, the scenarios did not all run: '
                         'scenario second was not played',
                         out.splitlines()[-1])

    def test_a_scenario_without_requests_is_no_verdict(self):
        self.run_all.return_value = _result(requests=0)
        rc, out = self.main('--json')
        self.assertEqual(1, rc)
        self.assertEqual('scenario first made no request on double',
                         json.loads(out)['unearned'])
        self.assertEqual('shelvefix contract: no verdict: scenario first '
                         'made no request on double\n',
                         self.stderr.getvalue())

    def test_a_scenario_skipped_on_one_backend_is_no_verdict(self):
        result = _result()
        del result.scenarios[1].transcripts['real']
        self.run_all.return_value = result
        rc, out = self.main()
        self.assertEqual(1, rc)
        self.assertIn('scenario second was not played on real', out)
