"""``shelvefix stress`` when its clean-up cannot remove everything."""

import io
import json
import signal
from unittest import mock

import fixtures
from keystoneauth1 import exceptions as ks_exc
import testtools

from shelvefix.cmd import common
from shelvefix.cmd import interrupt
from shelvefix.cmd import main
from shelvefix import exception
from shelvefix import race
from shelvefix.race import stress
from shelvefix.race import stress_harness
from shelvefix.tests import base

ARGV = ['stress', '--backend', 'double', '--servers', '1', '--cycles', '1',
        '--ordering', 'corrected']


def _left(error='ConnectTimeout: Request to http://placement/x timed out'):
    return exception.StressCleanupFailed(
        left=stress_harness._describe_left(['rp-1'], ['server-1']),
        error=error,
        providers=['rp-1'], consumers=['server-1'])


class StressCleanupCommandTestCase(base.TestCase):

    def setUp(self):
        super().setUp()
        self.useFixture(fixtures.MockPatch(
            'shelvefix.race.stress_harness.CLEANUP_RETRY_DELAY', 0.0))

    def run_main(self, *argv):
        out, err = io.StringIO(), io.StringIO()
        rc = main.main(list(argv), out=out, err=err)
        return rc, out.getvalue(), err.getvalue()

    def test_a_failed_clean_up_is_one_line_not_a_bug(self):
        # Placement stops answering after the run: every provider's delete
        # times out.
        with mock.patch('shelvefix.backends.fixture.PlacementFixture.'
                        'delete_provider', side_effect=ks_exc.ConnectTimeout(
                            'Request to http://placement/x timed out')):
            rc, out, err = self.run_main(*ARGV)
        self.assertEqual(2, rc, err)
        self.assertEqual(1, len(err.splitlines()), err)
        self.assertTrue(err.startswith(
            'shelvefix stress: could not remove from placement what the '
            'stress run created: 2 resource providers ('), err)
        self.assertIn('ConnectTimeout: Request to http://placement/x timed '
                      'out', err)
        self.assertNotIn('a bug', err)
        self.assertNotIn('Traceback', err)

    def test_interrupted_with_things_left(self):
        interrupted = interrupt.Interrupted(signal.SIGTERM)
        interrupted.cleanup_failure = _left()
        with mock.patch.object(stress, 'run', side_effect=interrupted):
            rc, out, err = self.run_main(*ARGV)
        self.assertEqual(143, rc, err)
        lines = err.splitlines()
        self.assertEqual(2, len(lines), err)
        self.assertEqual(
            'shelvefix stress: interrupted, and could not remove from '
            'placement what the stress run created: 1 resource provider '
            '(rp-1) and the allocations of 1 server (server-1) left (delete '
            'them by hand); ConnectTimeout: Request to http://placement/x '
            'timed out', lines[0])
        self.assertIn('interrupted by SIGTERM', lines[1])
        self.assertNotIn('deleted', lines[1])
        self.assertNotIn('Traceback', err)

    def test_interrupted_and_cleaned_up_is_one_line(self):
        with mock.patch.object(stress, 'run', side_effect=interrupt.
                               Interrupted(signal.SIGINT)):
            rc, out, err = self.run_main(*ARGV)
        self.assertEqual(130, rc, err)
        self.assertEqual(1, len(err.splitlines()), err)
        self.assertIn('interrupted by SIGINT', err)

    def test_problem(self):
        self.assertEqual(str(_left()), common.problem(_left()))
        # Placement's multi-line answer stays one line.
        text = common.one_line(common.problem(_left(
            'PlacementFixtureError: Deleting provider rp-1 failed: '
            'placement answered 500 <html>\n<body>\nboom\n</body>')))
        self.assertNotIn('\n', text)
        self.assertIn('1 resource provider (rp-1)', text)


