"""Allocation requests: checking one, and doubling one up for a move.

An allocation request is what ``GET /allocation_candidates`` returns for
each candidate and what a claim writes: ``{'allocations': {rp_uuid:
{'resources': {resource_class: amount}}}}``.
"""

import copy

from oslo_log import log as logging

from shelvefix import exception
from shelvefix import utils

LOG = logging.getLogger(__name__)


def move_operation_alloc_request(source_allocs, dest_alloc_req):
    """Merge a consumer's current allocations into a new request.

    While a consumer is being moved it holds resources on both hosts. The
    result keeps every current allocation (only its ``resources``) and adds
    the requested providers the consumer does not use yet; a provider in both
    (a shared disk provider, say) keeps its current amounts.

    :param source_allocs: ``{rp_uuid: {'resources': {...}, ...}}`` as read
        from placement
    :param dest_alloc_req: an allocation request, ``{'allocations': {...}}``
    :returns: a new allocation request; neither argument is changed
    """
    merged = {rp: {'resources': dict(alloc['resources'])}
              for rp, alloc in source_allocs.items()}
    for rp, alloc in dest_alloc_req['allocations'].items():
        if rp not in merged:
            merged[rp] = copy.deepcopy(alloc)
    LOG.debug('Doubled-up allocation request for a move: %s', merged)
    return {'allocations': merged}


def validate(consumer_uuid, alloc_request):
    """Check an allocation request before it is sent.

    :raises InvalidAllocationRequest: naming the consumer and what is wrong
    """
    def bad(reason):
        raise exception.InvalidAllocationRequest(
            consumer_uuid=consumer_uuid, reason=reason)

    if not isinstance(alloc_request, dict):
        bad('expected a dict, got %s' % type(alloc_request).__name__)
    allocs = alloc_request.get('allocations')
    if not isinstance(allocs, dict) or not allocs:
        bad("missing or empty 'allocations' mapping")
    for rp_uuid, alloc in allocs.items():
        if not utils.is_uuid_like(rp_uuid):
            bad('resource provider %r is not a uuid' % (rp_uuid,))
        if not isinstance(alloc, dict) or 'resources' not in alloc:
            bad("allocation for provider %s has no 'resources'" % rp_uuid)
        resources = alloc['resources']
        if not isinstance(resources, dict) or not resources:
            bad("'resources' for provider %s is not a non-empty mapping"
                % rp_uuid)
        for rc, amount in resources.items():
            if (not isinstance(amount, int) or isinstance(amount, bool) or
                    amount < 1):
                bad('amount of %s on provider %s must be a positive '
                    'integer, got %r' % (rc, rp_uuid, amount))
