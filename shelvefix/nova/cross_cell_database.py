"""The cells' tables under nova's objects, for a cross-cell resize.

:class:`CellDatabase` routes the lifecycle's and the moves' database stubs
(:mod:`~.database`, :mod:`~.move_database`), which have one instance and
one migration store, to the cell each access is for
(:mod:`~.cross_cell_stores`), and adds what the cross-cell move reads and
writes besides: the instance mapping, the host mappings, a migration by
its uuid, nova's hard delete of an instance (which removes the instance's
migrations of that cell in the same transaction: one step), and the
instance actions the revert copies between the cells (recorded).

This module imports nova (see :mod:`shelvefix.nova`).
"""

import importlib
import inspect

import fixtures
from nova import exception as nova_exception
from nova import objects
from oslo_utils import timeutils

from shelvefix import exception as shelvefix_exception
from shelvefix.nova import doubles
from shelvefix.nova import harness
from shelvefix.nova import move_database


def _patched(path):
    """The value ``path`` has now (a stub's, if one was patched in)."""
    parts = path.split('.')
    for end in range(len(parts) - 1, 0, -1):
        try:
            owner = importlib.import_module('.'.join(parts[:end]))
        except ImportError:
            continue
        for part in parts[end:-1]:
            owner = getattr(owner, part)
        if inspect.isclass(owner):
            return inspect.getattr_static(owner, parts[-1])
        return getattr(owner, parts[-1])
    raise AssertionError('no module in %s' % path)


def _routed(cells, stub, of_object):
    """``stub`` run for the cell its context targets, if it targets one.

    :param of_object: the context is the first argument's ``_context``
        (an instance method), else the first argument (after the class)
    """
    if isinstance(stub, classmethod):
        func = stub.__func__

        def class_call(cls, context, *args, **kwargs):
            with cells.targeting(context):
                return func(cls, context, *args, **kwargs)
        return classmethod(class_call)

    def call(first, *args, **kwargs):
        context = first._context if of_object else first
        with cells.targeting(context):
            return stub(first, *args, **kwargs)
    return call


#: The stubs of :mod:`~.database` and :mod:`~.move_database` that read or
#: write an instance or migration row, and whether their context is their
#: object's (True) or their first argument.
ROUTED = (
    ('nova.objects.instance.Instance.save', True),
    ('nova.objects.instance.Instance._obj_load_attr', True),
    ('nova.objects.instance.Instance.get_by_uuid', False),
    ('nova.objects.instance.InstanceList.get_by_host_and_node', False),
    ('nova.objects.instance.InstanceList.get_by_filters', False),
    ('nova.objects.migration.Migration.create', True),
    ('nova.objects.migration.Migration.get_by_instance_and_status', False),
    ('nova.objects.migration.MigrationList.get_by_filters', False),
    ('nova.objects.migration.MigrationList.get_in_progress_and_error',
     False),
    ('nova.db.main.api.instance_extra_update_by_uuid', False),
)


