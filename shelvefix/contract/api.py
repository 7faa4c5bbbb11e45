"""What a contract scenario talks to: placement, recorded and normalised.

A scenario gets a :class:`ContractAPI` bound to one backend fixture. Every
request goes through that fixture's keystoneauth1 adapter - the path
nova's report client takes - and what placement answered is appended to
:attr:`ContractAPI.observations` as an :class:`Observation`, already
normalised (see :mod:`shelvefix.contract.normalise`), so that the
observations of two backends compare with ``==``.
"""

import collections
import json
import uuid as uuidlib

from shelvefix.contract import normalise

JSON_TYPE = 'application/json'
# Setup requests (providers, inventories) speak these microversions, as
# the fixtures' own helpers do.
PROVIDER_VERSION = '1.20'
INVENTORY_VERSION = '1.26'
# Scenario uuids derive from their names in this namespace: the same name
# gives the same uuid in every run, on every backend, so any ordering by
# uuid comes out the same on both sides.
UUID_NAMESPACE = uuidlib.UUID('5e1f0f1c-1798-4688-9a5e-5e1f0f1c1798')

Observation = collections.namedtuple(
    'Observation', ['index', 'method', 'path', 'version', 'sent', 'note',
                    'status', 'headers', 'body'])
Observation.__doc__ = """One request of a scenario and placement's answer.

``index`` counts from 1; ``path`` (with query) and ``sent`` (the JSON or
raw request body, None without one) are normalised like the answer;
``version`` is the microversion asked for (the raw ``OpenStack-API-Version``
header when the scenario set that itself), None without one; ``note`` is
the scenario's label for the step, if any; ``headers`` and ``body`` are the
normalised answer (see :class:`~shelvefix.contract.normalise.Normaliser`).
"""

# Tells "content_type not given" from "send no Content-Type" (None).
_DEFAULT = object()
#: ``token=NO_TOKEN`` sends a request without any ``X-Auth-Token``.
NO_TOKEN = object()


class ContractAPI(object):
    """Placement as a contract scenario sees it.

    :param adapter: the backend fixture's keystoneauth1 ``Adapter``.
    :param endpoint: the fixture's endpoint URL (normalised away).
    :ivar observations: the list of :class:`Observation`, in order.
    :ivar normaliser: the run's
        :class:`~shelvefix.contract.normalise.Normaliser`.
    """

    def __init__(self, adapter, endpoint=None):
        self.adapter = adapter
        self.normaliser = normalise.Normaliser(endpoint)
        self.observations = []
        self._uuids = {}

    def uuid(self, name):
        """The uuid this run uses for ``name``; shows as ``<name>``.

        :param name: the scenario's name for a provider or consumer, e.g.
            ``'rp1'`` or ``'instance'``.
        :returns: a lower-case dashed uuid string, the same for the same
            name in every run and on every backend.
        """
        value = self._uuids.get(name)
        if value is None:
            value = str(uuidlib.uuid5(UUID_NAMESPACE, name))
            self.normaliser.name(name, value)
            self._uuids[name] = value
        return value

    def request(self, method, path, body=None, version=None, headers=None,
                raw_body=None, content_type=_DEFAULT, note=None, token=None):
        """Send one request through the adapter and record the answer.

        :param method: the HTTP method.
        :param path: the path below the endpoint, with any query.
        :param body: a JSON-able body, sent as keystoneauth1 sends
            ``json=`` (``Content-Type: application/json``).
        :param version: the microversion (``'1.28'``, ``'latest'``), sent
            by keystoneauth1 as ``OpenStack-API-Version: placement X.Y``.
        :param headers: extra request headers, e.g. a hand-made
            ``OpenStack-API-Version`` or an ``Accept``.
        :param raw_body: a body sent verbatim (str or bytes) instead of
            ``body``, e.g. malformed JSON.
        :param content_type: the ``Content-Type`` of the body; default
            ``application/json``; None sends the body without one.
        :param note: a label for this step in reports.
        :param token: send this ``X-Auth-Token`` instead of the fixture's
            (``'user[:project]'``, any roles in an ``X-Roles`` header), or
            none at all for :data:`NO_TOKEN`; the step's note then starts
            with ``as <token>`` (``without a token``).
        :returns: the ``requests.Response``.
        """
        kwargs = {'raise_exc': False}
        sent_headers = dict(headers or {})
        if token is not None:
            # keystoneauth1 would overwrite the header with its plugin's
            # token: the request goes unauthenticated, the token by hand.
            kwargs['authenticated'] = False
            who = 'without a token'
            if token is not NO_TOKEN:
                sent_headers['X-Auth-Token'] = token
                who = 'as %s' % token
            note = '%s: %s' % (who, note) if note else who
        if version is not None:
            kwargs['microversion'] = version
        if content_type is not _DEFAULT and body is not None:
            # A JSON body under another declared type: serialise it here.
            raw_body, body = json.dumps(body), None
        if raw_body is not None:
            kwargs['data'] = (raw_body.encode('utf-8')
                              if isinstance(raw_body, str) else raw_body)
            declared = JSON_TYPE if content_type is _DEFAULT else (
                content_type)
            if declared is not None:
                sent_headers['Content-Type'] = declared
        elif body is not None:
            kwargs['json'] = body
        if sent_headers:
            kwargs['headers'] = sent_headers
        response = self.adapter.request(path, method, **kwargs)
        self._record(method, path, version, sent_headers, body, raw_body,
                     note, response)
        return response

    def _record(self, method, path, version, headers, body, raw_body, note,
                response):
        norm = self.normaliser
        if version is None:
            version = {name.lower(): value for name, value
                       in headers.items()}.get('openstack-api-version')
        if body is not None:
            sent = norm.value(body)
        elif raw_body is not None:
            sent = norm.text(raw_body if isinstance(raw_body, str)
                             else raw_body.decode('utf-8', 'replace'))
        else:
            sent = None
        # Path first, then headers, then body: the order placeholders are
        # handed out in.
        self.observations.append(Observation(
            index=len(self.observations) + 1, method=method.upper(),
            path=norm.text(path), version=version, sent=sent, note=note,
            status=response.status_code,
            headers=norm.headers(response.headers),
            body=normalise.candidates(norm.body(response.content), path)))

    # -- setup, over HTTP and recorded like everything else ---------------

    def provider(self, name, inventory=None):
        """Create the provider ``name`` (uuid ``self.uuid(name)``).

        :param name: the provider's name, and its uuid's name.
        :param inventory: ``{resource_class: total}`` or
            ``{resource_class: {field: value}}`` to PUT as its inventory
            (at provider generation 0).
        :returns: the provider's uuid.
        """
        uuid = self.uuid(name)
        self.request('POST', '/resource_providers',
                     {'name': name, 'uuid': uuid}, version=PROVIDER_VERSION,
                     note='setup')
        if inventory:
            self.request(
                'PUT', '/resource_providers/%s/inventories' % uuid,
                {'resource_provider_generation': 0,
                 'inventories': {
                     rc: dict(value) if isinstance(value, dict)
                     else {'total': value}
                     for rc, value in inventory.items()}},
                version=INVENTORY_VERSION, note='setup')
        return uuid
