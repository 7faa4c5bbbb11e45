"""Pickling what a worker process sends back.

An actor's result may be anything, and an exception's constructor often
needs arguments that pickle does not keep (``NovaException`` subclasses take
keywords): :func:`dumps` rebuilds exceptions from their class, ``args`` and
attributes without calling the constructor, and :func:`portable` replaces
what still does not pickle by its ``repr``.
"""

import io
import pickle


def _rebuild_exception(cls, args, state):
    exc = cls.__new__(cls)
    exc.args = args
    exc.__dict__.update(state)
    return exc


class _Pickler(pickle.Pickler):
    """Pickles exceptions without relying on their constructors."""

    def reducer_override(self, obj):
        if isinstance(obj, BaseException):
            state = {}
            for key, value in getattr(obj, '__dict__', {}).items():
                try:
                    pickle.dumps(value)
                except Exception:
                    value = repr(value)
                state[key] = value
            return _rebuild_exception, (type(obj), obj.args, state)
        return NotImplemented


def dumps(value):
    """Pickle ``value``, exceptions without their constructors."""
    buffer = io.BytesIO()
    _Pickler(buffer, protocol=pickle.HIGHEST_PROTOCOL).dump(value)
    return buffer.getvalue()


def portable(key, observed):
    """Pickle a run's prefix and what was observed of it.

    Actor results and trace results that do not pickle become reprs.
    """
    try:
        return dumps((key, observed))
    except Exception:
        results = {}
        for name, result in observed.record.results.items():
            value, error = result.value, result.error
            try:
                dumps(value)
            except Exception:
                value = repr(value)
            try:
                dumps(error)
            except Exception:
                error = RuntimeError(repr(error))
            results[name] = result._replace(value=value, error=error)
        for entry in observed.record.trace:
            try:
                dumps(entry.result)
            except Exception:
                entry.result = repr(entry.result)
        observed.record = observed.record._replace(results=results)
        return dumps((key, observed))
