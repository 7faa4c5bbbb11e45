"""The double as nova's functional-test ``PlacementFixture``.

nova's functional tests start placement with
``nova.tests.functional.fixtures.PlacementFixture``: openstack-placement
over an in-memory sqlite database, its configuration, a wsgi-intercept
endpoint, and nova's ``SchedulerReportClient`` patched to call that
endpoint. :class:`PlacementFixture` here takes the same arguments and
offers the same attributes, with the double
(:class:`~shelvefix.placement.deploy.PlacementApp`) behind a
:class:`~shelvefix.backends.fixture.PlacementFixture` instead: nothing is
intercepted globally, the report client's requests reach the double
through the transport mounted on the fixture's own session.

One line in a test::

    self.useFixture(nova_fixture.PlacementFixture())

in place of ``func_fixtures.PlacementFixture()``, or every test at once
with :func:`use_in_nova` (``tools/nova_functional.py`` does that in each
stestr worker; see ``doc/source/nova-functional.rst``).

A "database" of the double is a
:class:`~shelvefix.placement.objects.state.PlacementState`, keyed as
nova's tests key placement's: on the configuration object and its
``[placement_database] connection``. A fixture with ``db=True`` (the
default) starts a fresh one, as placement's ``Database`` fixture does, and
drops it at cleanup; one with ``db=False`` serves the state last started
on the same configuration and connection (a new one if there is none), so
a test that starts placement twice on one database, with
``PlacementFixture(conf_fixture=conf, db=False)``, finds the first start's
providers and allocations in the second.

The module imports nothing of nova's or placement's at its top: nova is
only needed for :func:`use_in_nova` and to patch the report client,
openstack-placement only to register its options.
"""

import importlib
import uuid as uuidlib
import weakref

import fixtures
from keystoneauth1 import adapter as ks_adapter
from keystoneauth1 import session as ks_session
from oslo_config import cfg
from oslo_config import fixture as config_fixture

from shelvefix.backends import fixture as fixture_mod
from shelvefix.placement import deploy
from shelvefix.placement.objects import state as state_mod

#: The module of nova's fixture, and the report client its fixture patches.
NOVA_FIXTURES = 'nova.tests.functional.fixtures'
REPORT_CLIENT = 'nova.scheduler.client.report.SchedulerReportClient'
#: The connection placement's ``Database`` fixture sets when there is none.
DEFAULT_CONNECTION = 'sqlite://'

# The options nova's tests read or set, for when openstack-placement (which
# registers all of its own) is not installed.
_FALLBACK_OPTS = {
    'placement_database': [cfg.StrOpt('connection')],
    'api': [cfg.StrOpt('auth_strategy', default='keystone')],
    'placement': [
        cfg.BoolOpt('randomize_allocation_candidates', default=False),
        cfg.IntOpt('max_allocation_candidates', default=-1),
        cfg.StrOpt('allocation_candidates_generation_strategy',
                   default='depth-first',
                   choices=['depth-first', 'breadth-first'])],
    'workarounds': [cfg.BoolOpt('optimize_for_wide_provider_trees',
                                default=False)],
}


def policy_defaults(conf):
    """Give oslo.policy's ``enforce_new_defaults`` the default False.

    placement's fixture does so on its configuration, for placement's own
    policy. oslo.policy changes the default of its option objects, which
    every configuration of the process shares: from then on nova's own
    policy runs with the old defaults too, unless a test sets the option,
    and some of nova's tests pass only so (``ServersTest.
    test_resize_server_overquota_user_quota`` creates servers as a user
    without the ``member`` role). The double's fixture does the same.
    Without oslo.policy there is no policy to change.

    :param conf: an oslo.config ``ConfigOpts``
    """
    try:
        from oslo_policy import opts as policy_opts
    except ImportError:
        return
    policy_opts.set_defaults(conf, enforce_new_defaults=False)


def register_opts(conf):
    """Register placement's options on ``conf``.

    openstack-placement's own (``placement.conf.register_opts``) when it is
    installed, so that any option a test sets exists; else the few nova's
    tests use (:data:`_FALLBACK_OPTS`). The double reads none of them.

    :param conf: an oslo.config ``ConfigOpts``
    """
    try:
        from placement import conf as placement_conf
    except ImportError:
        placement_conf = None
    if placement_conf is not None:
        placement_conf.register_opts(conf)
        return
    for group, opts in _FALLBACK_OPTS.items():
        for opt in opts:
            try:
                conf.register_opt(opt, group=group)
            except cfg.DuplicateOptError:
                pass


