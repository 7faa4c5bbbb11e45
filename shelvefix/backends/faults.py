"""Faults a :class:`~shelvefix.backends.transport.WSGITransport` injects.

A :class:`Fault` picks requests by method and path, counts the matching
ones and hits the ``nth`` and the ``times - 1`` after it. A hit either
raises a ``requests`` transport exception (keystoneauth1 turns those into
``ConnectFailure`` / ``ConnectTimeout``) or answers a canned status, and
does so before the application sees the request or after it processed it
(a lost reply: the state changed, the client never learns it).
"""

import http
import json
import re

import requests

CONNECT_FAILURE = 'ConnectFailure'
TIMEOUT = 'Timeout'

# Exception names accepted by inject_fault() and what each one raises and
# records. keystoneauth1 turns ConnectionError into ConnectFailure and any
# requests Timeout into ConnectTimeout.
EXCEPTIONS = {
    'connect': (requests.exceptions.ConnectionError, CONNECT_FAILURE),
    'timeout': (requests.exceptions.ReadTimeout, TIMEOUT),
}
WHEN = ('before', 'after')


def reason(status_code):
    """The reason phrase of an HTTP status (``Unknown`` if none)."""
    try:
        return http.HTTPStatus(status_code).phrase
    except ValueError:
        return 'Unknown'


class Fault(object):
    """A fault armed on a transport by ``inject_fault()``.

    The parameters are those of
    :meth:`~shelvefix.backends.transport.WSGITransport.inject_fault`,
    already validated (see :func:`validate`).

    :ivar fired: how many requests this fault has hit so far (a request
        in its window that an earlier armed fault took is not a hit).
    :ivar seen: how many matching requests were counted so far.
    """

    def __init__(self, method, path, nth, status, body, exception, when,
                 times):
        self.method = method.upper() if method else None
        self.path = path
        self._path_re = re.compile(path) if path is not None else None
        self.nth = nth
        self.status = status
        self.body = body
        self.exception = exception
        self.when = when
        self.times = times
        self.seen = 0
        self.fired = 0

    def __repr__(self):
        return ('<Fault method=%s path=%s nth=%d times=%d %s when=%s '
                'fired=%d>' % (self.method, self.path, self.nth, self.times,
                               self.exception or self.status, self.when,
                               self.fired))

    def matches(self, method, path):
        """Whether a request with this method and path is a candidate.

        :param method: the HTTP method, upper case.
        :param path: the path below the mount point, with ``?query``.
        """
        if self.method is not None and method != self.method:
            return False
        if self._path_re is not None and not self._path_re.search(path):
            return False
        return True

    def count(self):
        """Count one matching request; return True if it is in the window.

        The caller holds the transport lock and, when it applies this
        fault, records the hit in :attr:`fired`.
        """
        self.seen += 1
        return self.nth <= self.seen < self.nth + self.times


def validate(method, path, nth, status, body, exception, when, times):
    """Check ``inject_fault()`` arguments (see there).

    :raises ValueError: naming the first inconsistent or bad argument.
    """
    if exception is None and status is None:
        raise ValueError('inject_fault needs either status or exception')
    if exception is not None and status is not None:
        raise ValueError('inject_fault takes status or exception, not both')
    if exception is not None and exception not in EXCEPTIONS:
        raise ValueError('unknown exception %r, expected one of %s'
                         % (exception, ', '.join(sorted(EXCEPTIONS))))
    if exception is not None and body is not None:
        raise ValueError('body is only meaningful with status')
    if status is not None and (
            isinstance(status, bool) or not isinstance(status, int) or
            not 100 <= status <= 599):
        raise ValueError('status must be an int HTTP status code '
                         '(100-599), got %r' % (status,))
    if body is not None and not isinstance(body, (str, bytes)):
        raise ValueError('body must be str or bytes, got %s'
                         % type(body).__name__)
    if when not in WHEN:
        raise ValueError('when must be one of %s, got %r'
                         % (', '.join(WHEN), when))
    for name, value in (('nth', nth), ('times', times)):
        if isinstance(value, bool) or not isinstance(value, int) or value < 1:
            raise ValueError('%s must be an int >= 1, got %r' % (name, value))
    if method is not None and not isinstance(method, str):
        raise ValueError('method must be a string, got %r' % (method,))
    if path is not None:
        try:
            re.compile(path)
        except (re.error, TypeError) as exc:
            raise ValueError('path must be a regular expression: %s' % exc)


def default_error_body(status, request_id):
    """Build a placement-style error document for a canned fault status.

    :param status: the HTTP status code.
    :param request_id: the request id to put in the error.
    :returns: the JSON body, as bytes.
    """
    title = reason(status)
    doc = {'errors': [{
        'status': status,
        'title': title,
        'detail': 'Injected fault: %d %s' % (status, title),
        'code': 'placement.undefined_code',
        'request_id': request_id,
    }]}
    return json.dumps(doc).encode('utf-8')
