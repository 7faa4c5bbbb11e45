"""Exploring in several processes: workers search subtrees ahead.

The search (:mod:`shelvefix.explorer.search`) is sequential: what it runs
next follows from the analysis of every run before it. But a branch still
pending in a wakeup tree of the current stack is a subtree the search will
explore later, and that exploration is already determined. Each forked
worker of :class:`Workers` takes such a subtree, the one furthest ahead
(the last pending branch at the shallowest choice point), and searches it
depth first as the search would, streaming each run. The search, in this
process, goes on as it would alone: when it reaches a run a worker has
sent, it takes the result instead of executing the run; when it reaches a
run of a worker's subtree the worker has not sent yet, it stops that worker
and goes on by itself; the worker gets the next subtree.

Why a worker's run is the run the search will make
    Let ``b`` be a branch pending at choice point ``p``. The search reaches
    ``b`` after everything to its left. A run in ``b``'s subtree depends on
    the stack down to ``p`` (choices and pending steps, fixed: the program
    is deterministic), on what is asleep at ``p`` (its sleep set, fixed,
    and the actors done there, which are exactly the branches of ``p`` to
    the left of ``b``: insertion only ever appends a branch after the
    existing ones at a node, :func:`~shelvefix.explorer.wakeup.insert`), on
    ``b``'s wakeup subtree, and on the races found by the earlier runs of
    the subtree itself, which the worker inserts as the search would.
    Races that reverse at or above ``p`` only change wakeup trees outside
    the subtree, which its runs never read. The search's own runs may
    still append branches inside ``b``'s subtree before it gets there;
    appended last, they change no earlier run, and the worker simply does
    not make them: the search runs them itself.

    The search does not trust this argument blindly: it rebuilds each run
    it takes from what the worker observed (enabled actors and pending
    steps at each choice point) with its own functions on its own stack,
    and checks every choice; a difference stops the exploration with
    :class:`~shelvefix.explorer.model.ExplorationError`.

    So an exploration with workers makes the same runs, analyses them in
    the same order and returns the same
    :class:`~shelvefix.explorer.search.Exploration` as one without; only
    the wall time differs. Runs a worker made that the search never takes
    (a subtree stopped mid-run, ``max_runs``) are discarded.

Processes
    Workers are forked: the program need not pickle, and each worker has
    its own copy of the program's state (e.g. a placement double). A
    program whose state cannot be copied by ``fork`` (open database
    connections, sockets, threads) must not be explored with workers.
    Results travel pickled; an actor's result that does not pickle arrives
    as its ``repr``, and an exception is rebuilt without calling its
    constructor.
"""

import gc
import multiprocessing
import multiprocessing.connection
import os
import pickle
import signal

from shelvefix.explorer import choices
from shelvefix.explorer import controller as controller_mod
from shelvefix.explorer import model
from shelvefix.explorer import pickling
from shelvefix.explorer import search
from shelvefix.explorer import threads

#: Seconds a terminated worker is given to end before it is killed.
TERMINATE_TIMEOUT = 5.0


def available_cpus():
    """How many CPUs this process may run on."""
    try:
        return len(os.sched_getaffinity(0))
    except AttributeError:  # pragma: no cover - not Linux
        return os.cpu_count() or 1


class _Observed(object):
    """What a worker saw of one run (pickled back to the search)."""

    def __init__(self, controller, record):
        self.record = record
        self.points = [(point.enabled, point.pending, point.guarded,
                        point.chosen)
                       for point in controller.choice_points]
        self.models = controller.models
        self.stuck = controller.stuck
        self.stuck_models = controller.stuck_models


