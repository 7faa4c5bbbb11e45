"""Scheduler helpers: what a request asks placement for, and the claim."""

import urllib.parse

from oslo_log import log as logging

from shelvefix import exception

LOG = logging.getLogger(__name__)

#: nova's ``[scheduler] max_placement_results`` default.
MAX_PLACEMENT_RESULTS = 1000


class ResourceRequest(object):
    """What one instance needs from placement, as a candidates query.

    One unsuffixed request group (the flavor's resources and the spec's
    required and forbidden traits) plus the root provider's required and
    forbidden traits, as nova's ``ResourceRequest`` has for a flavor
    without granular extra specs.

    :param resources: ``{resource class: amount}``
    :param required_traits: traits the providing provider must have
    :param forbidden_traits: traits it must not have
    :param root_required: traits the root provider must have
    :param root_forbidden: traits the root provider must not have
    :param limit: at most this many candidates (None: all)
    """

    def __init__(self, resources, required_traits=(), forbidden_traits=(),
                 root_required=(), root_forbidden=(),
                 limit=MAX_PLACEMENT_RESULTS):
        self.resources = {rc: amount for rc, amount in resources.items()
                          if amount}
        self.required_traits = set(required_traits)
        self.forbidden_traits = set(forbidden_traits)
        self.root_required = set(root_required)
        self.root_forbidden = set(root_forbidden)
        self._limit = limit

    @classmethod
    def from_request_spec(cls, request_spec, limit=MAX_PLACEMENT_RESULTS):
        """The request of a spec's flavor, with the spec's root traits."""
        return cls(request_spec.flavor.resources,
                   root_required=request_spec.root_required,
                   root_forbidden=request_spec.root_forbidden, limit=limit)

    def to_querystring(self):
        """The query string of ``GET /allocation_candidates``."""
        params = []
        if self._limit is not None:
            params.append(('limit', self._limit))
        if self.root_required or self.root_forbidden:
            params.append(('root_required', ','.join(
                sorted(self.root_required) +
                ['!' + trait for trait in sorted(self.root_forbidden)])))
        params.append(('resources', ','.join(
            '%s:%s' % item for item in sorted(self.resources.items()))))
        required = (sorted(self.required_traits) +
                    ['!' + trait for trait in sorted(self.forbidden_traits)])
        if required:
            params.append(('required', ','.join(required)))
        return urllib.parse.urlencode(sorted(params))

    def __str__(self):
        return 'RequestGroup(use_same_provider=False, resources={%s})' % (
            ', '.join('%s:%d' % item
                      for item in sorted(self.resources.items())))


def resources_from_request_spec(ctxt, spec_obj, host_manager=None,
                                enable_pinning_translate=True):
    """The :class:`ResourceRequest` of a request spec.

    :param host_manager: nova's signature; unused
    :param enable_pinning_translate: nova's signature; unused (no CPU
        pinning here)
    """
    return ResourceRequest.from_request_spec(spec_obj)


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
