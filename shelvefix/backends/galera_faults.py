"""The faults a Galera cluster has, played against one node mid-run.

Each is a thread started before a stress run: after ``after`` seconds it
does its harm to node ``index`` of a
:class:`~shelvefix.backends.galera.GaleraCluster`, undoes it later, and
ends once the node is ``Synced`` again, or failed to be (bounded by the
node's start timeout). ``cancel``, set before the harm, calls it off.

* :class:`NodeCrash`: SIGKILL, as a crash would; the node is started
  again ``down_for`` seconds later and rejoins by a state transfer.
* :class:`NodePause`: SIGSTOP for ``paused_for`` seconds, by default
  longer than the placement client's timeout; its sockets stay open but
  nothing answers, the way a hung host or a long stall looks. The other
  nodes evict it from the cluster, the database proxies mark it down and
  shut its sessions; on SIGCONT it rejoins by itself.

The faults an operator meets that no tool of theirs does, done the way
they happen: to the process itself, behind the run's back (the run is
not told; it must notice, see :mod:`~shelvefix.backends.watch`):

* :class:`NodeDeath`: SIGKILL of the node's ``mariadbd``, not started
  again; the cluster goes on with a primary component of the others.
* :class:`ServerDeath`: SIGKILL of the node's placement server's gunicorn
  master (its workers follow it): requests its balancer sends there are
  refused, and go to the others.
* :class:`DiskFull`: the node's file system (a small one of its own, see
  :class:`~shelvefix.backends.galera.GaleraCluster`) filled to the last
  byte for ``full_for`` seconds, then emptied again.

After :meth:`join`: ``struck_at`` and ``synced_at`` (seconds since start,
or None), ``error`` (why the node did not come back) and
:meth:`describe`, one line for the report.
"""

import errno
import os
import signal
import threading
import time

from shelvefix.backends import mariadb
from shelvefix.conf import placement as placement_conf

#: Seconds a paused node stays paused by default: longer than the
#: placement client's default timeout.
PAUSE_SECONDS = placement_conf.DEFAULT_TIMEOUT + 5.0


class _NodeFault(threading.Thread):

    #: What the report calls the harm, its signal, and the recovery.
    harm = signal = recovery = None

    def __init__(self, cluster, index, after, lasting):
        super(_NodeFault, self).__init__(
            name='galera-node-%s' % self.harm, daemon=True)
        self.cluster = cluster
        self.index = index
        self.after = after
        self.lasting = lasting
        self.cancel = threading.Event()
        self.struck_at = self.synced_at = self.error = None

    @property
    def timeout(self):
        """How long :meth:`join` may have to wait, at most."""
        # A start, then the wait for the whole cluster: each bounded.
        return (self.after + self.lasting + 2 * mariadb.START_TIMEOUT +
                mariadb.STOP_TIMEOUT)

    def run(self):
        started = time.monotonic()
        if self.cancel.wait(self.after):
            return
        self._strike()
        self.struck_at = time.monotonic() - started
        time.sleep(self.lasting)
        try:
            self._recover()
            self.synced_at = time.monotonic() - started
        except Exception as e:
            self.error = '%s: %s' % (type(e).__name__, e)

    def describe(self):
        """One line: what happened to the node."""
        node = 'node %d' % (self.index + 1)
        if self.struck_at is None:
            return '%s not %s: the run ended first' % (node, self.harm)
        if self.error is not None:
            return '%s %s at %.1f s, did not come back: %s' % (
                node, self.harm, self.struck_at, self.error)
        return '%s %s (%s) at %.1f s, %s %.1f s later, Synced at %.1f s' % (
            node, self.harm, self.signal, self.struck_at, self.recovery,
            self.lasting, self.synced_at)


class NodeCrash(_NodeFault):
    """SIGKILL node ``index``, start it again ``down_for`` s later."""

    harm, signal, recovery = 'killed', 'SIGKILL', 'started again'

    def __init__(self, cluster, index, after=2.0, down_for=5.0):
        super(NodeCrash, self).__init__(cluster, index, after, down_for)

    def _strike(self):
        self.cluster.kill(self.index)

    def _recover(self):
        self.cluster.restart(self.index)


class NodePause(_NodeFault):
    """SIGSTOP node ``index``, SIGCONT it ``paused_for`` s later."""

    harm, signal, recovery = 'paused', 'SIGSTOP', 'resumed (SIGCONT)'

    def __init__(self, cluster, index, after=2.0, paused_for=PAUSE_SECONDS):
        super(NodePause, self).__init__(cluster, index, after, paused_for)

    def _strike(self):
        self.cluster.pause(self.index)

    def _recover(self):
        self.cluster.resume(self.index)


