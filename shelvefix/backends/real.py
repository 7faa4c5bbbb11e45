"""The real placement service, in-process, behind the same transport.

:class:`RealPlacementFixture` runs openstack-placement's own WSGI
application (``placement.deploy.loadapp``) over an in-memory sqlite
database and mounts it exactly like the double: same
:class:`~shelvefix.backends.transport.WSGITransport` (call log, faults),
same keystoneauth1 adapter, same ``SchedulerReportClient``. Only the
application behind the transport differs, which is what makes comparing the
two meaningful.

openstack-placement is an optional dependency (``pip install
shelvefix[placement]``, which also brings wsgi-intercept and testtools:
placement's test fixture imports them even when its intercept is off);
importing this module works without them, using the fixture does not.
"""

import sqlite3
import threading
from unittest import mock

from shelvefix import backends
from shelvefix.backends import fixture

INSTALL_HINT = ('the real placement backend needs openstack-placement: '
                'pip install "shelvefix[placement]"')


class PlacementNotInstalled(backends.BackendUnavailable):
    """openstack-placement is not importable."""


def _placement_modules():
    try:
        from placement import deploy
        from placement.tests.functional.fixtures import placement as pfix
    except ImportError as e:
        raise PlacementNotInstalled('%s (%s)' % (INSTALL_HINT, e)) from e
    return deploy, pfix


def _middleware_defaults():
    """The option defaults placement's WSGI entry point sets, by group.

    A deployed placement (``placement.wsgi``) replaces some of
    oslo.middleware's ``[cors]`` defaults with its own (the headers a
    browser may send and read, the methods it may use) before it reads
    its configuration; ``loadapp``, which this fixture calls, does not.
    They are learnt from placement itself, without changing the
    process-wide defaults it would set.
    """
    try:
        from placement import wsgi
        set_defaults = wsgi._set_middleware_defaults
    except (ImportError, AttributeError):
        return {}
    with mock.patch.object(wsgi.cors, 'set_defaults') as cors_defaults:
        set_defaults()
    return {'cors': dict(kwargs) for _args, kwargs
            in cors_defaults.call_args_list}


def available():
    """True if openstack-placement can be imported here."""
    try:
        _placement_modules()
    except PlacementNotInstalled:
        return False
    return True


class _OneAtATime(object):
    """Serve one request at a time, body included.

    An in-memory sqlite database is a single connection shared by every
    thread, so two concurrent requests would share one transaction (seen:
    a DELETE and a PUT interleaving inside placement left allocations that
    neither request meant). Serialising requests makes each one atomic, as
    a single-worker server would; races *between* requests, the ones that
    matter here, are untouched. Use the ``PlacementServer`` of
    :mod:`shelvefix.backends.server` for truly concurrent workers.
    """

    def __init__(self, app):
        self.app = app
        self.lock = threading.Lock()
        #: The method of the request being served (one at a time), or None.
        self.method = None

    def __call__(self, environ, start_response):
        with self.lock:
            self.method = environ['REQUEST_METHOD']
            try:
                result = self.app(environ, start_response)
                try:
                    return [b''.join(result)]
                finally:
                    if hasattr(result, 'close'):
                        result.close()
            finally:
                self.method = None


class RealPlacementFixture(fixture.PlacementFixture):
    """openstack-placement over in-memory sqlite, served in-process.

    Configuration, database schema and policy are set up by placement's own
    test fixture (the one nova's functional tests use) with its
    wsgi-intercept turned off; requests reach the application through
    shelvefix's transport instead. Each fixture gets a fresh database.
    Placement keeps its database engine in a process-wide global, so only
    one of these may be set up at a time in a process.

    Placement's configuration is the test fixture's, with the
    middleware defaults of a deployed placement (its ``[cors]`` headers
    and methods; see :func:`_middleware_defaults`) and then
    ``placement_config`` on top, e.g. ``{'cors': {'allowed_origin':
    [...]}}`` to serve CORS.

    Attributes are those of
    :class:`~shelvefix.backends.fixture.PlacementFixture`; ``state`` is
    None (ask placement over HTTP instead).

    :raises PlacementNotInstalled: at setUp, without openstack-placement
    """

    def __init__(self, endpoint=None, token='admin', conf=None,
                 placement_config=None):
        super().__init__(app=None, endpoint=endpoint, token=token, conf=conf,
                         placement_config=placement_config)

    def _setUp(self):
        deploy, pfix = _placement_modules()
        service = self.useFixture(pfix.PlacementFixture(use_intercept=False))
        conf_fixture = service.conf_fixture
        for group, defaults in _middleware_defaults().items():
            for name, value in defaults.items():
                conf_fixture.set_default(name, value, group=group)
        for group, values in (self.placement_config or {}).items():
            conf_fixture.config(group=group, **values)
        self._app = _OneAtATime(deploy.loadapp(conf_fixture.conf))
        self.addCleanup(setattr, self, '_app', None)
        super()._setUp()
        self._cleanup_fault = _ConsumerCleanupFault(
            lambda: self._app.method if self._app is not None else None)
        self._cleanup_fault.install()
        self.addCleanup(self._cleanup_fault.remove)

    def fail_consumer_cleanup(self, times=1):
        """See :meth:`.fixture.PlacementFixture.fail_consumer_cleanup`.

        Placement's own ``DELETE FROM consumers`` statement fails in its
        database, with the error sqlite gives when another writer holds
        the lock.
        """
        self._cleanup_fault.remaining = times

    def clear_faults(self):
        """Disarm the transport's faults and the database's."""
        self.transport.clear_faults()
        self._cleanup_fault.remaining = 0


class _ConsumerCleanupFault(object):
    """Fails placement's ``DELETE FROM consumers``, as a locked sqlite does.

    A SQLAlchemy ``do_execute`` listener on placement's engine: the error
    is raised where the database driver's would be, so SQLAlchemy, oslo.db
    and placement handle it exactly as a real one (placement's fault
    wrapper answers 500, after the allocations were deleted in a
    transaction of their own). Only a ``DELETE /allocations`` request's
    clean-up fails: a PUT deletes emptied consumers too, but inside its own
    single transaction, where a database error changes nothing.

    :param current_method: returns the method of the request being served
    """

    STATEMENT = 'DELETE FROM consumers'

    def __init__(self, current_method):
        self.remaining = 0
        self._current_method = current_method
        self._engine = None

    def install(self):
        from placement import db_api
        import sqlalchemy
        self._engine = db_api.get_placement_engine()
        sqlalchemy.event.listen(self._engine, 'do_execute', self)

    def remove(self):
        import sqlalchemy
        sqlalchemy.event.remove(self._engine, 'do_execute', self)

    def __call__(self, cursor, statement, parameters, context):
        if (self.remaining and self._current_method() == 'DELETE' and
                statement.lstrip().startswith(self.STATEMENT)):
            self.remaining -= 1
            raise sqlite3.OperationalError('database is locked')
        # Not handled here: SQLAlchemy executes the statement itself.
        return False
