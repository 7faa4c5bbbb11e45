"""An in-memory placement service (the "double") for shelvefix tests.

* :class:`PlacementApp` - a WSGI application faithful to openstack-placement
  16.0.0 (microversions 1.0 - 1.39) for resource providers, inventories,
  allocations and usages, backed by a
  :class:`~shelvefix.placement.state.PlacementState`.
* :class:`WSGITransport` - a ``requests`` transport adapter serving requests
  from a WSGI application in-process, with an ordered call log
  (:class:`Call`) and fault injection.
* :class:`PlacementFixture` - wires both into a keystoneauth1 adapter for a
  test.
"""

from shelvefix.placement.app import PlacementApp
from shelvefix.placement.fixture import PlacementFixture
from shelvefix.placement.transport import Call
from shelvefix.placement.transport import WSGITransport

__all__ = ['PlacementApp', 'PlacementFixture', 'WSGITransport', 'Call']
