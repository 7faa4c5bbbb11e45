"""Request filters: what the scheduler adds to a request before placement.

nova runs these on every request spec before it asks placement for
candidates; only the one the unshelve path depends on is here.
"""

import os_traits
from oslo_log import log as logging

LOG = logging.getLogger(__name__)


def compute_status_filter(ctxt, request_spec):
    """Leave out compute nodes whose service is disabled.

    A disabled compute service marks its node providers with the
    ``COMPUTE_STATUS_DISABLED`` trait; forbidding it on the root provider
    keeps them out of the candidates.
    """
    request_spec.root_forbidden.add(os_traits.COMPUTE_STATUS_DISABLED)
    LOG.debug('compute_status_filter request filter added forbidden trait '
              '%s', os_traits.COMPUTE_STATUS_DISABLED)
    return True


ALL_REQUEST_FILTERS = [compute_status_filter]


def process_reqspec(ctxt, request_spec):
    """Run every request filter on ``request_spec`` (modified in place)."""
    for request_filter in ALL_REQUEST_FILTERS:
        request_filter(ctxt, request_spec)
