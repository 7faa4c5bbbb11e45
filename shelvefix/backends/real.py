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

import threading

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

    def __call__(self, environ, start_response):
        with self.lock:
            result = self.app(environ, start_response)
            try:
                return [b''.join(result)]
            finally:
                if hasattr(result, 'close'):
                    result.close()


class RealPlacementFixture(fixture.PlacementFixture):
    """openstack-placement over in-memory sqlite, served in-process.

    Configuration, database schema and policy are set up by placement's own
    test fixture (the one nova's functional tests use) with its
    wsgi-intercept turned off; requests reach the application through
    shelvefix's transport instead. Each fixture gets a fresh database.
    Placement keeps its database engine in a process-wide global, so only
    one of these may be set up at a time in a process.

    Attributes are those of
    :class:`~shelvefix.backends.fixture.PlacementFixture`; ``state`` is
    None (ask placement over HTTP instead).

    :raises PlacementNotInstalled: at setUp, without openstack-placement
    """

    def __init__(self, endpoint=None, token='admin', conf=None):
        super().__init__(app=None, endpoint=endpoint, token=token, conf=conf)

    def _setUp(self):
        deploy, pfix = _placement_modules()
        service = self.useFixture(pfix.PlacementFixture(use_intercept=False))
        self._app = _OneAtATime(deploy.loadapp(service.conf_fixture.conf))
        self.addCleanup(setattr, self, '_app', None)
        super()._setUp()
