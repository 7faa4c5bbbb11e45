"""Tests for the shelvefix command line.

Those on the real placement service (every command's default) and those
that start a fresh interpreter are in the functional tests.
"""

import io
import json
import os
from unittest import mock

import fixtures

from shelvefix.backends import real
from shelvefix.cmd import main
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

    def test_real_backend_missing(self):
        with mock.patch.object(real, 'available', return_value=False):
            with mock.patch('sys.stderr', io.StringIO()) as err:
                rc, _out = self.run_main('timeline', '--backend', 'real')
        self.assertEqual(2, rc)
        self.assertIn('pip install "shelvefix[placement]"', err.getvalue())

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
        # Wrapped, so that a write that fails is one line (cmd.output).
        self.assertIs(out, run_out.stream)


class CheckCommandTestCase(base.TestCase):

    def test_check_is_wired(self):
        import shelvefix.compute.manager as ours
        out = io.StringIO()
        self.assertEqual(0, main.main(['check', ours.__file__], out=out))
        self.assertIn('FIXED:', out.getvalue())


class DefaultBackendTestCase(base.TestCase):
    """One rule: without --backend, real placement (on nova: the double)."""

    def test_single_placement_commands(self):
        parser = main.build_parser()
        args = parser.parse_args(['timeline'])
        self.assertEqual('real', args.backend)

    def test_race_on_each_target(self):
        from shelvefix.cmd import race
        parser = main.build_parser()
        for argv, backend in ((['race'], 'real'),
                              (['race', '--target', 'library'], 'real'),
                              (['race', '--target', 'nova'], 'double'),
                              (['race', '--nova', 'X'], 'double'),
                              (['race', '--target', 'nova', '--backend',
                                'double'], 'double')):
            args = parser.parse_args(argv)
            race._check_target(args)
            self.assertEqual(backend, args.backend, argv)

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
        # 141, as a shell reports a process SIGPIPE ended (``yes | head``),
        # not 1, which means a bad outcome.
        self.assertEqual(141, main.main(['contract', '--list'], out=Closed(),
                                        err=err))
        self.assertEqual('', err.getvalue())
