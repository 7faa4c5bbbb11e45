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

After :meth:`join`: ``struck_at`` and ``synced_at`` (seconds since start,
or None), ``error`` (why the node did not come back) and
:meth:`describe`, one line for the report.
"""

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


#: ``--galera-fault`` names and their faults.
FAULTS = {'kill': NodeCrash, 'pause': NodePause}
