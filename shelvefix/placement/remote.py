"""A remote placement endpoint, configured like nova's ``[placement]``.

:class:`RemotePlacementFixture` builds its keystoneauth1 session, auth and
adapter from the ``[placement]`` options of a configuration (a nova.conf
section works), so an operator can point shelvefix at a staging
deployment. Requests go over real HTTP through :class:`HTTPTransport`, which
keeps the same ordered call log (and fault injection) as the in-process
transport.

Every scenario run against a remote placement creates its own uniquely named
providers and consumers and removes them afterwards: a real deployment
cannot be reset.
"""

import urllib.parse

from keystoneauth1 import exceptions as ks_exc
from keystoneauth1 import loading as ks_loading
import requests.adapters

from shelvefix import conf as shelvefix_conf
from shelvefix.placement import fixture
from shelvefix.placement import transport


class HTTPTransport(transport.WSGITransport):
    """Real HTTP, with the call log and faults of the WSGI transport.

    :param script_name: the path part of the endpoint, left out of the
        logged paths so they read as placement's own routes
    """

    def __init__(self, script_name=''):
        super().__init__(app=None, script_name=script_name)
        self._http = requests.adapters.HTTPAdapter()

    def _forward(self, request, data, options):
        return self._http.send(request, **options)

    def close(self):
        self._http.close()


class RemotePlacementFixture(fixture.PlacementFixture):
    """A placement service reached over the network.

    :param conf: an oslo.config ``ConfigOpts`` with shelvefix's options
        registered and parsed (default: shelvefix's global CONF)

    Attributes are those of
    :class:`~shelvefix.placement.fixture.PlacementFixture`; ``app`` and
    ``state`` are None.

    :raises ValueError: when the configuration yields no placement
        endpoint (no auth_type and no endpoint_override, or keystone cannot
        name one)
    """

    def __init__(self, conf=None):
        super().__init__()
        self._conf = conf or shelvefix_conf.CONF
        # Resolved here, not in setUp, so that a bad configuration is a
        # plain ValueError for the caller rather than a fixture SetupError.
        group = 'placement'
        try:
            auth = ks_loading.load_auth_from_conf_options(self._conf, group)
            self._session = ks_loading.load_session_from_conf_options(
                self._conf, group, auth=auth)
            self._adapter = ks_loading.load_adapter_from_conf_options(
                self._conf, group, session=self._session, auth=auth,
                raise_exc=False)
            endpoint = self._conf.placement.endpoint_override
            if not endpoint and auth is not None:
                endpoint = self._adapter.get_endpoint()
        except ks_exc.ClientException as e:
            raise ValueError('cannot find the placement endpoint from '
                             '[placement]: %s' % e) from e
        if not endpoint:
            raise ValueError(
                'no placement endpoint: set [placement] endpoint_override, '
                'or auth options that find placement in the service catalog')
        self._remote_endpoint = endpoint.rstrip('/')

    def _setUp(self):
        self.addCleanup(self._clear)
        self.session = self._session
        self.adapter = self._adapter
        self.endpoint = self._remote_endpoint
        self.transport = HTTPTransport(
            script_name=urllib.parse.urlsplit(self.endpoint).path)
        self.session.session.mount(self.endpoint, self.transport)
        self.addCleanup(self.transport.close)
