"""Exploring in several processes: forked workers search subtrees ahead.

Each forked worker of :class:`Workers` takes a subtree the search will
reach (:func:`~shelvefix.explorer.subtrees.pending_subtrees`: the last
pending branch at the shallowest choice point) and searches it depth
first as the search would (:func:`~shelvefix.explorer.subtrees.
subtree_runs`), streaming each run. The search, in this process, goes on
as it would alone: when it reaches a run a worker has sent, it takes the
result (:func:`~shelvefix.explorer.subtrees.adopt` checks it) instead of
executing the run; when it reaches a run of a worker's subtree the worker
has not sent yet, it stops that worker and goes on by itself; the worker
gets the next subtree. :mod:`shelvefix.explorer.subtrees` says why the
result is the same as without workers.

Processes
    Workers are forked: the program need not pickle, and each worker has
    its own copy of the program's state (e.g. a placement double). A
    program whose state cannot be copied by ``fork`` (open database
    connections, sockets, threads) must not be explored with workers; a
    Dask cluster (:mod:`shelvefix.cluster`) builds the program on each
    worker instead.
"""

import gc
import multiprocessing
import multiprocessing.connection
import os
import pickle
import signal

from shelvefix.explorer import model
from shelvefix.explorer import pickling
from shelvefix.explorer import subtrees
from shelvefix.explorer import threads

#: Seconds a terminated worker is given to end before it is killed.
TERMINATE_TIMEOUT = 5.0


def available_cpus():
    """How many CPUs this process may run on."""
    try:
        return len(os.sched_getaffinity(0))
    except AttributeError:  # pragma: no cover - not Linux
        return os.cpu_count() or 1


def _serve(conn, program, reduce, step_timeout):
    """A forked worker's main loop: search each subtree sent, streaming.

    A job is a pickled stack (:func:`job`); the worker sends each run of
    the subtree (:func:`subtree_runs`) as it is made. Jobs queue up; a stop
    request names a subtree to end or drop. ``b'd'`` and the subtree's
    prefix tell the search the subtree is over. The search ends a worker by
    terminating it.
    """
    # A terminal's Ctrl-C reaches the whole foreground process group: the
    # search, which stops its workers itself, handles it. SIGTERM (how the
    # search ends a worker) must end it at once, whatever handler the
    # search process had installed for it.
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    signal.signal(signal.SIGTERM, signal.SIG_DFL)
    pool = threads.ActorThreads()
    queued, stopped = [], set()

    def read(block):
        """Take in what the search sent; False once it is gone."""
        while block or conn.poll():
            block = False
            try:
                message = conn.recv_bytes()
            except EOFError:
                return False
            if message[:1] == b's':
                stopped.add(pickle.loads(message[1:]))
            else:
                queued.append(pickle.loads(message))
        return True

    try:
        while read(block=not queued):
            if not queued:
                continue
            points = queued.pop(0)
            root = tuple(point.chosen for point in points)
            runs = subtrees.subtree_runs(program, points, reduce,
                                         step_timeout, pool)
            while True:
                if not read(block=False):
                    return
                if root in stopped:
                    break
                key, observed, rest = next(runs)
                if isinstance(observed, model.ExplorationError):
                    conn.send_bytes(b'e' + pickle.dumps((key, observed)))
                    break
                conn.send_bytes(b'r' + pickling.portable(key, observed))
                if rest is None:
                    break
            stopped.discard(root)
            conn.send_bytes(b'd' + pickle.dumps(root))
    finally:
        pool.close()