class _Databases(object):
    """The double's databases: a state per configuration and connection.

    A ``ConfigOpts`` is a mapping, so not hashable: it is keyed on its
    identity, and its states are forgotten when it is collected.
    """

    def __init__(self):
        self._by_conf = {}

    def open(self, conf, connection, fresh):
        """The state of ``connection`` on ``conf``.

        A new one if ``fresh`` or there is none yet.
        """
        states = self._by_conf.get(id(conf))
        if states is None:
            states = self._by_conf[id(conf)] = {}
            weakref.finalize(conf, self._by_conf.pop, id(conf), None)
        if fresh or connection not in states:
            states[connection] = state_mod.PlacementState()
        return states[connection]

    def drop(self, conf, connection, state):
        """Forget ``state``, unless another start replaced it already."""
        states = self._by_conf.get(id(conf), {})
        if states.get(connection) is state:
            del states[connection]


DATABASES = _Databases()


def _connection(conf_fixture):
    """The connection URL, set to :data:`DEFAULT_CONNECTION` when unset.

    As placement's ``Database(set_config=True)`` does; with ``db=False``
    too, where placement would refuse to start without one.
    """
    try:
        conf_fixture.register_opt(cfg.StrOpt('connection'),
                                  group='placement_database')
    except cfg.DuplicateOptError:
        pass
    connection = conf_fixture.conf.placement_database.connection
    if not connection:
        conf_fixture.config(connection=DEFAULT_CONNECTION,
                            group='placement_database')
        connection = DEFAULT_CONNECTION
    return connection


class APIResponse(object):
    """A decoded response, as nova's ``api.client.APIResponse`` has it.

    Used when nova is not importable (nova's own class is used when it
    is). :ivar status: the status code; :ivar content: the raw body;
    :ivar body: the JSON body decoded, the text of an HTML one, else ``{}``
    when empty; :ivar headers: the response headers.
    """

    def __init__(self, response):
        self.status = response.status_code
        self.content = response.content
        self.headers = response.headers
        self.body = {}
        if self.content:
            content_type = response.headers.get('content-type', '')
            if 'application/json' in content_type:
                self.body = response.json()
            elif 'text/html' in content_type:
                self.body = response.text
            else:
                raise ValueError('Unexpected response content-type: %s'
                                 % content_type)

    def __str__(self):
        return '<Response body:%r, status_code:%s>' % (self.body,
                                                       self.status)


def _response_class():
    try:
        from nova.tests.functional.api import client
    except ImportError:
        return APIResponse
    return client.APIResponse


class PlacementApiClient(object):
    """``fixture.api``: placement's HTTP API with decoded responses.

    ``get(url)``, ``put(url, body)``, ``post(url, body)``,
    ``delete(url)``, each with an optional ``version`` (the placement
    microversion to ask for) and returning an ``APIResponse`` (``status``,
    ``body``, ``headers``, ``content``); error statuses are returned, not
    raised. Nova's tests name it ``self.placement``.
    """

    def __init__(self, placement_fixture):
        self.fixture = placement_fixture
        self._wrap = _response_class()

    def get(self, url, **kwargs):
        return self._wrap(self.fixture._fake_get(None, url, **kwargs))

    def put(self, url, body, **kwargs):
        return self._wrap(self.fixture._fake_put(None, url, body, **kwargs))

    def post(self, url, body, **kwargs):
        return self._wrap(self.fixture._fake_post(None, url, body, **kwargs))

    def delete(self, url, **kwargs):
        return self._wrap(self.fixture._fake_delete(None, url, **kwargs))


def request_headers(token, version=None):
    """The headers nova's fixture sends placement with each request.

    :param token: the ``X-Auth-Token``.
    :param version: the microversion, or None for none (placement's 1.0).
    """
    headers = {'x-auth-token': token}
    if version is not None:
        headers['OpenStack-API-Version'] = 'placement %s' % version
    return headers


