"""Real placement for nova's tests, with every request replayed on the double.

:class:`DifferentialPlacementFixture` takes the place of nova's
functional-test ``PlacementFixture`` as
:class:`~shelvefix.backends.nova_fixture.PlacementFixture` does, but the
answers a test gets are real placement's: it starts nova's own fixture
(openstack-placement over sqlite) and, beside it, the double on a database
of its own. Every request nova's report client or the test's
``self.placement`` sends goes to real placement first, then, unchanged,
to the double, and the two answers are compared: the status, the headers
placement's contract covers and the whole JSON body, lists in the order
placement wrote them (``request_id`` members dropped and error text
whitespace-squeezed, as the contract scenarios compare them; see
:mod:`shelvefix.contract.normalise`). A uuid real placement made up (a
provider created without one) is mapped to the one the double made up
in the same place, so the requests that name it later reach the same
record on both.

This is how a project shows the double is good enough for its tests: run
them once this way, and every answer that differs is listed with the
test that sent it. A request is not replayed when the test mocked the
fixture's client or keystoneauth's ``Adapter`` (the answer is the
mock's, without placement's ``x-openstack-request-id``: real placement
never saw it) or real placement's call raised.

Differences go to :attr:`DifferentialPlacementFixture.differences`, to
the JSON-lines file ``$SHELVEFIX_DIFFERENTIAL_LOG`` names (one line per
differing answer and one per fixture with its counts; appending, so
several processes can share one) and, with ``strict=True``, fail the test
at cleanup.
"""

import json
import os
import sys
import unittest

import fixtures
from keystoneauth1 import adapter as ks_adapter
from keystoneauth1 import session as ks_session
import requests

from shelvefix.backends import fixture as fixture_mod
from shelvefix.backends import nova_fixture
from shelvefix.contract import normalise
from shelvefix.placement import deploy
from shelvefix import utils

#: The environment variable naming the JSON-lines log.
LOG_VARIABLE = 'SHELVEFIX_DIFFERENTIAL_LOG'
#: The header placement puts on every answer.
REQUEST_ID_HEADER = 'x-openstack-request-id'
#: The tallies of a fixture, in ``counts`` and in each log line.
COUNTS = ('compared', 'identical', 'differing', 'not_replayed')
#: How much of a value a logged difference keeps.
SHOWN = 600
# nova's own fixture class, saved by use_in_nova() before it replaces it.
_NOVA_CLASS = []


class _Verbatim(normalise.Normaliser):
    """The contract's normaliser, keeping uuids (translated) as they are."""

    def __init__(self, translate):
        super(_Verbatim, self).__init__()
        self._translate = translate

    def placeholder(self, text):
        return self._translate.get(text, text)


def _shown(value):
    text = value if isinstance(value, str) else json.dumps(
        value, sort_keys=True)
    return text if len(text) <= SHOWN else text[:SHOWN] + '...'


def _calling_test():
    """The id of the test case whose code is on the stack, or None."""
    frame = sys._getframe(1)
    while frame is not None:
        candidate = frame.f_locals.get('self')
        if isinstance(candidate, unittest.TestCase):
            return candidate.id()
        frame = frame.f_back
    return None


