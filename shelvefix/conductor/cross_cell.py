"""The conductor's end of a resize across cells: revert and confirm.

A resize from a host of one cell to a host of another (nova's
``CrossCellMigrationTask``) leaves two copies of the server: the one the
user sees in the *target* cell, ``RESIZED`` on the destination, with the
migration ``finished`` there, and a hidden one in the *source* cell, on
the source, ``RESIZE_MIGRATED``, with that cell's own copy of the
migration. The instance mapping points at the target cell. The conductor
ends the move, calling each host in turn (RPC calls: it waits for each
answer), in the order of nova's tasks:

:class:`RevertResizeTask`
    (the API saved the target cell's copy ``RESIZE_REVERTING`` and its
    migration ``reverting``) the source cell's copy and migration brought up to
    date from the target cell's (``RESIZE_REVERTING``, ``reverting``); the
    source copy shown, the mapping pointed back at the source cell, the target
    copy hidden; the destination's ``revert_snapshot_based_resize_at_dest``;
    the target cell's copy hard-deleted (with its migration); the source's
    ``finish_revert_snapshot_based_resize_at_source``, which gives the server
    back what the migration holds on the source.

:class:`ConfirmResizeTask`
    (the API saved the migration ``confirming``) the source's
    ``confirm_snapshot_based_resize_at_source``, which deletes what the
    migration holds on the source; the source cell's copy hard-deleted (with
    its migration); the target cell's migration ``confirmed`` and the server
    ``ACTIVE`` (``STOPPED`` if powered off) with no task.

If a step fails, the migration the task last worked on goes to ``error``
and its server copy to ``ERROR`` with no task, and the error is raised.

The cells are a :class:`~shelvefix.objects.cells.Cells`: which cell a
host is in comes from its host mapping, which cell the server is in from
its instance mapping (each read of that is a read of the API database).
See :mod:`shelvefix.compute.cross_cell` for the hosts' side.
"""

from oslo_log import log as logging

from shelvefix.compute import power_state
from shelvefix.compute import task_states
from shelvefix.compute import vm_states
from shelvefix import exception
from shelvefix.objects import instance as instance_obj
from shelvefix.objects import migration as migration_obj

LOG = logging.getLogger(__name__)

#: The migration fields a revert never copies from one cell to the other.
_NOT_COPIED = ('uuid',) + migration_obj.TIMESTAMPS


def get_inst_and_cell_map_from_source(cells, source_compute, instance_uuid):
    """The source cell's copy of the server, and that cell.

    The cell is the source host's (its host mapping).

    :returns: ``(instance, cell)``
    :raises InstanceNotFound: the source cell has no copy
    """
    cell = cells.of_host(source_compute)
    return instance_obj.Instance.get_by_uuid(cell.instances,
                                             instance_uuid), cell


class _CrossCellTask(object):
    """What both tasks share: the records, the rollback, notifications.

    :param context: the request context
    :param instance: the target cell's copy of the server
    :param migration: the target cell's migration record
    :param legacy_notifier: ``info(context, event_type, payload)``, or
        None
    :param compute_rpcapi: a :class:`~shelvefix.compute.rpcapi.ComputeAPI`
    :param cells: the :class:`~shelvefix.objects.cells.Cells`
    :param target_cell: the :class:`~shelvefix.objects.cells.Cell` the
        server was mapped to when the task began
    """

    #: The notifications' event type, ``resize.revert`` or
    #: ``resize.confirm``.
    event = None

    def __init__(self, context, instance, migration, legacy_notifier,
                 compute_rpcapi, cells, target_cell):
        self.context = context
        self.instance = instance
        self.migration = migration
        self.legacy_notifier = legacy_notifier
        self.compute_rpcapi = compute_rpcapi
        self.cells = cells
        self.target_cell = target_cell

    def execute(self):
        """Run the task; on failure :meth:`rollback`, then re-raise."""
        try:
            return self._execute()
        except Exception as ex:
            self.rollback(ex)
            raise

    def _execute(self):
        raise NotImplementedError()

    def _notify(self, instance, phase):
        if self.legacy_notifier is not None:
            self.legacy_notifier.info(
                self.context, 'compute.instance.%s.%s' % (self.event, phase),
                {'instance_id': instance.uuid,
                 'state': instance.vm_state,
                 'task_state': instance.task_state})

    def _records_to_fail(self):
        """``(instance, migration)`` a failure leaves in error."""
        return self.instance, self.migration

    def rollback(self, ex):
        """The migration ``error``, its server copy ``ERROR``, no task."""
        instance, migration = self._records_to_fail()
        LOG.error('The %(event)s of the cross-cell resize of instance '
                  '%(uuid)s failed: %(error)s',
                  {'event': self.event, 'uuid': instance.uuid, 'error': ex})
        for record, fields in ((migration, {'status': migration_obj.ERROR}),
                               (instance, {'vm_state': vm_states.ERROR,
                                           'task_state': None})):
            for field, value in fields.items():
                setattr(record, field, value)
            try:
                record.save()
            except (exception.InstanceNotFound,
                    exception.MigrationNotFound):
                LOG.warning('%r is gone: not saved as failed', record)


