"""Reading placement's error responses (and failures to get one), in one place.

Placement answers every consumer *and* resource provider generation conflict
with the same error code, ``placement.concurrent_update``; only the detail
text tells them apart. nova matches that text in several methods; here it is
matched once, in :func:`is_consumer_generation_conflict`, and tested.
"""

import collections
import re

from keystoneauth1 import exceptions as ks_exc

CONCURRENT_UPDATE = 'placement.concurrent_update'
# The phrase placement puts in every consumer generation conflict detail,
# e.g. "consumer generation conflict - expected null but got 1".
CONSUMER_GENERATION_CONFLICT = 'consumer generation conflict'

# Transport-level failures keystoneauth1 raises instead of returning a
# response: connection refused, timeouts, no endpoint.
TRANSPORT_ERRORS = (ks_exc.ConnectionError, ks_exc.EndpointNotFound,
                    ks_exc.DiscoveryFailure, ks_exc.RequestTimeout)

# "... consumer generation conflict - expected 1 but got None": what
# placement holds comes first, then what it was sent.
_EXPECTED_GENERATION_RE = re.compile(
    CONSUMER_GENERATION_CONFLICT + r' - expected (null|None|\d+) but got')

PlacementError = collections.namedtuple(
    'PlacementError', ['status', 'code', 'detail', 'text'])


def error_from_response(resp):
    """Describe a failed placement response.

    :param resp: a ``requests.Response`` (as keystoneauth1 returns it)
    :returns: a :class:`PlacementError`; ``code`` and ``detail`` are None
        when the body is not placement's ``{"errors": [...]}`` JSON, and
        ``detail`` then says what the body was instead.
    """
    text = resp.text or ''
    try:
        body = resp.json()
        first = body['errors'][0]
        code = first.get('code')
        # Placement's details are webob bodies: a generic sentence, a blank
        # line, then the specific reason. Fold them onto one line.
        detail = ' '.join(str(first.get('detail') or
                              first.get('title') or '').split())
    except (ValueError, KeyError, IndexError, TypeError, AttributeError):
        snippet = text[:200] + ('...' if len(text) > 200 else '')
        return PlacementError(resp.status_code, None,
                              'a body that is not a placement error '
                              'document: %r' % snippet, text)
    return PlacementError(resp.status_code, code, detail, text)


def describe_transport_error(exc):
    """One line for a failure that left no response to read.

    :param exc: one of :data:`TRANSPORT_ERRORS`
    """
    return ('unable to communicate with the placement API (%s: %s)'
            % (type(exc).__name__, exc))


def describe(err):
    """One line for logs and exception messages: status, code and detail.

    Placement only sends ``code`` at microversion 1.23 and later.
    """
    if err.code:
        return 'HTTP %d %s: %s' % (err.status, err.code, err.detail)
    return 'HTTP %d: %s' % (err.status, err.detail)


def is_consumer_generation_conflict(err):
    """True if ``err`` is a 409 about the consumer's generation.

    :param err: a :class:`PlacementError`
    """
    return (err.status == 409 and err.code == CONCURRENT_UPDATE and
            CONSUMER_GENERATION_CONFLICT in (err.detail or ''))


def expected_consumer_generation(err):
    """The generation placement holds, from a consumer generation conflict.

    :param err: a :class:`PlacementError` for which
        :func:`is_consumer_generation_conflict` is true
    :returns: ``(found, generation)``: ``found`` is False when the detail
        does not say; ``generation`` is an int, or None when placement
        knows no such consumer ("expected null")
    """
    match = _EXPECTED_GENERATION_RE.search(err.detail or '')
    if match is None:
        return False, None
    value = match.group(1)
    return True, None if value in ('null', 'None') else int(value)


def is_server_error(err):
    """True if placement itself failed (a 5xx), not the request."""
    return err.status >= 500


def is_provider_generation_conflict(err):
    """True if ``err`` is a 409 about a resource provider's generation.

    Placement gives these the same code as consumer conflicts; any
    concurrent update that is not about the consumer is about a provider.
    """
    return (err.status == 409 and err.code == CONCURRENT_UPDATE and
            not is_consumer_generation_conflict(err))
