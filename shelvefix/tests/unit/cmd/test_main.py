"""Tests for the shelvefix command line."""

import functools
import io
import json
from unittest import mock

import fixtures

from shelvefix.backends import real
from shelvefix.cmd import main
from shelvefix.race import scenario
from shelvefix.race import variants
from shelvefix.tests import base


class TimelineCommandTestCase(base.TestCase):

    def run_main(self, *argv):
        out = io.StringIO()
        return main.main(list(argv), out=out), out.getvalue()

    def test_text_both_strategies(self):
        rc, out = self.run_main('timeline')
        self.assertEqual(0, rc)
        self.assertIn('(free with DELETE, double placement)', out)
        self.assertIn('(free with GET + PUT empty, double placement)', out)
        self.assertIn('consumer_generation=null -> 204', out)
        self.assertEqual(2, out.count('result: OK'))

    def test_json_one_strategy(self):
        rc, out = self.run_main('timeline', '--free', 'get-put', '--json')
        self.assertEqual(0, rc)
        (result,) = json.loads(out)
        self.assertTrue(result['ok'])
        self.assertEqual([], result['order_violations'])
        self.assertEqual(
            [('compute', 'GET'), ('compute', 'PUT'), ('compute', 'save'),
             ('compute', 'save'), ('scheduler', 'GET'),
             ('scheduler', 'PUT')],
            [(e['actor'], e.get('method', e['event']))
             for e in result['events']])
        self.assertEqual(result['allocations_expected'],
                         result['allocations_held'])

    def test_real_backend(self):
        if not real.available():
            self.skipTest(real.INSTALL_HINT)
        rc, out = self.run_main('timeline', '--backend', 'real')
        self.assertEqual(0, rc)
        self.assertIn('(free with DELETE, real placement)', out)
        self.assertEqual(2, out.count('result: OK'))

    def test_real_backend_missing(self):
        with mock.patch.object(real, 'available', return_value=False):
            with mock.patch('sys.stderr', io.StringIO()) as err:
                rc, _out = self.run_main('timeline', '--backend', 'real')
        self.assertEqual(2, rc)
        self.assertIn('pip install "shelvefix[placement]"', err.getvalue())

    def test_legacy_order_exits_non_zero(self):
        legacy_scenario = functools.partial(
            scenario.ShelveScenario,
            manager_cls=variants.legacy_compute_manager())
        with mock.patch.object(scenario, 'ShelveScenario', legacy_scenario):
            rc, out = self.run_main('timeline', '--free', 'delete')
        self.assertEqual(1, rc)
        self.assertIn('came after the save that made SHELVED_OFFLOADED '
                      'visible', out)
        self.assertIn('result: FAILED', out)

    def test_claim_failure_is_reported(self):
        with mock.patch.object(scenario.ShelveScenario, 'unshelve_claim',
                               side_effect=RuntimeError('no host')):
            rc, out = self.run_main('timeline', '--free', 'delete')
        self.assertEqual(1, rc)
        self.assertIn('unshelve claim: no host', out)

    def test_usage_errors(self):
        stderr = self.useFixture(fixtures.StringStream('stderr')).stream
        with mock.patch('sys.stderr', stderr):
            self.assertRaises(SystemExit, main.main, [])
            self.assertRaises(SystemExit, main.main,
                              ['timeline', '--free', 'bogus'])
        stderr.seek(0)
        self.assertIn("invalid choice: 'bogus'", stderr.read())


class ContractCommandTestCase(base.TestCase):

    def test_options_reach_the_contract_command(self):
        out = io.StringIO()
        with mock.patch('shelvefix.cmd.contract.run',
                        return_value=0) as contract_run:
            self.assertEqual(0, main.main(
                ['--debug', 'contract', '--scenario', 'x', '--json'],
                out=out))
        ((args, run_out, _err), _kwargs) = contract_run.call_args
        self.assertEqual((['x'], True, False, True),
                         (args.names, args.json, args.list, args.debug))
        self.assertIs(out, run_out)


class CheckCommandTestCase(base.TestCase):

    def test_check_is_wired(self):
        import shelvefix.compute.manager as ours
        out = io.StringIO()
        self.assertEqual(0, main.main(['check', ours.__file__], out=out))
        self.assertIn('FIXED:', out.getvalue())
