"""The conductor's side of a server's build, and of its reschedule.

:class:`BuildTaskMixin` is mixed into
:class:`~shelvefix.conductor.manager.ComputeTaskManager`. Its
``schedule_and_build_instances`` follows nova's for a boot the API
accepted (a build request and an instance mapping with no cell, in the
API database):

1. the scheduler chooses a host and claims it in placement, and keeps the
   other hosts with room as *alternates* (unclaimed); if it cannot, the
   server is buried in cell0 (``ERROR``) and its build request goes;
2. the build request is read once more: if the user deleted the server
   meanwhile, nothing is created, the mapping goes and the scheduler's
   claim is freed;
3. the server is created in the cell, the mapping points at the cell, and
   the build request is destroyed; if it is gone by then (the user's
   delete got there first), the server's record is destroyed and the
   build stops (the delete frees what the scheduler claimed);
4. ``build_and_run_instance`` is cast to the chosen host with the
   alternates.

``build_instances`` is the reschedule a compute host casts back when it
could not build (:mod:`shelvefix.compute.build`): the alternates are
claimed in turn, and the build is cast to the first one placement lets
claim; with none left the server goes to ``ERROR``.

The mixin expects ``query_client``, ``compute_rpcapi`` and
``report_client`` of the manager, and the databases its attributes name
(set by whoever wires the conductor).
"""

from oslo_log import log as logging

from shelvefix.compute import task_states
from shelvefix.compute import vm_states
from shelvefix import exception
from shelvefix.objects import build_request as build_request_obj
from shelvefix.objects import instance as instance_obj
from shelvefix.scheduler import utils as scheduler_utils

LOG = logging.getLogger(__name__)

CELL0 = build_request_obj.CELL0
CELL1 = build_request_obj.CELL1
#: How many hosts a build may try (nova's ``[scheduler] max_attempts``).
MAX_ATTEMPTS = 3


def populate_retry(filter_properties, instance_uuid):
    """Start a build's retry record, as nova's scheduler utils do.

    With one attempt allowed there is no retry record: a failed build is
    not rescheduled.
    """
    if MAX_ATTEMPTS == 1:
        filter_properties.pop('retry', None)
        return
    retry = filter_properties.setdefault('retry', {'num_attempts': 0,
                                                   'hosts': []})
    retry['num_attempts'] += 1
    if retry['num_attempts'] > MAX_ATTEMPTS:
        raise exception.MaxRetriesExceeded(
            reason='instance %s tried %d hosts'
                   % (instance_uuid, MAX_ATTEMPTS))


def populate_filter_properties(filter_properties, selection):
    """Record the chosen host in the retry and its limits."""
    retry = filter_properties.get('retry')
    if retry is not None:
        retry['hosts'].append([selection.service_host, selection.nodename])
    filter_properties['limits'] = selection.limits


