"""The scheduler: choose a host from placement's candidates, and claim it.

:meth:`SchedulerManager.select_destinations` follows nova's: run the
request filters, ask placement for allocation candidates, order the hosts
that have candidates, and claim the first host's candidate in placement
(``PUT /allocations/{instance}``); a host whose claim fails is skipped for
the next. A consumer generation conflict is not skipped: it means someone
else changed the instance's allocations, and it is raised, as nova's
``AllocationUpdateFailed``.
"""

from oslo_log import log as logging

from shelvefix import exception
from shelvefix.scheduler.client import report
from shelvefix.scheduler import host_manager as host_manager_mod
from shelvefix.scheduler import request_filter
from shelvefix.scheduler import utils

LOG = logging.getLogger(__name__)

_SENTINEL = object()


class Selection(object):
    """A chosen destination, with the allocation request claimed on it."""

    def __init__(self, service_host, nodename, compute_node_uuid, limits,
                 allocation_request, allocation_request_version):
        self.service_host = service_host
        self.nodename = nodename
        self.compute_node_uuid = compute_node_uuid
        self.limits = limits
        self.allocation_request = allocation_request
        self.allocation_request_version = allocation_request_version

    @classmethod
    def from_host_state(cls, host_state, allocation_request=None,
                        allocation_request_version=None):
        return cls(host_state.host, host_state.nodename, host_state.uuid,
                   host_state.limits, allocation_request,
                   allocation_request_version)

    def to_dict(self):
        """The legacy host dict (``host``, ``nodename``, ``limits``)."""
        return {'host': self.service_host, 'nodename': self.nodename,
                'limits': self.limits}

    def __repr__(self):
        return 'Selection(%s, %s)' % (self.service_host, self.nodename)


class SchedulerManager(object):
    """Chooses destinations for instances.

    :param placement_client: a ``SchedulerReportClient`` (default: one
        built from ``[placement]``)
    :param host_manager: a
        :class:`~shelvefix.scheduler.host_manager.HostManager`
    """

    def __init__(self, placement_client=None, host_manager=None):
        self.placement_client = (placement_client or
                                 report.SchedulerReportClient())
        self.host_manager = host_manager or host_manager_mod.HostManager()

    def select_destinations(self, context, request_spec=None,
                            filter_properties=None, spec_obj=_SENTINEL,
                            instance_uuids=None, return_objects=False,
                            return_alternates=False):
        """Choose a host for each instance and claim it in placement.

        :param request_spec: the request spec, when ``spec_obj`` is not
            given (nova's older calling convention)
        :param filter_properties: nova's signature; unused
        :param spec_obj: the
            :class:`~shelvefix.scheduler.request_spec.RequestSpec`
        :param instance_uuids: the instances to place (claims are made for
            them); None places without claiming
        :param return_objects: return ``[[Selection]]`` (one list per
            instance) instead of legacy host dicts
        :param return_alternates: with ``return_objects``, each
            instance's list holds after its claimed host the other hosts
            that had candidates, most preferred first, unclaimed (their
            allocation request kept for a reschedule to claim)
        :raises NoValidHost: no host fits, or no host could be claimed
        :raises AllocationUpdateConflict: a claim hit a consumer
            generation conflict
        """
        if spec_obj is _SENTINEL:
            spec_obj = request_spec
        if utils.request_is_rebuild(spec_obj):
            raise exception.NoValidHost(
                reason='rebuild scheduling is not modelled')
        request_filter.process_reqspec(context, spec_obj)
        resources = utils.resources_from_request_spec(
            context, spec_obj, self.host_manager)
        try:
            alloc_reqs, provider_summaries, version = (
                self.placement_client.get_allocation_candidates(
                    context, resources))
        except exception.AllocationCandidatesRetrievalFailed as e:
            raise exception.NoValidHost(reason=str(e)) from e
        if not alloc_reqs:
            LOG.info('Got no allocation candidates from the Placement API. '
                     'This could be due to insufficient resources or a '
                     'temporary occurrence as compute nodes start up.')
            raise exception.NoValidHost(reason='')
        by_rp = {}
        for alloc_req in alloc_reqs:
            for rp_uuid in alloc_req['allocations']:
                by_rp.setdefault(rp_uuid, []).append(alloc_req)
        host_lists = self._schedule(context, spec_obj, instance_uuids,
                                    by_rp, provider_summaries, version)
        if return_objects:
            return [host_list if return_alternates else host_list[:1]
                    for host_list in host_lists]
        return [host_list[0].to_dict() for host_list in host_lists]

    def _schedule(self, context, spec_obj, instance_uuids, alloc_reqs_by_rp,
                  provider_summaries, allocation_request_version):
        elevated = context.elevated()
        hosts = self.host_manager.get_host_states_by_uuids(
            context, list(provider_summaries), spec_obj,
            provider_summaries=provider_summaries)
        hosts = self.host_manager.get_filtered_hosts(hosts, spec_obj)
        for host in hosts:
            host.allocation_candidates = alloc_reqs_by_rp.get(host.uuid, [])
        hosts = self.host_manager.get_weighed_hosts(hosts, spec_obj)
        uuids = instance_uuids or [None]
        selections, claimed = [], []
        for instance_uuid in uuids:
            chosen = None
            for host in hosts:
                if not host.allocation_candidates:
                    continue
                alloc_req = host.allocation_candidates[0]
                if instance_uuid is None or self._claim(
                        elevated, spec_obj, instance_uuid, alloc_req,
                        allocation_request_version, claimed):
                    chosen = host
                    break
            if chosen is None:
                self._cleanup_allocations(elevated, claimed)
                raise exception.NoValidHost(
                    reason='Unable to successfully claim against any host.')
            if instance_uuid is not None:
                claimed.append(instance_uuid)
            selections.append([Selection.from_host_state(
                chosen, alloc_req, allocation_request_version)] + [
                Selection.from_host_state(
                    host, host.allocation_candidates[0],
                    allocation_request_version)
                for host in hosts
                if host is not chosen and host.allocation_candidates])
        return selections

    def _claim(self, context, spec_obj, instance_uuid, alloc_req, version,
               claimed):
        """True if claimed; False if this host could not be claimed."""
        try:
            return utils.claim_resources(
                context, self.placement_client, spec_obj, instance_uuid,
                alloc_req, allocation_request_version=version)
        except exception.ConsumerGenerationConflict:
            self._cleanup_allocations(context, claimed)
            raise
        except exception.AllocationUpdateFailed as e:
            LOG.debug('Claim for instance %s failed, trying the next '
                      'host: %s', instance_uuid, e)
            return False

    def _cleanup_allocations(self, context, instance_uuids):
        for uuid in instance_uuids:
            self.placement_client.delete_allocation_for_instance(
                context, uuid, force=True)
