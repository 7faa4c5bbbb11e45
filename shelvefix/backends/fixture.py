"""``PlacementFixture``: a placement double wired into keystoneauth1.

The fixture builds a :class:`~shelvefix.placement.deploy.PlacementApp` (or
takes any WSGI application, the real placement included), mounts it with a
:class:`~shelvefix.backends.transport.WSGITransport` on a unique fake
endpoint of a keystoneauth1 ``Session`` and hands out an ``Adapter`` for
it: code under test talks HTTP exactly as it would to a real placement,
only nothing leaves the process. Nothing global is patched, so fixtures
can be used concurrently.
"""

import urllib.parse
import uuid as uuidlib

import fixtures
from keystoneauth1 import adapter as ks_adapter
from keystoneauth1 import session as ks_session
from keystoneauth1 import token_endpoint

from shelvefix.backends import transport as transport_mod
from shelvefix.placement import deploy

# The token of placement's admin under noauth2; the setup helpers use it.
ADMIN_TOKEN = 'admin'
# Microversions the setup helpers speak.
CREATE_PROVIDER_VERSION = '1.20'
SET_INVENTORY_VERSION = '1.26'
SET_TRAITS_VERSION = '1.6'


class PlacementFixtureError(Exception):
    """Placement refused a setup request made by the fixture.

    :ivar response: the ``requests.Response`` placement answered.
    """

    def __init__(self, what, response):
        self.response = response
        super(PlacementFixtureError, self).__init__(
            '%s failed: placement answered %d %s'
            % (what, response.status_code, response.text))


