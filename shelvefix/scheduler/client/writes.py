"""Allocation writes that survive lost replies and provider races.

A timeout, a dropped connection or a 5xx from a proxy can hide a write that
placement committed; a write can also lose a race on a resource provider's
generation to another consumer's write, which is safe to retry.
:class:`AllocationWrites` (mixed into ``SchedulerReportClient``) tells the
first from a failure by reading the consumer back, and retries the second.
"""

from oslo_log import log as logging

from shelvefix import exception
from shelvefix.scheduler.client import errors

LOG = logging.getLogger(__name__)


class ProviderGenerationConflict(Exception):
    """Internal: a write lost a provider generation race and may retry."""

    def __init__(self, err):
        super(ProviderGenerationConflict, self).__init__(err.detail)
        self.err = err


class AllocationWrites(object):
    """Lost-reply detection and retries for ``SchedulerReportClient``.

    Expects the client's ``get_allocs_for_consumer``, and ``_conf``,
    ``_sleep`` and ``_jitter`` as its constructor sets them.
    """

    def _landed(self, context, consumer_uuid, allocations):
        """After an ambiguous failure, did our write take effect anyway?

        A timeout, a dropped connection or a 5xx from a proxy can hide a
        write placement committed. Reporting such a write as failed would
        lose it (a claim nobody owns, or allocations thought still there),
        so the consumer is read back and compared with what was sent.

        :returns: True if placement holds exactly ``allocations``
            (``{rp: {'resources': {...}}}``), False if not or if it cannot
            be read
        """
        try:
            current = self.get_allocs_for_consumer(context, consumer_uuid)
        except exception.ConsumerAllocationRetrievalFailed as e:
            LOG.warning('Could not verify the allocations of consumer '
                        '%(consumer)s after an ambiguous failure: %(error)s',
                        {'consumer': consumer_uuid, 'error': e})
            return False
        held = {rp: a['resources']
                for rp, a in current['allocations'].items()}
        wanted = {rp: a['resources'] for rp, a in allocations.items()}
        if held == wanted:
            LOG.warning('The reply from placement for consumer %s was lost '
                        'but its allocations were written as requested',
                        consumer_uuid)
            return True
        return False

    def _with_retries(self, operation, consumer_uuid, func,
                      exc=exception.AllocationUpdateFailed):
        """Call ``func`` until it stops losing provider generation races.

        :param exc: what to raise when the retries run out
        """
        attempts = self._conf.placement.claim_retry_attempts
        max_delay = self._conf.placement.claim_retry_max_delay
        last = None
        for attempt in range(attempts):
            if attempt:
                self._sleep(self._jitter(0, attempt * max_delay))
            try:
                return func()
            except ProviderGenerationConflict as e:
                last = e.err
                LOG.debug('Unable to %(op)s for consumer %(consumer)s: '
                          '%(detail)s; retrying (%(n)d of %(total)d)',
                          {'op': operation, 'consumer': consumer_uuid,
                           'detail': last.detail, 'n': attempt + 1,
                           'total': attempts})
        LOG.error('Failed scheduler client operation %(op)s for consumer '
                  '%(consumer)s: out of retries', {'op': operation,
                                                   'consumer': consumer_uuid})
        raise exc(consumer_uuid=consumer_uuid,
                  error='out of retries after %d attempts; last error: %s'
                        % (attempts, errors.describe(last)),
                  placement_error=last)

    def _free(self, context, uuid, failed, judge, send):
        """Send a request that frees a consumer's allocations.

        A lost reply (a transport failure, a 5xx) is not taken for a
        failure if placement now holds nothing for the consumer: the free
        took effect (see :meth:`_landed`).

        :param failed: ``failed(error, cause)`` makes the exception to raise
        :param judge: ``judge(response)`` returns True (freed) or False
            (nothing to free), or raises
        :param send: sends the request and returns the response
        :returns: what ``judge`` returns, or True for a lost reply whose
            free took effect
        """
        try:
            resp = send()
        except errors.TRANSPORT_ERRORS as e:
            if self._landed(context, uuid, {}):
                return True
            raise failed(errors.describe_transport_error(e), e)
        if resp.status_code >= 500 and self._landed(context, uuid, {}):
            # Placement's DELETE removes the allocations, then the consumer
            # in a second transaction: a 5xx after the first leaves the
            # record behind. Nothing here can remove it without a write
            # that would create one for an unknown consumer; the next claim
            # for the consumer takes it over (see _claim_ghost).
            LOG.warning('Placement answered %(status)d to freeing consumer '
                        '%(uuid)s but holds no allocations for it: the free '
                        'took effect. Placement may keep the consumer '
                        'record (a ghost consumer) until the next claim for '
                        'it.', {'status': resp.status_code, 'uuid': uuid})
            return True
        return judge(resp)
