"""Small helpers shared by the compute and scheduler sides and the double."""

import _thread
import contextlib
import functools
import sys
import threading
import time
import uuid

from oslo_utils import uuidutils

from shelvefix import exception


def is_uuid_like(value):
    """True if ``value`` is a string that parses as a uuid."""
    return isinstance(value, str) and uuidutils.is_uuid_like(value)


#: The namespace of :func:`fixed_uuid`'s uuids.
_FIXED = uuid.uuid5(uuid.NAMESPACE_URL, 'https://opendev.org/shelvefix')


def fixed_uuid(name):
    """The same uuid for ``name`` in every process.

    For records every run of a program shares (a cell, an image): a
    step's label naming one must read alike in the process that hands a
    subtree out and in the one that replays it.
    """
    return str(uuid.uuid5(_FIXED, name))


def plural(count, word):
    """``1 case``, ``2 cases``: a count and the word it counts."""
    return '%d %s%s' % (count, word, '' if count == 1 else 's')


def validate_uuid(value):
    """Raise InvalidUUID unless ``value`` is a uuid string."""
    if not is_uuid_like(value):
        raise exception.InvalidUUID(uuid=repr(value))


try:
    import greenlet as _greenlet
except ImportError:  # pragma: no cover - greenlet comes with SQLAlchemy
    _greenlet = None


def _eventlet_patched_threads():
    patcher = sys.modules.get('eventlet.patcher')
    return patcher is not None and patcher.is_monkey_patched('thread')


def _native_thread_module():
    if _eventlet_patched_threads():
        return sys.modules['eventlet.patcher'].original('_thread')
    return _thread


class AnyThreadRLock(object):
    """A reentrant lock that green and native threads can share.

    Under eventlet's monkey patching ``threading.RLock()`` makes a green
    lock, which only works between green threads of one OS thread: a
    native thread (eventlet's ``tpool``, which nova's libvirt driver calls
    through) that releases it schedules the waiter's wake-up on its own
    hub, which never runs again, so the waiting green thread sleeps for
    ever; one that has to wait for it sleeps on its own hub for ever.

    This lock is a native lock underneath, owned by a greenlet (a thread
    where there are no greenlets). Without eventlet's patching a
    contended acquire blocks natively, as ``threading.RLock`` does. With
    it, a contended acquire polls with ``time.sleep`` (eventlet's: other
    green threads of the waiter's OS thread run meanwhile, among them
    perhaps the holder), so neither side ever waits on a hub that will
    not run.

    Hold it only for work that finishes without anything from the
    waiter's thread.
    """

    #: The first and the longest pause of a polling acquire, in seconds.
    POLL = (0.0002, 0.01)

    def __init__(self):
        natives = _native_thread_module()
        self._native = natives.allocate_lock()
        self._get_ident = natives.get_ident
        self._owner = None
        self._count = 0

    def _me(self):
        if _greenlet is not None:
            return _greenlet.getcurrent()
        return self._get_ident()

    def acquire(self):
        me = self._me()
        if self._owner == me:
            self._count += 1
            return True
        if not self._native.acquire(False):
            if _eventlet_patched_threads():
                pause = self.POLL[0]
                while not self._native.acquire(False):
                    time.sleep(pause)
                    pause = min(pause * 2, self.POLL[1])
            else:
                self._native.acquire()
        self._owner = me
        self._count = 1
        return True

    def release(self):
        if self._owner != self._me():
            raise RuntimeError('cannot release un-acquired lock')
        self._count -= 1
        if not self._count:
            self._owner = None
            self._native.release()

    def locked(self):
        """True while some thread holds it."""
        return self._native.locked()

    def __enter__(self):
        return self.acquire()

    def __exit__(self, *exc_info):
        self.release()