class PlacementFixture(fixtures.Fixture):
    """nova's functional-test ``PlacementFixture``, serving the double.

    The arguments are nova's (placement's fixture's):

    :param token: the ``X-Auth-Token`` of every request (``admin``:
        placement's ``noauth2`` admin).
    :param conf_fixture: an oslo.config ``fixture.Config`` holding
        placement's configuration (default: a new one on a new
        ``ConfigOpts``).
    :param db: start a fresh database (True), or serve the one last
        started on ``conf_fixture``'s configuration and connection (False;
        see the module's documentation).
    :param use_intercept: serve placement at :attr:`endpoint`; False
        prepares configuration and database only (``endpoint`` is None).
    :param register_opts: register placement's options on the
        configuration (:func:`register_opts`).
    :param patch_report_client: patch nova's ``SchedulerReportClient``
        ``get``/``post``/``put``/``delete`` to call the double, as nova's
        fixture does (needs nova; False for use without it).

    After setUp, nova's attributes:

    :ivar conf_fixture: the configuration fixture; tests set placement
        options on it (``[api] auth_strategy`` is ``noauth2``).
    :ivar endpoint: ``http://<uuid>/placement``.
    :ivar api: a :class:`PlacementApiClient`.
    :ivar token: as given.
    :ivar _client: the keystoneauth1 ``Adapter`` nova's patched report
        client calls (``raise_exc=False``); tests mock its ``request``.

    and the double's:

    :ivar state: the database, a
        :class:`~shelvefix.placement.objects.state.PlacementState`.
    :ivar app: the :class:`~shelvefix.placement.deploy.PlacementApp`.
    :ivar double: the :class:`~shelvefix.backends.fixture.PlacementFixture`
        serving it (call log, faults, setup helpers), or None without
        ``use_intercept``.
    """

    def __init__(self, token='admin', conf_fixture=None, db=True,
                 use_intercept=True, register_opts=True,
                 patch_report_client=True):
        super(PlacementFixture, self).__init__()
        self.token = token
        self.conf_fixture = conf_fixture
        self.db = db
        self.use_intercept = use_intercept
        self.register_opts = register_opts
        self.patch_report_client = patch_report_client
        self.endpoint = None
        self.state = self.app = self.double = self.api = self._client = None

    def _configure_placement(self, conf_fixture):
        """Change the configuration (a hook for subclasses, as nova's).

        Called after the options are registered, before the database
        starts.
        """

    def _setUp(self):
        if not self.conf_fixture:
            self.conf_fixture = self.useFixture(
                config_fixture.Config(cfg.ConfigOpts()))
        conf = self.conf_fixture.conf
        if self.register_opts:
            register_opts(conf)
        self._configure_placement(self.conf_fixture)
        policy_defaults(conf)
        connection = _connection(self.conf_fixture)
        self.state = DATABASES.open(conf, connection, fresh=self.db)
        if self.db:
            self.addCleanup(DATABASES.drop, conf, connection, self.state)
        try:
            self.conf_fixture.config(group='api', auth_strategy='noauth2')
        except (cfg.NoSuchOptError, cfg.NoSuchGroupError):
            pass
        conf([], default_config_files=[])
        self.app = deploy.PlacementApp(state=self.state)

        requests_session = None
        if self.use_intercept:
            self.endpoint = 'http://%s/placement' % uuidlib.uuid4()
            self.double = self.useFixture(fixture_mod.PlacementFixture(
                app=self.app, endpoint=self.endpoint, token=self.token))
            # The session the double's transport is mounted on.
            requests_session = self.double.session.session
        self._client = ks_adapter.Adapter(
            ks_session.Session(auth=None, session=requests_session),
            raise_exc=False)
        if self.patch_report_client:
            for method in ('get', 'post', 'put', 'delete'):
                self.useFixture(fixtures.MonkeyPatch(
                    '%s.%s' % (REPORT_CLIENT, method),
                    getattr(self, '_fake_%s' % method)))
        self.api = PlacementApiClient(self)

    # -- what nova's patched SchedulerReportClient calls -------------------

    def _headers(self, version):
        return request_headers(self.token, version)

    def _fake_get(self, client, url, version=None, global_request_id=None):
        return self._client.get(url, endpoint_override=self.endpoint,
                                headers=self._headers(version))

    def _fake_post(self, client, url, data, version=None,
                   global_request_id=None):
        return self._client.post(url, json=data,
                                 endpoint_override=self.endpoint,
                                 headers=self._headers(version))

    def _fake_put(self, client, url, data, version=None,
                  global_request_id=None):
        return self._client.put(url, json=data,
                                endpoint_override=self.endpoint,
                                headers=self._headers(version))

    def _fake_delete(self, client, url, version=None,
                     global_request_id=None):
        return self._client.delete(url, endpoint_override=self.endpoint,
                                   headers=self._headers(version))


def use_in_nova():
    """Make every nova functional test start the double.

    Replaces ``nova.tests.functional.fixtures.PlacementFixture`` (which
    nova's tests look up when they start placement) with
    :class:`PlacementFixture`. Call it before the tests run; in a test
    case, ``fixtures.MonkeyPatch(NOVA_FIXTURES + '.PlacementFixture',
    PlacementFixture)`` does the same for one test.

    :returns: nova's own class, for putting it back
    :raises ImportError: nova's functional tests are not importable
    """
    module = importlib.import_module(NOVA_FIXTURES)
    original = module.PlacementFixture
    module.PlacementFixture = PlacementFixture
    return original
