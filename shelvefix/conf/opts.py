"""Entry point for oslo-config-generator (``oslo.config.opts``)."""

from shelvefix.conf import placement


def list_opts():
    """Return ``[(group, [opts])]`` for every group shelvefix registers."""
    return [(group, sorted(opts, key=lambda o: o.name))
            for group, opts in placement.list_opts().items()]
