"""Play contract scenarios against placement backends and compare them.

:func:`run_scenario` plays one scenario against a fresh fixture of one
backend and returns its :class:`Transcript`; :func:`compare` lists the
:class:`Difference` between two transcripts; :func:`run_all` does both for
every scenario (or the ones named) and totals the wall time per backend.

Backends run one after the other, never side by side: the real placement
keeps its database engine in a process-wide global, so at most one
:class:`~shelvefix.backends.real.RealPlacementFixture` may be set up at a
time.
"""

import collections
import json
import time

from shelvefix import backends as backends_mod
from shelvefix.contract import api as api_mod
from shelvefix.contract import scenarios

DEFAULT_BACKENDS = (backends_mod.DOUBLE, backends_mod.REAL)

Transcript = collections.namedtuple(
    'Transcript', ['scenario', 'backend', 'observations', 'wall_time',
                   'request_time', 'error'])
Transcript.__doc__ = """One scenario played against one backend.

``observations`` is the list of
:class:`~shelvefix.contract.api.Observation`; ``wall_time`` (seconds)
runs from the fixture's setUp to the end of its cleanUp,
``request_time`` covers the scenario's requests alone; ``error`` is None,
or ``"ExceptionName: message"`` (normalised) if the scenario raised.
"""


class _Absent(object):
    """Marks a member, header or request one side does not have."""

    def __repr__(self):
        return '<absent>'


ABSENT = _Absent()


class Difference(collections.namedtuple(
        'Difference', ['index', 'request', 'field', 'value_a', 'value_b',
                       'backend_a', 'backend_b'])):
    """One way two transcripts of a scenario disagree.

    ``index`` is the request's 1-based position (None for the scenario as
    a whole), ``request`` e.g. ``PUT /allocations/<c1> @1.28``, ``field``
    what differs (``status``, ``header vary``, ``body.errors[0].detail``,
    ``request body``, ``error``...), then each backend's value
    (:data:`ABSENT` when it has none) and the backends' names.
    """

    __slots__ = ()

    def __str__(self):
        where = ('#%d %s' % (self.index, self.request)
                 if self.index is not None else 'scenario')
        return '%s: %s: %s %s, %s %s' % (
            where, self.field, self.backend_a, _show(self.value_a),
            self.backend_b, _show(self.value_b))

    def as_dict(self):
        """A JSON-able dict of this difference."""
        data = self._asdict()
        for key in ('value_a', 'value_b'):
            if data[key] is ABSENT:
                data[key] = repr(ABSENT)
        return data


def _show(value):
    if value is ABSENT:
        return repr(ABSENT)
    return json.dumps(value, sort_keys=False)


ScenarioResult = collections.namedtuple(
    'ScenarioResult', ['name', 'description', 'transcripts', 'differences'])
ScenarioResult.__doc__ = """A scenario played on every backend.

``transcripts`` maps backend name to :class:`Transcript`;
``differences`` compares the first backend with each other one.
"""


class RunResult(collections.namedtuple(
        'RunResult', ['backends', 'scenarios', 'wall_time',
                      'request_time'])):
    """What :func:`run_all` returns.

    ``scenarios`` is the list of :class:`ScenarioResult`; ``wall_time`` and
    ``request_time`` map each backend to the sum of its transcripts'.
    """

    __slots__ = ()

    @property
    def agreeing(self):
        """The :class:`ScenarioResult` without differences."""
        return [result for result in self.scenarios
                if not result.differences]

    @property
    def disagreeing(self):
        """The :class:`ScenarioResult` with differences."""
        return [result for result in self.scenarios if result.differences]


def run_scenario(name, backend_name):
    """Play one scenario against a fresh fixture of one backend.

    The fixture is started with the scenario's ``config``, if it has one
    (see :func:`~shelvefix.contract.registry.scenario`).

    :param name: a registered scenario name.
    :param backend_name: ``double`` or ``real`` (see
        :mod:`shelvefix.backends`).
    :returns: the :class:`Transcript`. An exception raised by the scenario
        itself is caught and recorded in ``error``.
    :raises UnknownScenario: no scenario has that name.
    :raises ValueError: unknown backend.
    :raises BackendUnavailable: ``real`` without openstack-placement, or
        a backend that cannot take the scenario's ``config``.
    """
    entry = scenarios.get(name)
    fixture = backends_mod.make_backend(backend_name,
                                        placement_config=entry.config)
    started = time.perf_counter()
    with fixture as placement:
        api = api_mod.ContractAPI(placement.adapter, placement.endpoint)
        begun = time.perf_counter()
        error = None
        try:
            entry.func(api)
        except Exception as exc:
            # A scenario crashing (often on an answer shaped unlike the
            # other backend's) is itself a result to compare.
            error = '%s: %s' % (type(exc).__name__,
                                api.normaliser.text(str(exc)))
        request_time = time.perf_counter() - begun
    return Transcript(name, backend_name, api.observations,
                      time.perf_counter() - started, request_time, error)


def _request(observation):
    text = '%s %s' % (observation.method, observation.path)
    if observation.version is not None:
        text += ' @%s' % observation.version
    return text


