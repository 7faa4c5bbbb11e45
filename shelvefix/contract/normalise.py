"""Make placement answers from two backends comparable.

Two runs of the same scenario differ in things that are not behaviour:
uuids placement generated (a provider created without one, every request
id), the fake endpoint each fixture mounts, the time in ``Last-Modified``,
the spacing of an error detail. :class:`Normaliser` rewrites exactly
those, and nothing else:

* every uuid, wherever it appears (paths, header values, JSON keys and
  values, error details), becomes a placeholder: ``<rp1>`` for a uuid the
  scenario named (see :meth:`Normaliser.name`), ``<uuid-1>``,
  ``<uuid-2>``... for the others in order of first appearance. The
  spelling is kept in the placeholder (``<rp1:UPPER>``, ``<rp1:hex>``) so
  that echoing a uuid in another form than the other backend is still a
  difference;
* the fixture's endpoint URL becomes ``<endpoint>``;
* ``request_id`` members of JSON objects are dropped and the ``detail``
  (and WebOb's ``message``) of an error is whitespace-normalised, a
  database time in it (``2026-12-05 06:17:06.870760``: when the insert a
  database refused ran) becoming ``<db-time>``;
* of the response headers, ``Content-Length``, ``Date`` and ``Server`` are
  dropped and ``Last-Modified`` and ``X-OpenStack-Request-ID`` are reduced
  to their presence; every other header is kept, value included.

Values keep their JSON types: ``16`` and ``16.0`` stay different.

Nothing is reordered: every JSON array is compared in the order the
backend wrote it (see :func:`candidates` for the answers where that is
placement's undocumented order). What is not compared is order without
meaning to a client: the order of response headers (:meth:`Normaliser.
headers` sorts them by name), and the order of a JSON object's members
(the runner compares objects member by member, on every route).
"""

import json
import re

_UUID_RE = re.compile(
    r'(?<![0-9a-fA-F])[0-9a-fA-F]{8}(-?)[0-9a-fA-F]{4}\1[0-9a-fA-F]{4}'
    r'\1[0-9a-fA-F]{4}\1[0-9a-fA-F]{12}(?![0-9a-fA-F])')
_SPACE_RE = re.compile(r'\s+')
_DB_TIME_RE = re.compile(r'\b\d{4}-\d\d-\d\d \d\d:\d\d:\d\d\.\d{6}\b')

# Headers whose value is noise: the body is compared instead of its
# length, and neither backend sets the other two (a server would).
IGNORED_HEADERS = frozenset(['content-length', 'date', 'server'])
# Headers that must be there, whatever their (changing) value says.
PRESENCE_HEADERS = {
    'last-modified': '<http-date>',
    'x-openstack-request-id': '<request-id>',
}
# JSON members dropped from bodies: they differ on every request.
DROPPED_MEMBERS = frozenset(['request_id'])
# JSON members holding human text; only their spacing is normalised.
TEXT_MEMBERS = frozenset(['detail', 'message'])


def canonical_uuid(text):
    """The lower-case, dashed spelling of a uuid written any way.

    :param text: 32 hex digits, with or without the four dashes.
    :raises ValueError: ``text`` is not a uuid.
    """
    digits = text.replace('-', '').lower()
    if len(digits) != 32 or not _UUID_RE.match(text):
        raise ValueError('%r is not a uuid' % (text,))
    return '-'.join((digits[:8], digits[8:12], digits[12:16],
                     digits[16:20], digits[20:]))


def squeeze(text):
    """Collapse runs of whitespace into one space and strip the ends.

    :param text: a string.
    """
    return _SPACE_RE.sub(' ', text).strip()


def _spelling(text, canonical):
    # The suffix says how a uuid was written when that is not canonical.
    suffix = ''
    if '-' not in text:
        suffix += ':hex'
    letters = [char for char in text if char.isalpha()]
    if any(char.isupper() for char in letters):
        suffix += (':UPPER' if all(char.isupper() for char in letters)
                   else ':MixedCase')
    return suffix


