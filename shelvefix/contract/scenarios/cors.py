"""CORS, as placement serves it when ``[cors] allowed_origin`` is set.

Placement puts oslo.middleware's CORS middleware outside authentication
(and inside its request log), with its own defaults for the headers and
methods a browser may use. So a preflight ``OPTIONS`` needs no token and
is always a bare 200, carrying the ``Access-Control-*`` headers only when
origin, method and headers are all allowed; every other answer, a 401 or
a 404 included, gets ``Access-Control-Allow-Origin`` (and ``-Expose-
Headers``, ``Origin`` added to ``Vary``) for an allowed ``Origin``.
Without ``allowed_origin`` there is no CORS at all: ``OPTIONS`` is a 405
(or a 401 without a token).

Each scenario but the last runs with ``config`` asking both backends for
CORS (see :func:`~shelvefix.contract.registry.scenario`).
"""

from shelvefix.contract import api as api_mod
from shelvefix.contract import registry
from shelvefix.contract.scenarios import common

scenario = registry.scenario

#: The origin the scenarios allow (the one of placement's own CORS tests).
ORIGIN = 'http://valid.example.com'
#: An origin they do not.
OTHER = 'http://invalid.example.com'
CONFIG = {'cors': {'allowed_origin': [ORIGIN]}}


def _preflight(api, path, origin=ORIGIN, method='GET', headers=None,
               token=api_mod.NO_TOKEN, note=None, version=None):
    """``OPTIONS path`` as a browser sends it before a request.

    :param origin: the ``Origin``, or None for none.
    :param method: the ``Access-Control-Request-Method``, or None.
    :param headers: the ``Access-Control-Request-Headers`` value, or None.
    :param token: as for ``ContractAPI.request``; none by default, as a
        browser sends a preflight without credentials.
    """
    sent = {}
    if origin is not None:
        sent['Origin'] = origin
    if method is not None:
        sent['Access-Control-Request-Method'] = method
    if headers is not None:
        sent['Access-Control-Request-Headers'] = headers
    return api.request('OPTIONS', path, headers=sent, token=token,
                       note=note, version=version)


def _simple(api, method, path, origin=ORIGIN, headers=None, **kwargs):
    """A request with an ``Origin`` (None: without one)."""
    sent = dict(headers or {})
    if origin is not None:
        sent['Origin'] = origin
    return api.request(method, path, headers=sent, **kwargs)


@scenario('cors_preflight_allowed_origin',
          'OPTIONS from an allowed origin: 200 with the Access-Control '
          'headers when method and headers are allowed, no token needed',
          config=CONFIG)
def preflight_allowed(api):
    rp1 = api.uuid('rp1')
    _preflight(api, '/')
    _preflight(api, '/resource_providers', method='POST',
               headers='X-Auth-Token, OpenStack-API-Version, Content-Type')
    _preflight(api, '/resource_providers/%s/inventories' % rp1,
               method='PUT', headers='x-auth-token,openstack-api-version',
               note='header names in any case')
    _preflight(api, '/allocations/%s' % api.uuid('c1'), method='DELETE',
               token='admin', version=common.V, note='with a token')
    for method in ('PATCH', 'HEAD', 'OPTIONS', 'TRACE', 'get'):
        _preflight(api, '/resource_providers', method=method,
                   note='method %s' % method)
    _preflight(api, '/resource_providers', headers='X-Custom-Header',
               note='a header not allowed')
    _preflight(api, '/resource_providers', method=None,
               note='no Access-Control-Request-Method')
    _preflight(api, '/nothing', note='a path placement does not serve')


@scenario('cors_preflight_disallowed_origin',
          'OPTIONS from another origin, or without one: a bare 200',
          config=CONFIG)
def preflight_disallowed(api):
    for origin in (OTHER, ORIGIN + '/', 'https://valid.example.com',
                   'HTTP://VALID.EXAMPLE.COM', 'null', ''):
        _preflight(api, '/resource_providers', origin=origin,
                   headers='X-Auth-Token', note='Origin %r' % origin)
    _preflight(api, '/resource_providers', origin=None, note='no Origin')
    _preflight(api, '/', origin=None, method=None, token='admin',
               note='a bare OPTIONS')


