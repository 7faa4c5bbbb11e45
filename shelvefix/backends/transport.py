"""``requests`` transport adapters that record calls and inject faults.

Mounted on a ``requests.Session`` (keystoneauth1's ``Session`` wraps one at
``.session``), a :class:`RecordingTransport` keeps an ordered log of the
calls it served and can inject faults: a transport exception (connection
refused, timeout) or a canned HTTP answer, either *before* placement sees
the request or *after* it processed it (the reply is lost, the state change
is not). Where the real answer comes from is the subclass's business:

* :class:`WSGITransport` turns every ``PreparedRequest`` into a PEP 3333
  environ and calls a WSGI application in-process (the double, or the real
  placement's application). Nothing is monkeypatched and no socket is
  opened, so several transports can live side by side in one process.
* :class:`HTTPTransport` sends the request over real HTTP (a placement
  server, a deployment).
"""

import collections
import io
import json
import re
import sys
import urllib.parse
import uuid

import requests
import requests.adapters
import requests.structures
import requests.utils

from shelvefix.backends import faults
from shelvefix import utils

# Re-exported: inject_fault() returns one.
Fault = faults.Fault
CONNECT_FAILURE = faults.CONNECT_FAILURE
TIMEOUT = faults.TIMEOUT

Call = collections.namedtuple(
    'Call', ['method', 'path', 'microversion', 'body', 'status',
             'request_id'])
Call.__doc__ = """One request served (or failed) by a transport.

``path`` is the path below the mount point plus ``?query`` if any;
``microversion`` is ``X.Y`` (or ``latest``) from the
``OpenStack-API-Version: placement X.Y`` request header, None without one;
``body`` is the request body parsed as JSON (the raw text when it is not
JSON, None when empty); ``status`` is the HTTP status the client saw, or
``'ConnectFailure'`` / ``'Timeout'`` for an injected transport exception;
``request_id`` is the ``X-OpenStack-Request-ID`` request header or None.
"""

_API_VERSION_RE = re.compile(r'^\s*placement\s+(\S+)\s*$', re.IGNORECASE)


def _body_bytes(body):
    """Return a PreparedRequest body as bytes, whatever form it has."""
    if body is None:
        return b''
    if isinstance(body, bytes):
        return body
    if isinstance(body, str):
        return body.encode('utf-8')
    if hasattr(body, 'read'):
        data = body.read()
        return data.encode('utf-8') if isinstance(data, str) else data
    return b''.join(c.encode('utf-8') if isinstance(c, str) else c
                    for c in body)


def _logged_body(data):
    if not data:
        return None
    text = data.decode('utf-8', 'replace')
    try:
        return json.loads(text)
    except ValueError:
        return text


def _requested_microversion(headers):
    # The header may name several services ("placement 1.28, compute 2.1").
    value = headers.get('OpenStack-API-Version')
    if not value:
        return None
    for part in value.split(','):
        match = _API_VERSION_RE.match(part)
        if match:
            return match.group(1)
    return None


