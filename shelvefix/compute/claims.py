"""Claims on a node's resources, as context managers (nova's ``claims``).

A claim is returned by the resource tracker once the node counts what was
claimed; leaving its ``with`` block by an exception aborts it, so that a
failed build or move gives the node its resources back:

* :class:`Claim` (``instance_claim``): the node stops counting the
  instance, and the instance leaves the node;
* :class:`MoveClaim` (``resize_claim``, ``rebuild_claim``): the node stops
  counting the flavor claimed for the move.
"""

from oslo_log import log as logging

LOG = logging.getLogger(__name__)


class Claim(object):
    """A claim of an instance on a node; a context manager."""

    def __init__(self, context, instance, nodename, tracker):
        self.context = context
        self.instance = instance
        self.nodename = nodename
        self.tracker = tracker

    def __enter__(self):
        return self

    def __exit__(self, exc_type, exc_value, traceback):
        if exc_type is not None:
            self.abort()

    def abort(self):
        """Give the claimed resources back."""
        LOG.debug('Aborting claim of instance %s on %s',
                  self.instance.uuid, self.nodename)
        self.tracker.abort_instance_claim(self.context, self.instance,
                                          self.nodename)


class MoveClaim(Claim):
    """A destination's claim of ``flavor`` for a move of ``migration``."""

    def __init__(self, context, instance, nodename, flavor, tracker,
                 migration):
        super(MoveClaim, self).__init__(context, instance, nodename, tracker)
        self.flavor = flavor
        self.migration = migration

    def abort(self):
        """Give the claimed resources back."""
        LOG.debug('Aborting move claim of instance %s on %s',
                  self.instance.uuid, self.nodename)
        self.tracker.drop_move_claim(self.context, self.instance,
                                     self.nodename, flavor=self.flavor)
