"""Tests for shelvefix.backends.watch: what befalls a run's processes."""

import os
import signal
import subprocess
import time
from unittest import mock

import testtools

from shelvefix.backends import watch


class WatchTestCase(testtools.TestCase):

    def process(self):
        proc = subprocess.Popen(['sleep', '60'])
        self.addCleanup(proc.wait)
        self.addCleanup(proc.kill)
        return proc

    def wait_for(self, condition, timeout=10.0):
        deadline = time.monotonic() + timeout
        while not condition():
            self.assertLess(time.monotonic(), deadline, 'never happened')
            time.sleep(0.01)

    def test_a_process_killed_from_outside_is_named(self):
        proc = self.process()
        w = watch.Watch([watch.Watched(lambda: 'node 3 (pid %d)' % proc.pid,
                                       lambda: proc, None)])
        w.look()
        self.assertEqual([], w.noted)
        os.kill(proc.pid, signal.SIGKILL)
        self.wait_for(lambda: proc.poll() is not None)
        w.look()
        w.look()
        self.assertEqual(['node 3 (pid %d) died: SIGKILL' % proc.pid],
                         [n.what for n in w.noted])

    def test_paused_and_resumed(self):
        proc = self.process()
        w = watch.Watch([watch.Watched(lambda: 'server 2', lambda: proc,
                                       None)])
        os.kill(proc.pid, signal.SIGSTOP)
        self.addCleanup(os.kill, proc.pid, signal.SIGCONT)
        self.wait_for(lambda: watch.runs.stat(proc.pid)[0] == 'T')
        w.look()
        w.look()
        os.kill(proc.pid, signal.SIGCONT)
        self.wait_for(lambda: watch.runs.stat(proc.pid)[0] != 'T')
        w.look()
        self.assertEqual(['server 2 stopped answering: paused (SIGSTOP)',
                          'server 2 resumed'], [n.what for n in w.noted])

    def test_what_the_run_stops_itself_is_not_noted(self):
        proc = self.process()
        held = [proc]
        w = watch.Watch([watch.Watched(lambda: 'node 1', lambda: held[0],
                                       None)])
        # As MariaDBServer.kill does: the process is taken away first.
        held[0] = None
        proc.kill()
        proc.wait()
        w.look()
        self.assertEqual([], w.noted)

    def test_a_full_disk_and_its_room_again(self):
        w = watch.Watch([watch.Watched(lambda: 'node 2', lambda: None,
                                       '/data')])
        with mock.patch('os.statvfs') as statvfs:
            statvfs.return_value.f_bavail = 0
            w.look()
            w.look()
            statvfs.return_value.f_bavail = 10
            w.look()
        self.assertEqual(['node 2: its disk is full',
                          'node 2: its disk has room again'],
                         [n.what for n in w.noted])

    def test_the_thread_watches_until_stopped(self):
        proc = self.process()
        w = watch.Watch([watch.Watched(lambda: 'node 1', lambda: proc,
                                       None)], interval=0.01)
        w.start()
        self.addCleanup(w.stop)
        began = w.now()
        proc.kill()
        self.wait_for(lambda: w.noted)
        w.stop()
        self.assertFalse(w.is_alive())
        self.assertEqual(1, len(w.since(began)))
        self.assertRegex(watch.describe(w.noted[0], began),
                         r'^node 1 died: SIGKILL at \d+\.\d s$')

    def test_exit_reasons(self):
        self.assertEqual('SIGKILL', watch.exit_reason(-9))
        self.assertEqual('exit status 1', watch.exit_reason(1))