class RevertResizeTask(_CrossCellTask):
    """Take a cross-cell resize back to the source cell (see the module)."""

    event = 'resize.revert'

    def __init__(self, context, instance, migration, legacy_notifier,
                 compute_rpcapi, cells, target_cell):
        super(RevertResizeTask, self).__init__(
            context, instance, migration, legacy_notifier, compute_rpcapi,
            cells, target_cell)
        self._source_cell_instance = None
        self._source_cell_migration = None

    @staticmethod
    def _update_source_obj_from_target_cell(source_obj, target_obj):
        """Set every field of the source cell's migration from the target's.

        Not saved here. The uuid and the store's timestamps stay.
        """
        for field in migration_obj.FIELDS:
            if field not in _NOT_COPIED:
                setattr(source_obj, field, getattr(target_obj, field))

    def _update_migration_in_source_cell(self, source_cell):
        source_cell_migration = migration_obj.Migration.get_by_uuid(
            source_cell.migrations, self.migration.uuid)
        self._update_source_obj_from_target_cell(source_cell_migration,
                                                 self.migration)
        source_cell_migration.save()
        return source_cell_migration

    def _update_instance_in_source_cell(self, instance, source_cell):
        """The source cell's copy reverting, its migration as the target's.

        :returns: the source cell's migration
        """
        instance.task_state = task_states.RESIZE_REVERTING
        instance.save()
        return self._update_migration_in_source_cell(source_cell)

    def _update_instance_mapping(self, source_cell_instance, source_cell):
        """Show the source copy, map the server there, hide the target's."""
        self.cells.get_mapping(self.instance.uuid)
        source_cell.instances.set_hidden(source_cell_instance.uuid, False)
        self.cells.update_mapping(self.instance.uuid, source_cell)
        self.target_cell.instances.set_hidden(self.instance.uuid, True)

    def _execute(self):
        self._notify(self.instance, 'start')
        source_cell_instance, source_cell = (
            get_inst_and_cell_map_from_source(
                self.cells, self.migration.source_compute,
                self.instance.uuid))
        self._source_cell_instance = source_cell_instance
        source_cell_migration = self._update_instance_in_source_cell(
            source_cell_instance, source_cell)
        # From here on the user sees and acts on the source cell's copy.
        self._update_instance_mapping(source_cell_instance, source_cell)
        self._source_cell_migration = source_cell_migration
        LOG.debug('Calling the destination %s to revert the cross-cell '
                  'resize of instance %s', self.migration.dest_compute,
                  self.instance.uuid)
        self.compute_rpcapi.revert_snapshot_based_resize_at_dest(
            self.context, self.instance, self.migration)
        # Hard: a later resize back to that cell creates the row again.
        self.target_cell.instances.hard_delete(self.instance.uuid)
        LOG.debug('Calling the source %s to finish the revert of instance '
                  '%s', self.migration.source_compute, self.instance.uuid)
        self.compute_rpcapi.finish_revert_snapshot_based_resize_at_source(
            self.context, source_cell_instance, source_cell_migration)
        source_cell_instance.refresh()
        self._notify(source_cell_instance, 'end')

    def _records_to_fail(self):
        # The source cell's once the server is mapped back there.
        if self._source_cell_migration is not None:
            return self._source_cell_instance, self._source_cell_migration
        return self.instance, self.migration