class Locks(object):
    """The named locks of one service process (one compute host).

    nova's locks (``lockutils.synchronized``) are per process: two compute
    hosts never share one. Services run in one Python process here (the
    race lab, tests) each get their own ``Locks``.

    ``interceptor``, when set, is called as ``interceptor(op, name,
    held)`` with op ``'acquire'`` (before taking the lock; ``held()`` says
    whether it is taken) or ``'release'`` (before giving it back), and the
    lock is then taken or given back without blocking: the interleaving
    explorer schedules acquisitions itself, as guarded steps.
    """

    def __init__(self):
        self._locks = {}
        self._held = set()
        self._guard = threading.Lock()
        self.interceptor = None

    def held(self, name):
        """True while some caller holds the lock ``name``."""
        with self._guard:
            return name in self._held

    @contextlib.contextmanager
    def lock(self, name):
        """Hold the lock ``name`` for the ``with`` block."""
        interceptor = self.interceptor
        if interceptor is not None:
            interceptor('acquire', name, lambda: self.held(name))
            with self._guard:
                self._held.add(name)
            try:
                yield
            finally:
                interceptor('release', name, lambda: self.held(name))
                with self._guard:
                    self._held.discard(name)
            return
        with self._guard:
            real = self._locks.setdefault(name, threading.Lock())
        with real:
            with self._guard:
                self._held.add(name)
            try:
                yield
            finally:
                with self._guard:
                    self._held.discard(name)

    def synchronized(self, name):
        """Decorate a function to run holding the lock ``name``."""
        def wrap(f):
            @functools.wraps(f)
            def inner(*args, **kwargs):
                with self.lock(name):
                    return f(*args, **kwargs)
            return inner
        return wrap


def version_tuple(version, what='microversion'):
    """``'1.28'`` as ``(1, 28)``, to compare microversions.

    :raises Invalid: ``version`` does not look like ``MAJOR.MINOR``
    """
    try:
        major, minor = version.split('.')
        return int(major), int(minor)
    except (AttributeError, ValueError):
        raise exception.Invalid(
            reason='%s must look like "1.28", got %r' % (what, version))


#: CPython versions whose ``ast.parse`` fails when two threads parse at
#: once: "SystemError: AST constructor recursion depth mismatch"
#: (python/cpython gh-106905, fixed in 3.11.8 and 3.12.2). Python 3.11
#: parses each source line of a traceback it formats, so threads that log
#: tracebacks side by side meet it, and the victim is any parse running
#: then (``inspect.signature`` of a builtin, another traceback).
_AST_RACE = ((3, 11, 0), (3, 11, 8)), ((3, 12, 0), (3, 12, 2))
_ast_lock = threading.RLock()


def serialize_ast_parse(version=None):
    """On a CPython with gh-106905, let one thread parse at a time.

    Wraps ``ast.parse`` (once) so that every parse holds one lock;
    elsewhere nothing changes. For the commands that run many threads.

    :returns: whether ``ast.parse`` is serialized
    """
    import ast
    import sys

    version = tuple(version or sys.version_info[:3])
    if getattr(ast.parse, '_shelvefix_serialized', False):
        return True
    if not any(low <= version < high for low, high in _AST_RACE):
        return False
    unguarded = ast.parse

    @functools.wraps(unguarded)
    def parse(*args, **kwargs):
        with _ast_lock:
            return unguarded(*args, **kwargs)
    parse._shelvefix_serialized = True
    ast.parse = parse
    return True


#: How often a thread waiting for a :class:`Background` wakes, so that the
#: main thread runs the handler of a signal another thread received.
MAIN_WAIT_SLICE = 0.1


class Background(object):
    """``target`` in a daemon thread; the caller only waits for it.

    A daemon thread, so that one left in a request that does not end
    cannot keep the process from exiting.
    """

    def __init__(self, target, name):
        self.result = None
        self.error = None
        #: Set once ``target`` has returned or raised.
        self.done = threading.Event()
        self.thread = threading.Thread(target=self._run, args=(target,),
                                       name=name, daemon=True)

    def _run(self, target):
        try:
            self.result = target()
        except BaseException as e:
            self.error = e
        finally:
            self.done.set()

    def start(self):
        self.thread.start()
        return self

    def wait(self, timeout=None):
        """Wait until ``target`` is done; True once it is.

        The wait is cut in slices of :data:`MAIN_WAIT_SLICE` seconds: the
        kernel may hand a signal to any thread of the process, and Python
        then runs its handler in the main thread only once that thread
        runs again; a wait without a timeout would hide the signal until
        the thread ends. It waits on :attr:`done`, not on the thread: on
        Python 3.11 a ``Thread.join`` that the handler's exception
        interrupts can mark the thread stopped while it still runs, and
        the clean-up would then start under the cycles still going.

        :raises KeyboardInterrupt: an interrupt while waiting
        """
        deadline = None if timeout is None else time.monotonic() + timeout
        while not self.done.is_set():
            wait = MAIN_WAIT_SLICE
            if deadline is not None:
                wait = min(wait, deadline - time.monotonic())
                if wait <= 0:
                    break
            self.done.wait(wait)
        return self.done.is_set()

    def outcome(self):
        """What ``target`` returned, or raise what it raised."""
        if self.error is not None:
            raise self.error
        return self.result