class CellDatabase(fixtures.Fixture):
    """The cells' tables under nova's objects (see the module).

    Set up after the cloud's :class:`~.database.Database` and
    :class:`~.move_database.MoveDatabase`, whose stubs it routes.

    :param cloud: the :class:`~.cross_cell.CrossCellCloud` (its
        ``cells``, ``database`` and ``move_database``)
    """

    def __init__(self, cloud):
        super(CellDatabase, self).__init__()
        self.cloud = cloud

    def _setUp(self):
        cells = self.cloud.cells
        moves_db = self.cloud.move_database
        record = self.cloud.database._record
        patches = [(path, _routed(cells, _patched(path), of_object))
                   for path, of_object in ROUTED]

        def destroy(instance, hard_delete=False):
            with cells.targeting(instance._context):
                store = cells.current().instances
                try:
                    if hard_delete:
                        store.hard_delete(instance.uuid)
                    else:
                        store.soft_delete(instance.uuid)
                except shelvefix_exception.InstanceNotFound:
                    raise nova_exception.InstanceNotFound(
                        instance_id=instance.uuid)
            if not hard_delete:
                instance.deleted = True
            instance.obj_reset_changes()

        def migration_by_uuid(context, migration_uuid):
            with cells.targeting(context):
                try:
                    row = cells.current().migrations.get(migration_uuid)
                except shelvefix_exception.MigrationNotFound:
                    raise nova_exception.MigrationNotFound(
                        migration_id=migration_uuid)
            return moves_db.load(context, row)

        def save_migration(migration):
            # As the moves' save; a field the rows do not keep may be
            # "changed" only to the value every load gives it (the revert
            # copies every field of the target cell's migration).
            changes = {field: getattr(migration, field)
                       for field in migration.obj_what_changed()}
            with cells.targeting(migration._context):
                store = cells.current().migrations
                kept = moves_db.load(None, store.peek(migration.uuid))
                odd = sorted(
                    field for field, value in changes.items()
                    if field not in move_database.STORED_FIELDS +
                    move_database.NOVA_FIELDS and
                    (not kept.obj_attr_is_set(field) or
                     getattr(kept, field) != value))
                if odd:
                    raise AssertionError(
                        'nova saved Migration fields %s, which the harness '
                        'does not store' % odd)
                store.update(migration.uuid, {
                    field: value for field, value in changes.items()
                    if field in move_database.STORED_FIELDS})
            moves_db.extra.setdefault(migration.uuid, {}).update({
                field: value for field, value in changes.items()
                if field in move_database.NOVA_FIELDS})
            migration.obj_reset_changes()

        def instance_mapping(context, instance_uuid):
            row = cells.mappings.get(instance_uuid)
            mapping = objects.InstanceMapping(
                instance_uuid=instance_uuid,
                cell_mapping=cells.cells[row['cell']].mapping.obj_clone(),
                project_id=harness.PROJECT, user_id=harness.USER,
                queued_for_delete=False)
            mapping.obj_reset_changes()
            return mapping

        def save_mapping(mapping):
            if 'cell_mapping' in mapping.obj_what_changed():
                cells.mappings.update(mapping.instance_uuid, {
                    'cell': cells.by_uuid[mapping.cell_mapping.uuid]})
            mapping.obj_reset_changes()

        def host_mapping(context, host):
            cell = cells.of_host(host)
            return objects.HostMapping(host=host,
                                       cell_mapping=cell.mapping.obj_clone())

        def action(context, instance_uuid, request_id):
            return objects.InstanceAction(
                id=1, action='revertResize', instance_uuid=instance_uuid,
                request_id=request_id, user_id=harness.USER,
                project_id=harness.PROJECT, start_time=timeutils.utcnow(),
                finish_time=None, message=None)

        def no_events(context, action_id):
            return objects.InstanceActionEventList(objects=[])

        patches += [
            ('nova.objects.instance.Instance.destroy', destroy),
            ('nova.objects.migration.Migration.get_by_uuid',
             doubles.class_call(migration_by_uuid)),
            ('nova.objects.migration.Migration.save', save_migration),
            ('nova.objects.instance_mapping.InstanceMapping.'
             'get_by_instance_uuid', doubles.class_call(instance_mapping)),
            ('nova.objects.instance_mapping.InstanceMapping.save',
             save_mapping),
            ('nova.objects.host_mapping.HostMapping.get_by_host',
             doubles.class_call(host_mapping)),
            ('nova.objects.instance_action.InstanceAction.get_by_request_id',
             doubles.class_call(action)),
            ('nova.objects.instance_action.InstanceAction.create',
             record('action.create')),
            ('nova.objects.instance_action.InstanceActionEventList.'
             'get_by_action', doubles.class_call(no_events)),
            ('nova.objects.instance_action.InstanceActionEvent.event_finish',
             doubles.class_call(record('action_event.finish'))),
            ('nova.objects.instance_info_cache.InstanceInfoCache.refresh',
             lambda cache: None),
        ]
        for name, value in patches:
            self.useFixture(fixtures.MonkeyPatch(name, value))