class DifferentialPlacementFixture(fixtures.Fixture):
    """nova's ``PlacementFixture``, answers compared with the double's.

    Takes nova's arguments (see
    :class:`~shelvefix.backends.nova_fixture.PlacementFixture`) and:

    :param strict: fail the test at cleanup if an answer differed.
    :param test_id: the test named in the differences (default: the test
        case found on the stack at setUp).
    :param real_class: the fixture serving real placement (default:
        nova's ``PlacementFixture``, as it was before :func:`use_in_nova`).
        It must have nova's fixture's ``_fake_get``/``_fake_post``/
        ``_fake_put``/``_fake_delete``, ``_client``, ``conf_fixture`` and
        ``endpoint``.
    :param patch_report_client: patch nova's ``SchedulerReportClient`` to
        send through the comparison (False without nova).

    After setUp it has nova's fixture's attributes (``conf_fixture``,
    ``endpoint``, ``token``, ``_client``, and ``api`` sending through the
    comparison), and:

    :ivar real: nova's fixture.
    :ivar state: the double's database.
    :ivar differences: one dict per answer that differed: ``test``,
        ``method``, ``url``, ``version``, ``field`` and the two values.
    :ivar counts: ``compared``, ``identical``, ``differing`` and
        ``not_replayed`` requests.
    """

    def __init__(self, token='admin', conf_fixture=None, db=True,
                 use_intercept=True, register_opts=True, strict=False,
                 test_id=None, real_class=None, patch_report_client=True):
        super(DifferentialPlacementFixture, self).__init__()
        self._args = dict(token=token, conf_fixture=conf_fixture, db=db,
                          use_intercept=use_intercept,
                          register_opts=register_opts)
        self.token = token
        self.db = db
        self.strict = strict
        self.test_id = test_id
        self.real_class = real_class
        self.patch_report_client = patch_report_client
        self.real = self.state = self.api = None
        self.differences = []
        self.counts = dict.fromkeys(COUNTS, 0)
        # Real placement's made-up uuids -> the double's.
        self._uuids = {}
        # A request and its replay, one pair at a time: the double sees
        # the requests in the order real placement served them.
        self._order = utils.AnyThreadRLock()

    def _setUp(self):
        if self.test_id is None:
            self.test_id = _calling_test()
        real_class = self.real_class or (
            _NOVA_CLASS[0] if _NOVA_CLASS else getattr(
                __import__(nova_fixture.NOVA_FIXTURES, fromlist=['_']),
                'PlacementFixture'))
        self.real = self._start_real(real_class)
        self.conf_fixture = self.real.conf_fixture
        self.endpoint = self.real.endpoint
        self._client = self.real._client
        conf = self.conf_fixture.conf
        connection = conf.placement_database.connection
        self.state = nova_fixture.DATABASES.open(conf, connection,
                                                 fresh=self.db)
        if self.db:
            self.addCleanup(nova_fixture.DATABASES.drop, conf, connection,
                            self.state)
        session = None
        if self.endpoint:
            double = self.useFixture(fixture_mod.PlacementFixture(
                app=deploy.PlacementApp(state=self.state),
                endpoint=self.endpoint, token=self.token))
            session = double.session.session
        self._double_client = ks_adapter.Adapter(
            ks_session.Session(auth=None, session=session), raise_exc=False)
        if self.patch_report_client:
            for method in ('get', 'post', 'put', 'delete'):
                self.useFixture(fixtures.MonkeyPatch(
                    '%s.%s' % (nova_fixture.REPORT_CLIENT, method),
                    getattr(self, '_fake_%s' % method)))
        self.api = nova_fixture.PlacementApiClient(self)
        self.addCleanup(self._finish)

    def _start_real(self, real_class):
        module = sys.modules.get(nova_fixture.NOVA_FIXTURES)
        current = getattr(module, 'PlacementFixture', None)
        if real_class not in _NOVA_CLASS or current is real_class:
            return self.useFixture(real_class(**self._args))
        # nova's setUp calls super(PlacementFixture, self).setUp(): the
        # module's name must be nova's class again while it runs.
        module.PlacementFixture = real_class
        try:
            return self.useFixture(real_class(**self._args))
        finally:
            module.PlacementFixture = current

    # -- what nova's patched SchedulerReportClient calls -------------------

    def _fake_get(self, client, url, version=None, global_request_id=None):
        return self._both('GET', url, None, version, global_request_id)

    def _fake_post(self, client, url, data, version=None,
                   global_request_id=None):
        return self._both('POST', url, data, version, global_request_id)

    def _fake_put(self, client, url, data, version=None,
                  global_request_id=None):
        return self._both('PUT', url, data, version, global_request_id)

    def _fake_delete(self, client, url, version=None,
                     global_request_id=None):
        return self._both('DELETE', url, None, version, global_request_id)

    # -- the comparison ----------------------------------------------------

    def _both(self, method, url, data, version, global_request_id):
        real = getattr(self.real, '_fake_%s' % method.lower())
        args = (None, url) + ((data,) if method in ('POST', 'PUT') else ())
        with self._order:
            mocked = 'request' in vars(self._client)
            try:
                answer = real(*args, version=version,
                              global_request_id=global_request_id)
            except Exception:
                self.counts['not_replayed'] += 1
                raise
            if mocked or not _from_placement(answer):
                self.counts['not_replayed'] += 1
                return answer
            try:
                self._replay(method, url, data, version, answer)
            except Exception as exc:
                # The test goes on with real placement's answer whatever
                # the double did.
                self.counts['compared'] += 1
                self.counts['differing'] += 1
                self._record(dict(
                    test=self.test_id, method=method, url=url,
                    version=version, body=None if data is None else
                    _shown(data), field='replay', real=str(answer.status_code),
                    double=_shown('%s: %s' % (type(exc).__name__, exc))))
        return answer

    def _translated(self, value):
        text = json.dumps(value) if not isinstance(value, str) else value
        for made_up, double in self._uuids.items():
            text = text.replace(made_up, double)
        return text if isinstance(value, str) else json.loads(text)

    def _replay(self, method, url, data, version, real):
        headers = nova_fixture.request_headers(self.token, version)
        kwargs = {}
        if method in ('POST', 'PUT'):
            kwargs['json'] = self._translated(data)
        double = self._double_client.request(
            self._translated(url), method, headers=headers,
            endpoint_override=self.endpoint, **kwargs)
        if method == 'POST' and real.status_code == double.status_code:
            # Where placement makes uuids up: a record created without one.
            self._learn_uuids(real, double)
        found = self._compare(real, double)
        self.counts['compared'] += 1
        self.counts['identical' if not found else 'differing'] += 1
        for field, value_real, value_double in found:
            self._record(dict(
                test=self.test_id, method=method, url=url, version=version,
                body=None if data is None else _shown(data), field=field,
                real=_shown(value_real), double=_shown(value_double)))

    def _learn_uuids(self, real, double):
        # Before 1.20 a created provider is named by its Location alone.
        pairs = [(_last_segment(real.headers.get('location')),
                  _last_segment(double.headers.get('location')))]
        try:
            pairs.append((real.json(), double.json()))
        except ValueError:
            pass
        while pairs:
            a, b = pairs.pop()
            if isinstance(a, dict) and isinstance(b, dict):
                pairs.extend((a[key], b[key]) for key in a if key in b)
            elif isinstance(a, list) and isinstance(b, list):
                pairs.extend(zip(a, b))
            elif (isinstance(a, str) and isinstance(b, str) and a != b and
                  utils.is_uuid_like(a) and utils.is_uuid_like(b) and
                  a not in self._uuids.values()):
                self._uuids[a] = b

    def _compare(self, real, double):
        # The real answer's made-up uuids are read as the double's.
        ours = _Verbatim(self._uuids)
        theirs = _Verbatim({})
        found = []
        if real.status_code != double.status_code:
            found.append(('status', real.status_code, double.status_code))
        seen_real = ours.headers(real.headers)
        seen_double = theirs.headers(double.headers)
        for name in sorted(set(seen_real) | set(seen_double)):
            if seen_real.get(name) != seen_double.get(name):
                found.append(('header %s' % name, seen_real.get(name),
                              seen_double.get(name)))
        body_real = ours.body(real.content)
        body_double = theirs.body(double.content)
        if body_real != body_double:
            found.append(('body', body_real, body_double))
        return found

    def _record(self, difference):
        self.differences.append(difference)
        _log(dict(difference, kind='difference'))

    def _finish(self):
        _log(dict(kind='fixture', test=self.test_id, **self.counts))
        if self.strict and self.differences:
            raise AssertionError(
                'placement and the double answered %d of %d requests '
                'differently; the first: %s'
                % (self.counts['differing'], self.counts['compared'],
                   json.dumps(self.differences[0], sort_keys=True)))


