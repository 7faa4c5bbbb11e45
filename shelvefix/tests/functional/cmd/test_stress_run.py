"""``shelvefix stress`` stopped by an error while a process it watches died.

A real process stands for the placement server: killed from outside, the
watch notices it, and the one line that ends the run names it, its pid
and when, after the report of what was measured.
"""

import io
import os
import signal
import subprocess
import time
from unittest import mock

from keystoneauth1 import exceptions as ks_exc

from shelvefix import backends
from shelvefix.backends import observe
from shelvefix.backends import watch
from shelvefix.cmd import common
from shelvefix.cmd import main
from shelvefix.cmd import stress_run
from shelvefix import context
from shelvefix.race import stress
from shelvefix.tests import base


class _Server(object):
    """What stress_run asks of a placement server, with a real process."""

    database = 'postgresql'
    url = 'http://127.0.0.1:1'

    def __init__(self, test, placement):
        self.proc = subprocess.Popen(['sleep', '60'])
        test.addCleanup(self.proc.wait)
        test.addCleanup(self.proc.kill)
        self.pid = self.proc.pid
        self.placement = placement

    def process(self):
        return self.proc

    def observer(self):
        return observe.ClientObserver(self.placement.client,
                                      context.RequestContext())

    def counters(self):
        return {}


class DiedMeanwhileTestCase(base.TestCase):
    """The line that ends a stopped run names what died meanwhile."""

    def test_named_with_its_pid(self):
        placement = self.useFixture(backends.make_backend('double'))
        server = _Server(self, placement)
        args = main.build_parser().parse_args(
            ['stress', '--backend', 'double', '--servers', '1', '--cycles',
             '1'])

        def run(*args, **kwargs):
            os.kill(server.pid, signal.SIGKILL)
            server.proc.wait()
            time.sleep(3 * watch.INTERVAL)
            raise ks_exc.ConnectFailure('Unable to establish connection to '
                                        'http://127.0.0.1:1/allocations')
        out = io.StringIO()
        with mock.patch.object(stress, 'run', side_effect=run):
            error = self.assertRaises(
                common.CommandError, stress_run.run, args, placement,
                'placement', out, io.StringIO(), database=server)
        self.assertRegex(str(error), (
            r'^placement cannot be reached: Unable to establish connection '
            r'to http://127.0.0.1:1/allocations \(meanwhile: placement '
            r'server http://127.0.0.1:1 \(pid %d\) died: SIGKILL at '
            r'\d+\.\d s\)$' % server.pid))
        self.assertIn('NOT SHOWN CLEAN, the run stopped', out.getvalue())
