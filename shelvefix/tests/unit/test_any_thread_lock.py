"""The double's locks between green threads and native ones.

nova's libvirt driver calls libvirt through eventlet's ``tpool``: native
threads. nova's live-migration rollback tests stub libvirt's migration
with code that runs the compute's periodic tasks, so placement requests
come from a native thread while green threads make others. A green lock
(``threading.RLock()`` under monkey patching) between the two loses a
wake-up and hangs for ever; these tests reproduce that in a subprocess
(monkey patching cannot be undone), without nova, and show that the
double's locks (:class:`shelvefix.utils.AnyThreadRLock`) do not.
"""

import os
import subprocess
import sys
import threading
import time

import testtools

from shelvefix import utils

try:
    import eventlet  # noqa: F401
except ImportError:
    eventlet = None

# One placement request through the double (nova's fixture path: adapter,
# transport, schema validation, state) waits for a lock another kind of
# thread holds. argv: which lock is held (state, transport or
# validators), who holds it (native: a tpool thread; green), and 'green'
# to give the double's state a lock made by the patched threading.RLock
# (what the double had before) instead of its own.
PROGRAM = r'''
import eventlet
eventlet.monkey_patch()
import os, sys, threading
from eventlet import patcher, tpool
from shelvefix.backends import nova_fixture
from shelvefix.placement import validation

native_sleep = patcher.original('time').sleep
which, holder = sys.argv[1], sys.argv[2]
placement = nova_fixture.PlacementFixture(patch_report_client=False)
placement.setUp()
if sys.argv[3:] == ['green']:
    placement.state._lock = threading.RLock()
lock = {'state': placement.state._lock,
        'transport': placement.double.transport._lock,
        'validators': validation._VALIDATORS_LOCK}[which]


def request():
    return placement.api.post('/resource_providers',
                              {'name': 'rp1'}, version='1.20').status


def hold(sleep):
    with lock:
        sleep(0.3)


if holder == 'native':
    # A green thread asks while a tpool thread holds the lock.
    waiter = eventlet.spawn(lambda: eventlet.sleep(0.05) or request())
    tpool.execute(hold, native_sleep)
else:
    # A tpool thread asks while a green thread holds the lock.
    eventlet.spawn(hold, eventlet.sleep)
    eventlet.sleep(0.05)
    waiter = eventlet.spawn(tpool.execute, request)
try:
    with eventlet.Timeout(10):
        print('answered %s' % waiter.wait())
except eventlet.Timeout:
    print('hung')
sys.stdout.flush()
# A tpool thread stuck for ever would hang the interpreter's exit.
os._exit(0)
'''


def run_program(*args):
    result = subprocess.run(
        (sys.executable, '-c', PROGRAM) + args, capture_output=True,
        text=True, timeout=120, env=dict(os.environ, PYTHONWARNINGS='ignore'))
    lines = result.stdout.split()
    return ' '.join(lines[-2:]) if lines else result.stderr[-2000:]


@testtools.skipIf(eventlet is None, 'needs eventlet')
class GreenAndNativeThreadsTestCase(testtools.TestCase):

    def test_a_green_lock_hangs_when_a_native_thread_holds_it(self):
        # The cause: released by a tpool thread, the green waiter's
        # wake-up goes to a hub that never runs.
        self.assertEqual('hung', run_program('state', 'native', 'green'))

    def test_a_green_lock_hangs_a_native_thread_that_waits(self):
        self.assertEqual('hung', run_program('state', 'green', 'green'))

    def test_the_doubles_locks_serve_both_kinds_of_thread(self):
        for which in ('state', 'transport', 'validators'):
            for holder in ('native', 'green'):
                self.assertEqual('answered 200', run_program(which, holder),
                                 '%s lock held by a %s thread'
                                 % (which, holder))


class AnyThreadRLockTestCase(testtools.TestCase):

    def test_reentrant_for_its_owner(self):
        lock = utils.AnyThreadRLock()
        with lock:
            with lock:
                self.assertTrue(lock.locked())
            self.assertTrue(lock.locked())
        self.assertFalse(lock.locked())

    def test_only_the_owner_releases(self):
        lock = utils.AnyThreadRLock()
        self.assertRaises(RuntimeError, lock.release)
        lock.acquire()
        errors = []

        def release():
            try:
                lock.release()
            except RuntimeError as exc:
                errors.append(exc)

        thread = threading.Thread(target=release)
        thread.start()
        thread.join(10)
        self.assertEqual(1, len(errors))
        lock.release()

    def test_excludes_other_threads(self):
        lock = utils.AnyThreadRLock()
        inside, overlaps = [0], []

        def work():
            for _ in range(200):
                with lock:
                    inside[0] += 1
                    if inside[0] != 1:
                        overlaps.append(inside[0])
                    time.sleep(0)
                    inside[0] -= 1

        threads = [threading.Thread(target=work) for _ in range(4)]
        for thread in threads:
            thread.start()
        for thread in threads:
            thread.join(60)
        self.assertEqual([], overlaps)
        self.assertFalse(lock.locked())

    def test_a_waiting_thread_gets_it_when_released(self):
        lock = utils.AnyThreadRLock()
        got = threading.Event()
        lock.acquire()

        def wait():
            with lock:
                got.set()

        thread = threading.Thread(target=wait)
        thread.start()
        self.assertFalse(got.wait(0.1))
        lock.release()
        self.assertTrue(got.wait(10))
        thread.join(10)
