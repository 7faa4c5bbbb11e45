"""Tests for the shelvefix command line."""

import functools
import io
import json
import os
import subprocess
import sys
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
        rc, out = self.run_main('timeline', '--backend', 'double')
        self.assertEqual(0, rc)
        self.assertIn('(free with DELETE, double placement)', out)
        self.assertIn('(free with GET + PUT empty, double placement)', out)
        self.assertIn('consumer_generation=null -> 204', out)
        self.assertEqual(2, out.count('result: OK'))

    def test_json_one_strategy(self):
        rc, out = self.run_main('timeline', '--free', 'get-put', '--json',
                                '--backend', 'double')
        self.assertEqual(0, rc)
        (result,) = json.loads(out)
        self.assertTrue(result['ok'])
        self.assertEqual([], result['order_violations'])
        self.assertEqual(
            [('compute', 'GET'), ('compute', 'PUT'), ('compute', 'save'),
             ('scheduler', 'GET'), ('scheduler', 'PUT')],
            [(e['actor'], e.get('method', e['event']))
             for e in result['events']])
        self.assertEqual(result['allocations_expected'],
                         result['allocations_held'])

    def test_real_backend(self):
        if not real.available():
            self.skipTest(real.INSTALL_HINT)
        # The real service is every command's default.
        rc, out = self.run_main('timeline')
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


class StartUpTestCase(base.TestCase):
    """A subcommand loads what it runs, and only that.

    Run in a fresh interpreter: this test process has loaded everything.
    (How long start-up takes is for benchmarks/bench_startup.py to say.)
    """

    HEAVY = ('shelvefix.explorer', 'shelvefix.race.program',
             'shelvefix.race.stress', 'shelvefix.race.fault_matrix',
             'shelvefix.placement', 'shelvefix.compute', 'shelvefix.conf',
             'keystoneauth1', 'oslo_config', 'requests', 'placement')

    def loaded_by(self, argv):
        code = ('import contextlib, io, sys\n'
                'from shelvefix.cmd import main\n'
                'with contextlib.redirect_stdout(io.StringIO()):\n'
                '    try:\n'
                '        main.main(%r, out=io.StringIO())\n'
                '    except SystemExit:\n'
                '        pass\n'
                'print("\\n".join(sorted(sys.modules)))\n' % (argv,))
        proc = subprocess.run([sys.executable, '-c', code],
                              capture_output=True, text=True, check=True)
        return set(proc.stdout.split())

    def assertNothingHeavy(self, loaded):
        heavy = sorted(m for m in loaded
                       if any(m == h or m.startswith(h + '.')
                              for h in self.HEAVY))
        self.assertEqual([], heavy)

    def test_help_loads_no_lab(self):
        self.assertNothingHeavy(self.loaded_by(['--help']))

    def test_check_loads_only_the_checker(self):
        import shelvefix.compute.manager as ours
        loaded = self.loaded_by(['check', ours.__file__])
        self.assertIn('shelvefix.novacheck.check', loaded)
        self.assertNothingHeavy(loaded)


class DefaultBackendTestCase(base.TestCase):
    """One rule: without --backend, real placement."""

    def test_single_placement_commands(self):
        parser = main.build_parser()
        for command in ('race', 'timeline'):
            args = parser.parse_args([command])
            self.assertEqual('real', args.backend, command)

    def test_faults(self):
        from shelvefix.cmd import common
        from shelvefix.race import fault_matrix
        with mock.patch.object(fault_matrix, 'run_matrix', return_value=[]), \
                mock.patch.object(common, 'make_backend') as make_backend:
            main.main(['faults', '--json'], out=io.StringIO())
        make_backend.assert_called_once_with('real', [])


class PackagedFilesTestCase(base.TestCase):

    def test_postgresql_script_ships_with_the_package(self):
        import shelvefix
        from shelvefix.backends import postgresql
        script = postgresql.POSTGRESQL_SCRIPT
        self.assertTrue(os.path.isfile(script))
        self.assertTrue(os.path.abspath(script).startswith(
            os.path.dirname(os.path.abspath(shelvefix.__file__))))


class BrokenPipeTestCase(base.TestCase):
    """A reader that goes away (``| head``) ends the command quietly."""

    def test_broken_pipe(self):
        class Closed(io.StringIO):
            def write(self, text):
                raise BrokenPipeError(32, 'Broken pipe')

        err = io.StringIO()
        self.assertEqual(1, main.main(['contract', '--list'], out=Closed(),
                                      err=err))
        self.assertEqual('', err.getvalue())
