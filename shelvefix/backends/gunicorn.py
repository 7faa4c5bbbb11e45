"""A WSGI application under gunicorn, on a socket the caller bound.

:class:`GunicornProcess` starts gunicorn in a session of its own, hands it
an already listening socket (``fd://``), waits until every worker has
loaded the application and ``GET /`` answers 200, and stops the whole
session. :class:`~shelvefix.backends.server.PlacementServer` runs
placement with it.
"""

import http.client
import os
import signal
import socket
import subprocess
import sys
import time

from shelvefix import backends
from shelvefix.backends import runs

_CONFIG = '''\
# Written by shelvefix.backends.gunicorn for one server; see there.
import os

bind = [{bind!r}]
workers = {workers!r}
threads = {threads!r}
timeout = {timeout!r}
preload_app = {preload!r}
graceful_timeout = 5
proc_name = 'shelvefix-placement'
# gunicorn 25.1+ opens a control socket at one fixed path per user: two
# servers at once would fight over it, and nothing here uses it. Older
# versions ignore the unknown name.
control_socket_disable = True

_ready_dir = {ready_dir!r}


def post_worker_init(worker):
    # Without preload each worker loads the application itself, so one
    # answer to GET / proves one worker only: the fixture counts these.
    open(os.path.join(_ready_dir, str(worker.pid)), 'w').close()
'''


def listen(port=0):
    """A socket listening on 127.0.0.1.

    Binding here and handing gunicorn the descriptor means that a free port
    found by binding cannot be taken by someone else before gunicorn binds
    it again, and that a port in use fails at once.

    :param port: the port; 0 picks a free one
    :raises ServerStartError: the port cannot be had
    """
    sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    try:
        sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        sock.bind(('127.0.0.1', port))
        sock.listen(128)
    except OSError as e:
        sock.close()
        raise backends.ServerStartError('cannot listen on 127.0.0.1:%d: %s'
                                        % (port, e)) from e
    return sock


def tail(path, lines=30):
    """The last ``lines`` lines of a log file ('' if it cannot be read)."""
    try:
        with open(path, errors='replace') as f:
            return ''.join(f.readlines()[-lines:])
    except OSError:
        return ''


class GunicornProcess(object):
    """gunicorn serving ``app`` on ``sock``, between start() and stop().

    :param app: the WSGI application, ``module:attribute``
    :param sock: a listening socket (see :func:`listen`); gunicorn gets a
        copy and this one is closed once gunicorn has started
    :param workers: worker processes
    :param threads: threads per worker (gunicorn's gthread worker when
        more than 1)
    :param timeout: gunicorn's worker timeout, seconds
    :param preload: load the application once in the master and fork
    :param directory: where the configuration, the log and the workers'
        ready marks go (also gunicorn's working directory)
    :param env: the environment of the process
    :param start_timeout: how long the workers may take to be ready

    ``pid`` is the master's pid once started, ``url`` the endpoint,
    ``log_path`` gunicorn's (and the application's) output.
    """

    def __init__(self, app, sock, workers, threads, timeout, preload,
                 directory, env, start_timeout):
        self.app = app
        self._sock = sock
        self.port = sock.getsockname()[1]
        self.url = 'http://127.0.0.1:%d' % self.port
        self.workers = workers
        self._threads = threads
        self._timeout = timeout
        self._preload = preload
        self._directory = directory
        self._env = env
        self._start_timeout = start_timeout
        self.log_path = os.path.join(directory, 'server.log')
        self.pid = None
        self._proc = None

    def start(self):
        """Start gunicorn and wait until every worker is ready.

        Call :meth:`stop` afterwards whatever happens: a process that
        started and then failed is still there.

        :raises ServerStartError: gunicorn exited, or was not ready in
            time (with the end of its log)
        """
        ready_dir = os.path.join(self._directory, 'ready')
        os.mkdir(ready_dir)
        try:
            config = os.path.join(self._directory, 'gunicorn.conf.py')
            with open(config, 'w') as f:
                f.write(_CONFIG.format(
                    bind='fd://%d' % self._sock.fileno(),
                    workers=self.workers, threads=self._threads,
                    timeout=self._timeout, preload=self._preload,
                    ready_dir=ready_dir))
            with open(self.log_path, 'ab') as log:
                # The interpreter's own gunicorn: PATH does not matter.
                # A session of its own, so that cleanup can kill the
                # workers too if the master does not stop them.
                self._proc = subprocess.Popen(
                    [sys.executable, '-m', 'gunicorn', '--config', config,
                     self.app],
                    stdin=subprocess.DEVNULL, stdout=log,
                    stderr=subprocess.STDOUT, env=self._env,
                    cwd=self._directory, pass_fds=[self._sock.fileno()],
                    start_new_session=True,
                    preexec_fn=runs.death_signal_hook())
            # Listed for the run: if the command dies, its watchdog kills
            # the session (the workers too).
            runs.record_process(self._proc, 'gunicorn', [self.port])
        finally:
            # gunicorn has its own copy; ours would keep the port open
            # after gunicorn has stopped.
            self._sock.close()
        self.pid = self._proc.pid
        self._wait_ready(ready_dir)

    def _wait_ready(self, ready_dir):
        deadline = time.monotonic() + self._start_timeout
        while True:
            code = self._proc.poll()
            if code is not None:
                raise backends.ServerStartError(
                    'gunicorn exited with %d before %s answered on %s; its '
                    'log (%s) ends:\n%s' % (code, self.app, self.url,
                                            self.log_path,
                                            tail(self.log_path)))
            if (len(os.listdir(ready_dir)) >= self.workers and
                    self._root_status() == 200):
                return
            if time.monotonic() > deadline:
                raise backends.ServerStartError(
                    '%s did not answer GET %s/ with 200 from %d workers '
                    'within %d s; the log (%s) ends:\n%s'
                    % (self.app, self.url, self.workers, self._start_timeout,
                       self.log_path, tail(self.log_path)))
            time.sleep(0.05)

    def _root_status(self):
        # http.client: no proxy settings, no retries, just this request.
        conn = http.client.HTTPConnection('127.0.0.1', self.port, timeout=5)
        try:
            conn.request('GET', '/')
            return conn.getresponse().status
        except (OSError, http.client.HTTPException):
            return None
        finally:
            conn.close()

    @property
    def process(self):
        """The master's ``subprocess.Popen``, once started, or None."""
        return self._proc

    def stop(self):
        """Stop gunicorn and every process of its session (idempotent)."""
        if self._proc is None:
            return
        if self._proc.poll() is None:
            # SIGINT is gunicorn's quick shutdown: workers are told to quit
            # at once rather than finish what they are doing.
            self._proc.send_signal(signal.SIGINT)
            try:
                self._proc.wait(10)
            except subprocess.TimeoutExpired:
                pass
        try:
            # Whatever is left of the session, workers included.
            os.killpg(self._proc.pid, signal.SIGKILL)
        except OSError:
            pass
        self._proc.wait()
        runs.forget('processes', pid=self._proc.pid)
