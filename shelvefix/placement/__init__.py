"""The placement double: an in-memory placement service.

Laid out in placement's own layers, so each piece is where a placement
developer would look for it:

* :mod:`~shelvefix.placement.deploy` - :class:`PlacementApp`, the WSGI
  application: request ids, authentication, microversion negotiation and
  the fault wrapper, in placement's middleware order;
* :mod:`~shelvefix.placement.handler` - the route table and the dispatch
  to handlers;
* :mod:`~shelvefix.placement.handlers` - HTTP, one module per resource;
* :mod:`~shelvefix.placement.objects` - the domain: providers,
  inventories, consumers and allocations, capacity (no HTTP in there);
* :mod:`~shelvefix.placement.exception` - the domain's errors,
  :mod:`~shelvefix.placement.errors` the HTTP errors they map to;
* :mod:`~shelvefix.placement.schemas` and
  :mod:`~shelvefix.placement.validation` - request bodies and query
  strings, per microversion (:mod:`~shelvefix.placement.microversion`);
* :mod:`~shelvefix.placement.wsgi` - the request and response objects.

To put the double (or the real placement) behind a keystoneauth1 adapter
in a test, use :class:`shelvefix.backends.fixture.PlacementFixture`.
"""
