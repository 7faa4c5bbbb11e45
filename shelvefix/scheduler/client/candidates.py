"""Asking placement where a request fits: ``GET /allocation_candidates``."""

from oslo_log import log as logging

from shelvefix import exception
from shelvefix.scheduler.client import errors

LOG = logging.getLogger(__name__)

#: The microversion nova asks for candidates with (and claims with).
SAME_SUBTREE_VERSION = '1.36'


class CandidateQueries(object):
    """The report client's allocation candidates query (a mixin)."""

    def get_allocation_candidates(self, context, resources):
        """Where the resources of a request fit.

        :param context: the request context
        :param resources: a
            :class:`~shelvefix.scheduler.utils.ResourceRequest`
        :returns: ``(allocation_requests, provider_summaries, version)``:
            placement's allocation requests (each a body a claim can PUT),
            its provider summaries keyed by provider uuid, and the
            microversion asked with, which claims must use too
        :raises AllocationCandidatesRetrievalFailed: placement refused or
            did not answer (nova logs and returns ``(None, None, None)``)
        """
        version = SAME_SUBTREE_VERSION
        url = '/allocation_candidates?%s' % resources.to_querystring()
        try:
            resp = self.get(url, version=version,
                            global_request_id=context.global_id)
        except errors.TRANSPORT_ERRORS as e:
            raise exception.AllocationCandidatesRetrievalFailed(
                resource_request=str(resources),
                error=errors.describe_transport_error(e)) from e
        if resp.status_code == 200:
            data = resp.json()
            return (data['allocation_requests'], data['provider_summaries'],
                    version)
        err = errors.error_from_response(resp)
        LOG.error('Failed to retrieve allocation candidates from placement '
                  'API for filters: %(request)s. %(error)s',
                  {'request': resources, 'error': errors.describe(err)})
        raise exception.AllocationCandidatesRetrievalFailed(
            resource_request=str(resources), error=errors.describe(err),
            placement_error=err)