class Workers(object):
    """Forked worker processes exploring subtrees the search will reach.

    This process runs the search and, itself, every run no worker has
    made; each of the ``count - 1`` forked workers explores the subtree of
    a branch still pending far ahead of the search (the shallowest one,
    the last there). When the search reaches a run of a worker's subtree
    that the worker has not sent yet, it stops that worker and goes on
    alone; the worker gets the next subtree.

    :param program: the program being explored (inherited by ``fork``)
    :param count: how many processes in all (at least 2)
    :param reduce: whether the search reduces
    :param step_timeout: as for :func:`~shelvefix.explorer.runner.explore`
    """

    def __init__(self, program, count, reduce, step_timeout):
        if 'fork' not in multiprocessing.get_all_start_methods():
            raise ValueError('workers need the fork start method, which '
                             'this platform lacks')
        context = multiprocessing.get_context('fork')
        self.reduce = reduce
        # What exists now is the workers' inherited, read-mostly heap: kept
        # out of their garbage collections, it is neither scanned nor
        # copied page by page.
        gc.freeze()
        self._conns, self._procs = [], []
        self._roots = {}       # connection -> prefixes of its subtrees
        self._stopping = set()  # prefixes of subtrees asked to stop
        self._results = {}     # schedule prefix -> reply not yet taken
        self._given = set()    # every subtree handed out
        self.ahead = 0         # runs taken from the workers
        self.tasks = 0         # subtrees handed out
        for _ in range(count - 1):
            ours, theirs = context.Pipe()
            proc = context.Process(target=_serve, daemon=True, args=(
                theirs, program, reduce, step_timeout))
            proc.start()
            theirs.close()
            self._conns.append(ours)
            self._procs.append(proc)
            self._roots[ours] = []
        gc.unfreeze()

    def run(self, points, index, run_here):
        """The run the search makes next.

        :param points: the search's stack, the last choice made
        :param index: the run's number
        :param run_here: ``run_here(points, index)`` executes it in this
            process, returning a :class:`~shelvefix.explorer.model.RunResult`
        :returns: a :class:`~shelvefix.explorer.model.RunResult` on
            ``points``, extended
        """
        key = tuple(point.chosen for point in points)
        self._collect(timeout=0)
        reply = self._results.pop(key, None)
        if reply is not None:
            self._hand_out(points)
            if isinstance(reply, model.ExplorationError):
                raise reply
            self.ahead += 1
            return subtrees.adopt(points, reply, index, self.reduce)
        for conn, roots in self._roots.items():
            for root in roots:
                if key[:len(root)] == root and root not in self._stopping:
                    # The search caught up with this worker: it goes on
                    # alone.
                    conn.send_bytes(b's' + pickle.dumps(root))
                    self._stopping.add(root)
        self._hand_out(points)
        return run_here(points, index)

    #: How many subtrees a worker has at a time: it goes on with the next
    #: at once when one is over.
    QUEUE = 2

    def _hand_out(self, points):
        """Give each worker subtrees furthest ahead, if there are any."""
        idle = [conn for conn in self._conns
                for _ in range(self.QUEUE - len(self._roots[conn]))]
        if not idle:
            return
        claimed = [root for roots in self._roots.values() for root in roots
                   if root not in self._stopping]
        for key, stack in subtrees.unclaimed(points, self.reduce,
                                             self._given, claimed):
            conn = idle.pop()
            conn.send_bytes(subtrees.job(stack))
            self._roots[conn].append(key)
            self._given.add(key)
            self.tasks += 1
            if not idle:
                return

    def _collect(self, timeout):
        """Take what the workers sent."""
        busy = [conn for conn in self._conns if self._roots[conn]]
        if not busy:
            return
        ready = multiprocessing.connection.wait(busy, timeout=timeout)
        for conn in ready:
            while conn.poll():
                try:
                    message = conn.recv_bytes()
                except EOFError:
                    raise model.ExplorationError(
                        'an explorer worker process died mid-run')
                if message[:1] == b'd':
                    root = pickle.loads(message[1:])
                    self._roots[conn].remove(root)
                    self._stopping.discard(root)
                    continue
                key, value = pickle.loads(message[1:])
                self._results[key] = value

    @property
    def discarded(self):
        """Runs received from the workers that the search never took."""
        return len(self._results)

    def close(self):
        """Stop the workers.

        A worker may be mid-run, or blocked sending runs nobody will take:
        it holds nothing the search needs, so it is not waited for. One
        that outlives its SIGTERM (terminated before it reset the handler
        it inherited) is killed after :data:`TERMINATE_TIMEOUT` seconds.
        """
        for proc in self._procs:
            proc.terminate()
        for proc in self._procs:
            proc.join(TERMINATE_TIMEOUT)
            if proc.is_alive():
                proc.kill()
                proc.join(TERMINATE_TIMEOUT)
        for conn in self._conns:
            conn.close()