class RecordingTransport(requests.adapters.BaseAdapter):
    """A ``requests`` transport with an ordered call log and faults.

    Subclasses provide :meth:`_forward`, which gets the real answer.

    :param script_name: the path placement is mounted at (the path part of
        the endpoint), left out of the logged paths so that they read as
        placement's own routes.
    :ivar calls: the ordered list of :class:`Call` served so far (in the
        order responses completed).
    """

    def __init__(self, script_name=''):
        super(RecordingTransport, self).__init__()
        self.script_name = script_name.rstrip('/')
        self.calls = []
        self._faults = []
        # Guards the call log and the fault counters; never held while the
        # application runs, so a test may block one request in the app while
        # others go through.
        self._lock = utils.AnyThreadRLock()

    # -- call log ---------------------------------------------------------

    def reset_calls(self):
        """Forget every logged call."""
        with self._lock:
            del self.calls[:]

    def calls_for(self, method=None, path=None):
        """Return the logged calls with this method and path.

        :param method: keep calls with this HTTP method (any case).
        :param path: keep calls whose path (with query) matches this regular
            expression (``re.search``).
        :returns: a new list of :class:`Call`, in log order.
        """
        method = method.upper() if method else None
        with self._lock:
            calls = list(self.calls)
        return [c for c in calls
                if (method is None or c.method == method) and
                (path is None or re.search(path, c.path))]

    # -- faults ---------------------------------------------------------

    def inject_fault(self, method=None, path=None, nth=1, status=None,
                     body=None, exception=None, when='before', times=1):
        """Arm a fault on the requests matching ``method`` and ``path``.

        Only matching requests are counted: the fault hits the ``nth`` one
        and the ``times - 1`` matching requests after it.

        :param method: HTTP method to match (any if None).
        :param path: regular expression searched in the path with query
            (any if None).
        :param nth: the first matching request hit, counting from 1.
        :param status: answer this HTTP status instead.
        :param body: the raw body (str or bytes) of the canned answer;
            default is a placement-style error document.
        :param exception: ``'connect'`` or ``'timeout'``: raise the
            corresponding ``requests`` exception instead of answering.
        :param when: ``'before'``: the application never sees the request;
            ``'after'``: the application processes it (and changes its
            state) and then the reply is replaced or lost.
        :param times: how many consecutive matching requests are hit.
        :returns: the :class:`~shelvefix.backends.faults.Fault`; its
            ``fired`` counts the hits.
        :raises ValueError: for inconsistent or malformed arguments.
        """
        faults.validate(method, path, nth, status, body, exception, when,
                        times)
        fault = faults.Fault(method, path, nth, status, body, exception,
                             when, times)
        with self._lock:
            self._faults.append(fault)
        return fault

    def clear_faults(self):
        """Disarm every fault."""
        with self._lock:
            del self._faults[:]

    def _pick_fault(self, method, path):
        # Every armed fault that matches counts the request, even when an
        # earlier one takes it, so that "nth" means the same thing whatever
        # else is armed. The first fault in its window wins.
        chosen = None
        with self._lock:
            for fault in self._faults:
                if (fault.matches(method, path) and fault.count() and
                        chosen is None):
                    chosen = fault
            if chosen is not None:
                chosen.fired += 1
        return chosen

    # -- requests adapter -----------------------------------------------

    def send(self, request, stream=False, timeout=None, verify=True,
             cert=None, proxies=None):
        """Serve one ``PreparedRequest``; see ``requests.adapters``.

        :param request: the ``requests.PreparedRequest``.
        :returns: a ``requests.Response``.
        :raises requests.exceptions.ConnectionError: injected ``connect``.
        :raises requests.exceptions.ReadTimeout: injected ``timeout``.
        """
        data = _body_bytes(request.body)
        path = self._path(request)
        method = request.method.upper()
        headers = request.headers
        fault = self._pick_fault(method, path)
        options = {'stream': stream, 'timeout': timeout, 'verify': verify,
                   'cert': cert, 'proxies': proxies}

        def log(status):
            call = Call(method, path, _requested_microversion(headers),
                        _logged_body(data), status,
                        headers.get('X-OpenStack-Request-ID'))
            with self._lock:
                self.calls.append(call)

        if fault is not None and fault.when == 'after':
            self._forward_logged(request, data, options, log=None)
        if fault is not None and fault.exception:
            exc_class, recorded = faults.EXCEPTIONS[fault.exception]
            log(recorded)
            raise exc_class('Injected %s fault (%s %s)'
                            % (fault.exception, method, path),
                            request=request)
        if fault is not None:
            status, resp_headers, body = self._canned(fault)
            response = self._build_response(request, status, resp_headers,
                                            body)
            log(response.status_code)
            return response
        return self._forward_logged(request, data, options, log)

    def _forward_logged(self, request, data, options, log):
        # A real transport failure is logged like an injected one.
        try:
            response = self._forward(request, data, options)
        except requests.exceptions.Timeout:
            if log:
                log(faults.TIMEOUT)
            raise
        except requests.exceptions.ConnectionError:
            if log:
                log(faults.CONNECT_FAILURE)
            raise
        if log:
            log(response.status_code)
        return response

    def _path(self, request):
        parts = urllib.parse.urlsplit(request.url)
        path = urllib.parse.unquote(parts.path, encoding='latin-1')
        if self.script_name and path.startswith(self.script_name):
            path = path[len(self.script_name):]
        return '%s?%s' % (path, parts.query) if parts.query else path

    def _forward(self, request, data, options):
        """Get the real answer to ``request``.

        :param request: the ``requests.PreparedRequest``.
        :param data: its body, as bytes.
        :param options: ``send``'s keyword arguments (timeout, verify...).
        :returns: a ``requests.Response``.
        """
        raise NotImplementedError()

    def close(self):
        """Nothing to release by default."""

    def _canned(self, fault):
        request_id = 'req-%s' % uuid.uuid4()
        body = fault.body
        if body is None:
            # Only an error status gets a default (error) document.
            body = (faults.default_error_body(fault.status, request_id)
                    if fault.status >= 400 else b'')
        elif isinstance(body, str):
            body = body.encode('utf-8')
        headers = [('Content-Length', str(len(body))),
                   ('x-openstack-request-id', request_id)]
        if body:
            headers.insert(0, ('Content-Type', 'application/json'))
        return (fault.status, faults.reason(fault.status)), headers, body

    def _build_response(self, request, status, headers, body):
        response = requests.Response()
        response.status_code, response.reason = status
        merged = requests.structures.CaseInsensitiveDict()
        for name, value in headers:
            if name in merged:
                value = '%s, %s' % (merged[name], value)
            merged[name] = value
        response.headers = merged
        response._content = body
        response._content_consumed = True
        response.url = request.url
        response.request = request
        response.connection = self
        response.encoding = requests.utils.get_encoding_from_headers(merged)
        return response


