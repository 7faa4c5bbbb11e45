"""The placement double as a WSGI application.

:class:`PlacementApp` does, in one object, what placement's middleware
stack and router do, in the same order:

1. give the request an ``x-openstack-request-id`` (a fresh ``req-<uuid>``,
   like placement: an inbound id is a *global* request id, not echoed);
2. default ``Accept`` to JSON;
3. ``noauth2`` authentication: any ``X-Auth-Token`` is accepted, none is
   a 401 (except for ``/``);
4. parse the microversion (400 for garbage, 406 out of range, both
   without microversion headers);
5. route, answering 404 for an unknown path and 405 with ``Allow`` for a
   known path with another method;
6. run the handler and turn domain and HTTP errors into placement's error
   documents. Errors that placement raises from outside its handlers (a
   domain "not found", an unknown route) come back without ``Vary``, as
   they do from placement.
"""

import re
import uuid

from shelvefix.placement import errors
from shelvefix.placement import exception
from shelvefix.placement.handlers import allocation
from shelvefix.placement.handlers import common
from shelvefix.placement.handlers import inventory
from shelvefix.placement.handlers import resource_provider
from shelvefix.placement.handlers import root
from shelvefix.placement.handlers import usage
from shelvefix.placement import microversion
from shelvefix.placement import state as state_mod
from shelvefix.placement import wsgi


def _not_implemented(since):
    """A handler for a route the double does not model.

    Below the microversion the route appeared in it answers 404 like
    placement; from there on 501, saying the double lacks it.
    """
    def handler(req, state):
        common.require_version(req, since)
        raise errors.NotImplementedInDouble(
            '%s %s is not implemented by the placement double.'
            % (req.method, req.path))
    return handler


# Placement's routes, methods in placement's order (the Allow header lists
# them so). Routes the double does not model answer 501.
ROUTES = (
    ('/', {'GET': root.home}),
    ('', {'GET': root.home}),
    ('/resource_classes', {'GET': _not_implemented((1, 2)),
                           'POST': _not_implemented((1, 2))}),
    ('/resource_classes/{name}', {'GET': _not_implemented((1, 2)),
                                  'PUT': _not_implemented((1, 2)),
                                  'DELETE': _not_implemented((1, 2))}),
    ('/resource_providers', {'GET': resource_provider.index,
                             'POST': resource_provider.create}),
    ('/resource_providers/{uuid}', {'GET': resource_provider.show,
                                    'DELETE': resource_provider.delete,
                                    'PUT': resource_provider.update}),
    ('/resource_providers/{uuid}/inventories', {
        'GET': inventory.index, 'POST': inventory.create,
        'PUT': inventory.replace, 'DELETE': inventory.delete_all}),
    ('/resource_providers/{uuid}/inventories/{resource_class}', {
        'GET': inventory.show, 'PUT': inventory.update,
        'DELETE': inventory.delete}),
    ('/resource_providers/{uuid}/usages', {'GET': usage.for_provider}),
    ('/resource_providers/{uuid}/aggregates', {
        'GET': _not_implemented((1, 1)), 'PUT': _not_implemented((1, 1))}),
    ('/resource_providers/{uuid}/allocations', {
        'GET': allocation.for_provider}),
    ('/allocations', {'POST': allocation.post}),
    ('/allocations/{consumer}', {'GET': allocation.for_consumer,
                                 'PUT': allocation.put_for_consumer,
                                 'DELETE': allocation.delete_for_consumer}),
    ('/allocation_candidates', {'GET': _not_implemented((1, 10))}),
    ('/traits', {'GET': _not_implemented((1, 6))}),
    ('/traits/{name}', {'GET': _not_implemented((1, 6)),
                        'PUT': _not_implemented((1, 6)),
                        'DELETE': _not_implemented((1, 6))}),
    ('/resource_providers/{uuid}/traits', {
        'GET': _not_implemented((1, 6)), 'PUT': _not_implemented((1, 6)),
        'DELETE': _not_implemented((1, 6))}),
    ('/usages', {'GET': usage.totals}),
    ('/reshaper', {'POST': _not_implemented((1, 30))}),
)


def _compile(template):
    pattern = re.sub(r'\\{(\w+)\\}', r'(?P<\1>[^/]+)', re.escape(template))
    return re.compile('^%s$' % pattern)


class PlacementApp(object):
    """WSGI application serving an in-memory placement.

    :param state: the :class:`~shelvefix.placement.state.PlacementState`
        to serve (a new empty one by default).
    :ivar state: the state served; read it to inspect what clients did.
    """

    def __init__(self, state=None):
        self.state = state if state is not None else (
            state_mod.PlacementState())
        self._routes = [(_compile(template), methods)
                        for template, methods in ROUTES]

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
            # A bug in the double. Like placement's fault wrapper (outside
            # every other layer) this answers without the id headers.
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
        if req.path != '/' and not req.header('X-Auth-Token'):
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
            response = self._dispatch(req)
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

    def _dispatch(self, req):
        length = req.environ.get('CONTENT_LENGTH')
        try:
            if (length and int(length) > 0 and
                    not req.environ.get('CONTENT_TYPE')):
                raise self._escaped(errors.BadRequest(
                    'content-type header required when content-length > 0'))
        except ValueError:
            raise self._escaped(errors.BadRequest(
                'content-length header must be an integer'))
        for pattern, methods in self._routes:
            match = pattern.match(req.path)
            if match is None:
                continue
            handler = methods.get(req.method)
            if handler is None:
                raise errors.MethodNotAllowed(
                    'The method specified is not allowed for this resource.',
                    headers=[('allow', ', '.join(methods))])
            req.params = match.groupdict()
            return handler(req, self.state)
        raise self._escaped(errors.NotFound())

    @staticmethod
    def _escaped(error):
        error.escaped = True
        return error
