"""SIGINT and SIGTERM mid-run: exit status, no traceback, nothing left.

The command runs as a subprocess against a placement served over HTTP by
this test process (the double, so that its state can be read afterwards);
the signal goes once the run holds allocations there. Processes the
command started are found afterwards by a marker in their environment,
which every child inherits.
"""

import os
import signal
import subprocess
import sys
import threading
import time
import uuid

import fixtures

from shelvefix.backends import server
from shelvefix.placement import deploy
from shelvefix.tests import base
from shelvefix.tests.functional import wsgi_server

MARKER = 'SHELVEFIX_TEST_INTERRUPT'
#: Every wait of these tests is bounded by this many seconds.
WAIT = 90.0


def processes_with(marker):
    """PIDs of the processes whose environment holds ``MARKER=marker``."""
    found = []
    needle = ('%s=%s' % (MARKER, marker)).encode()
    for pid in os.listdir('/proc'):
        if not pid.isdigit():
            continue
        try:
            with open('/proc/%s/environ' % pid, 'rb') as f:
                if needle in f.read().split(b'\0'):
                    found.append(int(pid))
        except OSError:
            pass
    return found


def wait_for(predicate, what, timeout=WAIT):
    deadline = time.monotonic() + timeout
    while not predicate():
        if time.monotonic() > deadline:
            raise AssertionError('timed out after %gs waiting for %s'
                                 % (timeout, what))
        time.sleep(0.05)


