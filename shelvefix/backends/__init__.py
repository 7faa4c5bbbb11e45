"""Placement backends: what puts a placement behind a keystoneauth1 adapter.

Every backend is a ``fixtures`` fixture with the same attributes
(``adapter``, ``client``, ``calls``, ``inject_fault``...; see
:class:`~shelvefix.backends.fixture.PlacementFixture`), so code written
against one runs unchanged against the others:

``double``
    :class:`~shelvefix.backends.fixture.PlacementFixture`: the in-memory
    placement of :mod:`shelvefix.placement`, in-process.
``real``
    :class:`~shelvefix.backends.real.RealPlacementFixture`:
    openstack-placement's own application over in-memory sqlite,
    in-process (needs the ``placement`` extra).
``remote``
    :class:`~shelvefix.backends.remote.RemotePlacementFixture`: a placement
    reached over HTTP, configured like nova's ``[placement]`` section; a
    :class:`~shelvefix.backends.server.PlacementServer` (placement under
    gunicorn on 127.0.0.1) is one.

Requests reach the backend through a recording transport
(:mod:`~shelvefix.backends.transport`) that logs every call and injects
faults (:mod:`~shelvefix.backends.faults`).
"""

DOUBLE = 'double'
REAL = 'real'
REMOTE = 'remote'
NAMES = (REAL, DOUBLE, REMOTE)
DESCRIPTIONS = {
    REAL: 'the real placement service (openstack-placement, in-process, '
          'in-memory sqlite)',
    DOUBLE: 'the placement double (in-memory)',
    REMOTE: 'the remote placement configured in [placement]',
}


class BackendUnavailable(Exception):
    """This machine cannot run the backend; the message says what is missing.

    A dependency is not installed, PostgreSQL cannot be installed or
    started, or the configuration names no placement. Tests skip on it.
    """


class ServerStartError(RuntimeError):
    """A placement server was started and failed; with its log's tail."""


def _double(conf, placement_config=None):
    from shelvefix.backends import fixture
    return fixture.PlacementFixture(conf=conf,
                                    placement_config=placement_config)


def _real(conf, placement_config=None):
    from shelvefix.backends import real
    if not real.available():
        raise BackendUnavailable(real.INSTALL_HINT)
    return real.RealPlacementFixture(conf=conf,
                                     placement_config=placement_config)


def _remote(conf, placement_config=None):
    from shelvefix.backends import remote
    if placement_config:
        raise BackendUnavailable(
            'a remote placement runs with its own configuration; it cannot '
            'be given %s' % ', '.join('[%s]' % group
                                      for group in sorted(placement_config)))
    try:
        return remote.RemotePlacementFixture(conf)
    except ValueError as e:
        raise BackendUnavailable(str(e)) from e


#: Backend name -> ``factory(conf[, placement_config=...])`` returning a
#: fixture (``placement_config`` is passed only when there is one).
#: Modules are imported only when their backend is made.
FACTORIES = {DOUBLE: _double, REAL: _real, REMOTE: _remote}


def make_backend(name, conf=None, placement_config=None):
    """A placement fixture for a backend, not set up yet.

    :param name: a key of :data:`FACTORIES` (one of :data:`NAMES`)
    :param conf: an oslo.config ``ConfigOpts`` with shelvefix's options
        (default: the global CONF). The remote backend reads its endpoint
        and credentials from its ``[placement]`` section, and every
        backend's ``client`` its retry options.
    :param placement_config: placement's own configuration,
        ``{group: {option: value}}`` (e.g. ``{'cors': {'allowed_origin':
        [...]}}``), for the backends that start a placement (``double``,
        ``real``; see
        :class:`~shelvefix.backends.fixture.PlacementFixture`).
    :raises BackendUnavailable: ``real`` without openstack-placement, or
        ``remote`` with a configuration that names no placement endpoint,
        or with a ``placement_config``
    :raises ValueError: an unknown name
    """
    try:
        factory = FACTORIES[name]
    except KeyError:
        raise ValueError('unknown placement backend %r; choose one of %s'
                         % (name, ', '.join(sorted(FACTORIES))))
    if placement_config:
        return factory(conf, placement_config=placement_config)
    return factory(conf)
