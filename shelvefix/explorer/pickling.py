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


class ForeignError(Exception):
    """An exception of a module the receiving process does not import.

    It keeps the original's class name (``type(error).__name__``), module
    and text (``str(error)``), which is what reports read.
    """

    def __init__(self, text):
        super(ForeignError, self).__init__(text)
        self.text = text

    def __str__(self):
        return self.text


_FOREIGN_CLASSES = {}


def _foreign_error(module, name, text):
    cls = _FOREIGN_CLASSES.get((module, name))
    if cls is None:
        cls = type(name, (ForeignError,), {'__module__': module})
        _FOREIGN_CLASSES[(module, name)] = cls
    return cls(text)


class _Pickler(pickle.Pickler):
    """Pickles exceptions without relying on their constructors.

    :param foreign: module names (prefixes) whose objects the receiver
        cannot import: their exceptions become :class:`ForeignError`
        subclasses of the same name, anything else of theirs its ``repr``
    """

    def __init__(self, file, protocol=None, foreign=()):
        super(_Pickler, self).__init__(file, protocol=protocol)
        self.foreign = tuple(foreign)

    def _is_foreign(self, obj):
        owner = obj if isinstance(obj, type) else type(obj)
        module = getattr(owner, '__module__', None) or ''
        return any(module == name or module.startswith(name + '.')
                   for name in self.foreign)

    def reducer_override(self, obj):
        if self.foreign and self._is_foreign(obj):
            cls = type(obj)
            if isinstance(obj, BaseException):
                return _foreign_error, (cls.__module__, cls.__name__,
                                        str(obj))
            return str, (repr(obj),)
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


def dumps(value, foreign=()):
    """Pickle ``value``, exceptions without their constructors.

    :param foreign: see :class:`_Pickler`
    """
    buffer = io.BytesIO()
    _Pickler(buffer, protocol=pickle.HIGHEST_PROTOCOL,
             foreign=foreign).dump(value)
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
