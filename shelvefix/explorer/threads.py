"""Threads that run actors, kept from one run to the next.

Starting a thread costs about as much as a placement request on the
double, and an exploration runs five actors in each of hundreds of runs.
:class:`ActorThreads` keeps the threads: one that has run an actor waits for
the next, in the next run. :func:`~shelvefix.explorer.runner.explore` owns
one pool for the duration of a call; a lone
:class:`~shelvefix.explorer.controller.Controller` makes its own.
"""

import threading


class _Thread(object):
    """One pool thread and the job it is given."""

    def __init__(self, pool):
        self.pool = pool
        self.job = None
        # Held while there is nothing to do; released to hand a job over.
        self.wake = threading.Lock()
        self.wake.acquire()
        self.thread = threading.Thread(target=self._main, daemon=True,
                                       name='explorer:idle')

    def _main(self):
        while True:
            self.wake.acquire()
            job, self.job = self.job, None
            if job is None:
                return
            function, name, after = job
            self.thread.name = name
            function()
            parked = self.pool._park(self)
            # Only now that this thread can take the next job: whoever
            # ``after`` wakes may hand it one at once.
            after()
            if not parked:
                return


class ActorThreads(object):
    """A pool of daemon threads for actors.

    :meth:`submit` hands a job to an idle thread (or a new one). A job whose
    function never returns keeps its thread; the pool simply makes another.
    """

    def __init__(self):
        self._idle = []
        self._lock = threading.Lock()
        self._closed = False
        self.started = 0

    def submit(self, function, name, after):
        """Run ``function()`` then ``after()`` in a pool thread.

        ``after`` runs once the thread is back in the pool, so that what it
        signals may submit the next job to the same thread.

        :param function: the job; it must not raise
        :param name: the thread's name while it runs the job
        :param after: called with no argument when ``function`` returned
        """
        with self._lock:
            if self._closed:
                raise RuntimeError('the actor thread pool is closed')
            worker = self._idle.pop() if self._idle else None
        if worker is None:
            worker = _Thread(self)
            worker.thread.start()
            self.started += 1
        worker.job = (function, name, after)
        worker.wake.release()

    def _park(self, worker):
        with self._lock:
            if self._closed:
                return False
            worker.thread.name = 'explorer:idle'
            self._idle.append(worker)
            return True

    def close(self):
        """Let the idle threads end; busy ones end after their job."""
        with self._lock:
            self._closed = True
            idle, self._idle = self._idle, []
        for worker in idle:
            worker.wake.release()

    def __enter__(self):
        return self

    def __exit__(self, *exc_info):
        self.close()
