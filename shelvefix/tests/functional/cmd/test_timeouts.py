"""A placement that accepts connections and never answers.

With no ``timeout`` in ``[placement]``, every command that talks to a
remote placement must give up after the default timeout and say so in one
line, naming the endpoint and the limit, with exit status 2.
"""

import os
import socket
import subprocess
import sys
import threading
import time

import fixtures

from shelvefix.backends import server
from shelvefix.conf import placement as placement_conf
from shelvefix.tests import base

#: What "a few seconds" past the timeout may cover: interpreter start-up
#: and the command's imports on a loaded machine.
SLACK = 20.0


class SilentPlacement(fixtures.Fixture):
    """A loopback port that accepts connections and never answers."""

    def _setUp(self):
        self.sock = socket.socket()
        self.sock.bind(('127.0.0.1', 0))
        self.sock.listen(64)
        self.addCleanup(self.sock.close)
        self.url = 'http://127.0.0.1:%d' % self.sock.getsockname()[1]
        self.accepted = []
        self._closed = threading.Event()
        thread = threading.Thread(target=self._accept, daemon=True)
        thread.start()
        self.addCleanup(self._closed.set)

    def _accept(self):
        self.sock.settimeout(0.2)
        while not self._closed.is_set():
            try:
                conn, _addr = self.sock.accept()
            except socket.timeout:
                continue
            except OSError:
                return
            self.accepted.append(conn)
            self.addCleanup(conn.close)


class DefaultTimeoutTestCase(base.TestCase):

    def test_every_remote_command_gives_up_in_one_line(self):
        silent = self.useFixture(SilentPlacement())
        conf = server.write_shelvefix_config(
            os.path.join(self.useFixture(fixtures.TempDir()).path,
                         'silent.conf'), silent.url)
        with open(conf) as f:
            self.assertNotIn('timeout', f.read())
        commands = {
            'race': ['race', '--scenario', 'lifecycle'],
            'faults': ['faults'],
            'stress': ['stress'],
        }
        started = time.monotonic()
        procs = {name: subprocess.Popen(
            [sys.executable, '-m', 'shelvefix'] + argv +
            ['--backend', 'remote', '--config-file', conf],
            stdout=subprocess.PIPE, stderr=subprocess.PIPE,
            stdin=subprocess.DEVNULL) for name, argv in commands.items()}
        limit = placement_conf.DEFAULT_TIMEOUT + SLACK
        for name, proc in procs.items():
            try:
                out, err = proc.communicate(
                    timeout=max(1.0, limit - (time.monotonic() - started)))
            except subprocess.TimeoutExpired:
                for other in procs.values():
                    other.kill()
                self.fail('%s still running %gs after it started'
                          % (name, limit))
            err = err.decode()
            self.assertEqual((2, b''), (proc.returncode, out), err)
            self.assertEqual(1, len(err.splitlines()), err)
            self.assertIn('shelvefix %s: placement at %s did not answer '
                          'within %d' % (name, silent.url,
                                         placement_conf.DEFAULT_TIMEOUT),
                          err)
        self.assertTrue(silent.accepted)
