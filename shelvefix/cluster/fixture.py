"""A Dask scheduler and its workers as processes, for tests.

:class:`DaskProcesses` starts ``python -m distributed.cli.dask_scheduler``
and workers (``distributed.cli.dask_worker``, one thread each, without a
nanny, so that a test can kill one for good) on 127.0.0.1, waits for every
worker to register, and stops them all on clean-up, killing what does not
end in time. They run with the Python running the tests, in processes of
their own: a cluster as ``dask scheduler`` and ``dask worker`` started by
hand make it.
"""

import os
import signal
import socket
import subprocess
import sys
import tempfile
import time

import fixtures

#: Seconds the scheduler and the workers are given to start.
START_TIMEOUT = 60.0

#: Seconds a process is given to end on SIGTERM before it is killed.
STOP_TIMEOUT = 10.0


def free_port():
    """A TCP port free on 127.0.0.1 now."""
    with socket.socket() as sock:
        sock.bind(('127.0.0.1', 0))
        return sock.getsockname()[1]


class DaskProcesses(fixtures.Fixture):
    """A scheduler and ``workers`` worker processes on 127.0.0.1.

    :ivar address: the scheduler's ``tcp://127.0.0.1:PORT``
    :ivar workers: the worker processes (``subprocess.Popen``)
    """

    def __init__(self, workers=2):
        super().__init__()
        self.count = workers
        self.address = None
        self.workers = []
        self._scheduler = None

    def _start(self, module, *args):
        log = tempfile.TemporaryFile()
        self.addCleanup(log.close)
        process = subprocess.Popen(
            [sys.executable, '-m', 'distributed.cli.%s' % module] +
            list(args), stdout=log, stderr=log, stdin=subprocess.DEVNULL,
            start_new_session=True)
        process.log = log
        self.addCleanup(self.stop, process)
        return process

    def _setUp(self):
        port = free_port()
        self.address = 'tcp://127.0.0.1:%d' % port
        self._scheduler = self._start(
            'dask_scheduler', '--host', '127.0.0.1', '--port', str(port),
            '--no-dashboard')
        for _ in range(self.count):
            self.workers.append(self._start(
                'dask_worker', self.address, '--nthreads', '1',
                '--no-nanny', '--no-dashboard', '--host', '127.0.0.1'))
        self.wait_for_workers(self.count)

    def wait_for_workers(self, count, timeout=START_TIMEOUT):
        """Wait until ``count`` workers are registered with the scheduler.

        :raises RuntimeError: not in time, or a process ended
        """
        import distributed
        deadline = time.monotonic() + timeout
        with distributed.Client(self.address, timeout=timeout,
                                set_as_default=False) as client:
            while len(client.scheduler_info()['workers']) < count:
                for process in [self._scheduler] + self.workers:
                    if process.poll() is not None:
                        raise RuntimeError('a Dask process ended at start:'
                                           ' %s' % self.last_words(process))
                if time.monotonic() > deadline:
                    raise RuntimeError('%d Dask workers did not register in '
                                       '%.0f s' % (count, timeout))
                time.sleep(0.1)

    @staticmethod
    def last_words(process):
        """The last line a process wrote."""
        process.log.seek(0)
        lines = process.log.read().decode('utf-8', 'replace').splitlines()
        return lines[-1] if lines else '(nothing)'

    def pid_of(self, address):
        """The pid of the worker serving at ``address``."""
        import distributed
        with distributed.Client(self.address, set_as_default=False) as c:
            return c.run(os.getpid, workers=[address])[address]

    def kill(self, pid):
        """Kill one worker process at once (SIGKILL) and reap it."""
        for process in self.workers:
            if process.pid == pid:
                os.kill(pid, signal.SIGKILL)
                process.wait(STOP_TIMEOUT)
                return
        raise ValueError('no worker process %d' % pid)

    @staticmethod
    def stop(process):
        """End a process: SIGTERM, then SIGKILL after a while."""
        if process.poll() is not None:
            return
        process.terminate()
        try:
            process.wait(STOP_TIMEOUT)
        except subprocess.TimeoutExpired:
            process.kill()
            process.wait(STOP_TIMEOUT)
