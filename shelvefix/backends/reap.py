"""Stop and remove what a dead run left (see :mod:`~shelvefix.backends.runs`).

:func:`dead_runs` reads the run files, :func:`reap` stops a dead run's
processes (each session, by pid and start time), stops the PostgreSQL
cluster it had started (unless another process holds a lease on it: the
last one stops it, see
:class:`~shelvefix.backends.postgresql.ClusterLease`) and removes its
temporary directories, then its file. A live run's file is never
touched. ``python -m shelvefix.backends.reap watch FILE PID START`` is
the watchdog a run starts: it waits for the run to end and reaps it if
it died with something still listed.
"""

import errno
import fcntl
import json
import os
import select
import shutil
import signal
import sys
import time

from shelvefix.backends import runs

#: How long a process may take to go after SIGKILL.
KILL_WAIT = 10.0
#: How long PostgreSQL may take to stop (fast, then immediate shutdown).
CLUSTER_WAIT = 30.0


class DeadRun(object):
    """A run file whose command no longer runs.

    :ivar path: the file
    :ivar content: what it lists (see :class:`.runs.Run`)
    :ivar done: what was stopped or removed, as phrases
    :ivar left: what could not be, as phrases
    """

    def __init__(self, path, content):
        self.path = path
        self.content = content
        self.done = []
        self.left = []

    @property
    def name(self):
        """``pid N (command)``."""
        return 'pid %s (%s)' % (self.content.get('pid', '?'),
                                self.content.get('command', '?'))

    def items(self):
        """``(kind, item, description)`` of everything it lists."""
        for item in self.content.get('processes', []):
            ports = ''.join(', port %d' % p for p in item.get('ports', []))
            yield ('processes', item, 'process %s (%s%s)'
                   % (item['pid'], item.get('what', '?'), ports))
        for item in self.content.get('clusters', []):
            yield ('clusters', item, 'PostgreSQL cluster %s (postmaster '
                   '%s)' % (item['data'], item['pid']))
        for item in self.content.get('dirs', []):
            yield 'dirs', item, 'directory %s' % item['path']


def _load(path):
    try:
        with open(path) as f:
            content = json.load(f)
        content['pid'], content['start'] = (int(content['pid']),
                                            int(content['start']))
        return content
    except FileNotFoundError:
        return None
    except (OSError, ValueError, KeyError, TypeError):
        # Unreadable or half written: nothing can be told from it but
        # that it names no live run.
        return {'pid': '?', 'start': None, 'command': 'unreadable file'}


def dead_runs(directory=None):
    """The :class:`DeadRun` of each run file whose command is gone."""
    directory = directory or runs.state_dir()
    try:
        names = sorted(os.listdir(directory))
    except FileNotFoundError:
        return []
    found = []
    for name in names:
        if not name.endswith('.json'):
            continue
        path = os.path.join(directory, name)
        content = _load(path)
        if content is None:
            continue
        if (content['start'] is not None and
                runs.alive(content['pid'], content['start'])):
            continue
        found.append(DeadRun(path, content))
    return found


def _stop_session(item, dry_run):
    members = runs.session(item['pid'], item['start'])
    if dry_run or not members:
        return members
    for pid in members:
        try:
            os.kill(pid, signal.SIGKILL)
        except ProcessLookupError:
            pass
    deadline = time.monotonic() + KILL_WAIT
    while runs.session(item['pid'], item['start']):
        if time.monotonic() > deadline:
            raise OSError(errno.EBUSY, 'still running %g s after SIGKILL'
                          % KILL_WAIT)
        time.sleep(0.05)
    return members


def _stop_cluster(item, dry_run):
    """Stop the cluster as its lease's last user would.

    True if it was (or would be) stopped, False if it is not this run's
    to stop.
    """
    from shelvefix.backends import postgresql
    lease = postgresql.ClusterLease.of(item['data'])
    if not os.path.isdir(lease.leases):
        return False
    with lease._locked():
        pid, start = item['pid'], item['start']
        # The mark names the server the run started: not, once someone
        # else started it again; and others holding a lease stop it last.
        if not runs.alive(pid, start) or not lease._marked():
            return False
        if lease._others():
            return False
        if dry_run:
            return True
        for signum, wait in ((signal.SIGINT, CLUSTER_WAIT),
                             (signal.SIGQUIT, 5.0), (signal.SIGKILL, 5.0)):
            os.kill(pid, signum)
            deadline = time.monotonic() + wait
            while runs.alive(pid, start) and time.monotonic() < deadline:
                time.sleep(0.1)
            if not runs.alive(pid, start):
                lease._unmark()
                return True
        raise OSError(errno.EBUSY, 'postmaster %d still runs' % pid)


