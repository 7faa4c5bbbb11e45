"""What happens to a run's processes that the run did not do itself.

A deployment's database nodes and placement servers die, stall and run
out of disk on their own. :class:`Watch` looks at each process a run
depends on every :data:`INTERVAL` seconds and notes, with the time since
it started, each process that died (and of what signal or exit status),
that stopped answering because it was paused (``SIGSTOP``: state ``T``
in ``/proc``) or resumed, and each directory whose file system filled up
or had room again. A process the run stops or kills itself is taken
away from its :class:`Watched` first (its ``process()`` then gives None),
and is not noted.
"""

import collections
import functools
import os
import signal
import threading
import time

from shelvefix.backends import runs

#: Seconds between two looks at every process.
INTERVAL = 0.2
#: Seconds :meth:`Watch.stop` waits for the thread.
JOIN_TIMEOUT = 5.0

Watched = collections.namedtuple('Watched', ['describe', 'process',
                                             'directory'])
Watched.__doc__ = """One process a run depends on.

``describe()`` names it (``node 3 (127.0.0.1:40123, pid 4567)``),
``process()`` gives its ``subprocess.Popen`` or None while the run has it
stopped, ``directory`` is where it writes (None: its disk is not
watched).
"""

Noted = collections.namedtuple('Noted', ['at', 'what'])
Noted.__doc__ = """``what`` happened ``at`` seconds after the watch began."""


def exit_reason(returncode):
    """``SIGKILL`` for a process killed by it, else ``exit status N``."""
    if returncode is not None and returncode < 0:
        try:
            return signal.Signals(-returncode).name
        except ValueError:
            return 'signal %d' % -returncode
    return 'exit status %s' % returncode


def disk_full(directory):
    """Whether the file system of ``directory`` has no byte left."""
    try:
        return os.statvfs(directory).f_bavail == 0
    except OSError:
        return False


class Watch(threading.Thread):
    """Notes what befalls ``watched`` (a list of :class:`Watched`).

    After :meth:`start`, ``noted`` grows with a :class:`Noted` for each
    change seen; :meth:`since` gives those from a moment on. Stop it with
    :meth:`stop`.
    """

    def __init__(self, watched, interval=INTERVAL):
        super(Watch, self).__init__(name='shelvefix-watch', daemon=True)
        self.watched = list(watched)
        self.interval = interval
        self.noted = []
        self._lock = threading.Lock()
        self._stopping = threading.Event()
        self._began = time.monotonic()
        # What was last seen of each: pid -> 'died' or 'paused'; dir -> full.
        self._seen = {}

    def run(self):
        while not self._stopping.wait(self.interval):
            self.look()

    def stop(self):
        self._stopping.set()
        if self.is_alive():
            self.join(JOIN_TIMEOUT)

    def now(self):
        """Seconds since the watch began."""
        return time.monotonic() - self._began

    def _note(self, what):
        with self._lock:
            self.noted.append(Noted(self.now(), what))

    def look(self):
        """Look at every watched process once (the thread does, often)."""
        for item in self.watched:
            process = item.process()
            if process is not None:
                self._look_at(item, process)
            if item.directory is not None:
                full = disk_full(item.directory)
                was = self._seen.get(item.directory, False)
                if full != was:
                    self._seen[item.directory] = full
                    self._note('%s: %s' % (item.describe(), (
                        'its disk is full' if full else
                        'its disk has room again')))

    def _look_at(self, item, process):
        key = process.pid
        was = self._seen.get(key)
        if was == 'died':
            return
        code = process.poll()
        if code is not None:
            self._seen[key] = 'died'
            self._note('%s died: %s' % (item.describe(), exit_reason(code)))
            return
        found = runs.stat(process.pid)
        paused = found is not None and found[0] == 'T'
        if paused and was != 'paused':
            self._seen[key] = 'paused'
            self._note('%s stopped answering: paused (SIGSTOP)'
                       % item.describe())
        elif not paused and was == 'paused':
            self._seen[key] = None
            self._note('%s resumed' % item.describe())

    def since(self, at):
        """What was noted at or after ``at`` (seconds since the start)."""
        with self._lock:
            return [noted for noted in self.noted if noted.at >= at]


def describe(noted, offset=0.0):
    """``node 3 (...) died: SIGKILL at 8.1 s``: one entry, for a report.

    :param offset: seconds since the watch began when the run started
    """
    return '%s at %.1f s' % (noted.what, noted.at - offset)


def of_galera(placement):
    """The :class:`Watched` of a :class:`~.galera.GaleraPlacement`.

    Each node (its process, its data directory's disk), then each
    placement server.
    """
    cluster = placement.cluster
    watched = [Watched(functools.partial(cluster.describe, index),
                       functools.partial(getattr, node, 'process'),
                       node.directory)
               for index, node in enumerate(cluster.nodes)]
    watched += [Watched(functools.partial(placement.describe_server, index),
                        srv.process, None)
                for index, srv in enumerate(placement.servers)]
    return watched


def of_server(server):
    """The :class:`Watched` of a :class:`~.server.PlacementServer`."""
    return [Watched(lambda: 'placement server %s (pid %s)' % (
        server.url, server.pid), server.process, None)]


def start(placement):
    """A started :class:`Watch` of a placement server or Galera cluster.

    :param placement: a :class:`~.server.PlacementServer` or a
        :class:`~.galera.GaleraPlacement`
    """
    if placement.database == 'galera':
        watched = of_galera(placement)
    else:
        watched = of_server(placement)
    watch = Watch(watched)
    watch.start()
    return watch