class _Outside(_NodeFault):
    """A fault done behind the run's back; nothing waits for a recovery."""

    def __init__(self, placement, index, after=2.0, lasting=0.0):
        super(_Outside, self).__init__(placement.cluster, index, after,
                                       lasting)
        self.placement = placement
        self.what = None

    def run(self):
        started = time.monotonic()
        if self.cancel.wait(self.after):
            return
        try:
            self.what = self._strike()
        except Exception as e:
            self.error = '%s: %s' % (type(e).__name__, e)
        self.struck_at = time.monotonic() - started
        if self.error is None and self.lasting:
            # Undone even when the run ends first.
            self.cancel.wait(self.lasting)
            try:
                self._recover()
            except Exception as e:
                self.error = '%s: %s' % (type(e).__name__, e)

    def describe(self):
        if self.struck_at is None:
            return 'node %d not %s: the run ended first' % (self.index + 1,
                                                            self.harm)
        if self.error is not None:
            return '%s at %.1f s failed: %s' % (self.harm, self.struck_at,
                                                self.error)
        return '%s at %.1f s%s' % (self.what, self.struck_at, (
            ', %s %.1f s later' % (self.recovery, self.lasting)
            if self.lasting else ''))

    def _recover(self):
        pass


def _kill(pid, what):
    if pid is None:
        raise RuntimeError('%s is not running' % what)
    os.kill(pid, signal.SIGKILL)


class NodeDeath(_Outside):
    """SIGKILL node ``index``'s ``mariadbd`` from outside; not restarted."""

    harm = 'killed for good'

    def _strike(self):
        what = self.cluster.describe(self.index)
        if not self.cluster.alive(self.index):
            return '%s already dead: nothing to kill' % what
        _kill(self.cluster.nodes[self.index].pid, what)
        return '%s killed (SIGKILL), not started again' % what


class ServerDeath(_Outside):
    """SIGKILL node ``index``'s placement server's gunicorn master."""

    harm = 'server killed'

    def _strike(self):
        what = self.placement.describe_server(self.index)
        process = self.placement.servers[self.index].process()
        if process is None or process.poll() is not None:
            return '%s already dead: nothing to kill' % what
        _kill(process.pid, what)
        return '%s killed (SIGKILL)' % what


#: Seconds a full disk stays full by default.
FULL_SECONDS = 20.0
#: Bytes written at a time while filling a disk.
_CHUNK = 1 << 20


class DiskFull(_Outside):
    """Node ``index``'s disk filled to the last byte, then emptied."""

    harm, recovery = 'disk filled', 'emptied'

    def __init__(self, placement, index, after=2.0, full_for=FULL_SECONDS):
        super(DiskFull, self).__init__(placement, index, after, full_for)
        self.path = os.path.join(placement.cluster.nodes[index].directory,
                                 'filler')

    def _strike(self):
        fill(self.path)
        return '%s: disk full (0 bytes free)' % self.cluster.describe(
            self.index)

    def _recover(self):
        os.unlink(self.path)


def fill(path, chunk=_CHUNK):
    """Write ``path`` until its file system has no byte left.

    :returns: the bytes written
    """
    written = 0
    block = b'\0' * chunk
    with open(path, 'wb', buffering=0) as f:
        while True:
            try:
                written += f.write(block)
            except OSError as e:
                if e.errno != errno.ENOSPC:
                    raise
                if len(block) == 1:
                    return written
                # The last bytes: smaller writes until not one fits.
                block = block[:len(block) // 2]


#: ``--galera-fault`` names and their faults. The first two take a
#: :class:`~shelvefix.backends.galera.GaleraCluster`, the others (done
#: from outside) the :class:`~shelvefix.backends.galera.GaleraPlacement`.
FAULTS = {'kill': NodeCrash, 'pause': NodePause, 'node-death': NodeDeath,
          'server-death': ServerDeath, 'disk-full': DiskFull}
#: The faults done from outside.
OUTSIDE = ('node-death', 'server-death', 'disk-full')


def start(name, placement):
    """Start fault ``name`` against the last node of ``placement``."""
    index = len(placement.cluster.nodes) - 1
    if name in OUTSIDE:
        fault = FAULTS[name](placement, index)
    else:
        fault = FAULTS[name](placement.cluster, index)
    fault.start()
    return fault