def _diff_values(path, a, b, found):
    # Strict: 16 and 16.0, or 1 and True, are different JSON.
    if type(a) is not type(b):
        found.append((path, a, b))
    elif isinstance(a, dict):
        for key in list(a) + [key for key in b if key not in a]:
            _diff_values('%s.%s' % (path, key), a.get(key, ABSENT),
                         b.get(key, ABSENT), found)
    elif isinstance(a, list):
        for n in range(max(len(a), len(b))):
            _diff_values('%s[%d]' % (path, n),
                         a[n] if n < len(a) else ABSENT,
                         b[n] if n < len(b) else ABSENT, found)
    elif a != b:
        found.append((path, a, b))


def _diff_observations(x, y):
    found = []
    if (x.method, x.path, x.version) != (y.method, y.path, y.version):
        found.append(('request', _request(x), _request(y)))
    if x.sent != y.sent:
        found.append(('request body', x.sent, y.sent))
    if x.status != y.status:
        found.append(('status', x.status, y.status))
    for name in sorted(set(x.headers) | set(y.headers)):
        value_x = x.headers.get(name, ABSENT)
        value_y = y.headers.get(name, ABSENT)
        if value_x != value_y:
            found.append(('header %s' % name, value_x, value_y))
    _diff_values('body', x.body, y.body, found)
    return found


def compare(transcript_a, transcript_b):
    """List how two transcripts of the same scenario differ.

    Compares, request by request: the request itself, the status, the
    headers kept by the normaliser and the whole body (error ``code`` and
    ``detail`` included); then the number of requests and whether the
    scenario raised. A scenario that raised on either side never compares
    equal, even if both raised alike.

    :param transcript_a: a :class:`Transcript` (conventionally the
        double's).
    :param transcript_b: a :class:`Transcript` of the same scenario
        (conventionally the real placement's).
    :returns: a list of :class:`Difference`, empty when they agree.
    """
    a, b = transcript_a, transcript_b
    differences = []

    def add(index, request, field, value_a, value_b):
        differences.append(Difference(index, request, field, value_a,
                                      value_b, a.backend, b.backend))

    for x, y in zip(a.observations, b.observations):
        for field, value_x, value_y in _diff_observations(x, y):
            add(x.index, _request(x), field, value_x, value_y)
    # Requests only one side made (a scenario that stopped early).
    for extra in a.observations[len(b.observations):]:
        add(extra.index, _request(extra), 'request', _request(extra),
            ABSENT)
    for extra in b.observations[len(a.observations):]:
        add(extra.index, _request(extra), 'request', ABSENT,
            _request(extra))
    if a.error is not None or b.error is not None:
        add(None, None, 'error', a.error, b.error)
    return differences


def run_all(backends=DEFAULT_BACKENDS, names=None, progress=None):
    """Play scenarios on every backend and compare the transcripts.

    Each scenario is played on each backend in turn (a fresh fixture
    every time), one fixture at a time.

    :param backends: backend names; the first is compared with each of
        the others.
    :param names: the scenarios to play (default: all, in registry order).
    :param progress: called with the number of scenarios played so far.
    :returns: a :class:`RunResult`.
    :raises UnknownScenario: a name is not a scenario (checked before
        anything runs).
    :raises ValueError: an unknown backend, one named twice, or none.
    :raises BackendUnavailable: ``real`` without openstack-placement.
    """
    backends = tuple(backends)
    if not backends:
        raise ValueError('no placement backend to run against')
    if len(set(backends)) != len(backends):
        raise ValueError('placement backends named twice: %s'
                         % ', '.join(backends))
    for backend in backends:
        backends_mod.make_backend(backend)
    names = list(scenarios.names() if names is None else names)
    entries = [scenarios.get(name) for name in names]
    wall_time = collections.OrderedDict((b, 0.0) for b in backends)
    request_time = collections.OrderedDict((b, 0.0) for b in backends)
    results = []
    for entry in entries:
        transcripts = collections.OrderedDict()
        for backend in backends:
            transcript = run_scenario(entry.name, backend)
            transcripts[backend] = transcript
            wall_time[backend] += transcript.wall_time
            request_time[backend] += transcript.request_time
        first = transcripts[backends[0]]
        differences = []
        for backend in backends[1:]:
            differences.extend(compare(first, transcripts[backend]))
        if len(backends) == 1 and first.error is not None:
            differences.append(Difference(None, None, 'error', first.error,
                                          ABSENT, first.backend, None))
        results.append(ScenarioResult(entry.name, entry.description,
                                      transcripts, differences))
        if progress:
            progress(len(results))
    return RunResult(backends, results, wall_time, request_time)


def unearned(result, names):
    """Why a :class:`RunResult` cannot back "every scenario agrees", or None.

    The one place ``shelvefix contract`` decides that it ran enough to say
    clean: every scenario asked for was played on every backend, and each
    play made at least one request (a scenario that sent nothing compared
    nothing).

    :param result: what :func:`run_all` returned
    :param names: the scenarios asked for
    :returns: one line naming the first scenario that fell short
    """
    if not names:
        return 'no scenario was asked for'
    played = {item.name: item for item in result.scenarios}
    for name in names:
        item = played.get(name)
        if item is None:
            return 'scenario %s was not played' % name
        for backend in result.backends:
            transcript = item.transcripts.get(backend)
            if transcript is None:
                return 'scenario %s was not played on %s' % (name, backend)
            if not transcript.observations:
                return ('scenario %s made no request on %s'
                        % (name, backend))
    if len(result.backends) < 2:
        return 'only %s ran, nothing to compare it with' % ', '.join(
            result.backends)
    return None
