"""``shelvefix stress`` when its clean-up cannot remove everything."""

import io
import signal
from unittest import mock

import fixtures
from keystoneauth1 import exceptions as ks_exc

from shelvefix.cmd import common
from shelvefix.cmd import interrupt
from shelvefix.cmd import main
from shelvefix import exception
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