def _serve(conn, program, reduce, step_timeout):
    """A worker's main loop: explore each subtree sent, streaming its runs.

    A job is a choice-point stack whose last choice is a subtree's first
    branch; the worker searches the subtree depth first, as the search
    would (its own races inserted where they belong, those above the
    subtree ignored), and sends each run with the schedule prefix it
    replayed. Jobs queue up; a stop request names a subtree to end or drop.
    ``b'd'`` and the subtree's prefix tell the search the subtree is over.
    The search ends a worker by terminating it.
    """
    # A terminal's Ctrl-C reaches the whole foreground process group: the
    # search, which stops its workers itself, handles it. SIGTERM (how the
    # search ends a worker) must end it at once, whatever handler the
    # search process had installed for it.
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    signal.signal(signal.SIGTERM, signal.SIG_DFL)
    pool = threads.ActorThreads()
    scratch = search.Exploration(reduce)
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
            floor = len(points)
            root = tuple(point.chosen for point in points)
            while points is not None:
                if not read(block=False):
                    return
                if root in stopped:
                    break
                key = tuple(point.chosen for point in points)
                try:
                    controller = controller_mod.Controller(
                        schedule=key, reduce=reduce,
                        step_timeout=step_timeout, _points=points,
                        _threads=pool)
                    record = controller.run(program(controller))
                except BaseException as exc:
                    conn.send_bytes(b'e' + pickle.dumps(
                        (key, model.ExplorationError(
                            'in worker %d: %s: %s' % (
                                os.getpid(), type(exc).__name__, exc)))))
                    break
                conn.send_bytes(b'r' + pickling.portable(
                    key, _Observed(controller, record)))
                if reduce:
                    search.add_races(
                        controller.choice_points,
                        [entry.step for entry in record.trace],
                        controller.stuck, start=max(len(key) - 1, 0),
                        models=controller.models,
                        stuck_models=controller.stuck_models)
                points = search.backtrack(controller.choice_points, scratch,
                                          floor=floor)
            stopped.discard(root)
            conn.send_bytes(b'd' + pickle.dumps(root))
    finally:
        pool.close()


def _job(points):
    """The stack the search would hand a controller, lightened.

    A controller reads, of the recorded choice points, their enabled and
    pending actors and choices, and of the last one what is asleep there and
    the wakeup subtree handed down; the branches still to explore at each
    point are not needed.
    """
    light = []
    for point in points:
        twin = model.ChoicePoint(point.index, point.enabled, point.pending,
                                 sleep=point.sleep, done=point.done,
                                 chosen=point.chosen, guarded=point.guarded)
        light.append(twin)
    if points:
        light[-1].handoff = points[-1].handoff
    return pickle.dumps(light, protocol=pickle.HIGHEST_PROTOCOL)


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
            return self._adopt(points, reply, index)
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
        for depth in range(len(points)):
            point = points[depth]
            if not self.reduce:
                break
            done = list(point.done) + [point.chosen]
            asleep = point.sleep.union(done)
            chosen = []
            for branch in point.wakeup:
                if (branch.actor in point.enabled
                        and branch.actor not in asleep):
                    chosen.append((branch, list(done)))
                    done.append(branch.actor)
                    asleep = asleep.union((branch.actor,))
            prefix = tuple(p.chosen for p in points[:depth])
            for branch, done_before in reversed(chosen):
                if not idle:
                    return
                key = prefix + (branch.actor,)
                if key in self._given or any(
                        key[:len(root)] == root for root in claimed):
                    continue
                twin = model.ChoicePoint(
                    point.index, point.enabled, point.pending,
                    sleep=point.sleep, done=done_before,
                    chosen=branch.actor, guarded=point.guarded)
                twin.handoff = branch.children
                conn = idle.pop()
                conn.send_bytes(_job(points[:depth] + [twin]))
                self._roots[conn].append(key)
                self._given.add(key)
                claimed.append(key)

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

    def _adopt(self, points, observed, index):
        """Rebuild a worker's run on the search's own stack."""
        rebuilt = choices.Choices(
            tuple(point.chosen for point in points), self.reduce, points)
        for position, (enabled, pending, guarded, chosen) in enumerate(
                observed.points):
            point = rebuilt.add_point(enabled, pending, guarded)
            if point.chosen != chosen:
                raise model.ExplorationError(
                    'parallel search diverged at choice point %d of '
                    'schedule %s: the search chose %r, the worker %r'
                    % (position, [p[3] for p in observed.points],
                       point.chosen, chosen))
        record = observed.record._replace(index=index)
        return model.RunResult(
            record, rebuilt.points, observed.models, observed.stuck,
            observed.stuck_models,
            any(point.forced for point in rebuilt.points[len(points):]))

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
