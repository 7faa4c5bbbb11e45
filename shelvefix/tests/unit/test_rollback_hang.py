"""The hang of nova's live-migration rollback tests, without nova's suite.

``NUMALiveMigrationRollbackTests.test_rollback`` hangs now and then under
load (doc/source/findings/test-deadlock.rst). The stacks
``tools/nova_functional.py`` dumped show two green-thread mechanisms, each
reproduced here with what nova's ``CellDatabases`` fixture uses, a
``fasteners.ReaderWriterLock`` under eventlet, in a subprocess (monkey
patching cannot be undone):

* the deadlock: the periodic helper holds a read lock (``target_cell``)
  and waits for a green thread of its own (a per-node update) that asks
  for a read lock too; a writer asking in between (another
  ``target_cell``) makes the second reader wait, since the lock prefers
  writers, and the writer waits for the first reader;
* the hang that follows: nova's test timeout interrupts the waiting
  writer, which stays in the lock's pending writers, so every later
  reader waits for ever and the test's cleanup never ends.
"""

import os
import subprocess
import sys

import testtools

try:
    import eventlet  # noqa: F401
    import fasteners  # noqa: F401
except ImportError:
    eventlet = None

DEADLOCK = r'''
import eventlet
eventlet.monkey_patch()
import fasteners

lock = fasteners.ReaderWriterLock()
order = []


def per_node_update():
    order.append('B reads')
    with lock.read_lock():
        return 'updated'


def run_periodics():
    with lock.read_lock():
        order.append('A holds a read lock')
        eventlet.sleep(0)
        order.append('A waits for B')
        return eventlet.spawn(per_node_update).wait()


def switch_cell():
    order.append('C writes')
    with lock.write_lock():
        return 'switched'


periodic = eventlet.spawn(run_periodics)
writer = eventlet.spawn(switch_cell)
try:
    with eventlet.Timeout(5):
        periodic.wait()
        writer.wait()
    print('no deadlock')
except eventlet.Timeout:
    print('deadlock: ' + ', '.join(order))
'''

STALE_WRITER = r'''
import eventlet
eventlet.monkey_patch()
import fasteners

lock = fasteners.ReaderWriterLock()


def reader():
    with lock.read_lock():
        eventlet.sleep(1)


holder = eventlet.spawn(reader)
eventlet.sleep(0)
try:
    with eventlet.Timeout(0.2):
        with lock.write_lock():
            pass
except eventlet.Timeout:
    pass
holder.wait()


def later_reader():
    with lock.read_lock():
        return 'read'


try:
    with eventlet.Timeout(3):
        eventlet.spawn(later_reader).wait()
    print('a later reader got in')
except eventlet.Timeout:
    print('a later reader waits: %d pending writer, %d readers'
          % (len(lock._pending_writers), len(lock._readers)))
'''


def run(program):
    result = subprocess.run(
        (sys.executable, '-c', program), capture_output=True, text=True,
        timeout=120, env=dict(os.environ, PYTHONWARNINGS='ignore'))
    return result.stdout.strip() or result.stderr[-2000:]


@testtools.skipIf(eventlet is None, 'needs eventlet and fasteners')
class RollbackHangTestCase(testtools.TestCase):

    def test_a_reader_waiting_for_a_green_thread_that_reads(self):
        self.assertEqual('deadlock: A holds a read lock, C writes, A waits '
                         'for B, B reads', run(DEADLOCK))

    def test_an_interrupted_writer_stays_pending(self):
        # If this fails, fasteners forgets a writer whose wait raised:
        # the second half of the hang is gone.
        self.assertEqual('a later reader waits: 1 pending writer, 0 '
                         'readers', run(STALE_WRITER))
