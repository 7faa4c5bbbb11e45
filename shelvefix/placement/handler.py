"""Placement's routes, and the dispatch of a request to its handler.

:data:`ROUTES` is the one table of every route placement serves, methods in
placement's order (the ``Allow`` header lists them so); :class:`Router`
matches a request against it and calls the handler.
"""

import re

from shelvefix.placement import errors
from shelvefix.placement.handlers import aggregate
from shelvefix.placement.handlers import allocation
from shelvefix.placement.handlers import allocation_candidate
from shelvefix.placement.handlers import inventory
from shelvefix.placement.handlers import reshaper
from shelvefix.placement.handlers import resource_class
from shelvefix.placement.handlers import resource_provider
from shelvefix.placement.handlers import root
from shelvefix.placement.handlers import trait
from shelvefix.placement.handlers import usage
from shelvefix.placement import policy


ROUTES = (
    ('/', {'GET': root.home}),
    ('', {'GET': root.home}),
    ('/resource_classes', {'GET': resource_class.index,
                           'POST': resource_class.create}),
    ('/resource_classes/{name}', {'GET': resource_class.show,
                                  'PUT': resource_class.update,
                                  'DELETE': resource_class.delete}),
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
        'GET': aggregate.for_provider, 'PUT': aggregate.replace_for_provider}),
    ('/resource_providers/{uuid}/allocations', {
        'GET': allocation.for_provider}),
    ('/allocations', {'POST': allocation.post}),
    ('/allocations/{consumer}', {'GET': allocation.for_consumer,
                                 'PUT': allocation.put_for_consumer,
                                 'DELETE': allocation.delete_for_consumer}),
    ('/allocation_candidates', {'GET': allocation_candidate.index}),
    ('/traits', {'GET': trait.index}),
    ('/traits/{name}', {'GET': trait.show, 'PUT': trait.update,
                        'DELETE': trait.delete}),
    ('/resource_providers/{uuid}/traits', {
        'GET': trait.for_provider, 'PUT': trait.replace_for_provider,
        'DELETE': trait.delete_for_provider}),
    ('/usages', {'GET': usage.totals}),
    ('/reshaper', {'POST': reshaper.reshape}),
)


def _compile(template):
    pattern = re.sub(r'\\{(\w+)\\}', r'(?P<\1>[^/]+)', re.escape(template))
    return re.compile('^%s$' % pattern)


def escaped(error):
    """Mark an HTTP error as raised outside the handler layer.

    Placement answers those (an unknown route, a bad ``Content-Length``)
    without the ``Vary`` header its handlers add.
    """
    error.escaped = True
    return error


class Router(object):
    """Find and call the handler of a request.

    :param routes: ``(template, {method: handler})`` pairs (default
        :data:`ROUTES`); ``{name}`` in a template matches one path segment.
    :param enforcer: the :class:`~shelvefix.placement.policy.Enforcer`
        consulted before a handler runs (default: placement's defaults).
    """

    def __init__(self, routes=ROUTES, enforcer=None):
        self._routes = [(_compile(template), template, methods)
                        for template, methods in routes]
        self._enforcer = enforcer or policy.Enforcer()

    def __call__(self, req, state):
        """Dispatch ``req``; returns the handler's response.

        :raises HTTPError: 404 for an unknown path, 405 with ``Allow`` for
            a known path with another method, 400 for a body without a
            content type, 403 for what the policy refuses, or what the
            handler raises.
        """
        length = req.environ.get('CONTENT_LENGTH')
        try:
            if (length and int(length) > 0 and
                    not req.environ.get('CONTENT_TYPE')):
                raise escaped(errors.BadRequest(
                    'content-type header required when content-length > 0'))
        except ValueError:
            raise escaped(errors.BadRequest(
                'content-length header must be an integer'))
        for pattern, template, methods in self._routes:
            match = pattern.match(req.path)
            if match is None:
                continue
            handler = methods.get(req.method)
            if handler is None:
                raise errors.MethodNotAllowed(
                    'The method specified is not allowed for this resource.',
                    headers=[('allow', ', '.join(methods))])
            req.params = match.groupdict()
            self._enforcer.authorize(req, template)
            return handler(req, state)
        raise escaped(errors.NotFound())
