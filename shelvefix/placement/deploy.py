"""The placement double as a WSGI application.

:class:`PlacementApp` does, in one object, what placement's middleware
stack does, in the same order, before :mod:`~shelvefix.placement.handler`
routes the request:

1. give the request an ``x-openstack-request-id`` (a fresh ``req-<uuid>``,
   like placement: an inbound id is a *global* request id, not echoed);
2. default ``Accept`` to JSON;
3. ``noauth2`` authentication: any ``X-Auth-Token`` is accepted (even an
   empty one), none is a 401 (except for ``/``); what the token may do is
   the policy's business (:mod:`~shelvefix.placement.policy`, step 5);
4. parse the microversion (400 for garbage, 406 out of range, both
   without microversion headers);
5. route, answering 404 for an unknown path and 405 with ``Allow`` for a
   known path with another method, and 403 for what the policy refuses;
6. run the handler and turn domain and HTTP errors into placement's error
   documents. Errors that placement raises from outside its handlers (a
   domain "not found", an unknown route) come back without ``Vary``, as
   they do from placement.
"""

import uuid

from oslo_log import log as logging

from shelvefix.placement import errors
from shelvefix.placement import exception
from shelvefix.placement import handler
from shelvefix.placement import microversion
from shelvefix.placement.objects import state as state_mod
from shelvefix.placement import wsgi

LOG = logging.getLogger(__name__)


class PlacementApp(object):
    """WSGI application serving an in-memory placement.

    :param state: the
        :class:`~shelvefix.placement.objects.state.PlacementState` to serve
        (a new empty one by default).
    :param enforcer: the :class:`~shelvefix.placement.policy.Enforcer`
        (default: placement's default policy).
    :ivar state: the state served; read it to inspect what clients did.
    """

    def __init__(self, state=None, enforcer=None):
        self.state = state if state is not None else (
            state_mod.PlacementState())
        self._router = handler.Router(enforcer=enforcer)

    def __call__(self, environ, start_response):
        """Serve one request (PEP 3333)."""
        req = wsgi.Request(environ)
        req.request_id = 'req-%s' % uuid.uuid4()
        environ['openstack.request_id'] = req.request_id
        if environ.get('HTTP_ACCEPT', '*/*') == '*/*':
            environ['HTTP_ACCEPT'] = wsgi.JSON_TYPE
        try:
            response = self._serve(req)
        except Exception as exc:
            # A bug in the double, or an injected database error. Like
            # placement's fault wrapper (outside every other layer) this
            # answers without the id headers, and logs the traceback: a
            # silent 500 could pass for a lost reply.
            LOG.exception('Placement API unexpected error: %s (%s %s)',
                          exc, req.method, req.path)
            error = errors.InternalServerError(str(exc))
            return error.render(environ, req.version)(environ,
                                                      start_response)
        if not response.has_header('x-openstack-request-id'):
            response.add_header('x-openstack-request-id', req.request_id)
        if req.method == 'HEAD':
            response.body = b''
        return response(environ, start_response)

    def _serve(self, req):
        environ = req.environ
        if req.path != '/' and req.header('X-Auth-Token') is None:
            return errors.Unauthorized().render(environ, None)
        try:
            req.version = microversion.from_environ(environ)
        except microversion.InvalidVersion as exc:
            return errors.BadRequest(
                'Invalid microversion: %s' % exc).render(environ, None)
        except microversion.UnacceptableVersion as exc:
            return errors.NotAcceptable(
                'Invalid microversion: %s' % exc).render(environ, None)
        environ['placement.microversion'] = req.version
        try:
            response = self._router(req, self.state)
            escaped = False
        except errors.HTTPError as exc:
            response = exc.render(environ, req.version)
            escaped = exc.escaped
        except exception.NotFound as exc:
            # Placement's router turns any "not found" a handler lets
            # through into a 404 outside the handler layer.
            response = errors.NotFound(str(exc)).render(environ, req.version)
            escaped = True
        response.add_header(microversion.HEADER,
                            '%s %s' % (microversion.SERVICE_TYPE,
                                       req.version))
        if not escaped:
            response.add_header('vary', microversion.HEADER)
        return response
