"""The conductor's side of an unshelve and an evacuation: schedule, cast.

``ComputeTaskManager.unshelve_instance`` follows nova's for an offloaded
server: the scheduler chooses and claims a destination, and the conductor
casts ``unshelve_instance`` to that host. If no host fits, the task state
is cleared and the request ends quietly (the server stays offloaded); on
any other failure the task state is cleared and the error raised.
``rebuild_instance`` does the same for an evacuation (see
:mod:`shelvefix.compute.evacuate`); a resize's conductor task is
:class:`shelvefix.conductor.migrate.MigrationTask`, a live migration's
:class:`shelvefix.conductor.live_migrate.LiveMigrationTask`
(``live_migrate_instance``), a build's ``schedule_and_build_instances``
and its reschedule :mod:`shelvefix.conductor.build`'s, a cross-cell
resize's revert and confirm :mod:`shelvefix.conductor.cross_cell`'s.
"""

from oslo_log import log as logging
from oslo_utils import uuidutils

from shelvefix.compute import task_states
from shelvefix.compute import vm_states
from shelvefix.conductor import build
from shelvefix.conductor import cross_cell
from shelvefix.conductor import live_migrate
from shelvefix import exception
from shelvefix.objects import migration as migration_obj

LOG = logging.getLogger(__name__)


class ComputeTaskManager(build.BuildTaskMixin,
                         cross_cell.CrossCellMixin):
    """Runs the long tasks the API hands off.

    :param query_client: the scheduler (``select_destinations``), e.g. a
        :class:`~shelvefix.scheduler.manager.SchedulerManager`
    :param compute_rpcapi: a
        :class:`~shelvefix.compute.rpcapi.ComputeAPI`
    :param report_client: a ``SchedulerReportClient`` (a live migration
        moves allocations)
    :param migration_store: where a live migration's record is saved
    :param compute_nodes: ``{node name: provider uuid}`` of the compute
        nodes a live migration may leave
    :param servicegroup_api: ``service_is_up(host)``, or None (every
        service up)
    """

    #: The errors of a live migration that leave the server as it was
    #: (nova's conductor lists more; these are those raised here).
    LIVE_MIGRATION_REFUSALS = (exception.NoValidHost, exception.Invalid,
                               exception.MigrationPreCheckError)

    def __init__(self, query_client, compute_rpcapi, report_client=None,
                 migration_store=None, compute_nodes=None,
                 servicegroup_api=None):
        self.query_client = query_client
        self.compute_rpcapi = compute_rpcapi
        self.report_client = report_client
        self.migration_store = migration_store
        self.compute_nodes = dict(compute_nodes or {})
        self.servicegroup_api = servicegroup_api

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

    def live_migrate_instance(self, context, instance, scheduler_hint,
                              block_migration, disk_over_commit, request_spec,
                              migration_uuid=None):
        """Live-migrate ``instance``, which the API set to ``MIGRATING``.

        Records the migration (``accepted``, a ``live-migration``), then
        runs a :class:`~shelvefix.conductor.live_migrate.LiveMigrationTask`.
        If the task refuses (no host, a failed check), the task state is
        cleared and the migration is ``error``; on any other failure the
        server goes to ``ERROR`` too. Either way the error is raised.

        :param scheduler_hint: ``{'host': forced destination or None}``
        :param migration_uuid: the migration's uuid (default: a new one)
        :returns: the migration
        """
        migration = migration_obj.Migration.create(
            self.migration_store,
            migration_uuid or uuidutils.generate_uuid(),
            instance_uuid=instance.uuid, source_compute=instance.host,
            source_node=instance.node,
            dest_compute=scheduler_hint.get('host'),
            migration_type=migration_obj.LIVE_MIGRATION,
            status=migration_obj.ACCEPTED, old_flavor=instance.flavor,
            new_flavor=instance.flavor)
        task = self._build_live_migrate_task(
            context, instance, scheduler_hint.get('host'), block_migration,
            disk_over_commit, migration, request_spec)
        try:
            task.execute()
        except self.LIVE_MIGRATION_REFUSALS as ex:
            LOG.warning('Live migration of instance %(uuid)s refused: '
                        '%(error)s', {'uuid': instance.uuid, 'error': ex})
            self._end_live_migration(instance, migration, instance.vm_state)
            raise
        except Exception:
            LOG.exception('Live migration of instance %s failed',
                          instance.uuid)
            self._end_live_migration(instance, migration, vm_states.ERROR)
            raise
        return migration

    def _end_live_migration(self, instance, migration, vm_state):
        instance.vm_state = vm_state
        instance.task_state = None
        instance.save(expected_task_state=[task_states.MIGRATING])
        migration.status = migration_obj.ERROR
        migration.save()

    def _build_live_migrate_task(self, context, instance, destination,
                                 block_migration, disk_over_commit, migration,
                                 request_spec=None):
        return live_migrate.LiveMigrationTask(
            context, instance, destination, block_migration,
            disk_over_commit, migration, self.compute_rpcapi,
            self.servicegroup_api, self.query_client, self.report_client,
            request_spec, source_provider=self.compute_nodes.get(
                instance.node), compute_nodes=self.compute_nodes)
