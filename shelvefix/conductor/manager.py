"""The conductor's side of an unshelve: schedule, then cast to the host.

``ComputeTaskManager.unshelve_instance`` follows nova's for an offloaded
server: the scheduler chooses and claims a destination, and the conductor
casts ``unshelve_instance`` to that host. If no host fits, the task state
is cleared and the request ends quietly (the server stays offloaded); on
any other failure the task state is cleared and the error raised.
"""

from oslo_log import log as logging

from shelvefix.compute import task_states
from shelvefix.compute import vm_states
from shelvefix import exception

LOG = logging.getLogger(__name__)


class ComputeTaskManager(object):
    """Runs the long tasks the API hands off.

    :param query_client: the scheduler (``select_destinations``), e.g. a
        :class:`~shelvefix.scheduler.manager.SchedulerManager`
    :param compute_rpcapi: a
        :class:`~shelvefix.compute.rpcapi.ComputeAPI`
    """

    def __init__(self, query_client, compute_rpcapi):
        self.query_client = query_client
        self.compute_rpcapi = compute_rpcapi

    def _schedule_instances(self, context, request_spec, instance_uuids=None,
                            return_alternates=False):
        return self.query_client.select_destinations(
            context, request_spec, None, spec_obj=request_spec,
            instance_uuids=instance_uuids, return_objects=True,
            return_alternates=return_alternates)

    def unshelve_instance(self, context, instance, request_spec=None):
        """Unshelve ``instance``, which the API set to ``UNSHELVING``.

        :param request_spec: the
            :class:`~shelvefix.scheduler.request_spec.RequestSpec`
        :raises: what scheduling raised other than ``NoValidHost``, after
            clearing the task state
        """
        if instance.vm_state == vm_states.SHELVED:
            # Still on its host: only powered off, nothing to schedule.
            instance.task_state = task_states.POWERING_ON
            instance.save(expected_task_state=task_states.UNSHELVING)
            self.compute_rpcapi.start_instance(context, instance)
            return
        if instance.vm_state != vm_states.SHELVED_OFFLOADED:
            LOG.error('Unshelve attempted on instance %s in vm_state %s',
                      instance.uuid, instance.vm_state)
            return
        try:
            filter_properties = request_spec.to_legacy_filter_properties_dict()
            request_spec.ensure_project_and_user_id(instance)
            host_lists = self._schedule_instances(
                context, request_spec, [instance.uuid],
                return_alternates=False)
            selection = host_lists[0][0]
            host, node = selection.service_host, selection.nodename
            LOG.debug('Unshelving instance %(uuid)s on %(host)s (%(node)s)',
                      {'uuid': instance.uuid, 'host': host, 'node': node})
            filter_properties['limits'] = selection.limits
            self.compute_rpcapi.unshelve_instance(
                context, instance, host, request_spec, image=None,
                filter_properties=filter_properties, node=node,
                accel_uuids=[])
        except exception.NoValidHost:
            instance.task_state = None
            instance.save()
            LOG.warning('No valid host found for unshelve instance %s',
                        instance.uuid)
            return
        except Exception as exc:
            LOG.error('Unshelve of instance %(uuid)s failed to schedule: '
                      '%(error)s', {'uuid': instance.uuid, 'error': exc})
            instance.task_state = None
            instance.save()
            raise
