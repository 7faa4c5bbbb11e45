"""Tests for shelvefix.backends.galera_faults, on a mock cluster."""

import threading
from unittest import mock

import testtools

from shelvefix.backends import galera_faults
from shelvefix.backends import mariadb
from shelvefix.conf import placement as placement_conf


class NodeCrashTestCase(testtools.TestCase):

    def test_killed_then_started_again(self):
        cluster = mock.Mock()
        crash = galera_faults.NodeCrash(cluster, 2, after=0.01, down_for=0.01)
        crash.start()
        crash.join(5)
        cluster.kill.assert_called_once_with(2)
        cluster.restart.assert_called_once_with(2)
        # The thread waits in real time: on a loaded machine its 0.01 s
        # may read 0.1 s.
        self.assertRegex(crash.describe(),
                         r'^node 3 killed \(SIGKILL\) at 0\.[01] s, started '
                         r'again 0\.[01] s later, Synced at')

    def test_cancelled_before_the_kill(self):
        cluster = mock.Mock()
        crash = galera_faults.NodeCrash(cluster, 0, after=30, down_for=1)
        crash.start()
        crash.cancel.set()
        crash.join(5)
        self.assertFalse(crash.is_alive())
        cluster.kill.assert_not_called()
        self.assertEqual('node 1 not killed: the run ended first',
                         crash.describe())

    def test_its_wait_is_bounded(self):
        crash = galera_faults.NodeCrash(mock.Mock(), 0, after=2, down_for=5)
        self.assertEqual(7 + 2 * mariadb.START_TIMEOUT +
                         mariadb.STOP_TIMEOUT, crash.timeout)
        self.assertIsInstance(crash.cancel, threading.Event)


class NodePauseTestCase(testtools.TestCase):

    def test_paused_then_resumed(self):
        cluster = mock.Mock()
        pause = galera_faults.NodePause(cluster, 2, after=0.01,
                                        paused_for=0.01)
        pause.start()
        pause.join(5)
        self.assertEqual([mock.call.pause(2), mock.call.resume(2)],
                         cluster.mock_calls)
        self.assertIn('node 3 paused (SIGSTOP) at 0.0 s, resumed (SIGCONT) '
                      '0.0 s later, Synced at', pause.describe())

    def test_longer_than_the_client_timeout_by_default(self):
        pause = galera_faults.NodePause(mock.Mock(), 0)
        self.assertGreater(pause.lasting, placement_conf.DEFAULT_TIMEOUT)

    def test_the_command_names_its_faults(self):
        self.assertEqual({'kill': galera_faults.NodeCrash,
                          'pause': galera_faults.NodePause},
                         galera_faults.FAULTS)

    def test_a_node_that_does_not_come_back_is_said(self):
        for fault, recovery, harm in ((galera_faults.NodeCrash, 'restart',
                                       'killed'),
                                      (galera_faults.NodePause, 'resume',
                                       'paused')):
            cluster = mock.Mock()
            getattr(cluster, recovery).side_effect = RuntimeError('boom')
            struck = fault(cluster, 1, 0, 0)
            struck.run()
            # Real time: on a loaded machine no time may read 0.1 s.
            self.assertRegex(struck.describe(),
                             r'^node 2 %s at 0\.[01] s, did not come back: '
                             r'RuntimeError: boom$' % harm)
