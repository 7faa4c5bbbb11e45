"""Small helpers shared by the compute and scheduler sides."""

import functools
import threading

from oslo_utils import uuidutils

from shelvefix import exception

_LOCKS = {}
_LOCKS_GUARD = threading.Lock()


def is_uuid_like(value):
    """True if ``value`` is a string that parses as a uuid."""
    return isinstance(value, str) and uuidutils.is_uuid_like(value)


def validate_uuid(value):
    """Raise InvalidUUID unless ``value`` is a uuid string."""
    if not is_uuid_like(value):
        raise exception.InvalidUUID(uuid=repr(value))


def _lock_for(name):
    with _LOCKS_GUARD:
        return _LOCKS.setdefault(name, threading.Lock())


def synchronized(name):
    """Serialise calls per ``name`` inside this process.

    nova uses ``oslo_concurrency.lockutils.synchronized(instance.uuid)`` for
    the same purpose: two operations on one instance never interleave on one
    compute host.
    """
    def wrap(f):
        @functools.wraps(f)
        def inner(*args, **kwargs):
            with _lock_for(name):
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
