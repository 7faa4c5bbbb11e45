"""The compute service's RPC API, as the conductor calls it.

``ComputeAPI`` mirrors the names and signatures of
``nova.compute.rpcapi.ComputeAPI`` for what the unshelve, move and delete
paths cast; the messages travel over a :class:`shelvefix.rpc.Transport`
to the compute host's :class:`shelvefix.rpc.Server`. A live migration
also *calls* (:meth:`shelvefix.rpc.Transport.call`): the caller waits for
the other host's answer.
"""

TOPIC = 'compute'


class ComputeAPI(object):
    """Client side of the compute service.

    :param transport: the :class:`~shelvefix.rpc.Transport` shared with the
        compute services
    """

    def __init__(self, transport):
        self.transport = transport

    def unshelve_instance(self, ctxt, instance, host, request_spec,
                          image=None, filter_properties=None, node=None,
                          accel_uuids=None):
        """Cast ``unshelve_instance`` to ``host``; returns at once."""
        self.transport.cast(
            TOPIC, host, 'unshelve_instance', ctxt, instance=instance,
            image=image, filter_properties=filter_properties, node=node,
            request_spec=request_spec, accel_uuids=accel_uuids)

    def build_and_run_instance(self, ctxt, instance, host, image,
                               request_spec, filter_properties,
                               admin_password=None, injected_files=None,
                               requested_networks=None,
                               security_groups=None,
                               block_device_mapping=None, node=None,
                               limits=None, host_list=None,
                               accel_uuids=None):
        """Cast ``build_and_run_instance`` to ``host`` (a build's)."""
        self.transport.cast(
            TOPIC, host, 'build_and_run_instance', ctxt, instance=instance,
            image=image, request_spec=request_spec,
            filter_properties=filter_properties,
            admin_password=admin_password, injected_files=injected_files,
            requested_networks=requested_networks,
            security_groups=security_groups,
            block_device_mapping=block_device_mapping, node=node,
            limits=limits, host_list=host_list, accel_uuids=accel_uuids)

    def set_host_enabled(self, ctxt, host, enabled):
        """Call ``host`` to set its nodes' status trait; its answer."""
        return self.transport.call(TOPIC, host, 'set_host_enabled', ctxt,
                                   enabled=enabled)

    def start_instance(self, ctxt, instance):
        """Cast ``start_instance`` to the instance's host."""
        self.transport.cast(TOPIC, instance.host, 'start_instance', ctxt,
                            instance=instance)

    def terminate_instance(self, ctxt, instance, bdms):
        """Cast ``terminate_instance`` to the instance's host."""
        self.transport.cast(TOPIC, instance.host, 'terminate_instance', ctxt,
                            instance=instance, bdms=bdms)

    # -- moves: each cast goes to the host that runs the next step

    def prep_resize(self, ctxt, instance, image, flavor, host, migration,
                    request_spec, filter_properties, node, clean_shutdown,
                    host_list=None):
        """Cast ``prep_resize`` to the destination ``host``."""
        self.transport.cast(
            TOPIC, host, 'prep_resize', ctxt, image=image, instance=instance,
            flavor=flavor, request_spec=request_spec,
            filter_properties=filter_properties, node=node,
            clean_shutdown=clean_shutdown, migration=migration,
            host_list=host_list)

    def resize_instance(self, ctxt, instance, migration, image, flavor,
                        request_spec, clean_shutdown=True):
        """Cast ``resize_instance`` to the migration's source."""
        self.transport.cast(
            TOPIC, migration.source_compute, 'resize_instance', ctxt,
            instance=instance, image=image, migration=migration,
            flavor=flavor, clean_shutdown=clean_shutdown,
            request_spec=request_spec)

    def finish_resize(self, ctxt, instance, migration, image, disk_info,
                      host, request_spec):
        """Cast ``finish_resize`` to the destination ``host``."""
        self.transport.cast(
            TOPIC, host, 'finish_resize', ctxt, disk_info=disk_info,
            image=image, instance=instance, migration=migration,
            request_spec=request_spec)

    def confirm_resize(self, ctxt, instance, migration, host, cast=True):
        """Cast ``confirm_resize`` to the source ``host``."""
        self.transport.cast(TOPIC, host, 'confirm_resize', ctxt,
                            instance=instance, migration=migration)

    def revert_resize(self, ctxt, instance, migration, host, request_spec):
        """Cast ``revert_resize`` to the destination ``host``."""
        self.transport.cast(TOPIC, host, 'revert_resize', ctxt,
                            instance=instance, migration=migration,
                            request_spec=request_spec)

    def finish_revert_resize(self, ctxt, instance, migration, host,
                             request_spec):
        """Cast ``finish_revert_resize`` to the source ``host``."""
        self.transport.cast(TOPIC, host, 'finish_revert_resize', ctxt,
                            instance=instance, migration=migration,
                            request_spec=request_spec)

    def rebuild_instance(self, ctxt, instance, new_pass, injected_files,
                         image_ref, orig_image_ref, orig_sys_metadata, bdms,
                         recreate, on_shared_storage, host, node,
                         preserve_ephemeral, migration, limits,
                         request_spec, accel_uuids=None,
                         reimage_boot_volume=False, target_state=None):
        """Cast ``rebuild_instance`` to ``host`` (an evacuation's target)."""
        self.transport.cast(
            TOPIC, host, 'rebuild_instance', ctxt, instance=instance,
            new_pass=new_pass, injected_files=injected_files,
            image_ref=image_ref, orig_image_ref=orig_image_ref,
            orig_sys_metadata=orig_sys_metadata, bdms=bdms,
            recreate=recreate, on_shared_storage=on_shared_storage,
            preserve_ephemeral=preserve_ephemeral, migration=migration,
            scheduled_node=node, limits=limits, request_spec=request_spec,
            accel_uuids=accel_uuids,
            reimage_boot_volume=reimage_boot_volume,
            target_state=target_state)

    # -- a cross-cell resize's end: the conductor calls each host

    def confirm_snapshot_based_resize_at_source(self, ctxt, instance,
                                                migration):
        """Call the migration's source: clean up after the confirm."""
        return self.transport.call(
            TOPIC, migration.source_compute,
            'confirm_snapshot_based_resize_at_source', ctxt,
            instance=instance, migration=migration)

    def revert_snapshot_based_resize_at_dest(self, ctxt, instance,
                                             migration):
        """Call the migration's destination: remove the reverted server."""
        return self.transport.call(
            TOPIC, migration.dest_compute,
            'revert_snapshot_based_resize_at_dest', ctxt, instance=instance,
            migration=migration)

    def finish_revert_snapshot_based_resize_at_source(self, ctxt, instance,
                                                      migration):
        """Call the migration's source: run the reverted server again."""
        return self.transport.call(
            TOPIC, migration.source_compute,
            'finish_revert_snapshot_based_resize_at_source', ctxt,
            instance=instance, migration=migration)

    # -- live migration: the checks and the destination's steps are calls

    def check_can_live_migrate_destination(self, ctxt, instance, destination,
                                           block_migration, disk_over_commit,
                                           migration, limits):
        """Call ``destination``: can it take the instance? Its migrate data."""
        return self.transport.call(
            TOPIC, destination, 'check_can_live_migrate_destination', ctxt,
            instance=instance, block_migration=block_migration,
            disk_over_commit=disk_over_commit, migration=migration,
            limits=limits)

    def check_can_live_migrate_source(self, ctxt, instance, dest_check_data):
        """Call the instance's host: can it send the instance?"""
        return self.transport.call(
            TOPIC, instance.host, 'check_can_live_migrate_source', ctxt,
            instance=instance, dest_check_data=dest_check_data)

    def live_migration(self, ctxt, instance, dest, block_migration, host,
                       migration, migrate_data=None):
        """Cast ``live_migration`` to the source ``host``."""
        self.transport.cast(
            TOPIC, host, 'live_migration', ctxt, instance=instance,
            dest=dest, block_migration=block_migration, migration=migration,
            migrate_data=migrate_data)

    def pre_live_migration(self, ctxt, instance, block_migration, disk,
                           host, migrate_data):
        """Call the destination ``host`` to prepare; its migrate data."""
        return self.transport.call(
            TOPIC, host, 'pre_live_migration', ctxt, instance=instance,
            disk=disk, migrate_data=migrate_data)

    def post_live_migration_at_destination(self, ctxt, instance,
                                           block_migration, host):
        """Call the destination ``host``: the instance is its own now."""
        return self.transport.call(
            TOPIC, host, 'post_live_migration_at_destination', ctxt,
            instance=instance, block_migration=block_migration)

    def rollback_live_migration_at_destination(self, ctxt, instance, host,
                                               destroy_disks, migrate_data):
        """Cast to the destination ``host``: undo its preparation."""
        self.transport.cast(
            TOPIC, host, 'rollback_live_migration_at_destination', ctxt,
            instance=instance, destroy_disks=destroy_disks,
            migrate_data=migrate_data)

    def live_migration_abort(self, ctxt, instance, migration_id):
        """Cast ``live_migration_abort`` to the instance's host."""
        self.transport.cast(TOPIC, instance.host, 'live_migration_abort',
                            ctxt, instance=instance,
                            migration_id=migration_id)
