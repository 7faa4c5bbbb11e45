"""The placement double as a WSGI application.

:class:`PlacementApp` does, in one object, what placement's middleware
stack does, in the same order, before :mod:`~shelvefix.placement.handler`
routes the request:

1. give the request an ``x-openstack-request-id`` (a fresh ``req-<uuid>``,
   like placement: an inbound id is a *global* request id, not echoed);
2. default ``Accept`` to JSON;
3. CORS, only when ``[cors] allowed_origin`` is set (see
   :func:`register_opts`): oslo.middleware's own CORS middleware, outside
   authentication as in placement, so a preflight ``OPTIONS`` needs no
   token (it always answers 200, with the ``Access-Control-*`` headers
   when origin, method and headers are allowed) and every other answer,
   a 401 included, carries ``Access-Control-Allow-Origin`` for an allowed
   ``Origin``;
4. ``noauth2`` authentication: any ``X-Auth-Token`` is accepted (even an
   empty one), none is a 401 (except for ``/``); what the token may do is
   the policy's business (:mod:`~shelvefix.placement.policy`, step 6);
5. parse the microversion (400 for garbage, 406 out of range, both
   without microversion headers);
6. route, answering 404 for an unknown path and 405 with ``Allow`` for a
   known path with another method, and 403 for what the policy refuses;
7. run the handler and turn domain and HTTP errors into placement's error
   documents. Errors that placement raises from outside its handlers (a
   domain "not found", an unknown route) come back without ``Vary``, as
   they do from placement; any other exception is a 500 (placement's
   fault wrapper, inside CORS and the request id: they decorate it too).
"""

import uuid

from oslo_config import cfg
from oslo_log import log as logging
from oslo_middleware import cors

from shelvefix.placement import errors
from shelvefix.placement import exception
from shelvefix.placement import handler
from shelvefix.placement import microversion
from shelvefix.placement.objects import state as state_mod
from shelvefix.placement import wsgi

LOG = logging.getLogger(__name__)

#: The option group of oslo.middleware's CORS options.
CORS_GROUP = 'cors'
#: The defaults placement gives the CORS options when it starts
#: (``placement.wsgi``), in place of oslo.middleware's.
CORS_DEFAULTS = {
    'allow_headers': ['X-Auth-Token', 'X-Openstack-Request-Id',
                      'X-Identity-Status', 'X-Roles', 'X-Service-Catalog',
                      'X-User-Id', 'X-Tenant-Id', 'OpenStack-API-Version'],
    'expose_headers': ['X-Auth-Token', 'X-Openstack-Request-Id',
                       'X-Subject-Token', 'X-Service-Token',
                       'OpenStack-API-Version'],
    'allow_methods': ['GET', 'PUT', 'POST', 'DELETE', 'PATCH'],
}
_REQUEST_ID_HEADER = 'x-openstack-request-id'


def register_opts(conf):
    """Register the options the double reads on a ``ConfigOpts``.

    These are oslo.middleware's ``[cors]`` options (``allowed_origin``,
    ``allow_credentials``, ``expose_headers``, ``max_age``,
    ``allow_methods``, ``allow_headers``) with placement's defaults
    (:data:`CORS_DEFAULTS`), set on ``conf`` alone: nothing global
    changes. Registering twice is harmless.

    :param conf: an oslo.config ``ConfigOpts``.
    :returns: ``conf``.
    """
    conf.register_opts(cors.CORS_OPTS, group=CORS_GROUP)
    for name, value in CORS_DEFAULTS.items():
        conf.set_default(name, value, group=CORS_GROUP)
    return conf


def make_conf(options=None):
    """A new ``ConfigOpts`` for the double, with some options set.

    :param options: ``{group: {option: value}}``, e.g. ``{'cors':
        {'allowed_origin': ['https://horizon.example.com']}}``; values
        are those of the options' types (a list for a list option).
    :returns: a ``ConfigOpts`` with :func:`register_opts` done and each
        option overridden.
    :raises oslo_config.cfg.NoSuchOptError: an option the double does not
        have.
    """
    conf = register_opts(cfg.ConfigOpts())
    for group, values in (options or {}).items():
        for name, value in values.items():
            conf.set_override(name, value, group=group)
    return conf


class PlacementApp(object):
    """WSGI application serving an in-memory placement.

    :param state: the
        :class:`~shelvefix.placement.objects.state.PlacementState` to serve
        (a new empty one by default).
    :param enforcer: the :class:`~shelvefix.placement.policy.Enforcer`
        (default: placement's default policy).
    :param conf: an oslo.config ``ConfigOpts`` with placement's
        configuration, read once here; :func:`register_opts` is done on
        it. Only ``[cors]`` is read: CORS is served when its
        ``allowed_origin`` is set, with the other ``[cors]`` options
        (default: no configuration, so no CORS, like placement without
        ``allowed_origin``). :func:`make_conf` builds one from a dict.
    :ivar state: the state served; read it to inspect what clients did.
    """

    def __init__(self, state=None, enforcer=None, conf=None):
        self.state = state if state is not None else (
            state_mod.PlacementState())
        self._router = handler.Router(enforcer=enforcer)
        # Inside the request id and outside authentication, as placement
        # stacks them.
        self._pipeline = self._application
        if conf is not None:
            register_opts(conf)
            if conf.cors.allowed_origin:
                self._pipeline = cors.CORS(self._pipeline, conf)

    def __call__(self, environ, start_response):
        """Serve one request (PEP 3333)."""
        request_id = 'req-%s' % uuid.uuid4()
        environ['openstack.request_id'] = request_id
        if environ.get('HTTP_ACCEPT', '*/*') == '*/*':
            environ['HTTP_ACCEPT'] = wsgi.JSON_TYPE

        def add_request_id(status, headers, exc_info=None):
            if not any(name.lower() == _REQUEST_ID_HEADER
                       for name, _value in headers):
                headers = list(headers) + [(_REQUEST_ID_HEADER,
                                            request_id)]
            return start_response(status, headers, exc_info)

        return self._pipeline(environ, add_request_id)

    def _application(self, environ, start_response):
        # What placement has below its CORS middleware: authentication,
        # the fault wrapper, microversions and routes.
        req = wsgi.Request(environ)
        req.request_id = environ['openstack.request_id']
        try:
            response = self._serve(req)
        except Exception as exc:
            # A bug in the double, or an injected database error. Like
            # placement's fault wrapper this answers 500 without the
            # microversion headers (CORS and the request id still come
            # on top), and logs the traceback: a silent 500 could pass
            # for a lost reply.
            LOG.exception('Placement API unexpected error: %s (%s %s)',
                          exc, req.method, req.path)
            error = errors.InternalServerError(str(exc))
            return error.render(environ, req.version)(environ,
                                                      start_response)
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
