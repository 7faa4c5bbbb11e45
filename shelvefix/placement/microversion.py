"""Placement microversions: the supported range and header parsing.

The double speaks every microversion openstack-placement 16.0.0 speaks,
1.0 to 1.39. A request picks one with ``OpenStack-API-Version: placement
X.Y`` (or ``latest``); without the header it gets the minimum, 1.0. The
parsing rules and the two failure modes (400 for a value that is not a
version at all, 406 for a version outside the range) follow the
``microversion-parse`` middleware placement runs behind.
"""

import collections

SERVICE_TYPE = 'placement'
HEADER = 'openstack-api-version'
MIN_VERSION = (1, 0)
MAX_VERSION = (1, 39)
VERSIONS = tuple('1.%d' % minor
                 for minor in range(MIN_VERSION[1], MAX_VERSION[1] + 1))


class InvalidVersion(Exception):
    """The header is not a version at all (placement answers 400)."""


class UnacceptableVersion(Exception):
    """The header names a version outside the range (answers 406)."""


class Version(collections.namedtuple('Version', ['major', 'minor'])):
    """A requested microversion, comparable as a ``(major, minor)`` tuple."""

    __slots__ = ()

    def __str__(self):
        return '%d.%d' % self

    def matches(self, min_version, max_version=MAX_VERSION):
        """Whether this version lies in ``[min_version, max_version]``.

        :param min_version: ``(major, minor)`` lower bound, inclusive.
        :param max_version: ``(major, minor)`` upper bound, inclusive;
            defaults to the maximum supported version.
        """
        return tuple(min_version) <= self <= tuple(max_version)


def min_version_string():
    """The lowest supported microversion, as placement writes it."""
    return VERSIONS[0]


def max_version_string():
    """The highest supported microversion, as placement writes it."""
    return VERSIONS[-1]


def _header_value(environ):
    # Several services may share the header ("placement 1.28, compute
    # 2.1"); the last entry naming placement wins, and an entry that is
    # not "service version" is skipped rather than rejected.
    raw = environ.get('HTTP_OPENSTACK_API_VERSION')
    if raw is None:
        return None
    for entry in reversed(raw.split(',')):
        words = entry.strip().split(None, 1)
        if len(words) == 2 and words[0].lower() == SERVICE_TYPE:
            return words[1].strip()
    return None


def parse_version_string(text):
    """Turn ``"X.Y"`` into a :class:`Version`.

    :param text: the version text.
    :raises InvalidVersion: when ``text`` is not two dot-separated
        integers; the message mirrors placement's.
    """
    parts = text.split('.', 1)
    try:
        numbers = [int(part) for part in parts]
    except ValueError as exc:
        raise InvalidVersion('invalid version string: %s; %s' % (text, exc))
    if len(numbers) != 2:
        # What Python says when the tuple is built with one value.
        raise InvalidVersion(
            "invalid version string: %s; Version.__new__() missing 1 "
            "required positional argument: 'minor'" % text)
    return Version(*numbers)


def from_environ(environ):
    """Extract the requested microversion from a WSGI environ.

    :param environ: the WSGI environ.
    :returns: the :class:`Version` the request asked for (the minimum when
        it did not ask).
    :raises InvalidVersion: the header value is not a version.
    :raises UnacceptableVersion: the version is not supported.
    """
    text = _header_value(environ) or min_version_string()
    if text == 'latest':
        text = max_version_string()
    version = parse_version_string(text)
    if str(version) not in VERSIONS:
        raise UnacceptableVersion('Unacceptable version header: %s' % text)
    return version
