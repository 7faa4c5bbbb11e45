"""The registry of contract scenarios and the decorator that fills it.

Scenario modules (:mod:`shelvefix.contract.scenarios`) register their
functions with :func:`scenario`; importing that package registers them
all. Scenarios keep their registration order, which groups them by area.
"""

import collections
import re

Scenario = collections.namedtuple('Scenario',
                                  ['name', 'description', 'func', 'config'],
                                  defaults=(None,))
Scenario.__doc__ = """A registered contract scenario.

``func(api)`` plays it against a
:class:`~shelvefix.contract.api.ContractAPI`; ``config`` is None or the
placement configuration every backend is started with for it,
``{group: {option: value}}``.
"""

_NAME_RE = re.compile(r'^[a-z][a-z0-9_]*$')
_SCENARIOS = collections.OrderedDict()


class UnknownScenario(KeyError):
    """No contract scenario has that name."""

    def __str__(self):
        return self.args[0]


def scenario(name, description, config=None):
    """Register the decorated function as the contract scenario ``name``.

    :param name: a unique identifier (lower case, digits, underscores); it
        is the test id and the CLI's ``--scenario`` value.
    :param description: one line saying what the scenario shows.
    :param config: placement's configuration for this scenario, the same
        on every backend: ``{group: {option: value}}``, e.g. ``{'cors':
        {'allowed_origin': ['http://valid.example.com']}}`` (see
        :func:`shelvefix.backends.make_backend`). Default: the backends'
        own.
    :raises ValueError: a malformed or already registered name, an
        empty description, or a ``config`` not shaped like that.
    """
    if not _NAME_RE.match(name):
        raise ValueError('malformed scenario name %r' % (name,))
    if not description or '\n' in description:
        raise ValueError('scenario %s needs a one-line description' % name)
    if config is not None and not (
            isinstance(config, dict) and
            all(isinstance(group, str) and isinstance(values, dict)
                for group, values in config.items())):
        raise ValueError('scenario %s: config must be {group: {option: '
                         'value}}, not %r' % (name, config))

    def register(func):
        if name in _SCENARIOS:
            raise ValueError('contract scenario %s registered twice' % name)
        _SCENARIOS[name] = Scenario(name, description, func, config)
        return func
    return register


def names():
    """The registered scenario names, in registration order."""
    return list(_SCENARIOS)


def get(name):
    """The :class:`Scenario` registered as ``name``.

    :param name: a scenario name.
    :raises UnknownScenario: no scenario has that name.
    """
    try:
        return _SCENARIOS[name]
    except KeyError:
        raise UnknownScenario('unknown contract scenario %r (%d known; '
                              'list them with --list)'
                              % (name, len(_SCENARIOS)))
