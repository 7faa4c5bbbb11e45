"""What a command started, written down so that its death leaves nothing.

A command that starts servers registers its run (:func:`registered`):
a file in :func:`state_dir` named after the command's pid and start time
(``/proc/<pid>/stat`` field 22, so that a reused pid is never taken for
the run), listing what the backends start while it is active: process
sessions (a gunicorn master and its workers, a ``mariadbd``), temporary
directories, the PostgreSQL cluster it started and is to stop. The
backends call :func:`record` and :func:`forget`; outside a registered run
(the test suite's fixtures) they do nothing.

Three things read the file, all with :mod:`shelvefix.backends.reap`:

* a watchdog process, started with the first record, that waits for the
  command to end and, if the command died with something still listed
  (SIGKILL, the OOM killer, a clean-up abandoned), stops and removes it;
* the next run of any command, which reaps what a dead run left (its
  watchdog killed too) and says so in one line;
* ``shelvefix cleanup``, for operators.

As a further tie, the servers the command forks itself get a parent-death
signal (:func:`death_signal_hook`): the kernel kills them when the command
dies, even before the watchdog notices.
"""

import contextlib
import ctypes
import json
import logging
import os
import shutil
import signal
import subprocess
import sys
import tempfile
import threading
import time

#: Overrides where run files are kept (the tests use their own).
DIR_VARIABLE = 'SHELVEFIX_RUNS_DIR'
#: The kinds of things a run lists, in its file.
KINDS = ('processes', 'clusters', 'dirs')
#: prctl's option number (linux/prctl.h).
PR_SET_PDEATHSIG = 1

LOG = logging.getLogger(__name__)
_lock = threading.RLock()
_current = None


def state_dir():
    """Where run files are kept.

    ``$SHELVEFIX_RUNS_DIR``, else ``shelvefix-runs-<uid>`` in the
    temporary directory (one per user, so that nobody reaps another
    user's processes).
    """
    return os.environ.get(DIR_VARIABLE) or os.path.join(
        tempfile.gettempdir(), 'shelvefix-runs-%d' % os.getuid())


def stat(pid):
    """``(state, session id, start time)`` of ``pid``, or None if gone.

    The start time is in clock ticks since boot.
    """
    try:
        with open('/proc/%d/stat' % pid, 'rb') as f:
            text = f.read().decode('ascii', 'replace')
    except (OSError, ValueError):
        return None
    # The command name, in parentheses, may hold spaces and parentheses:
    # the fields are counted from the last ')' (field 3 is the state).
    fields = text[text.rindex(')') + 2:].split()
    return fields[0], int(fields[3]), int(fields[19])


def start_time(pid):
    """The start time of ``pid`` (field 22 of its stat), or None."""
    found = stat(pid)
    return found[2] if found else None


def alive(pid, start):
    """Whether ``pid`` is the process that started at ``start``, running.

    A zombie has ended: only its parent's wait is missing.
    """
    found = stat(pid)
    return found is not None and found[2] == start and found[0] not in 'ZX'


def session(pid, start):
    """The live processes of the session that ``pid`` (from ``start``) led.

    The leader if it still runs, and whatever it left in its session. A
    pid is not reused while a session of that id has any member, so
    members found after the leader ended are still its own; and a
    process of that pid that started at another time means the session
    is gone and the pid now someone else's (its session too).
    """
    leader = stat(pid)
    if leader is not None and leader[2] != start:
        return []
    members = []
    for entry in os.listdir('/proc'):
        if not entry.isdigit():
            continue
        found = stat(int(entry))
        if (found is not None and found[1] == pid and found[2] >= start and
                found[0] not in 'ZX'):
            members.append(int(entry))
    return sorted(members)


def death_signal_hook(signum=signal.SIGKILL):
    """A ``preexec_fn``: the child gets ``signum`` when this process dies.

    None where that cannot be had.
    Linux sends it when the *thread* that forked the child ends, so the
    hook is given only in the main thread (whose end is the process's);
    a child forked elsewhere is left to the watchdog. A child that
    changes its user (``mariadbd`` started as root) loses the setting:
    the watchdog covers that one too.
    """
    if threading.current_thread() is not threading.main_thread():
        return None
    try:
        prctl = ctypes.CDLL(None, use_errno=True).prctl
    except (OSError, AttributeError):
        return None
    parent = os.getpid()

    def hook():
        prctl(PR_SET_PDEATHSIG, int(signum))
        # The parent may have died before the setting took effect.
        if os.getppid() != parent:
            os.kill(os.getpid(), signum)
    return hook


