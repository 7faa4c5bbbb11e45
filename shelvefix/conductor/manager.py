"""The conductor's side of an unshelve and an evacuation: schedule, cast.

``ComputeTaskManager.unshelve_instance`` follows nova's for an offloaded
server: the scheduler chooses and claims a destination, and the conductor
casts ``unshelve_instance`` to that host. If no host fits, the task state
is cleared and the request ends quietly (the server stays offloaded); on
any other failure the task state is cleared and the error raised.
``rebuild_instance`` does the same for an evacuation (see
:mod:`shelvefix.compute.evacuate`); a resize's conductor task is
:class:`shelvefix.conductor.migrate.MigrationTask`.
"""

from oslo_log import log as logging

from shelvefix.compute import task_states
from shelvefix.compute import vm_states
from shelvefix import exception
from shelvefix.objects import migration as migration_obj

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

    def rebuild_instance(self, context, instance, orig_image_ref, image_ref,
                         injected_files, new_pass, orig_sys_metadata, bdms,
                         recreate, on_shared_storage, preserve_ephemeral=False,
                         host=None, request_spec=None, migration=None):
        """Evacuate ``instance``: schedule a destination, cast the rebuild.

        Only an evacuation (``recreate``) with the API's migration record
        is modelled. The scheduler's claim adds the destination to what the
        instance holds on its (down) host. If scheduling fails the
        migration is saved as ``error``, the instance goes to ``ERROR``
        with no task, and the error is raised.
        """
        if not recreate or migration is None:
            raise exception.Invalid(
                reason='only an evacuation with its migration is rebuilt '
                       'here')
        try:
            request_spec.ensure_project_and_user_id(instance)
            selection = self._schedule_instances(
                context, request_spec, [instance.uuid])[0][0]
        except Exception as exc:
            LOG.warning('Evacuation of instance %(uuid)s failed to '
                        'schedule: %(error)s',
                        {'uuid': instance.uuid, 'error': exc})
            migration.status = migration_obj.ERROR
            migration.save()
            instance.vm_state = vm_states.ERROR
            instance.task_state = None
            instance.save()
            raise
        self.compute_rpcapi.rebuild_instance(
            context, instance, new_pass, injected_files, image_ref,
            orig_image_ref, orig_sys_metadata, bdms, recreate,
            on_shared_storage, selection.service_host, selection.nodename,
            preserve_ephemeral, migration, selection.limits, request_spec)
