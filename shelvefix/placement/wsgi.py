"""Minimal WSGI request and response objects for the placement double.

Only what the double needs: the request line, headers, query parameters,
body, content negotiation on ``Accept`` and a response that knows how to
answer ``start_response``. It stands in for the parts of WebOb placement
relies on, without depending on WebOb.
"""

import email.utils
import http
import json
import urllib.parse

JSON_TYPE = 'application/json'


def reason(status):
    """The reason phrase for an HTTP status code.

    :param status: an int HTTP status.
    """
    try:
        return http.HTTPStatus(status).phrase
    except ValueError:
        return 'Unknown'


def _parse_accept(value):
    ranges = []
    for item in value.split(','):
        params = [p.strip() for p in item.split(';')]
        media = params[0].lower()
        if not media:
            continue
        quality = 1.0
        for param in params[1:]:
            name, _sep, number = param.partition('=')
            if name.strip().lower() == 'q':
                try:
                    quality = float(number)
                except ValueError:
                    quality = 0.0
        ranges.append((media, quality))
    return ranges


def acceptable_offers(accept, offers):
    """Rank ``offers`` (media types) against an ``Accept`` header value.

    The most specific media range matching an offer gives its quality; an
    offer with quality 0 is not acceptable. An empty header accepts all.

    :param accept: the ``Accept`` header value, or None.
    :param offers: media types the server can produce, in preference order.
    :returns: the acceptable offers, best first.
    """
    if not accept:
        return list(offers)
    ranges = _parse_accept(accept)
    ranked = []
    for index, offer in enumerate(offers):
        main, _sep, sub = offer.partition('/')
        best = None
        for media, quality in ranges:
            mmain, _sep, msub = media.partition('/')
            if media == offer:
                specificity = 3
            elif mmain == main and msub == '*':
                specificity = 2
            elif media == '*/*':
                specificity = 1
            else:
                continue
            if best is None or specificity > best[0]:
                best = (specificity, quality)
        if best is not None and best[1] > 0:
            ranked.append((-best[1], index, offer))
    return [offer for _q, _i, offer in sorted(ranked)]


def http_date(moment):
    """Format an aware ``datetime`` for a ``Last-Modified`` header.

    :param moment: a timezone-aware ``datetime``.
    """
    return email.utils.format_datetime(moment, usegmt=True)


class Request(object):
    """A WSGI request as the placement double reads it.

    :param environ: the PEP 3333 environ.
    :ivar version: the :class:`~shelvefix.placement.microversion.Version`
        once the application parsed it.
    :ivar request_id: the ``req-...`` id of this request.
    :ivar params: the path parameters of the matched route.
    """

    def __init__(self, environ):
        self.environ = environ
        self.version = None
        self.request_id = None
        self.params = {}
        self._body = None

    @property
    def method(self):
        """The request method, upper case."""
        return self.environ['REQUEST_METHOD'].upper()

    @property
    def path(self):
        """The path below the application mount point."""
        return self.environ.get('PATH_INFO', '')

    @property
    def script_name(self):
        """Where the application is mounted (the URL prefix)."""
        return self.environ.get('SCRIPT_NAME', '')

    def header(self, name, default=None):
        """A request header by its HTTP name (any case).

        :param name: e.g. ``'X-Auth-Token'``.
        :param default: what to return when it is absent.
        """
        key = name.upper().replace('-', '_')
        if key not in ('CONTENT_TYPE', 'CONTENT_LENGTH'):
            key = 'HTTP_' + key
        return self.environ.get(key, default)

    @property
    def content_type(self):
        """The media type of the body, without parameters ('' if unset)."""
        raw = self.environ.get('CONTENT_TYPE', '')
        return raw.split(';', 1)[0].strip()

    @property
    def query(self):
        """The query parameters as a dict; a repeated key keeps its last."""
        return dict(self.query_pairs)

    @property
    def query_pairs(self):
        """Every ``(name, value)`` of the query string, in order."""
        return urllib.parse.parse_qsl(
            self.environ.get('QUERY_STRING', ''), keep_blank_values=True)

    def query_all(self, name):
        """Every value of the query parameter ``name``, in order.

        :param name: the parameter name.
        """
        return [value for key, value in self.query_pairs if key == name]

    @property
    def body(self):
        """The request body, as bytes."""
        if self._body is None:
            try:
                length = int(self.environ.get('CONTENT_LENGTH') or 0)
            except ValueError:
                length = 0
            stream = self.environ.get('wsgi.input')
            self._body = stream.read(length) if stream and length else b''
        return self._body

    @property
    def host_url(self):
        """``scheme://host[:port]`` of the request, for absolute URLs."""
        scheme = self.environ.get('wsgi.url_scheme', 'http')
        host = self.environ.get('HTTP_HOST')
        if not host:
            host = self.environ.get('SERVER_NAME', 'localhost')
            port = self.environ.get('SERVER_PORT', '')
            if port and port != {'http': '80', 'https': '443'}.get(scheme):
                host = '%s:%s' % (host, port)
        return '%s://%s' % (scheme, host)


class Response(object):
    """A response under construction.

    :param status: the int HTTP status.
    :param body: the body, bytes.
    :param content_type: the ``Content-Type``, or None for no body type.
    """

    def __init__(self, status=200, body=b'', content_type=None):
        self.status = status
        self.body = body
        self.headers = []
        if content_type:
            self.headers.append(('Content-Type', content_type))

    def add_header(self, name, value):
        """Append one header.

        :param name: header name.
        :param value: header value (str).
        """
        self.headers.append((name, value))

    def has_header(self, name):
        """Whether a header of that name (any case) is already set.

        :param name: header name.
        """
        name = name.lower()
        return any(key.lower() == name for key, _value in self.headers)

    def __call__(self, environ, start_response):
        """Answer as a WSGI application would."""
        headers = list(self.headers)
        headers.append(('Content-Length', str(len(self.body))))
        start_response('%d %s' % (self.status, reason(self.status)), headers)
        return [self.body]


def json_response(data, status=200):
    """A JSON response, serialized the way placement serializes.

    :param data: anything ``json.dumps`` takes.
    :param status: the int HTTP status.
    """
    body = json.dumps(data).encode('utf-8')
    return Response(status, body, JSON_TYPE)


def empty_response(status=204):
    """A response without a body or ``Content-Type``.

    :param status: the int HTTP status.
    """
    return Response(status)
