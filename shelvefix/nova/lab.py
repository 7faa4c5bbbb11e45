"""The nova target as the race command sees it: a process of its own.

:class:`NovaLab` starts :mod:`shelvefix.nova.runner` with the Python
running the command, tells it which nova to load (the installed one or a
path) and which placement backend to make, then asks it for one cell at a
time. Both sides speak in :class:`Channel` frames: a length, then a
pickle. This module does not import nova.
"""

import os
import pickle
import struct
import subprocess
import sys
import tempfile

from shelvefix.backends import runs
from shelvefix.explorer import pickling
from shelvefix import nova as nova_target

# Requests, from the command.
EXPLORE = 'explore'
RANDOM = 'random'
SUBTREE = 'subtree'
QUIT = 'quit'
# Answers, from the runner.
LOADED = 'loaded'
UNUSABLE = 'unusable'
PROGRESS = 'progress'
RESULT = 'result'
FAILED = 'failed'

#: What the runner sends by name and text only: nova and its libraries.
FOREIGN = ('nova', 'oslo_messaging', 'oslo_db', 'sqlalchemy', 'eventlet',
           'keystoneauth1')

_LENGTH = struct.Struct('>Q')
#: The runner's string hashing, the same in every runner: nova iterates
#: sets of host names (which host's lock a conductor takes first), and a
#: subtree one runner hands out is replayed in another's.
HASH_SEED = '0'


class Channel(object):
    """Frames over a pair of binary streams."""

    def __init__(self, reader, writer):
        self.reader = reader
        self.writer = writer

    def send(self, value):
        """Send one frame."""
        data = pickling.dumps(value, foreign=FOREIGN)
        self.writer.write(_LENGTH.pack(len(data)) + data)
        self.writer.flush()

    def receive(self):
        """The next frame.

        :raises EOFError: the other side has gone
        """
        head = self.reader.read(_LENGTH.size)
        if len(head) < _LENGTH.size:
            raise EOFError('the other side of the channel has gone')
        size, = _LENGTH.unpack(head)
        data = self.reader.read(size)
        if len(data) < size:
            raise EOFError('the other side of the channel has gone')
        return pickle.loads(data)


class NovaLab(object):
    """The race lab's cells run on a nova, in a runner process.

    :param path: None for the installed nova, else a tree or a wheel
    :param backend: the placement backend's name (``double`` or
        ``real``); the runner makes it for each cell
    :ivar description: what was loaded, once entered
    """

    def __init__(self, path, backend):
        self.path = path
        self.backend = backend
        self.description = None
        self._process = None
        self._stderr = None
        self._channel = None
        self._scratch = None

    def __enter__(self):
        self._stderr = tempfile.TemporaryFile()
        # The runner dies with the command, even of SIGKILL, also in the
        # middle of a run (between runs, its next progress frame would
        # find the pipe closed).
        self._process = subprocess.Popen(
            [sys.executable, '-m', 'shelvefix.nova.runner'],
            stdin=subprocess.PIPE, stdout=subprocess.PIPE,
            stderr=self._stderr, preexec_fn=runs.death_signal_hook(),
            env=dict(os.environ, PYTHONHASHSEED=HASH_SEED))
        # Where the runner unpacks a wheel; removed here, whatever the
        # runner's end.
        self._scratch = tempfile.TemporaryDirectory(prefix='shelvefix-nova-')
        self._channel = Channel(self._process.stdout, self._process.stdin)
        try:
            self._channel.send((self.path, self.backend,
                                self._scratch.name))
            kind, text = self._answer()
            if kind != LOADED:
                raise nova_target.NovaUnusable(text)
            self.description = text
        except BaseException:
            self.__exit__(None, None, None)
            raise
        return self

    def __exit__(self, *exc_info):
        if self._process is None:
            return
        try:
            if self._process.poll() is None:
                if exc_info and exc_info[0] is not None:
                    # Interrupted, or failed: a runner in the middle of a
                    # search would read QUIT only once it ends.
                    self._process.terminate()
                try:
                    self._channel.send((QUIT,))
                except (BrokenPipeError, OSError):
                    pass
                try:
                    self._process.wait(timeout=30)
                except subprocess.TimeoutExpired:
                    self._process.kill()
                    self._process.wait()
        finally:
            if self._scratch is not None:
                self._scratch.cleanup()
                self._scratch = None
            for stream in (self._process.stdin, self._process.stdout,
                           self._stderr):
                try:
                    stream.close()
                except OSError:
                    # A QUIT still buffered for a runner that has gone.
                    pass
            self._process = None

    @staticmethod
    def cells(scenario, ghost=False):
        """The cells of ``scenario`` on nova: :func:`shelvefix.nova.cells`."""
        return nova_target.cells(scenario)

    def _answer(self, progress=None):
        """The runner's next answer that is not progress."""
        while True:
            try:
                frame = self._channel.receive()
            except EOFError:
                raise nova_target.NovaUnusable(
                    'the nova runner ended without an answer (status %s)%s'
                    % (self._process.wait(), self._last_words()))
            if frame[0] == PROGRESS:
                if progress:
                    progress(frame[1])
                continue
            if frame[0] == FAILED:
                raise nova_target.NovaUnusable(
                    'nova\'s code failed in the runner: %s' % frame[1])
            return frame

    def _last_words(self):
        self._stderr.seek(0)
        lines = self._stderr.read().decode('utf-8', 'replace').splitlines()
        return ': %s' % lines[-1] if lines else ''

    def _ask(self, request, progress):
        self._channel.send(request)
        kind, value = self._answer(progress)
        if kind == UNUSABLE:
            raise nova_target.NovaUnusable(value)
        return value

    def explore(self, scenario, cell, reduce=True, progress=None,
                workers=1, stop_at=(), without=(), cluster=None):
        """Explore one cell on nova; its ``CellResult``.

        :param stop_at: end the search at the first run showing one of
            these symptoms (:func:`shelvefix.race.scenarios.shows`)
        :param without: actors of the scenario left out
            (:class:`shelvefix.nova.target.CellProgram`)
        :param cluster: None, or ``(address, job, width)``: the runner's
            search hands subtrees to the Dask scheduler at ``address`` as
            tasks of ``job`` (:mod:`shelvefix.cluster.ahead`)
        """
        options = dict(reduce=reduce, workers=workers, stop_at=tuple(stop_at))
        if without:
            options['without'] = tuple(without)
        if cluster is not None:
            options['cluster'] = cluster
        return self._ask((EXPLORE, scenario.name, cell, options), progress)

    def subtree(self, job, payload, reduce, step_timeout, budget):
        """Search a subtree of ``job``'s exploration (a Dask task's).

        As :func:`shelvefix.cluster.tasks.search_subtree`, in the runner.
        """
        return self._ask((SUBTREE, job.scenario, job.cell, dict(
            without=tuple(job.without), payload=payload, reduce=reduce,
            step_timeout=step_timeout, budget=budget)), None)

    def random(self, scenario, cell, runs, seed, progress=None):
        """``runs`` random runs of one cell on nova; a ``RandomResult``."""
        return self._ask((RANDOM, scenario.name, cell,
                          dict(runs=runs, seed=seed)), progress)
