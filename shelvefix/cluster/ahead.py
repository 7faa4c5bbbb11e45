"""Subtrees of one exploration as Dask tasks: the search's helpers.

:class:`ClusterAhead` does for a search what the forked
:class:`~shelvefix.explorer.parallel.Workers` do, on a Dask cluster: each
subtree still pending far ahead of the search
(:func:`~shelvefix.explorer.subtrees.pending_subtrees`) becomes a task,
:func:`shelvefix.cluster.tasks.subtree`, which names the exploration (a
:class:`~shelvefix.cluster.tasks.Job`) and carries the subtree's stack; the
worker builds the program itself and searches the subtree depth first for
at most :data:`BUDGET` seconds, then returns the runs it made and, if the
subtree is not over, the stack to go on from, which becomes the subtree's
next task. The search takes a run from a task's result when it reaches it
(:func:`~shelvefix.explorer.subtrees.adopt` checks every choice), and
otherwise runs it itself; a subtree the search has caught up with gets no
further task, and its queued task is cancelled.

A worker lost mid-task costs the scheduler a retry of that task (Dask
reschedules the tasks of a worker that is gone), or nothing: the search
never waits for a subtree, it runs what it has not received itself.
"""

import pickle
import uuid

from shelvefix.explorer import subtrees

#: Seconds a subtree task searches before it returns what it has.
BUDGET = 0.5

#: Priority of subtree tasks: below whole explorations (0), which are
#: work certain to be needed.
PRIORITY = -10


class ClusterAhead(object):
    """Subtree tasks on a Dask cluster, ahead of one search.

    :param client: a ``distributed.Client``
    :param job: the :class:`~shelvefix.cluster.tasks.Job` being explored
    :param reduce: whether the search reduces
    :param step_timeout: as for :func:`~shelvefix.explorer.runner.explore`
    :param width: how many subtree tasks may be in flight at once
    """

    def __init__(self, client, job, reduce, step_timeout, width):
        self.client = client
        self.job = job
        self.reduce = reduce
        self.step_timeout = step_timeout
        self.width = max(1, width)
        self._futures = {}   # subtree prefix -> its task's future
        self._results = {}   # schedule prefix -> what a worker observed
        self._given = set()  # every subtree handed out
        self.ahead = 0
        self.tasks = 0
        self.received = 0

    @classmethod
    def factory(cls, client, job, width):
        """``ahead(reduce, step_timeout)``, as ``explore()`` takes it."""
        def ahead(reduce, step_timeout):
            return cls(client, job, reduce, step_timeout, width)
        return ahead

    def _submit(self, root, payload):
        from shelvefix.cluster import tasks
        self.tasks += 1
        self._futures[root] = self.client.submit(
            tasks.subtree, self.job, payload, self.reduce,
            self.step_timeout, BUDGET, pure=False, priority=PRIORITY,
            key='subtree-%s-%s' % (self.job.key, uuid.uuid4().hex))

    def _collect(self):
        """Take the results of the tasks that have ended."""
        for root, future in list(self._futures.items()):
            if not future.done():
                continue
            del self._futures[root]
            try:
                runs, rest = future.result()
            except Exception:
                # A task that failed, lost too many workers, or was
                # cancelled: the search runs that subtree itself.
                continue
            for data in runs:
                key, observed = pickle.loads(data)
                self._results[key] = observed
                self.received += 1
            if rest is not None:
                # A subtree the search caught up with has left _futures:
                # only the subtrees still ahead of it go on.
                self._submit(root, rest)

    def run(self, points, index, run_here):
        """The run the search makes next (as ``Workers.run``)."""
        key = tuple(point.chosen for point in points)
        self._collect()
        reply = self._results.pop(key, None)
        if reply is None:
            for root, future in list(self._futures.items()):
                if key[:len(root)] == root:
                    # The search caught up with this subtree: it goes on
                    # alone there.
                    future.cancel()
                    del self._futures[root]
            self._hand_out(points)
            return run_here(points, index)
        self._hand_out(points)
        if isinstance(reply, Exception):
            raise reply
        self.ahead += 1
        return subtrees.adopt(points, reply, index, self.reduce)

    def _hand_out(self, points):
        """Submit the subtrees furthest ahead, up to :attr:`width`."""
        if len(self._futures) >= self.width:
            return
        for key, stack in subtrees.unclaimed(points, self.reduce,
                                             self._given, self._futures):
            self._given.add(key)
            self._submit(key, subtrees.job(stack))
            if len(self._futures) >= self.width:
                return

    @property
    def discarded(self):
        """Runs received from workers that the search never took."""
        return len(self._results)

    def close(self):
        """Cancel the tasks still queued or running."""
        futures = list(self._futures.values())
        self._futures.clear()
        if futures:
            self.client.cancel(futures)
