"""Scheduler helpers: claiming the chosen host's resources in placement."""

from oslo_log import log as logging

from shelvefix import exception

LOG = logging.getLogger(__name__)


def request_is_rebuild(spec_obj):
    """True for a rebuild-only scheduling request (nothing to claim)."""
    hints = getattr(spec_obj, 'scheduler_hints', None) or {}
    return bool(hints.get('_nova_check_type') == ['rebuild'])


def claim_resources(ctx, client, spec_obj, instance_uuid, alloc_req,
                    allocation_request_version=None):
    """Claim ``alloc_req`` for the instance in placement.

    Every caller expects the instance to be a new consumer, so the expected
    consumer generation is None. If the consumer still has allocations (the
    bug's window), the report client doubles them up and sends the
    generation it read; a concurrent delete of the consumer then makes
    placement answer 409, raised as AllocationUpdateFailed.

    :param ctx: the request context
    :param client: a ``SchedulerReportClient``
    :param spec_obj: the request spec: ``project_id`` and ``user_id`` (the
        context's user is used when the spec has none, as nova does for
        pre-Rocky specs)
    :param instance_uuid: the consumer
    :param alloc_req: an allocation request from allocation candidates
    :param allocation_request_version: microversion to PUT with
    :returns: True
    :raises AllocationUpdateFailed: the claim failed
    """
    if request_is_rebuild(spec_obj):
        LOG.debug('Not claiming resources in the placement API for '
                  'rebuild-only scheduling of instance %s', instance_uuid)
        return True
    LOG.debug('Attempting to claim resources in the placement API for '
              'instance %s', instance_uuid)
    user_id = getattr(spec_obj, 'user_id', None) or ctx.user_id
    try:
        return client.claim_resources(
            ctx, instance_uuid, alloc_req, spec_obj.project_id, user_id,
            allocation_request_version=allocation_request_version,
            consumer_generation=None)
    except exception.ShelvefixException as e:
        LOG.error('Unable to claim resources in placement for instance '
                  '%(uuid)s (consumer %(uuid)s): %(error)s',
                  {'uuid': instance_uuid, 'error': e})
        raise