class Normaliser(object):
    """Rewrite one run's answers into their comparable form.

    One normaliser serves a whole scenario run, so a uuid gets the same
    placeholder in every request of the run.

    :param endpoint: the fixture's endpoint URL, replaced by
        ``<endpoint>`` wherever it appears (``Location`` headers).
    """

    def __init__(self, endpoint=None):
        self.endpoint = endpoint.rstrip('/') if endpoint else None
        self._labels = {}
        self._anonymous = 0

    def name(self, label, value):
        """Give a uuid the placeholder ``<label>``.

        :param label: the scenario's name for it, e.g. ``rp1``.
        :param value: the uuid, any spelling.
        :raises ValueError: ``value`` is not a uuid, or already has another
            label.
        """
        canonical = canonical_uuid(value)
        known = self._labels.get(canonical)
        if known is not None and known != label:
            raise ValueError('uuid %s is already named %r, not %r'
                             % (canonical, known, label))
        self._labels[canonical] = label

    def placeholder(self, text):
        """The placeholder of one uuid, numbering unnamed ones.

        :param text: a uuid, any spelling.
        :raises ValueError: ``text`` is not a uuid.
        """
        canonical = canonical_uuid(text)
        label = self._labels.get(canonical)
        if label is None:
            self._anonymous += 1
            label = self._labels[canonical] = 'uuid-%d' % self._anonymous
        return '<%s%s>' % (label, _spelling(text, canonical))

    def text(self, text):
        """Replace the endpoint and every uuid in a string.

        :param text: a string.
        """
        if self.endpoint:
            text = text.replace(self.endpoint, '<endpoint>')
        return _UUID_RE.sub(lambda match: self.placeholder(match.group(0)),
                            text)

    def value(self, value, member=None):
        """Normalise a decoded JSON value, recursively.

        Object members are visited in the order placement wrote them, which
        is the order placeholders are handed out in.

        :param value: what ``json.loads`` returned.
        :param member: the name of the object member holding ``value``.
        """
        if isinstance(value, dict):
            return {self.text(key): self.value(item, key)
                    for key, item in value.items()
                    if key not in DROPPED_MEMBERS}
        if isinstance(value, list):
            return [self.value(item) for item in value]
        if isinstance(value, str):
            if member in TEXT_MEMBERS:
                value = _DB_TIME_RE.sub('<db-time>', squeeze(value))
            return self.text(value)
        return value

    def headers(self, headers):
        """The response headers worth comparing, normalised.

        :param headers: a mapping (or ``(name, value)`` pairs) of response
            headers.
        :returns: a dict keyed by lower-case header name.
        """
        items = headers.items() if hasattr(headers, 'items') else headers
        kept = {}
        # Sorted first: uuids in header values get their placeholders in
        # the same order whatever order the backend sent the headers in.
        for name, value in sorted((name.lower(), value)
                                  for name, value in items):
            if name in IGNORED_HEADERS:
                continue
            kept[name] = PRESENCE_HEADERS.get(name) or self.text(value)
        return kept

    def body(self, content):
        """Normalise a response body.

        :param content: the body as bytes.
        :returns: None for no body, the normalised JSON value for a JSON
            body, else the text with its whitespace squeezed (an HTML or
            plain-text error page).
        """
        if not content:
            return None
        text = content.decode('utf-8', 'replace')
        try:
            decoded = json.loads(text)
        except ValueError:
            return self.text(squeeze(text))
        return self.value(decoded)


def candidates(body, path):
    """An allocation candidates answer, compared in placement's order.

    Placement documents the order of ``GET /allocation_candidates`` as
    deterministic but undefined; its tests compare the lists in order and
    nova's scheduler picks among equally weighted hosts by it, so the
    answer is left as it came and these orders are compared:

    * ``allocation_requests``: the iteration order of the Python set
      placement collects them in, which depends on the state, the query
      and the process' string hashing (both backends run in one
      process). With ``limit`` placement keeps the first N of that order,
      so which candidates (and provider summaries) are kept is compared
      too;
    * a mapping's provider list: the iteration order of placement's set
      of their uuids;
    * before 1.12, each request's ``allocations`` list: its providers in
      the order the request's resources name them;
    * a provider summary's ``traits``: trait id order, the order of
      placement's (unordered) query on sqlite: standard traits in the
      order placement synced them from os-traits, then custom traits in
      creation order.

    Not compared, as anywhere else: the order of JSON object members
    (``provider_summaries``, ``allocations`` from 1.12, ``mappings``,
    ``resources``), which has no meaning in JSON and which clients read
    as dicts. The double writes them in placement's order all the same.

    :param body: the normalised body (placeholders in).
    :param path: the request path, with its query.
    :returns: ``body``, unchanged.
    """
    return body
