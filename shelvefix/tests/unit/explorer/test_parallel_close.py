"""Closing the explorer's workers never waits for ever."""

import multiprocessing
import signal
import time
from unittest import mock

import fixtures

from shelvefix.explorer import parallel
from shelvefix.tests import base


class WorkersCloseTestCase(base.TestCase):

    def workers(self, procs):
        workers = parallel.Workers.__new__(parallel.Workers)
        workers._procs = procs
        workers._conns = [mock.Mock() for _ in procs]
        return workers

    def test_a_worker_that_ends_is_not_killed(self):
        proc = mock.Mock()
        proc.is_alive.return_value = False
        workers = self.workers([proc])
        workers.close()
        proc.terminate.assert_called_once_with()
        proc.join.assert_called_once_with(parallel.TERMINATE_TIMEOUT)
        proc.kill.assert_not_called()
        workers._conns[0].close.assert_called_once_with()

    def test_a_worker_that_outlives_its_sigterm_is_killed(self):
        stubborn, quick = mock.Mock(), mock.Mock()
        stubborn.is_alive.return_value = True
        quick.is_alive.return_value = False
        workers = self.workers([stubborn, quick])
        workers.close()
        stubborn.kill.assert_called_once_with()
        self.assertEqual([mock.call(parallel.TERMINATE_TIMEOUT)] * 2,
                         stubborn.join.call_args_list)
        quick.kill.assert_not_called()
        for conn in workers._conns:
            conn.close.assert_called_once_with()

    def test_a_real_worker_ignoring_sigterm_is_killed(self):
        def stubborn():
            signal.signal(signal.SIGTERM, signal.SIG_IGN)
            time.sleep(60)

        proc = multiprocessing.get_context('fork').Process(target=stubborn)
        proc.start()
        self.addCleanup(proc.join, 1)
        time.sleep(0.2)
        workers = self.workers([proc])
        self.useFixture(fixtures.MonkeyPatch(
            'shelvefix.explorer.parallel.TERMINATE_TIMEOUT', 0.5))
        workers.close()
        self.assertFalse(proc.is_alive())
        self.assertEqual(-signal.SIGKILL, proc.exitcode)