class BuildTaskMixin(object):
    """``schedule_and_build_instances`` and ``build_instances``.

    :ivar build_requests: the API database's
        :class:`~shelvefix.objects.build_request.BuildRequestStore`
    :ivar instance_mappings: its
        :class:`~shelvefix.objects.build_request.InstanceMappingStore`
    :ivar cells: ``{cell name: InstanceStore}`` (:data:`CELL1` holds every
        compute host; :data:`CELL0` the servers nova could not schedule)
    """

    build_requests = None
    instance_mappings = None
    cells = None

    def schedule_and_build_instances(self, context, build_requests,
                                     request_specs, image, admin_password,
                                     injected_files, requested_networks,
                                     block_device_mapping, tags=None):
        """Schedule and start the build of the servers the API accepted.

        :param build_requests: their
            :class:`~shelvefix.objects.build_request.BuildRequest`
        :param request_specs: their request specs, in the same order
        """
        instance_uuids = [spec.instance_uuid for spec in request_specs]
        try:
            host_lists = self._schedule_instances(
                context, request_specs[0], instance_uuids,
                return_alternates=True)
        except Exception as exc:
            LOG.exception('Failed to schedule instances')
            self._bury_in_cell0(context, request_specs[0], exc,
                                build_requests=build_requests)
            return
        instances = []
        for build_request, host_list in zip(build_requests, host_lists):
            instances.append(self._create_in_cell(context, build_request,
                                                  host_list[0]))
        for build_request, request_spec, host_list, instance in zip(
                build_requests, request_specs, host_lists, instances):
            if instance is None:
                continue
            host, alternates = host_list[0], list(host_list[1:])
            filter_props = request_spec.to_legacy_filter_properties_dict()
            populate_retry(filter_props, instance.uuid)
            populate_filter_properties(filter_props, host)
            self._map_instance_to_cell(context, instance, CELL1)
            if not self._delete_build_request(context, build_request,
                                              instance):
                continue
            LOG.debug('Building instance %(uuid)s on %(host)s; alternates '
                      '%(alts)s', {'uuid': instance.uuid,
                                   'host': host.service_host,
                                   'alts': [alt.service_host
                                            for alt in alternates]})
            self.compute_rpcapi.build_and_run_instance(
                context, instance=instance, host=host.service_host,
                image=image, request_spec=request_spec,
                filter_properties=filter_props,
                admin_password=admin_password, injected_files=injected_files,
                requested_networks=requested_networks, security_groups=[],
                block_device_mapping=block_device_mapping,
                node=host.nodename, limits=host.limits, host_list=alternates)

    def _create_in_cell(self, context, build_request, host):
        """The server's record in the cell, or None if it was deleted.

        The build request is read once more first: a user's delete that
        destroyed it means no server to build; its mapping goes and the
        scheduler's claim is freed here.
        """
        uuid = build_request.instance_uuid
        try:
            build_request_obj.BuildRequest.get_by_instance_uuid(
                self.build_requests, uuid)
        except exception.BuildRequestNotFound:
            LOG.debug('The build request of instance %s was deleted while '
                      'it was scheduled', uuid)
            try:
                build_request_obj.InstanceMapping.get_by_instance_uuid(
                    self.instance_mappings, uuid).destroy()
            except exception.InstanceMappingNotFound:
                pass
            self.report_client.delete_allocation_for_instance(
                context, uuid, force=True)
            return None
        LOG.debug('Creating instance %(uuid)s for host %(host)s',
                  {'uuid': uuid, 'host': host.service_host})
        return instance_obj.Instance.create(self.cells[CELL1], uuid, **{
            field: value for field, value in build_request.instance.items()
            if field != 'uuid'})

    def _map_instance_to_cell(self, context, instance, cell):
        """Point the server's instance mapping at ``cell``."""
        mapping = build_request_obj.InstanceMapping.get_by_instance_uuid(
            self.instance_mappings, instance.uuid)
        mapping.cell = cell
        mapping.save()

    def _delete_build_request(self, context, build_request, instance):
        """Destroy the build request; False if the user's delete did.

        Then the server's record just created in the cell goes too.
        """
        try:
            build_request.destroy()
        except exception.BuildRequestNotFound:
            LOG.debug('Instance %s was deleted while it was built',
                      instance.uuid)
            try:
                instance.destroy()
            except exception.InstanceNotFound:
                pass
            return False
        return True

    def _bury_in_cell0(self, context, request_spec, exc, build_requests=()):
        """Servers the scheduler found no host for: ``ERROR`` in cell0."""
        for build_request in build_requests:
            uuid = build_request.instance_uuid
            fields = dict(build_request.instance, vm_state=vm_states.ERROR,
                          task_state=None)
            fields.pop('uuid')
            instance = instance_obj.Instance.create(self.cells[CELL0], uuid,
                                                    **fields)
            self._map_instance_to_cell(context, instance, CELL0)
            try:
                build_request.destroy()
            except exception.BuildRequestNotFound:
                # Deleted meanwhile: the record in cell0 goes too.
                instance.destroy()
            LOG.warning('Instance %(uuid)s buried in cell0: %(error)s',
                        {'uuid': uuid, 'error': exc})

    # -- the reschedule a compute host casts back

    def build_instances(self, context, instances, image, filter_properties,
                        admin_password, injected_files, requested_networks,
                        security_groups, block_device_mapping,
                        legacy_bdm=True, request_spec=None, host_lists=None):
        """Build ``instances`` again on their alternates (a reschedule).

        Only the reschedule (``host_lists`` given) is modelled: each
        alternate is claimed in placement in turn; the build is cast to
        the first one claimed. With none left (or a claim failing other
        than by placement's refusal) the server goes to ``ERROR``.
        """
        if host_lists is None:
            raise exception.Invalid(reason='only a reschedule, with its '
                                           'alternate hosts, is built here')
        elevated = context.elevated()
        for instance, host_list in zip(instances, host_lists):
            host_list = list(host_list)
            try:
                populate_retry(filter_properties, instance.uuid)
                host = self._claim_alternate(elevated, request_spec,
                                             instance, host_list)
            except Exception as exc:
                LOG.warning('Rescheduling instance %(uuid)s failed: '
                            '%(error)s', {'uuid': instance.uuid,
                                          'error': exc})
                self._cleanup_when_reschedule_fails(context, instance)
                continue
            try:
                # Saved as nova's conductor saves it: it tells if the
                # server was deleted meanwhile.
                instance.save()
            except exception.InstanceNotFound:
                LOG.debug('Instance %s deleted during its reschedule',
                          instance.uuid)
                self.report_client.delete_allocation_for_instance(
                    context, instance.uuid, force=True)
                continue
            populate_filter_properties(filter_properties, host)
            self.compute_rpcapi.build_and_run_instance(
                context, instance=instance, host=host.service_host,
                image=image, request_spec=request_spec,
                filter_properties=filter_properties,
                admin_password=admin_password, injected_files=injected_files,
                requested_networks=requested_networks,
                security_groups=security_groups,
                block_device_mapping=block_device_mapping,
                node=host.nodename, limits=host.limits, host_list=host_list)

    def _claim_alternate(self, context, request_spec, instance, host_list):
        """Claim the first alternate placement lets claim; pop it.

        :raises MaxRetriesExceeded: no alternate left
        """
        while host_list:
            host = host_list.pop(0)
            try:
                scheduler_utils.claim_resources(
                    context, self.report_client, request_spec, instance.uuid,
                    host.allocation_request,
                    host.allocation_request_version)
            except exception.AllocationUpdateFailed as e:
                LOG.info('Alternate host %(host)s refused instance '
                         '%(uuid)s: %(error)s',
                         {'host': host.service_host, 'uuid': instance.uuid,
                          'error': e})
                continue
            return host
        raise exception.MaxRetriesExceeded(
            reason='exhausted all hosts available for retrying the build '
                   'of instance %s' % instance.uuid)

    def _cleanup_when_reschedule_fails(self, context, instance):
        """The server goes to ``ERROR``, no task, holding nothing."""
        instance.vm_state = vm_states.ERROR
        instance.task_state = None
        try:
            instance.save(expected_task_state=[task_states.SCHEDULING])
        except exception.InstanceNotFound:
            LOG.debug('Instance %s deleted during its reschedule',
                      instance.uuid)
