"""Small helpers shared by the compute and scheduler sides."""

import contextlib
import functools
import threading

from oslo_utils import uuidutils

from shelvefix import exception


def is_uuid_like(value):
    """True if ``value`` is a string that parses as a uuid."""
    return isinstance(value, str) and uuidutils.is_uuid_like(value)


def validate_uuid(value):
    """Raise InvalidUUID unless ``value`` is a uuid string."""
    if not is_uuid_like(value):
        raise exception.InvalidUUID(uuid=repr(value))


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