class WSGITransport(RecordingTransport):
    """Serve ``requests`` through a WSGI application, in-process.

    :param app: the WSGI application to call.
    :param script_name: the path the application is mounted at, stripped
        from ``PATH_INFO`` and passed as ``SCRIPT_NAME``.
    """

    def __init__(self, app, script_name=''):
        super(WSGITransport, self).__init__(script_name=script_name)
        self.app = app

    def _forward(self, request, data, options):
        status, headers, body = self._call_app(self._environ(request, data))
        return self._build_response(request, status, headers, body)

    def _environ(self, request, data):
        parts = urllib.parse.urlsplit(request.url)
        path = urllib.parse.unquote(parts.path, encoding='latin-1')
        if self.script_name and path.startswith(self.script_name):
            path = path[len(self.script_name):]
        scheme = parts.scheme or 'http'
        port = parts.port or (443 if scheme == 'https' else 80)
        environ = {
            'REQUEST_METHOD': request.method.upper(),
            'SCRIPT_NAME': self.script_name,
            'PATH_INFO': path,
            'QUERY_STRING': parts.query,
            'SERVER_NAME': parts.hostname or 'localhost',
            'SERVER_PORT': str(port),
            'SERVER_PROTOCOL': 'HTTP/1.1',
            'REMOTE_ADDR': '127.0.0.1',
            'wsgi.version': (1, 0),
            'wsgi.url_scheme': scheme,
            'wsgi.input': io.BytesIO(data),
            'wsgi.errors': sys.stderr,
            'wsgi.multithread': True,
            'wsgi.multiprocess': False,
            'wsgi.run_once': False,
        }
        for name, value in request.headers.items():
            key = name.upper().replace('-', '_')
            if key in ('CONTENT_TYPE', 'CONTENT_LENGTH'):
                environ[key] = value
            else:
                environ['HTTP_' + key] = value
        if data:
            environ['CONTENT_LENGTH'] = str(len(data))
        return environ

    def _call_app(self, environ):
        captured = {}
        chunks = []

        def start_response(status, headers, exc_info=None):
            if exc_info and captured:
                raise exc_info[1].with_traceback(exc_info[2])
            captured['status'] = status
            captured['headers'] = headers
            return chunks.append

        result = self.app(environ, start_response)
        try:
            for chunk in result:
                if chunk:
                    chunks.append(chunk)
        finally:
            if hasattr(result, 'close'):
                result.close()
        code, _sep, reason = captured['status'].partition(' ')
        return (int(code), reason), captured['headers'], b''.join(chunks)


class HTTPTransport(RecordingTransport):
    """Real HTTP (a placement server, a deployment), logged and faultable."""

    def __init__(self, script_name=''):
        super(HTTPTransport, self).__init__(script_name=script_name)
        self._http = requests.adapters.HTTPAdapter()

    def _forward(self, request, data, options):
        return self._http.send(request, **options)

    def close(self):
        """Close the connection pool."""
        self._http.close()
