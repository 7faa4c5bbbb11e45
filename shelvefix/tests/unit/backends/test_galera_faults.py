"""Tests for shelvefix.backends.galera_faults, on a mock cluster."""

import errno
import os
import signal
import threading
from unittest import mock

import fixtures
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
                          'pause': galera_faults.NodePause,
                          'node-death': galera_faults.NodeDeath,
                          'server-death': galera_faults.ServerDeath,
                          'disk-full': galera_faults.DiskFull},
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


def _placement(directory='/nonexistent'):
    placement = mock.Mock()
    placement.cluster.nodes = [mock.Mock(pid=100 + i, directory=directory)
                               for i in range(3)]
    placement.cluster.describe.side_effect = lambda i: 'node %d' % (i + 1)
    placement.cluster.alive.return_value = True
    placement.servers = [mock.Mock() for _i in range(3)]
    for i, srv in enumerate(placement.servers):
        srv.process.return_value = mock.Mock(
            pid=200 + i, poll=mock.Mock(return_value=None))
    placement.describe_server.side_effect = (
        lambda i: 'placement server %d' % (i + 1))
    return placement


class OutsideTestCase(testtools.TestCase):
    """Done to the process itself, behind the run's back."""

    def test_a_node_killed_for_good(self):
        placement = _placement()
        with mock.patch('os.kill') as kill:
            fault = galera_faults.start('node-death', placement)
            fault.join(10)
        kill.assert_called_once_with(102, signal.SIGKILL)
        # The run is not told: the cluster's own kill is not used.
        placement.cluster.kill.assert_not_called()
        placement.cluster.restart.assert_not_called()
        self.assertRegex(fault.describe(), r'^node 3 killed \(SIGKILL\), '
                         r'not started again at \d+\.\d s$')

    def test_a_node_already_dead_is_not_killed_again(self):
        placement = _placement()
        placement.cluster.alive.return_value = False
        fault = galera_faults.NodeDeath(placement, 2, after=0)
        with mock.patch('os.kill') as kill:
            fault.run()
        kill.assert_not_called()
        self.assertIn('node 3 already dead', fault.describe())

    def test_a_placement_server_killed(self):
        placement = _placement()
        fault = galera_faults.ServerDeath(placement, 2, after=0)
        with mock.patch('os.kill') as kill:
            fault.run()
        kill.assert_called_once_with(202, signal.SIGKILL)
        self.assertIn('placement server 3 killed (SIGKILL)', fault.describe())

    def test_a_full_disk_is_emptied_again(self):
        directory = self.useFixture(fixtures.TempDir()).path
        placement = _placement(directory)
        fault = galera_faults.DiskFull(placement, 2, after=0, full_for=0.01)
        filled = []
        with mock.patch.object(galera_faults, 'fill',
                               side_effect=lambda path: filled.append(
                                   open(path, 'w').close())):
            fault.run()
        self.assertEqual(1, len(filled))
        self.assertFalse(os.path.exists(fault.path))
        self.assertRegex(fault.describe(), r'^node 3: disk full \(0 bytes '
                         r'free\) at \d+\.\d s, emptied 0\.0 s later$')

    def test_cancelled_before_it_strikes(self):
        fault = galera_faults.NodeDeath(_placement(), 2, after=30)
        fault.cancel.set()
        with mock.patch('os.kill') as kill:
            fault.run()
        kill.assert_not_called()
        self.assertEqual('node 3 not killed for good: the run ended first',
                         fault.describe())

    def test_fill_writes_until_not_a_byte_fits(self):
        room = [10 * 1024 + 7]

        class Disk(object):
            def write(self, data):
                if len(data) > room[0]:
                    raise OSError(errno.ENOSPC, 'No space left on device')
                room[0] -= len(data)
                return len(data)

            def __enter__(self):
                return self

            def __exit__(self, *exc):
                return False
        with mock.patch('builtins.open', return_value=Disk()):
            self.assertEqual(10 * 1024 + 7,
                             galera_faults.fill('/x', chunk=1024))
        self.assertEqual(0, room[0])

    def test_fill_passes_other_errors_on(self):
        disk = mock.MagicMock()
        disk.__enter__.return_value.write.side_effect = OSError(
            errno.EIO, 'I/O error')
        with mock.patch('builtins.open', return_value=disk):
            self.assertRaises(OSError, galera_faults.fill, '/x')
