"""The compute manager's evacuation: rebuild elsewhere, clean up at home.

A host is down; the conductor records an ``evacuation`` migration
(``accepted``) and the scheduler claims the destination for the instance on
top of what it holds on the source (placement then holds both for one
consumer). The destination's ``rebuild_instance`` claims the node
(``rebuild_claim``), rebuilds the guest, and only then makes the instance
its own (``finish_evacuation``: host and node saved, migration ``done``).
If the rebuild fails it gives back its own node's allocations and the
migration is ``failed``.

When the source's compute service starts again, ``init_host`` finds the
evacuations away from it (``accepted``, ``pre-migrating`` or ``done``) and
destroys the guests still on its hypervisor, so that none runs twice
(``_destroy_evacuated_instances``). For an evacuation that is ``done`` it
also removes the source node from the instance's allocations and marks
the migration ``completed``. One still in flight is left to its
destination, which ends it (``done`` or ``failed``); the source's next
start cleans it up. nova cleans those up too, and it races the
evacuation: the source's write can make the scheduler's claim of the
destination fail with a consumer generation conflict (the server then
holds nothing anywhere), and ``completed`` saved over a migration still in
progress makes the destination's audit stop counting the server it is
rebuilding (found by ``shelvefix race --scenario evacuate``).

The mixin expects the compute manager's collaborators and ``rt``.
"""

from oslo_log import log as logging

from shelvefix.compute import decorators
from shelvefix.compute import task_states
from shelvefix.compute import vm_states
from shelvefix import context
from shelvefix import exception
from shelvefix.objects import instance as instance_obj
from shelvefix.objects import migration as migration_obj

LOG = logging.getLogger(__name__)

#: The statuses of an evacuation whose guest its source destroys at
#: start-up.
EVACUATION_STATUSES = [migration_obj.ACCEPTED, migration_obj.PRE_MIGRATING,
                       migration_obj.DONE]
#: Those of an evacuation whose allocations on the source it also removes:
#: finished ones only (nova: all of the above).
FINISHED_EVACUATION_STATUSES = [migration_obj.DONE]


class EvacuateMixin(object):
    """``rebuild_instance`` (evacuate) and the source's start-up clean-up."""

    def _set_migration_status(self, migration, status):
        if migration is None:
            return
        migration.status = status
        try:
            migration.save()
        except Exception:
            LOG.exception('Could not save migration %s as %s',
                          migration.uuid, status)

    @decorators.reverts_task_state
    def rebuild_instance(self, context, instance, orig_image_ref, image_ref,
                         injected_files, new_pass, orig_sys_metadata, bdms,
                         recreate, on_shared_storage, preserve_ephemeral,
                         migration, scheduled_node, limits, request_spec,
                         accel_uuids=None, reimage_boot_volume=False,
                         target_state=None):
        """Rebuild an evacuated instance on this host (``recreate``).

        Only the evacuation is modelled: ``recreate`` must be True.
        """
        if not recreate:
            raise exception.Invalid(
                reason='only an evacuation (recreate=True) is rebuilt here')
        if scheduled_node is None:
            scheduled_node = self.host
        allocations = self.reportclient.get_allocations_for_consumer(
            context, instance.uuid)
        with self._error_out_instance_on_exception(context, instance):
            try:
                with self.rt.rebuild_claim(context, instance, scheduled_node,
                                           allocations, limits=limits,
                                           migration=migration):
                    self._do_rebuild_instance(context, instance, image_ref,
                                              allocations)
            except Exception:
                LOG.exception('Evacuation of instance %s to %s failed',
                              instance.uuid, self.host)
                self._set_migration_status(migration, migration_obj.FAILED)
                self.rt.delete_allocation_for_evacuated_instance(
                    context, instance, scheduled_node,
                    node_type='destination')
                raise
            self.rt.finish_evacuation(instance, scheduled_node, migration)

    def _do_rebuild_instance(self, context, instance, image_ref,
                             allocations):
        self.network_api.setup_networks_on_host(context, instance, self.host)
        self.network_api.setup_instance_network_on_host(context, instance,
                                                        self.host)
        network_info = self.network_api.get_instance_nw_info(context,
                                                             instance)
        instance.task_state = task_states.REBUILD_SPAWNING
        instance.save(expected_task_state=[task_states.REBUILDING])
        self.driver.rebuild(context, instance, image_ref,
                            allocations=allocations,
                            network_info=network_info)
        # Saved by finish_evacuation, with this host (see there).
        self._update_instance_after_spawn(instance, vm_state=vm_states.ACTIVE)

    # -- the source, starting again -------------------------------------------

    def init_host(self, service_ref=None):
        """Start-up: clean up after evacuations away from this host."""
        self._destroy_evacuated_instances(context.get_admin_context(), {})

    def _destroy_evacuated_instances(self, context, node_cache):
        """Destroy evacuated guests here; drop this node from allocations.

        :param node_cache: ``{node name: provider uuid}`` of this host's
            nodes (empty: the resource tracker's providers)
        :returns: ``{instance uuid: migration}`` of the evacuations seen
        """
        store = self.rt.migration_store
        evacuations = {
            migration.instance_uuid: migration for migration in
            migration_obj.MigrationList.get_by_filters(store, {
                'source_compute': self.host,
                'status': EVACUATION_STATUSES,
                'migration_type': migration_obj.EVACUATION})}
        for uuid, migration in sorted(evacuations.items()):
            try:
                instance = instance_obj.Instance.get_by_uuid(self.rt.store,
                                                             uuid)
            except exception.InstanceNotFound:
                continue
            LOG.info('Destroying instance %s: it was evacuated from this '
                     'host', uuid)
            self.driver.destroy(context, instance, [], {})
            if migration.status not in FINISHED_EVACUATION_STATUSES:
                LOG.info('Evacuation of instance %(uuid)s is in progress '
                         '(%(status)s): its destination ends it',
                         {'uuid': uuid, 'status': migration.status})
                continue
            provider = (node_cache.get(migration.source_node) or
                        self.rt.compute_nodes.get(migration.source_node))
            if provider is None:
                LOG.error('Cannot clean the allocations of evacuated '
                          'instance %(uuid)s: source node %(node)s is not '
                          'known', {'uuid': uuid,
                                    'node': migration.source_node})
                continue
            if (instance.vm_state != vm_states.DELETED and
                    not self.reportclient.
                    remove_provider_tree_from_instance_allocation(
                        context, uuid, provider)):
                LOG.error('Failed to clean the allocations of evacuated '
                          'instance %(uuid)s on the source node %(rp)s',
                          {'uuid': uuid, 'rp': provider})
            migration.status = migration_obj.COMPLETED
            migration.save()
        return evacuations