class StressVerdictCommandTestCase(base.TestCase):
    """A run whose work vanished never exits 0 (issue 32)."""

    def run_main(self, *argv):
        out, err = io.StringIO(), io.StringIO()
        rc = main.main(list(ARGV) + list(argv), out=out, err=err)
        return rc, out.getvalue(), err.getvalue()

    def test_every_cycle_lost(self):
        # What --poll-interval nan did: every cycle raised, and the run
        # said "no bad outcome" and exited 0.
        with mock.patch.object(stress_harness._Server, 'cycle',
                               side_effect=ValueError('sleep length must '
                                                      'be non-negative')):
            rc, out, err = self.run_main('--cycles', '2')
        self.assertEqual(1, rc, out + err)
        self.assertNotIn('no bad outcome', out)
        self.assertEqual(
            'Corrected order: NOT SHOWN CLEAN (every cycle of every '
            'ordering must complete, and a corrected one '
            'end ok): corrected/delete: 2 of 2 cycles lost '
            '(ValueError 2)', out.splitlines()[-1])

    def test_every_cycle_lost_json(self):
        with mock.patch.object(stress_harness._Server, 'cycle',
                               side_effect=ValueError('boom')):
            rc, out, err = self.run_main('--json')
        self.assertEqual(1, rc, out + err)
        data = json.loads(out)
        self.assertIs(False, data['corrected_is_clean'])
        self.assertEqual(['corrected/delete: 1 of 1 cycles lost '
                          '(ValueError 1)'], data['verdict_reasons'])
        self.assertIn('NOT SHOWN CLEAN', data['verdict'])
        self.assertEqual([(0, False)], [(r['cycles_completed'], r['complete'])
                                        for r in data['results']])

    def _returning(self, **kwargs):
        values = dict(ordering=race.CORRECTED, free=race.DELETE, servers=1,
                      cycles=1, elapsed=0.5, counts={},
                      usage_expected={}, usage_actual={}, lost={})
        values.update(kwargs)
        return mock.patch.object(stress, 'run',
                                 return_value=stress.StressResult(**values))

    def test_no_cycle_ran(self):
        with self._returning(cycles=0):
            rc, out, err = self.run_main()
        self.assertEqual(1, rc, out + err)
        self.assertIn('corrected/delete: no cycle ran', out.splitlines()[-1])

    def test_cycles_that_never_ran(self):
        with self._returning(completed=0):
            rc, out, err = self.run_main('--json')
        self.assertEqual(1, rc, out + err)
        self.assertEqual(['corrected/delete: 1 of 1 cycles never ran'],
                         json.loads(out)['verdict_reasons'])

    def test_every_cycle_completed(self):
        with self._returning(counts={'ok': 1}, completed=1):
            rc, out, err = self.run_main('--json')
        self.assertEqual(0, rc, out + err)
        data = json.loads(out)
        self.assertIs(True, data['corrected_is_clean'])
        self.assertEqual([], data['verdict_reasons'])
        self.assertEqual('Corrected order: no bad outcome', data['verdict'])


class BoundsTestCase(testtools.TestCase):
    """The bounds --help states are the ones enforced."""

    def test_server_workers_per_cpu(self):
        from shelvefix.cmd import stress as stress_cmd
        out, err = io.StringIO(), io.StringIO()
        with mock.patch('shelvefix.explorer.parallel.available_cpus',
                        return_value=3):
            with mock.patch('sys.stderr', err):
                rc = main.main(['stress', '--server-workers', '13'],
                               out=out, err=err)
        self.assertEqual(2, rc)
        self.assertEqual('shelvefix stress: --server-workers 13: at most 12 '
                         '(4 per CPU, and this process may use 3 CPU(s))\n',
                         err.getvalue())
        self.assertEqual(4, stress_cmd.SERVER_WORKERS_PER_CPU)

    def test_help_states_the_bounds(self):
        out = io.StringIO()
        with mock.patch('sys.stdout', out):
            self.assertRaises(SystemExit, main.main, ['stress', '--help'])
        text = ' '.join(out.getvalue().split())
        for bound in ('at most 1000', 'at most 100000 per ordering',
                      'at most 4 per CPU', 'more than 0, at most 10',
                      'at most 5000'):
            self.assertIn(bound, text)