def _remove_dir(item, dry_run):
    if not os.path.lexists(item['path']):
        return False
    if not dry_run:
        shutil.rmtree(item['path'])
    return True


def reap(dead, dry_run=False):
    """Stop and remove what ``dead`` lists, then its file.

    Fills ``dead.done`` and ``dead.left``; with ``dry_run`` only says, in
    ``done``, what would go. The file stays, listing what is left, if
    anything could not be removed. Returns ``dead``.
    """
    try:
        lock = open(dead.path)
    except FileNotFoundError:
        return dead
    with lock:
        try:
            fcntl.flock(lock, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            # Its watchdog, or another command, is reaping it now.
            dead.left.append('being removed by another process')
            return dead
        if (not os.path.exists(dead.path) or
                os.stat(dead.path).st_ino != os.fstat(lock.fileno()).st_ino):
            # Reaped meanwhile by whoever held the lock.
            return dead
        remaining = {kind: [] for kind in runs.KINDS}
        for kind, item, text in dead.items():
            try:
                if kind == 'processes':
                    gone = _stop_session(item, dry_run)
                    if gone:
                        dead.done.append('%s: %d process%s' % (
                            text, len(gone), 'es' if len(gone) > 1 else ''))
                elif kind == 'clusters':
                    if _stop_cluster(item, dry_run):
                        dead.done.append(text)
                elif _remove_dir(item, dry_run):
                    dead.done.append(text)
            except (OSError, ValueError) as e:
                dead.left.append('%s: %s' % (text, e))
                remaining[kind].append(item)
        if dry_run:
            return dead
        if dead.left:
            content = dict(dead.content, **remaining)
            with open(dead.path + '.partial', 'w') as f:
                json.dump(content, f, indent=1, sort_keys=True)
            os.replace(dead.path + '.partial', dead.path)
        else:
            os.unlink(dead.path)
    return dead


def summary(reaped):
    """One line on what ``reaped`` (a list of :class:`DeadRun`) left."""
    return 'removed what %d dead run%s left (%s): %s' % (
        len(reaped), 's' if len(reaped) > 1 else '',
        ', '.join(dead.name for dead in reaped), _what(reaped))


def _what(reaped):
    left = [text for dead in reaped for text in dead.left]
    text = ('; '.join(t for dead in reaped for t in dead.done) or
            'nothing but %s record' % ('its' if len(reaped) == 1 else
                                       'their'))
    if left:
        text += '; could not remove: %s (see shelvefix cleanup)' % (
            '; '.join(left))
    return text


def reap_dead(err):
    """Reap every dead run, saying so in one line on ``err``.

    The first step of every command; quiet when there is nothing.
    """
    try:
        reaped = [reap(dead) for dead in dead_runs()]
    except OSError as e:
        err.write('shelvefix: could not read what earlier runs left in %s: '
                  '%s\n' % (runs.state_dir(), e))
        return
    if reaped:
        err.write('shelvefix: %s\n' % summary(reaped))


def _wait_for(pid, start):
    """Return once ``pid`` (started at ``start``) has ended."""
    try:
        pidfd = os.pidfd_open(pid)
    except (AttributeError, OSError):
        pidfd = None
    if pidfd is not None and runs.alive(pid, start):
        poller = select.poll()
        poller.register(pidfd, select.POLLIN)
        poller.poll()
        os.close(pidfd)
    while runs.alive(pid, start):
        time.sleep(0.2)


def watch(path, pid, start, err):
    """The watchdog: once the run ends, reap it if its file is left."""
    # The command stops it with SIGTERM when it ended with nothing left.
    signal.signal(signal.SIGTERM, lambda *_: os._exit(0))
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    signal.signal(signal.SIGHUP, signal.SIG_IGN)
    _wait_for(pid, start)
    content = _load(path)
    if content is None:
        return 0
    dead = reap(DeadRun(path, content))
    if dead.done or dead.left:
        try:
            err.write('shelvefix: %s ended without its clean-up; its '
                      'watchdog removed %s\n' % (dead.name, _what([dead])))
            err.flush()
        except (OSError, ValueError):
            pass
    return 1 if dead.left else 0


def main(argv=None):
    """``watch FILE PID START``: the watchdog (see :func:`watch`)."""
    argv = sys.argv[1:] if argv is None else argv
    if len(argv) != 4 or argv[0] != 'watch':
        sys.stderr.write('usage: python -m shelvefix.backends.reap watch '
                         'FILE PID START\n')
        return 2
    return watch(argv[1], int(argv[2]), int(argv[3]), sys.stderr)


if __name__ == '__main__':
    sys.exit(main())
