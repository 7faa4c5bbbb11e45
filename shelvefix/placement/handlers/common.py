"""Checks and response helpers shared by the placement double's handlers.

They reproduce the decorators placement wraps its handlers in: a
microversion floor per handler, the ``Accept`` check of read handlers, the
``Content-Type`` check of write handlers, and the cache headers reads get
from microversion 1.15.
"""

from shelvefix.placement import errors
from shelvefix.placement import exception
from shelvefix.placement.objects import models
from shelvefix.placement import wsgi

# From this microversion reads carry Last-Modified and Cache-Control.
CACHE_HEADERS_VERSION = (1, 15)


def require_version(req, minimum, status=404):
    """Refuse a handler the request's microversion does not have yet.

    :param req: the request.
    :param minimum: the ``(major, minor)`` the handler appeared in.
    :param status: what placement answers below it (404, or 405).
    :raises errors.NotFound: below ``minimum`` with ``status`` 404.
    :raises MethodNotAllowed: below ``minimum`` with ``status`` 405.
    """
    if not req.version.matches(minimum):
        if status == 405:
            raise errors.MethodNotAllowed()
        raise errors.NotFound()


def check_accept(req):
    """Refuse a request whose ``Accept`` does not allow JSON.

    :param req: the request.
    :raises NotAcceptable: JSON is not acceptable.
    """
    accept = req.header('Accept')
    if accept and not wsgi.acceptable_offers(accept, [wsgi.JSON_TYPE]):
        raise errors.NotAcceptable('Only %s is provided' % wsgi.JSON_TYPE)


def read_provider(req, read, detail):
    """``read(uuid)`` for the request's provider; unknown: 404.

    :param req: the request (path: ``uuid``).
    :param read: a state method taking the provider uuid.
    :param detail: placement's 404 detail for this route, formatted with
        the uuid and the domain error.
    :returns: ``(uuid, what read returned)``
    :raises errors.NotFound: no such provider.
    """
    uuid = req.params['uuid']
    try:
        return uuid, read(uuid)
    except exception.ResourceProviderNotFound as exc:
        raise errors.NotFound(detail % (uuid, exc))


def require_json(req):
    """Refuse a write whose body is not declared ``application/json``.

    :param req: the request.
    :raises UnsupportedMediaType: another or no ``Content-Type``.
    """
    content_type = req.content_type
    if content_type != wsgi.JSON_TYPE:
        if not content_type:
            # Placement (WebOb) reports a missing type as the word None,
            # also in the template that quotes CONTENT_TYPE.
            content_type = 'None'
            req.environ['CONTENT_TYPE'] = content_type
        raise errors.UnsupportedMediaType(
            'The media type %s is not supported, use %s'
            % (content_type, wsgi.JSON_TYPE))


def provider_url(req, uuid):
    """The relative URL of a provider, below the mount point.

    :param req: the request.
    :param uuid: the provider uuid.
    """
    return '%s/resource_providers/%s' % (req.script_name, uuid)


def cache_headers(req, response, last_modified=models.utcnow):
    """Add Last-Modified and Cache-Control from microversion 1.15.

    :param req: the request.
    :param response: the response to decorate.
    :param last_modified: an aware datetime, a callable returning one, or
        None for no Last-Modified header.
    """
    if not req.version.matches(CACHE_HEADERS_VERSION):
        return response
    if callable(last_modified):
        last_modified = last_modified()
    if last_modified is not None:
        response.add_header('Last-Modified', wsgi.http_date(last_modified))
    response.add_header('Cache-Control', 'no-cache')
    return response


def newest(stamps):
    """The latest of some datetimes, or the current time if there are none.

    :param stamps: iterable of aware datetimes.
    """
    stamps = [stamp for stamp in stamps if stamp is not None]
    return max(stamps) if stamps else models.utcnow()
