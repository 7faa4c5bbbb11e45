"""HTTP errors of the placement double and how they are rendered.

Placement reports errors with WebOb exceptions rendered by its own JSON
formatter, following the API-SIG errors guideline::

    {"errors": [{"status": 409, "title": "Conflict",
                 "detail": "...", "code": "placement.concurrent_update",
                 "request_id": "req-..."}]}

The ``detail`` is not just the message a handler raised: WebOb puts the
status' standard explanation in front of it, runs the result through its
tag stripper and placement publishes that verbatim. Clients match on these
strings (nova looks for "consumer generation conflict", for instance), so
the double builds them exactly the same way. ``code`` appears from
microversion 1.23; ``min_version``/``max_version`` only when the
microversion header itself was refused with 406.
"""

import html
import json
import re
import string

from shelvefix.placement import microversion
from shelvefix.placement import wsgi

# The ``code`` values placement publishes; the strings are API.
DEFAULT = 'placement.undefined_code'
INVENTORY_INUSE = 'placement.inventory.inuse'
CONCURRENT_UPDATE = 'placement.concurrent_update'
DUPLICATE_NAME = 'placement.duplicate_name'
PROVIDER_IN_USE = 'placement.resource_provider.inuse'
PROVIDER_CANNOT_DELETE_PARENT = (
    'placement.resource_provider.cannot_delete_parent')
RESOURCE_PROVIDER_NOT_FOUND = 'placement.resource_provider.not_found'

ERROR_CODE_MICROVERSION = (1, 23)
# The Content-Type of every error answer to a HEAD request.
HEAD_CONTENT_TYPE = 'text/html; charset=UTF-8'

_DEFAULT_TEMPLATE = '${explanation}<br /><br />\n${detail}\n${html_comment}\n'
_HTML_PAGE = ('<html>\n <head>\n  <title>${status}</title>\n </head>\n'
              ' <body>\n  <h1>${status}</h1>\n  ${body}\n </body>\n</html>')
_BR_RE = re.compile(r'<br.*?>', re.I | re.S)
_COMMENT_RE = re.compile(r'<!--|-->')
_TAG_RE = re.compile(r'<.*?>', re.S)


def strip_tags(text):
    """Flatten an HTML-ish error body to text the way WebOb does.

    Newlines become spaces, ``<br>`` becomes a newline, other tags vanish.

    :param text: the rendered body template.
    """
    text = text.replace('\n', ' ').replace('\r', '')
    text = _BR_RE.sub('\n', text)
    text = _COMMENT_RE.sub('', text)
    return _TAG_RE.sub('', text)


class HTTPError(Exception):
    """An error answer: status, detail message and placement error code.

    :param detail: the message, appended to the status' explanation.
    :param code: the placement error ``code`` (default
        ``placement.undefined_code``).
    :param headers: extra ``(name, value)`` response headers.
    :ivar escaped: True when the error left the handler layer (placement
        then answers without a ``Vary`` header); set by the application.
    """

    status = 500
    explanation = ''
    template = _DEFAULT_TEMPLATE

    def __init__(self, detail='', code=None, headers=None):
        super(HTTPError, self).__init__(detail)
        self.detail = detail
        self.code = code
        self.headers = list(headers or [])
        self.escaped = False

    @property
    def title(self):
        """The status' reason phrase, e.g. ``Conflict``."""
        return wsgi.reason(self.status)

    def _text(self, environ, escape):
        args = {'explanation': escape(self.explanation),
                'detail': escape(self.detail or ''),
                'html_comment': ''}
        if self.template is not _DEFAULT_TEMPLATE:
            # The templates of 405, 406 and 415 quote request variables.
            for key, value in environ.items():
                if isinstance(value, str):
                    args.setdefault(key, escape(value))
        return string.Template(self.template).safe_substitute(args)

    def json_document(self, environ, version):
        """The placement error document for this error.

        :param environ: the WSGI environ of the request.
        :param version: the request's microversion, None if unparsed.
        """
        error = {'status': self.status, 'title': self.title,
                 'detail': strip_tags(self._text(environ, str))}
        if version is not None and version.matches(ERROR_CODE_MICROVERSION):
            error['code'] = self.code or DEFAULT
        if environ.get('openstack.request_id'):
            error['request_id'] = environ['openstack.request_id']
        if self.status == 406 and version is None:
            error['max_version'] = microversion.max_version_string()
            error['min_version'] = microversion.min_version_string()
        return {'errors': [error]}

    def render(self, environ, version):
        """Build the response for this error, negotiated on ``Accept``.

        :param environ: the WSGI environ of the request.
        :param version: the request's microversion, None if unparsed.
        :returns: a :class:`~shelvefix.placement.wsgi.Response`.
        """
        offers = wsgi.acceptable_offers(environ.get('HTTP_ACCEPT'),
                                        ['text/html', wsgi.JSON_TYPE])
        status_line = '%d %s' % (self.status, self.title)
        if environ.get('REQUEST_METHOD', '').upper() == 'HEAD':
            # WebOb does not negotiate a body for HEAD: the answer keeps
            # its exceptions' default type whatever Accept says.
            body = ''
            content_type = HEAD_CONTENT_TYPE
        elif offers and offers[0] == wsgi.JSON_TYPE:
            body = json.dumps(self.json_document(environ, version))
            content_type = wsgi.JSON_TYPE
        elif offers:
            body = string.Template(_HTML_PAGE).substitute(
                status=status_line,
                body=self._text(environ, _html_escape))
            content_type = 'text/html; charset=UTF-8'
        else:
            body = '%s\n\n%s' % (status_line,
                                 strip_tags(self._text(environ, str)))
            content_type = 'text/plain; charset=UTF-8'
        response = wsgi.Response(self.status, body.encode('utf-8'),
                                 content_type)
        for name, value in self.headers:
            response.add_header(name, value)
        return response


