"""HTTP handlers of the placement double, one module per resource.

A handler takes a :class:`~shelvefix.placement.wsgi.Request` (microversion
parsed, path parameters extracted) and the
:class:`~shelvefix.placement.objects.state.PlacementState`, and returns a
:class:`~shelvefix.placement.wsgi.Response` or raises an
:class:`~shelvefix.placement.errors.HTTPError`.
"""