class PlacementFixture(fixtures.Fixture):
    """An in-process placement reachable through a keystoneauth1 adapter.

    :param app: the WSGI application to serve (default: a new
        :class:`~shelvefix.placement.deploy.PlacementApp`).
    :param endpoint: the fake endpoint URL (default: a unique
        ``http://placement-<hex>.shelvefix.test``).
    :param token: the token :attr:`adapter` (and so :attr:`client`) sends
        in ``X-Auth-Token``: ``user[:project]`` under placement's
        ``noauth2``, where only ``admin`` is an admin (see
        :mod:`shelvefix.placement.policy`). The setup helpers
        (:meth:`create_provider`, :meth:`set_inventory`) speak as
        :data:`ADMIN_TOKEN` whatever it is, so that a test of a non-admin
        client can still prepare placement.
    :param conf: the oslo.config ``ConfigOpts`` the :attr:`client` reads
        its ``[placement]`` retry options from (default: the global CONF).
    :param placement_config: placement's own configuration, as
        ``{group: {option: value}}``, e.g. ``{'cors': {'allowed_origin':
        ['https://horizon.example.com']}}`` to serve CORS: the double is
        built with :func:`~shelvefix.placement.deploy.make_conf` of it
        (only ``[cors]`` means anything to it), the real placement is
        started with it (see
        :class:`~shelvefix.backends.real.RealPlacementFixture`). Default:
        none. Not with ``app``, which comes configured.
    :raises ValueError: both ``app`` and ``placement_config``.

    After setUp:

    :ivar app: the WSGI application.
    :ivar state: ``app.state`` when the application has one, else None.
    :ivar endpoint: the endpoint URL.
    :ivar transport: the
        :class:`~shelvefix.backends.transport.RecordingTransport` (call
        log, faults).
    :ivar session: the keystoneauth1 ``Session``.
    :ivar adapter: a keystoneauth1 ``Adapter`` for placement, with
        ``raise_exc=False`` (error responses are returned, not raised).
    """

    def __init__(self, app=None, endpoint=None, token=ADMIN_TOKEN,
                 conf=None, placement_config=None):
        super(PlacementFixture, self).__init__()
        if app is not None and placement_config:
            raise ValueError('placement_config configures the application '
                             'the fixture builds, not a given one')
        self._app = app
        self.placement_config = placement_config
        self._endpoint = endpoint
        self.token = token
        self.conf = conf
        self._clear()

    def _clear(self):
        self.app = None
        self.state = None
        self.endpoint = None
        self.transport = None
        self.session = None
        self.adapter = None
        self._admin_adapter = None
        self._client = None

    def _setUp(self):
        self.addCleanup(self._clear)
        if self._app is not None:
            self.app = self._app
        elif self.placement_config:
            self.app = deploy.PlacementApp(
                conf=deploy.make_conf(self.placement_config))
        else:
            self.app = deploy.PlacementApp()
        self.state = getattr(self.app, 'state', None)
        self.endpoint = (self._endpoint or 'http://placement-%s.shelvefix.test'
                         % uuidlib.uuid4().hex[:12]).rstrip('/')
        self.transport = transport_mod.WSGITransport(
            self.app, script_name=urllib.parse.urlsplit(self.endpoint).path)
        self.session = ks_session.Session(
            auth=token_endpoint.Token(self.endpoint, self.token))
        # requests picks the adapter with the longest matching prefix, so
        # this endpoint (and only it) is served in-process.
        self.session.session.mount(self.endpoint, self.transport)
        # Proxies, .netrc and CA bundles from the environment mean nothing
        # to an in-process transport, and looking them up costs about a
        # millisecond a request (a fifth of an explored run).
        self.session.session.trust_env = False
        self.addCleanup(self.session.session.close)
        self.adapter = self._make_adapter(self.session)
        if self.token != ADMIN_TOKEN:
            self._admin_adapter = self._make_adapter(ks_session.Session(
                auth=token_endpoint.Token(self.endpoint, ADMIN_TOKEN),
                session=self.session.session))

    def _make_adapter(self, session):
        return ks_adapter.Adapter(session, service_type='placement',
                                  endpoint_override=self.endpoint,
                                  raise_exc=False)

    @property
    def admin_adapter(self):
        """The adapter of the setup helpers.

        :attr:`adapter` with :data:`ADMIN_TOKEN` instead of ``token``; the
        :attr:`adapter` itself when ``token`` is that, or when a subclass
        brings its own authentication.
        """
        return self._admin_adapter or self.adapter

    @property
    def client(self):
        """A ``SchedulerReportClient`` on :attr:`adapter` (built once).

        It reads its options from the fixture's ``conf``.
        """
        if self._client is None:
            # Imported late: the report client is optional for users of
            # the double alone, and imports configuration on load.
            from shelvefix.scheduler.client import report
            self._client = report.SchedulerReportClient(adapter=self.adapter,
                                                        conf=self.conf)
        return self._client

    # -- call log and faults (see RecordingTransport) ----------------------

    @property
    def calls(self):
        """The transport's ordered list of :class:`Call`."""
        return self.transport.calls

    def calls_for(self, method=None, path=None):
        """See :meth:`.transport.RecordingTransport.calls_for`."""
        return self.transport.calls_for(method=method, path=path)

    def reset_calls(self):
        """See :meth:`.transport.RecordingTransport.reset_calls`."""
        self.transport.reset_calls()

    def inject_fault(self, *args, **kwargs):
        """See :meth:`.transport.RecordingTransport.inject_fault`."""
        return self.transport.inject_fault(*args, **kwargs)

    def clear_faults(self):
        """Disarm the transport's faults and placement's own.

        See :meth:`.transport.RecordingTransport.clear_faults` and
        :meth:`fail_consumer_cleanup`.
        """
        self.transport.clear_faults()
        if self.state is not None:
            self.state.fail_consumer_cleanup(0)

    def fail_consumer_cleanup(self, times=1):
        """Make placement's next ``times`` consumer clean-ups fail.

        ``DELETE /allocations/{c}`` removes the allocations, then the
        consumer record in a second transaction; this makes that second
        step fail with a database error, so the DELETE answers 500 with the
        allocations gone and a *ghost* consumer left behind. Unlike the
        transport's faults this happens inside placement (the double's
        state; the real service's database, see
        :class:`~shelvefix.backends.real.RealPlacementFixture`).

        :param times: how many clean-ups in a row fail from now on (0
            disarms)
        :raises NotImplementedError: a placement this process cannot reach
            inside (a remote one, an application of your own)
        """
        if self.state is None:
            raise NotImplementedError(
                'cannot inject a database fault into this placement')
        self.state.fail_consumer_cleanup(times)

    # -- setup helpers (plain HTTP, as a client would) ---------------------

    def create_provider(self, name, uuid=None, inventory=None):
        """Create a resource provider and optionally its inventory.

        :param name: the provider name.
        :param uuid: its uuid (placement generates one when None).
        :param inventory: ``{resource_class: total}`` or
            ``{resource_class: {field: value}}`` (placement's inventory
            fields; ``total`` required), e.g. ``{'VCPU': 8,
            'MEMORY_MB': 4096, 'DISK_GB': 100}``.
        :returns: the provider uuid.
        :raises PlacementFixtureError: placement refused a request.
        """
        body = {'name': name}
        if uuid is not None:
            body['uuid'] = uuid
        resp = self.admin_adapter.post('/resource_providers', json=body,
                                       microversion=CREATE_PROVIDER_VERSION)
        if resp.status_code != 200:
            raise PlacementFixtureError('Creating provider %r' % name, resp)
        provider = resp.json()
        if inventory:
            self.set_inventory(provider['uuid'], inventory,
                               provider['generation'])
        return provider['uuid']

    def set_inventory(self, uuid, inventory, generation=None):
        """Replace a provider's inventory.

        :param uuid: the provider uuid.
        :param inventory: as for :meth:`create_provider`.
        :param generation: the provider generation to send (read from
            placement when None).
        :returns: the new provider generation.
        :raises PlacementFixtureError: placement refused a request.
        """
        url = '/resource_providers/%s/inventories' % uuid
        if generation is None:
            resp = self.admin_adapter.get(
                url, microversion=SET_INVENTORY_VERSION)
            if resp.status_code != 200:
                raise PlacementFixtureError(
                    'Reading inventory of %s' % uuid, resp)
            generation = resp.json()['resource_provider_generation']
        inventories = {
            rc: dict(value) if isinstance(value, dict) else {'total': value}
            for rc, value in inventory.items()}
        resp = self.admin_adapter.put(
            url, json={'resource_provider_generation': generation,
                       'inventories': inventories},
            microversion=SET_INVENTORY_VERSION)
        if resp.status_code != 200:
            raise PlacementFixtureError('Setting inventory of %s' % uuid,
                                        resp)
        return resp.json()['resource_provider_generation']

    def set_traits(self, uuid, traits):
        """Replace a provider's traits (custom traits are created first).

        :param uuid: the provider uuid.
        :param traits: trait names, e.g. ``['COMPUTE_STATUS_DISABLED']``.
        :returns: the new provider generation.
        :raises PlacementFixtureError: placement refused a request.
        """
        for trait in traits:
            if trait.startswith('CUSTOM_'):
                resp = self.admin_adapter.put(
                    '/traits/%s' % trait, microversion=SET_TRAITS_VERSION)
                if resp.status_code not in (201, 204):
                    raise PlacementFixtureError('Creating trait %s' % trait,
                                                resp)
        url = '/resource_providers/%s' % uuid
        resp = self.admin_adapter.get(url, microversion=SET_TRAITS_VERSION)
        if resp.status_code != 200:
            raise PlacementFixtureError('Reading provider %s' % uuid, resp)
        resp = self.admin_adapter.put(
            url + '/traits', json={
                'resource_provider_generation': resp.json()['generation'],
                'traits': sorted(traits)},
            microversion=SET_TRAITS_VERSION)
        if resp.status_code != 200:
            raise PlacementFixtureError('Setting traits of %s' % uuid, resp)
        return resp.json()['resource_provider_generation']

    def delete_provider(self, uuid, attempts=5):
        """Delete a provider and every allocation held against it.

        Placement refuses to delete a provider that has allocations (409),
        so each consumer's allocations go first (``DELETE
        /allocations/{consumer}``, all of that consumer's), then the
        provider. A consumer that claims the provider meanwhile makes the
        provider's delete fail; it is tried again, ``attempts`` times in
        all. What was already gone counts as deleted, so a run that was
        cut short anywhere can always be cleaned up with this.

        :param uuid: the provider uuid.
        :returns: True if the provider was deleted, False if placement did
            not know it.
        :raises PlacementFixtureError: placement refused a request, or the
            provider still had allocations after ``attempts`` tries.
        """
        url = '/resource_providers/%s' % uuid
        for _attempt in range(attempts):
            resp = self.admin_adapter.get(url + '/allocations')
            if resp.status_code == 404:
                return False
            if resp.status_code != 200:
                raise PlacementFixtureError(
                    'Reading allocations of %s' % uuid, resp)
            for consumer in resp.json()['allocations']:
                gone = self.admin_adapter.delete('/allocations/%s'
                                                 % consumer)
                if gone.status_code not in (204, 404):
                    raise PlacementFixtureError(
                        'Deleting allocations of %s' % consumer, gone)
            resp = self.admin_adapter.delete(url)
            if resp.status_code in (204, 404):
                return resp.status_code == 204
            if resp.status_code != 409:
                break
        raise PlacementFixtureError('Deleting provider %s' % uuid, resp)