def _from_placement(answer):
    # placement gives every answer a request id; a test's stand-in for
    # the client (a mocked Adapter.put returning a made-up response) does
    # not, and real placement never saw that request.
    return (isinstance(answer, requests.Response) and
            bool(answer.headers.get(REQUEST_ID_HEADER)))


def _last_segment(location):
    return location.rstrip('/').rsplit('/', 1)[-1] if location else None


def _log(record):
    path = os.environ.get(LOG_VARIABLE)
    if not path:
        return
    with open(path, 'a') as log:
        log.write(json.dumps(record, sort_keys=True) + '\n')


def use_in_nova():
    """Make every nova functional test start a differential fixture.

    As :func:`shelvefix.backends.nova_fixture.use_in_nova`, with
    :class:`DifferentialPlacementFixture`.

    :returns: nova's own class
    """
    module = __import__(nova_fixture.NOVA_FIXTURES, fromlist=['_'])
    original = module.PlacementFixture
    if not _NOVA_CLASS:
        _NOVA_CLASS.append(original)
    module.PlacementFixture = DifferentialPlacementFixture
    return original


def read_log(path):
    """Totals of a differential log: ``(counts, differences)``.

    :param path: a JSON-lines file written through
        :data:`LOG_VARIABLE`.
    :returns: the ``compared``/``identical``/``differing``/
        ``not_replayed`` sums over its fixtures, and its differences.
    """
    counts = dict.fromkeys(('fixtures',) + COUNTS, 0)
    differences = []
    with open(path) as log:
        for line in log:
            record = json.loads(line)
            if record.get('kind') == 'difference':
                differences.append(record)
            elif record.get('kind') == 'fixture':
                counts['fixtures'] += 1
                for name in COUNTS:
                    counts[name] += record.get(name, 0)
    return counts, differences