def _html_escape(text):
    return html.escape(text, True).encode(
        'ascii', 'xmlcharrefreplace').decode('ascii')


class BadRequest(HTTPError):
    """400."""

    status = 400
    explanation = ('The server could not comply with the request since it '
                   'is either malformed or otherwise incorrect.')


class Unauthorized(HTTPError):
    """401, as the ``noauth2`` strategy answers a request without token.

    That answer comes from outside placement's error formatter, so its
    JSON is WebOb's own shape (``message``/``code``/``title``).
    """

    status = 401
    explanation = ('This server could not verify that you are authorized '
                   'to access the document you requested. Either you '
                   'supplied the wrong credentials (e.g., bad password), '
                   'or your browser does not understand how to supply the '
                   'credentials required.')

    def json_document(self, environ, version):
        """WebOb's default error document, untouched by placement."""
        return {'message': self._text(environ, str),
                'code': '%d %s' % (self.status, self.title),
                'title': self.title}


class NotFound(HTTPError):
    """404."""

    status = 404
    explanation = 'The resource could not be found.'


class MethodNotAllowed(HTTPError):
    """405; pass the ``Allow`` header in ``headers``."""

    status = 405
    template = ('The method ${REQUEST_METHOD} is not allowed for this '
                'resource. <br /><br />\n${detail}')


class NotAcceptable(HTTPError):
    """406."""

    status = 406
    template = ('The resource could not be generated that was acceptable '
                'to your browser\n(content of type ${HTTP_ACCEPT}. '
                '<br /><br />\n${detail}')


class Conflict(HTTPError):
    """409."""

    status = 409
    explanation = ('There was a conflict when trying to complete your '
                   'request.')


class UnsupportedMediaType(HTTPError):
    """415."""

    status = 415
    template = ('The request media type ${CONTENT_TYPE} is not supported '
                'by this server.\n<br /><br />\n${detail}')


class InternalServerError(HTTPError):
    """500: a bug in the double."""

    status = 500
    explanation = ('The server has either erred or is incapable of '
                   'performing the requested operation.')


# ``code`` values of query string errors.
QUERY_DUPLICATE_KEY = 'placement.query.duplicate_key'
QUERY_BAD_VALUE = 'placement.query.bad_value'
QUERY_MISSING_VALUE = 'placement.query.missing_value'


class Forbidden(HTTPError):
    """403: the policy does not allow the request.

    Placement raises it from its router, outside the handler layer, so the
    error is always :attr:`escaped` (answered without ``Vary``).
    """

    status = 403
    explanation = 'Access was denied to this resource.'

    def __init__(self, detail='', code=None, headers=None):
        super(Forbidden, self).__init__(detail, code=code, headers=headers)
        self.escaped = True