class StoppedRunTestCase(base.TestCase):
    """A run stopped by an error prints what it measured, then exits 2."""

    ARGV = ['stress', '--backend', 'double', '--servers', '1', '--cycles',
            '2']

    def run_main(self, *argv):
        out, err = io.StringIO(), io.StringIO()
        real_run = stress.run
        calls = []

        def run(*args, **kwargs):
            calls.append(args[1])
            if len(calls) == 2:
                # The legacy order's set-up meets a dead placement.
                raise ks_exc.ConnectFailure(
                    'Unable to establish connection to http://placement/x')
            return real_run(*args, **kwargs)
        with mock.patch.object(stress, 'run', side_effect=run):
            rc = main.main(list(argv), out=out, err=err)
        self.assertEqual([race.CORRECTED, race.LEGACY], calls)
        return rc, out.getvalue(), err.getvalue()

    def test_the_table_of_what_ran_comes_first(self):
        rc, out, err = self.run_main(*self.ARGV)
        self.assertEqual(2, rc, err)
        self.assertRegex(out, r'\ncorrected +delete +2 ')
        self.assertNotRegex(out, r'\nlegacy ')
        self.assertIn('Corrected order: NOT SHOWN CLEAN, the run stopped '
                      '(what it measured is above): the run stopped: ', out)
        self.assertEqual(1, len(err.splitlines()), err)
        self.assertIn('Unable to establish connection', err)
        self.assertNotIn('a bug', err)

    def test_and_in_json(self):
        rc, out, err = self.run_main(*self.ARGV + ['--json'])
        self.assertEqual(2, rc, err)
        data = json.loads(out)
        self.assertEqual(['corrected'],
                         [r['ordering'] for r in data['results']])
        self.assertEqual(2, data['results'][0]['cycles_completed'])
        self.assertFalse(data['corrected_is_clean'])
        self.assertIn('the run stopped: ', data['verdict_reasons'][-1])

    def test_a_bug_still_shows_as_one(self):
        out, err = io.StringIO(), io.StringIO()
        with mock.patch.object(stress, 'run',
                               side_effect=TypeError('a bug here')):
            rc = main.main(list(self.ARGV), out=out, err=err)
        self.assertEqual(2, rc)
        self.assertIn('unexpected error, a bug in shelvefix: TypeError: a '
                      'bug here', err.getvalue())
        self.assertIn('NOT SHOWN CLEAN, the run stopped', out.getvalue())


class PostgreSQLOptionsTestCase(base.TestCase):
    """--postgresql-port and --postgresql-data reach the cluster script."""

    def run_main(self, *argv):
        out, err = io.StringIO(), io.StringIO()
        # Usage errors go to sys.stderr (argparse), the others to err.
        with mock.patch('sys.stderr', err):
            try:
                rc = main.main(['stress'] + list(argv), out=out, err=err)
            except SystemExit as e:
                rc = e.code
        return rc, err.getvalue()

    def test_the_script_sees_them_while_the_server_runs(self):
        self.useFixture(fixtures.EnvironmentVariable('SHELVEFIX_PG_PORT'))
        self.useFixture(fixtures.EnvironmentVariable('SHELVEFIX_PG_DATA',
                                                     '/before'))
        seen = {}

        class Server(object):
            cluster = None

            def __init__(self, **kwargs):
                pass

            def __enter__(self):
                import os
                seen.update(port=os.environ.get('SHELVEFIX_PG_PORT'),
                            data=os.environ.get('SHELVEFIX_PG_DATA'))
                raise exception.ShelvefixException('no server here')

            def __exit__(self, *exc):
                return False

        with mock.patch('shelvefix.backends.server.PlacementServer',
                        Server):
            rc, err = self.run_main('--postgresql-port', '5999',
                                    '--postgresql-data', 'pg')
        self.assertEqual(2, rc, err)
        import os
        self.assertEqual({'port': '5999',
                          'data': os.path.join(os.getcwd(), 'pg')}, seen)
        # Put back as they were.
        self.assertNotIn('SHELVEFIX_PG_PORT', os.environ)
        self.assertEqual('/before', os.environ['SHELVEFIX_PG_DATA'])

    def test_a_bad_port_is_one_line(self):
        rc, err = self.run_main('--postgresql-port', '70000')
        self.assertEqual(2, rc)
        self.assertIn("'70000' is not a port number", err)
        self.assertEqual(1, len(err.splitlines()), err)

    def test_only_with_postgresql(self):
        rc, err = self.run_main('--database', 'mariadb',
                                '--postgresql-port', '5999')
        self.assertEqual(2, rc)
        self.assertIn('--postgresql-port applies to --database postgresql '
                      'only', err)
