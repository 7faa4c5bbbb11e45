"""The Dask cluster a command explores on: started, or reached.

:class:`Engine` is what ``--cluster local:N`` or ``--cluster
tcp://HOST:PORT`` gives a command: for ``local:N`` a
``distributed.LocalCluster`` of N worker processes (one thread each) on
127.0.0.1, started and stopped with the command; for an address, a client
of that scheduler, whose workers are already running. :meth:`Engine.run`
submits the command's explorations (:func:`shelvefix.cluster.tasks.
explore`) and gathers their results in order, reporting tasks done and in
flight; a worker lost mid-task makes the scheduler run the task again
elsewhere, up to its ``distributed.scheduler.allowed-failures``.
"""

import logging
import re
import time
import uuid

LOG = logging.getLogger(__name__)

#: Seconds to reach a scheduler, and to wait for its first worker.
CONNECT_TIMEOUT = 30

#: Seconds a progress line is kept before the next.
PROGRESS_EVERY = 1.0

_KEY = re.compile(r'[^A-Za-z0-9_.-]+')


class EngineError(Exception):
    """The cluster cannot be used: unreachable, no worker, a task lost."""


def _quiet():
    """Dask logs each worker's start and stop: only errors get through."""
    for name in ('distributed', 'dask'):
        logging.getLogger(name).setLevel(logging.ERROR)


def connect(address, timeout=CONNECT_TIMEOUT):
    """A ``distributed.Client`` of the scheduler at ``address``.

    :raises EngineError: no scheduler answers there in time
    """
    import distributed
    _quiet()
    try:
        return distributed.Client(address, timeout=timeout,
                                  set_as_default=False)
    except (OSError, TimeoutError) as e:
        raise EngineError('--cluster %s: no Dask scheduler answers there '
                          '(%s)' % (address, str(e).splitlines()[0]))


class TaskFigures(object):
    """What the tasks of one :meth:`Engine.run` cost.

    :ivar tasks: how many explorations were submitted
    :ivar busy: seconds workers spent running them
    :ivar overhead: seconds per task outside the task and outside waiting
        for a free worker: the scheduler's dispatch and the result's way
        back (on one machine's clock: loopback figures)
    :ivar wall: seconds from the first submission to the last result
    :ivar workers: worker threads of the cluster
    """

    def __init__(self, workers):
        self.tasks = 0
        self.busy = 0.0
        self.overhead = 0.0
        self.wall = 0.0
        self.workers = workers

    @property
    def idle(self):
        """The fraction of the workers' time spent without a task."""
        if not self.wall or not self.workers:
            return 0.0
        return max(0.0, 1.0 - self.busy / (self.workers * self.wall))

    def add(self, submitted, received, timed, free_since):
        """Count one task: its :class:`~shelvefix.cluster.tasks.Timed`."""
        self.tasks += 1
        self.busy += timed.ended - timed.started
        dispatch = max(0.0, timed.started - max(submitted, free_since))
        self.overhead += dispatch + max(0.0, received - timed.ended)


class Engine(object):
    """A Dask cluster to explore on, as a context manager.

    :param spec: a :class:`~shelvefix.cluster.Spec` that needs the engine
    """

    def __init__(self, spec):
        self.spec = spec
        self.client = None
        self._cluster = None
        self.figures = None
        self.durations = []

    def __enter__(self):
        import distributed
        _quiet()
        if self.spec.workers is not None:
            self._cluster = distributed.LocalCluster(
                n_workers=self.spec.workers, threads_per_worker=1,
                # The scheduler's HTTP server (its health and metrics) on a
                # free port of 127.0.0.1: never 8787 taken by another.
                processes=True, host='127.0.0.1',
                dashboard_address='127.0.0.1:0',
                silence_logs=logging.ERROR)
            self.client = distributed.Client(self._cluster,
                                             set_as_default=False)
        else:
            self.client = connect(self.spec.address)
        try:
            self.client.wait_for_workers(1, timeout=CONNECT_TIMEOUT)
        except (OSError, TimeoutError):
            self.__exit__(None, None, None)
            raise EngineError('--cluster %s: the scheduler has no worker'
                              % self.spec.text)
        return self

    def __exit__(self, *exc_info):
        if self.client is not None:
            self.client.close()
            self.client = None
        if self._cluster is not None:
            try:
                self._cluster.close()
            except TimeoutError:
                # Every result is in: a worker slow to end (its nanny
                # kills it) costs nothing but the wait.
                LOG.debug('the local Dask cluster was slow to close')
            self._cluster = None

    @property
    def address(self):
        """The scheduler's address, for tasks that submit tasks."""
        return self.client.scheduler.address

    @property
    def width(self):
        """How many tasks the cluster runs at once (worker threads)."""
        return sum(self.client.nthreads().values())

    def run(self, calls, progress=None):
        """Run each ``(label, function, args)`` as a task; their values.

        :param progress: None or ``progress(done, total, in_flight)``,
            called as tasks end
        :returns: the values, in the order of ``calls``; their tasks' times
            are then in :attr:`durations`, in the same order
        :raises EngineError: a task lost more workers than the scheduler
            allows
        """
        import distributed
        from shelvefix.cluster import tasks
        self.figures = figures = TaskFigures(self.width)
        started = time.time()
        futures, labels, submitted = [], {}, {}
        for label, function, args in calls:
            future = self.client.submit(
                tasks.timed, function, *args, pure=False,
                key='%s-%s' % (_KEY.sub('-', label), uuid.uuid4().hex))
            futures.append(future)
            labels[future.key] = label
            submitted[future.key] = time.time()
        values, spans, free_since, shown = {}, {}, {}, 0.0
        try:
            for future in distributed.as_completed(
                    futures, loop=self.client.loop):
                try:
                    timed = future.result()
                except distributed.client.FutureCancelledError as e:
                    raise EngineError('--cluster %s: task %s was cancelled '
                                      '(%s)' % (self.spec.text,
                                                labels[future.key], e))
                except distributed.scheduler.KilledWorker as e:
                    raise EngineError(
                        '--cluster %s: task %s lost every worker it ran on '
                        '(%s)' % (self.spec.text, labels[future.key], e))
                received = time.time()
                figures.add(submitted[future.key], received, timed,
                            free_since.get(timed.worker, started))
                free_since[timed.worker] = timed.ended
                values[future.key] = timed.value
                spans[future.key] = timed.ended - timed.started
                if progress is not None and (
                        received - shown >= PROGRESS_EVERY
                        or len(values) == len(futures)):
                    shown = received
                    progress(len(values), len(futures),
                             self._in_flight(futures, values))
        finally:
            self.client.cancel([f for f in futures if f.key not in values])
        figures.wall = time.time() - started
        self.durations = [spans[future.key] for future in futures]
        return [values[future.key] for future in futures]

    def _in_flight(self, futures, values):
        """How many of the tasks not done a worker is running now."""
        running = set()
        for keys in self.client.processing().values():
            running.update(keys)
        return min(self.width, sum(
            1 for future in futures
            if future.key not in values and future.key in running))