@scenario('cors_simple_allowed_origin',
          'requests with an allowed Origin: CORS headers on every answer, '
          '401, 404 and 405 included',
          config=CONFIG)
def simple_allowed(api):
    _simple(api, 'GET', '/')
    _simple(api, 'GET', '/', version='latest')
    _simple(api, 'GET', '/resource_providers', version=common.V)
    _simple(api, 'GET', '/resource_providers', token=api_mod.NO_TOKEN)
    _simple(api, 'POST', '/resource_providers',
            body={'name': 'rp1', 'uuid': api.uuid('rp1')},
            version=api_mod.PROVIDER_VERSION)
    _simple(api, 'GET', '/resource_providers/%s' % api.uuid('rp1'),
            version=common.V)
    _simple(api, 'GET', '/resource_providers/%s' % api.uuid('rp2'),
            version=common.V, note='unknown provider')
    _simple(api, 'GET', '/nothing', version=common.V)
    _simple(api, 'DELETE', '/', note='method not allowed')
    _simple(api, 'GET', '/', headers={
        'OpenStack-API-Version': 'placement 1.x'}, note='bad microversion')
    _simple(api, 'GET', '/resource_providers', version='9.99')
    _simple(api, 'PUT', '/allocations/%s' % api.uuid('c1'),
            raw_body='{"oops": ', version=common.V, note='malformed JSON')


@scenario('cors_simple_disallowed_origin',
          'requests with an Origin not allowed: no CORS headers',
          config=CONFIG)
def simple_disallowed(api):
    for origin in (OTHER, ORIGIN + '/', ''):
        _simple(api, 'GET', '/resource_providers', origin=origin,
                version=common.V, note='Origin %r' % origin)
    _simple(api, 'GET', '/resource_providers', origin=OTHER,
            token=api_mod.NO_TOKEN)


@scenario('cors_simple_without_origin',
          'requests without an Origin, CORS configured: no CORS headers',
          config=CONFIG)
def simple_without_origin(api):
    _simple(api, 'GET', '/', origin=None)
    _simple(api, 'GET', '/resource_providers', origin=None,
            version=common.V)
    _simple(api, 'GET', '/resource_providers', origin=None,
            token=api_mod.NO_TOKEN)
    _simple(api, 'GET', '/nothing', origin=None, version=common.V)


@scenario('cors_options',
          'the other [cors] options: several origins, no credentials, '
          'own headers, methods and max age',
          config={'cors': {
              'allowed_origin': [ORIGIN, 'https://horizon.example.com'],
              'allow_credentials': False, 'max_age': 60,
              'allow_methods': ['GET', 'DELETE'],
              'allow_headers': ['X-Auth-Token'],
              'expose_headers': ['X-Openstack-Request-Id']}})
def options(api):
    for origin in (ORIGIN, 'https://horizon.example.com'):
        _preflight(api, '/resource_providers', origin=origin,
                   method='DELETE', headers='X-Auth-Token')
        _simple(api, 'GET', '/resource_providers', origin=origin,
                version=common.V)
    _preflight(api, '/resource_providers', method='PUT',
               note='a method not allowed')
    _preflight(api, '/resource_providers',
               headers='X-Auth-Token,OpenStack-API-Version',
               note='a header not allowed')


@scenario('cors_any_origin',
          'allowed_origin "*": any Origin is answered with *',
          config={'cors': {'allowed_origin': ['*']}})
def any_origin(api):
    for origin in (ORIGIN, OTHER):
        _preflight(api, '/resource_providers', origin=origin,
                   headers='X-Auth-Token')
        _simple(api, 'GET', '/resource_providers', origin=origin,
                version=common.V)
    _simple(api, 'GET', '/resource_providers', origin=None,
            version=common.V)


@scenario('cors_not_configured',
          'without [cors] allowed_origin: no CORS; OPTIONS is 405, or 401 '
          'without a token')
def not_configured(api):
    _preflight(api, '/', note='no token')
    _preflight(api, '/resource_providers', note='no token')
    _preflight(api, '/resource_providers', token='admin')
    _preflight(api, '/resource_providers', token='admin',
               version=common.V)
    _simple(api, 'GET', '/')
    _simple(api, 'GET', '/resource_providers', version=common.V)
    _simple(api, 'GET', '/resource_providers', token=api_mod.NO_TOKEN)
