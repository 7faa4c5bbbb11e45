"""A remote placement endpoint, configured like nova's ``[placement]``.

:class:`RemotePlacementFixture` builds its keystoneauth1 adapter from the
``[placement]`` options of a configuration (a nova.conf section works), so
an operator can point shelvefix at a staging deployment. Requests go over
real HTTP through an :class:`~shelvefix.backends.transport.HTTPTransport`,
which keeps the same ordered call log (and fault injection) as the
in-process transport.

Every scenario run against a remote placement creates its own uniquely named
providers and consumers and removes them afterwards: a real deployment
cannot be reset.
"""

import urllib.parse

from keystoneauth1 import exceptions as ks_exc

from shelvefix import backends
from shelvefix.backends import fixture
from shelvefix.backends import transport
from shelvefix import conf as shelvefix_conf
from shelvefix import utils

# Consumer generations, which the race is about, came with 1.28.
MINIMUM_VERSION = '1.28'


class RemotePlacementFixture(fixture.PlacementFixture):
    """A placement service reached over the network.

    :param conf: an oslo.config ``ConfigOpts`` with shelvefix's options
        registered and parsed (default: shelvefix's global CONF); its
        ``[placement]`` section says where placement is and how to
        authenticate, and the fixture's ``client`` reads its retry options
        from it too

    Attributes are those of
    :class:`~shelvefix.backends.fixture.PlacementFixture`; ``app`` and
    ``state`` are None.

    :raises ValueError: when the configuration yields no placement
        endpoint (no auth_type and no endpoint_override, or keystone cannot
        name one)
    """

    def __init__(self, conf=None):
        conf = conf or shelvefix_conf.CONF
        super().__init__(conf=conf)
        # Resolved here, not in setUp, so that a bad configuration is a
        # plain ValueError for the caller rather than a fixture SetupError.
        try:
            self._adapter = shelvefix_conf.placement.load_adapter(
                conf, raise_exc=False)
            endpoint = conf.placement.endpoint_override
            if not endpoint and self._adapter.auth is not None:
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
        self.adapter = self._adapter
        self.session = self._adapter.session
        self.endpoint = self._remote_endpoint
        self.transport = transport.HTTPTransport(
            script_name=urllib.parse.urlsplit(self.endpoint).path)
        self.session.session.mount(self.endpoint, self.transport)
        self.addCleanup(self.transport.close)
        self._check_reachable()

    def _check_reachable(self):
        """Fail set-up with one clear reason if placement cannot serve us.

        :raises BackendUnavailable: placement does not answer ``GET /``,
            or does not serve the microversion consumer generations need
        """
        try:
            resp = self.adapter.get('/', raise_exc=False)
        except ks_exc.ConnectTimeout as e:
            raise backends.BackendUnavailable(
                'placement at %s did not answer within %s s ([placement] '
                'timeout): %s' % (self.endpoint, self.session.timeout, e))
        except ks_exc.ClientException as e:
            raise backends.BackendUnavailable(
                'cannot reach placement at %s: %s' % (self.endpoint, e))
        try:
            newest = resp.json()['versions'][0]['max_version']
        except (ValueError, KeyError, IndexError, TypeError):
            raise backends.BackendUnavailable(
                '%s is not a placement service: GET / answered %d %s'
                % (self.endpoint, resp.status_code, resp.text[:200]))
        if utils.version_tuple(newest) < utils.version_tuple(
                MINIMUM_VERSION):
            raise backends.BackendUnavailable(
                'placement at %s serves microversions up to %s; shelvefix '
                'needs %s (consumer generations)'
                % (self.endpoint, newest, MINIMUM_VERSION))