class ConfirmResizeTask(_CrossCellTask):
    """Keep a cross-cell resize in the target cell (see the module)."""

    event = 'resize.confirm'

    def _cleanup_source_host(self, source_instance, source_cell):
        source_migration = migration_obj.Migration.get_by_uuid(
            source_cell.migrations, self.migration.uuid)
        LOG.debug('Calling the source %s to clean up after the cross-cell '
                  'resize of instance %s', source_migration.source_compute,
                  source_instance.uuid)
        self.compute_rpcapi.confirm_snapshot_based_resize_at_source(
            self.context, source_instance, source_migration)

    def _set_vm_and_task_state(self):
        self.instance.vm_state = (
            vm_states.STOPPED
            if self.instance.power_state == power_state.SHUTDOWN
            else vm_states.ACTIVE)
        self.instance.task_state = None

    def _finish_confirm_in_target_cell(self):
        self.migration.status = migration_obj.CONFIRMED
        self.migration.save()
        self._set_vm_and_task_state()
        # A delete's confirm may find the server DELETING.
        self.instance.save(expected_task_state=[
            None, task_states.DELETING, task_states.SOFT_DELETING])

    def _execute(self):
        source_cell_instance, source_cell = (
            get_inst_and_cell_map_from_source(
                self.cells, self.migration.source_compute,
                self.instance.uuid))
        self._notify(source_cell_instance, 'start')
        self._cleanup_source_host(source_cell_instance, source_cell)
        # Hard: a later resize back to that cell creates the row again.
        source_cell.instances.hard_delete(source_cell_instance.uuid)
        self._finish_confirm_in_target_cell()
        self._notify(self.instance, 'end')


class CrossCellMixin(object):
    """The conductor's cross-cell revert and confirm, mixed into its manager.

    The manager's ``compute_rpcapi`` makes the calls.
    """

    #: The deployment's :class:`~shelvefix.objects.cells.Cells`, set by
    #: whoever wires the conductor; None for one cell (no cross-cell move
    #: then).
    cell_databases = None
    #: The legacy notifier of the tasks (None: they notify nothing).
    legacy_notifier = None

    def _target_cell(self, instance):
        """The cell the server is mapped to (as nova targets the context).

        :raises Invalid: this deployment has no cells
        """
        if self.cell_databases is None:
            raise exception.Invalid(
                reason='a cross-cell resize of instance %s needs the '
                       "conductor's cells" % instance.uuid)
        return self.cell_databases.get_mapping(instance.uuid)

    def revert_snapshot_based_resize(self, context, instance, migration):
        """Revert a cross-cell resize (:class:`RevertResizeTask`).

        :param instance: the target cell's copy, ``RESIZE_REVERTING``
        :param migration: the target cell's migration, ``reverting``
        """
        RevertResizeTask(context, instance, migration, self.legacy_notifier,
                         self.compute_rpcapi, self.cell_databases,
                         self._target_cell(instance)).execute()

    def confirm_snapshot_based_resize(self, context, instance, migration,
                                      do_cast=True):
        """Confirm a cross-cell resize (:class:`ConfirmResizeTask`).

        :param instance: the target cell's copy, ``RESIZED``
        :param migration: the target cell's migration, ``confirming``
        :param do_cast: nova's (the API casts, or calls when a delete
            confirms first); either way the task runs here
        """
        ConfirmResizeTask(context, instance, migration, self.legacy_notifier,
                          self.compute_rpcapi, self.cell_databases,
                          self._target_cell(instance)).execute()