class InterruptTestCase(base.TestCase):

    def setUp(self):
        super().setUp()
        self.app = deploy.PlacementApp()
        self.refuse_provider_deletes = False
        # Seconds each DELETE waits (a slow clean-up), and when one came.
        self.slow_deletes = 0
        self.deleting = threading.Event()
        self.url = self.useFixture(wsgi_server.WSGIServerFixture(
            self.serve)).url
        self.tmp = self.useFixture(fixtures.TempDir()).path
        self.conf = server.write_shelvefix_config(
            os.path.join(self.tmp, 'remote.conf'), self.url)

    def serve(self, environ, start_response):
        """The double, unless told to refuse to delete providers."""
        if self.slow_deletes and environ['REQUEST_METHOD'] == 'DELETE':
            self.deleting.set()
            time.sleep(self.slow_deletes)
        if (self.refuse_provider_deletes and
                environ['REQUEST_METHOD'] == 'DELETE' and
                environ['PATH_INFO'].startswith('/resource_providers/')):
            start_response('503 Service Unavailable',
                           [('Content-Type', 'application/json')])
            return [b'{"errors": [{"status": 503, "title": "Service '
                    b'Unavailable", "detail": "down for the test"}]}']
        return self.app(environ, start_response)

    def start(self, *argv):
        """The command, in a process group of its own, and its marker."""
        marker = uuid.uuid4().hex
        env = dict(os.environ, **{MARKER: marker})
        env.pop('SHELVEFIX_DEBUG', None)
        proc = subprocess.Popen(
            [sys.executable, '-m', 'shelvefix'] + list(argv),
            stdout=subprocess.PIPE, stderr=subprocess.PIPE, env=env,
            stdin=subprocess.DEVNULL, start_new_session=True)
        self.addCleanup(self._kill, proc)
        return proc, marker

    def _kill(self, proc):
        if proc.poll() is None:
            os.killpg(proc.pid, signal.SIGKILL)
            proc.wait()

    def holds_allocations(self):
        # Placement keeps a consumer record exactly as long as it has
        # allocations (or is a ghost, which no run here makes).
        return bool(self.app.state.consumers)

    def interrupt(self, proc, marker, signum):
        """Send ``signum`` once the run holds allocations; check the end."""
        wait_for(self.holds_allocations, 'the run to claim resources')
        self.assertIsNone(proc.poll(), 'the run ended before the signal')
        proc.send_signal(signum)
        try:
            out, err = proc.communicate(timeout=WAIT)
        except subprocess.TimeoutExpired:
            self.fail('still running %gs after %s' % (WAIT, signum))
        err = err.decode()
        self.assertEqual(128 + signum, proc.returncode, err)
        self.assertNotIn('Traceback', err)
        self.assertEqual(1, len(err.splitlines()), err)
        self.assertIn('interrupted by %s' % signal.Signals(signum).name, err)
        wait_for(lambda: not processes_with(marker), 'no process left', 10)
        return out.decode()

    def assertPlacementEmpty(self):
        state = self.app.state
        self.assertEqual({}, state.providers)
        self.assertEqual({}, state.consumers)

    def test_race_remote_lifecycle(self):
        for signum in (signal.SIGINT, signal.SIGTERM):
            proc, marker = self.start(
                'race', '--backend', 'remote', '--scenario', 'lifecycle',
                '--config-file', self.conf)
            out = self.interrupt(proc, marker, signum)
            self.assertIn('shelvefix race: shelve-offload on compute-1', out)
            self.assertPlacementEmpty()

    def test_stress_remote(self):
        for signum in (signal.SIGINT, signal.SIGTERM):
            proc, marker = self.start(
                'stress', '--backend', 'remote', '--config-file', self.conf,
                '--servers', '4', '--cycles', '1000')
            self.interrupt(proc, marker, signum)
            self.assertPlacementEmpty()

    def test_stress_remote_says_what_its_clean_up_left(self):
        # Placement refuses to delete the providers once the signal is
        # sent: the run still exits as interrupted, and says what it
        # could not remove, in one line before the usual one.
        proc, marker = self.start(
            'stress', '--backend', 'remote', '--config-file', self.conf,
            '--servers', '4', '--cycles', '1000')
        wait_for(self.holds_allocations, 'the run to claim resources')
        self.refuse_provider_deletes = True
        proc.send_signal(signal.SIGTERM)
        try:
            out, err = proc.communicate(timeout=WAIT)
        except subprocess.TimeoutExpired:
            self.fail('still running %gs after SIGTERM' % WAIT)
        err = err.decode()
        self.assertEqual(143, proc.returncode, err)
        self.assertNotIn('Traceback', err)
        lines = err.splitlines()
        self.assertEqual(2, len(lines), err)
        self.assertTrue(lines[0].startswith(
            'shelvefix stress: interrupted, and could not remove from '
            'placement what the stress run created: 2 resource providers '
            '('), err)
        self.assertIn('503', lines[0])
        left = self.app.state.providers
        self.assertEqual(2, len(left))
        for provider in left:
            self.assertIn(provider, lines[0])
        self.assertIn('interrupted by SIGTERM', lines[1])
        # The servers' allocations went, only the providers are left.
        self.assertEqual({}, self.app.state.consumers)
        wait_for(lambda: not processes_with(marker), 'no process left', 10)

    def test_stress_server_leaves_no_gunicorn(self):
        if server.missing_dependencies('sqlite'):
            self.skipTest('needs %s' % server.missing_dependencies('sqlite'))
        proc, marker = self.start(
            'stress', '--database', 'sqlite', '--server-workers', '2',
            '--servers', '4', '--cycles', '20000')
        # gunicorn's master and its workers are up once they are marked.
        wait_for(lambda: len(processes_with(marker)) >= 4,
                 'gunicorn to start')
        time.sleep(1.0)
        self.assertIsNone(proc.poll(), proc.stderr.read().decode()
                          if proc.poll() is not None else '')
        proc.send_signal(signal.SIGTERM)
        out, err = proc.communicate(timeout=WAIT)
        err = err.decode()
        self.assertEqual(143, proc.returncode, err)
        self.assertNotIn('Traceback', err)
        self.assertIn('interrupted by SIGTERM', err)
        wait_for(lambda: not processes_with(marker), 'no process left', 10)

    def slow_clean_up(self, signals):
        """SIGTERM a remote stress run, then ``signals`` in its clean-up.

        Sent once the clean-up has started deleting (each DELETE taking
        3 s); returns ``(rc, err lines, seconds from the last signal to
        the exit)``.
        """
        proc, marker = self.start(
            'stress', '--backend', 'remote', '--config-file', self.conf,
            '--servers', '4', '--cycles', '1000')
        wait_for(self.holds_allocations, 'the run to claim resources')
        self.slow_deletes = 3.0
        proc.send_signal(signal.SIGTERM)
        wait_for(self.deleting.is_set, 'the clean-up to delete')
        for signum in signals:
            time.sleep(0.2)
            self.assertIsNone(proc.poll(), 'the clean-up ended first')
            proc.send_signal(signum)
        sent = time.monotonic()
        try:
            out, err = proc.communicate(timeout=WAIT)
        except subprocess.TimeoutExpired:
            self.fail('still running %gs after the signals' % WAIT)
        took = time.monotonic() - sent
        err = err.decode()
        self.assertNotIn('Traceback', err)
        wait_for(lambda: not processes_with(marker), 'no process left', 10)
        return proc.returncode, err.splitlines(), took

    def test_a_second_signal_is_acknowledged_and_the_clean_up_goes_on(self):
        rc, lines, took = self.slow_clean_up([signal.SIGINT])
        self.assertEqual(143, rc, lines)
        self.assertEqual(2, len(lines), lines)
        self.assertEqual('shelvefix: SIGINT: still cleaning up (a bounded '
                         'wait); send it once more to abandon the clean-up',
                         lines[0])
        self.assertIn('interrupted by SIGTERM', lines[1])
        # The clean-up finished: placement is empty.
        self.assertPlacementEmpty()

    def test_a_third_signal_abandons_the_clean_up_at_once(self):
        rc, lines, took = self.slow_clean_up([signal.SIGTERM, signal.SIGHUP])
        self.assertEqual(128 + signal.SIGHUP, rc, lines)
        self.assertEqual(2, len(lines), lines)
        self.assertIn('SIGTERM: still cleaning up', lines[0])
        self.assertTrue(lines[1].startswith(
            'shelvefix: SIGHUP again: clean-up abandoned'), lines)
        # At once: not after the DELETE under way (3 s).
        self.assertLess(took, 2.0)
        # What it created in placement is left, as it said.
        self.assertTrue(self.app.state.providers)

    def test_sighup_cleans_up_as_sigterm_does(self):
        proc, marker = self.start(
            'stress', '--backend', 'remote', '--config-file', self.conf,
            '--servers', '4', '--cycles', '1000')
        self.interrupt(proc, marker, signal.SIGHUP)
        self.assertPlacementEmpty()