class Run(object):
    """This process's run file and the watchdog that reads it.

    :param argv: the command line, for those who list it
    """

    def __init__(self, argv, directory=None):
        self.pid = os.getpid()
        self.start = start_time(self.pid)
        self.directory = directory or state_dir()
        self.path = os.path.join(self.directory,
                                 '%d-%s.json' % (self.pid, self.start))
        self.content = {'pid': self.pid, 'start': self.start,
                        'command': ' '.join(['shelvefix'] + list(argv)),
                        'started': time.strftime('%Y-%m-%d %H:%M:%S')}
        for kind in KINDS:
            self.content[kind] = []
        self.watchdog = None

    def empty(self):
        """Whether nothing started is listed any more."""
        return not any(self.content[kind] for kind in KINDS)

    def add(self, kind, item):
        """List ``item`` (a dict) under ``kind`` and write the file."""
        with _lock:
            self.content[kind].append(item)
            self._write()
            if self.watchdog is None:
                self._watch()

    def remove(self, kind, **match):
        """Unlist the items of ``kind`` that have ``match``'s values."""
        with _lock:
            kept = [item for item in self.content[kind]
                    if any(item.get(k) != v for k, v in match.items())]
            if len(kept) != len(self.content[kind]):
                self.content[kind] = kept
                self._write()

    def _write(self):
        # Whole or not at all: a reader never sees half a file.
        partial = self.path + '.partial'
        try:
            os.makedirs(self.directory, mode=0o700, exist_ok=True)
            with open(partial, 'w') as f:
                json.dump(self.content, f, indent=1, sort_keys=True)
            os.replace(partial, self.path)
        except OSError as e:
            # A full or unwritable temporary directory must not fail the
            # command: only a SIGKILL's leftovers then go unlisted.
            LOG.warning('cannot list what the run started in %s: %s',
                        self.path, e)

    def _watch(self):
        # A session of its own: the signals a terminal sends the command's
        # group do not reach it. Its stdout is closed so that a reader of
        # the command's output (``| head``) is not kept waiting by it.
        self.watchdog = subprocess.Popen(
            [sys.executable, '-m', 'shelvefix.backends.reap', 'watch',
             self.path, str(self.pid), str(self.start)],
            stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL,
            start_new_session=True)

    def close(self):
        """The command is ending: remove the file if nothing is listed.

        The watchdog is stopped too; if something is still listed both
        stay, and the watchdog removes it once this process has ended.
        """
        with _lock:
            if not self.empty():
                return
            try:
                os.unlink(self.path)
            except FileNotFoundError:
                pass
            if self.watchdog is not None:
                self.watchdog.terminate()
                try:
                    self.watchdog.wait(10)
                except subprocess.TimeoutExpired:
                    self.watchdog.kill()
                    self.watchdog.wait()


@contextlib.contextmanager
def registered(argv):
    """Register the command's run while active (see the module's text).

    :param argv: the command's arguments
    """
    global _current
    run = Run(argv)
    with _lock:
        # Without /proc a run cannot be told from a reused pid: nothing
        # is listed, so that nothing is ever reaped by mistake.
        _current = run if run.start is not None else None
    try:
        yield run
    finally:
        with _lock:
            _current = None
        run.close()


def record(kind, **item):
    """List something the run started (nothing outside a run).

    ``processes``: ``pid``, ``start``, ``what``, ``ports``: a process
    that leads a session of its own; ``dirs``: ``path``; ``clusters``:
    ``data``, ``leases``, ``pid`` and ``start`` of the postmaster.
    """
    with _lock:
        if _current is not None:
            _current.add(kind, item)


def forget(kind, **match):
    """Unlist what was stopped or removed (see :func:`record`)."""
    with _lock:
        if _current is not None:
            _current.remove(kind, **match)


def record_process(process, what, ports=()):
    """List ``process`` (a ``Popen`` leading its own session)."""
    record('processes', pid=process.pid, start=start_time(process.pid),
           what=what, ports=list(ports))


def temp_dir(fixture, prefix):
    """A new temporary directory, listed for the run.

    ``fixture``'s cleanup removes it, then unlists it.
    """
    path = tempfile.mkdtemp(prefix=prefix)

    def remove():
        shutil.rmtree(path, True)
        forget('dirs', path=path)
    fixture.addCleanup(remove)
    record('dirs', path=path)
    return path
