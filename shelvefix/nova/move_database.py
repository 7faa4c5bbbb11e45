"""nova's migration records, as the move harness stands in for them.

:class:`MoveDatabase` patches the migration reads and writes nova's code
makes on the resize, revert and evacuation paths, onto the run's shelvefix
:class:`~shelvefix.objects.migration.MigrationStore`, so that the
explorer schedules each as it does the instance's (see
:mod:`shelvefix.nova.database` for the rest of the database). nova's
own migration fields that the store's rows do not have (:data:`NOVA_FIELDS`)
are kept beside them.

This module imports nova (see :mod:`shelvefix.nova`).
"""

import fixtures
from nova import exception as nova_exception
from nova import objects
from nova.objects import instance as nova_instance

from shelvefix import exception as shelvefix_exception
from shelvefix.nova import doubles
from shelvefix.nova import harness
from shelvefix.objects import migration as migration_obj

MIGRATION_ID = 1
#: The migration fields nova's code on these paths may change and save:
#: in the store's rows, and nova's own (kept beside them, per migration).
STORED_FIELDS = ('status', 'source_node', 'dest_compute', 'dest_node')
NOVA_FIELDS = ('dest_host', 'dest_compute_id')
#: The fields of the store's migration rows.
ROW_FIELDS = migration_obj.FIELDS
#: Statuses ``get_in_progress_and_error`` leaves out (nova's database API).
NOT_IN_PROGRESS_OR_ERROR = ('confirmed', 'reverted', 'failed', 'completed',
                            'cancelled', 'done')
#: nova's own lazy-load (the lifecycle's database refuses every one), and
#: its read of the field: taken before any fixture patches them.
NOVA_OBJ_LOAD_ATTR = nova_instance.Instance.obj_load_attr
NOVA_LOAD_FIELD = nova_instance.Instance._obj_load_attr
#: The optional instance fields nova's ``_obj_load_attr`` reads with
#: ``Instance.get_by_uuid`` (``_load_flavor``, ``_load_generic``), like
#: the columns, rather than from other tables.
ROW_LOADED = ('flavor', 'old_flavor', 'new_flavor', 'metadata',
              'system_metadata', 'info_cache')


def listed_instance(database, context, row, expected_attrs):
    """A nova ``Instance`` as a list by filters makes it.

    Only the row's columns and the optional fields asked for
    (``expected_attrs``): the others are lazy-loaded when read, as nova
    does.
    """
    values = dict(database.static_of.get(row['uuid'], database.static))
    values.update(row)
    for field in nova_instance.INSTANCE_OPTIONAL_ATTRS:
        if field not in (expected_attrs or ()):
            values.pop(field, None)
    instance = objects.Instance(context=context, **values)
    instance.obj_reset_changes(recursive=True)
    return instance


class MoveDatabase(fixtures.Fixture):
    """nova's migration records, on the run's migration store.

    And the instance reads only the move paths make: the instance's
    extra record (``drop_migration_context``), a list by filters (the
    source's start-up looking for the guests it still has: destroyed
    instances too, unless the filters say otherwise, and only the
    columns, as nova's) and the lazy-load of a field such a list left out:
    nova's own ``obj_load_attr`` and ``_obj_load_attr`` run, the latter
    only for the fields it reads from the instance's row (:data:`ROW_LOADED`
    and the columns), with ``Instance.get_by_uuid``, which finds a
    destroyed instance only under a context that reads deleted rows
    (``read_deleted='yes'``), else raises ``InstanceNotFound``, as nova's
    database API does.

    :param database: the :class:`~.database.Database` (its ``store`` is
        the instance store, its ``load`` makes nova instances)

    :ivar migrations: the run's
        :class:`~shelvefix.objects.migration.MigrationStore` (set it
        before each run, with ``extra``, each migration's
        :data:`NOVA_FIELDS`)
    """

    def __init__(self, database):
        super(MoveDatabase, self).__init__()
        self.database = database
        self.migrations = None
        self.extra = {}
        #: The uuid the next migration nova creates gets (set per run, so
        #: that it reads the same in every run).
        self.next_uuid = None
        #: ``{instance uuid: uuid}``: in a run with more than one server,
        #: the uuid the migration nova creates for each server gets.
        self.next_uuids = {}

    def load(self, context, row):
        """A nova ``Migration`` of a store row, with no pending changes."""
        values = {'id': MIGRATION_ID, 'dest_host': None,
                  'dest_compute_id': None}
        values.update(self.extra.get(row['uuid'], {}))
        migration = objects.Migration(
            context=context, uuid=row['uuid'],
            instance_uuid=row['instance_uuid'],
            source_compute=row['source_compute'],
            source_node=row['source_node'],
            dest_compute=row['dest_compute'], dest_node=row['dest_node'],
            migration_type=row['migration_type'],
            status=row['status'], old_instance_type_id=1,
            new_instance_type_id=2, hidden=False, cross_cell_move=False,
            user_id=harness.USER, project_id=harness.PROJECT,
            created_at=row['created_at'], updated_at=row['updated_at'],
            deleted=False,
            **values)
        migration.obj_reset_changes()
        return migration

    def _setUp(self):
        database = self
        if any(func.__module__ != nova_instance.__name__
               for func in (NOVA_OBJ_LOAD_ATTR, NOVA_LOAD_FIELD)):
            raise AssertionError('move_database was imported while nova\'s '
                                 'Instance lazy-load was patched')

        def save(migration):
            changes = {field: getattr(migration, field)
                       for field in migration.obj_what_changed()}
            unsaved = sorted(set(changes) -
                             set(STORED_FIELDS + NOVA_FIELDS))
            if unsaved:
                raise AssertionError(
                    'nova saved Migration fields %s, which the harness does '
                    'not store' % unsaved)
            database.migrations.update(migration.uuid, {
                field: value for field, value in changes.items()
                if field in STORED_FIELDS})
            database.extra.setdefault(migration.uuid, {}).update({
                field: value for field, value in changes.items()
                if field in NOVA_FIELDS})
            migration.obj_reset_changes()

        def create(migration):
            # As nova's: refused twice and without a type; then one
            # write of the new row (an explorer step: RowStore.create).
            if migration.obj_attr_is_set('id'):
                raise nova_exception.ObjectActionError(
                    action='create', reason='already created')
            if 'migration_type' not in migration.obj_get_changes():
                raise nova_exception.ObjectActionError(
                    action='create', reason='no migration_type')
            changes = migration.obj_get_changes()
            uuid = database.next_uuids.get(changes.get('instance_uuid'),
                                           database.next_uuid)
            row = {field: changes.get(field) for field in ROW_FIELDS}
            row['uuid'] = uuid
            database.migrations.create(row)
            database.extra[uuid] = dict(
                {field: changes.get(field) for field in NOVA_FIELDS},
                id=MIGRATION_ID + len(database.extra) + 1)
            saved = database.load(migration._context,
                                  database.migrations.peek(uuid))
            for field in saved.obj_fields:
                if saved.obj_attr_is_set(field):
                    setattr(migration, field, getattr(saved, field))
            migration.obj_reset_changes()

        def by_filters(context, filters, sort_keys=None, sort_dirs=None,
                       limit=None, marker=None):
            def matches(row):
                return all(row[name] in (value if isinstance(value, list)
                                         else [value])
                           for name, value in filters.items())
            return objects.MigrationList(objects=[
                database.load(context, row)
                for row in database.migrations.query(predicate=matches)])

        def instances_by_filters(context, filters, sort_key='created_at',
                                 sort_dir='desc', limit=None, marker=None,
                                 expected_attrs=None, use_slave=False,
                                 sort_keys=None, sort_dirs=None):
            def matches(row):
                # A filter's values come as a list or a set (nova's
                # interrupted builds' uuids).
                return all(row.get(name) in (
                    value if isinstance(value, (list, set, frozenset))
                    else [value])
                           for name, value in filters.items())
            store = database.database.store
            # One read of the table, destroyed rows included.
            rows = store.query()
            live = set(row['uuid'] for row in rows)
            rows += [dict(store.peek(uuid), deleted=True)
                     for uuid in store.uuids()
                     if uuid not in live and store.is_deleted(uuid)]
            return objects.InstanceList(objects=[
                listed_instance(database.database, context, row,
                                expected_attrs)
                for row in rows if matches(dict(
                    row, deleted=row.get('deleted', False)))])

        def load_field(instance, attrname):
            if (attrname in nova_instance.INSTANCE_OPTIONAL_ATTRS and
                    attrname not in ROW_LOADED):
                raise AssertionError(
                    'nova lazy-loaded Instance.%s, which the harness does '
                    'not read from its row' % attrname)
            # nova's own, which reads the row with Instance.get_by_uuid
            # (the database's stub: read_deleted as the context says).
            NOVA_LOAD_FIELD(instance, attrname)

        def by_instance_and_status(context, instance_uuid, status):
            rows = database.migrations.query(instance_uuid=instance_uuid,
                                             status=status)
            if not rows:
                raise nova_exception.MigrationNotFoundByStatus(
                    instance_id=instance_uuid, status=status)
            return database.load(context, rows[0])

        def in_progress_and_error(context, host, node):
            def here(row):
                return (row['status'] not in NOT_IN_PROGRESS_OR_ERROR and (
                    (row['source_compute'], row['source_node']) ==
                    (host, node) or
                    (row['dest_compute'], row['dest_node']) == (host, node)))
            return objects.MigrationList(objects=[
                database.load(context, row)
                for row in database.migrations.query(predicate=here)])

        def extra_update(context, instance_uuid, values):
            try:
                database.database.store.update(instance_uuid, dict(values))
            except shelvefix_exception.InstanceNotFound:
                raise nova_exception.InstanceNotFound(
                    instance_id=instance_uuid)

        patches = [
            ('nova.objects.migration.Migration.save', save),
            ('nova.objects.migration.Migration.create', create),
            ('nova.objects.migration.MigrationList.get_by_filters',
             doubles.class_call(by_filters)),
            ('nova.objects.instance.InstanceList.get_by_filters',
             doubles.class_call(instances_by_filters)),
            ('nova.objects.migration.Migration.get_by_instance_and_status',
             doubles.class_call(by_instance_and_status)),
            ('nova.objects.migration.MigrationList.'
             'get_in_progress_and_error',
             doubles.class_call(in_progress_and_error)),
            ('nova.db.main.api.instance_extra_update_by_uuid', extra_update),
            ('nova.objects.instance.Instance.obj_load_attr',
             NOVA_OBJ_LOAD_ATTR),
            ('nova.objects.instance.Instance._obj_load_attr', load_field),
        ]
        for name, value in patches:
            self.useFixture(fixtures.MonkeyPatch(name, value))


class DeletionDatabase(fixtures.Fixture):
    """The records only the delete path writes.

    The instance's ``destroy`` soft-deletes the store's row; the instance
    actions, the console tokens and the API database's instance mapping
    are recorded instead.

    :param cloud: the :class:`~.moves.NovaMoveCloud`
    """

    def __init__(self, cloud):
        super(DeletionDatabase, self).__init__()
        self.cloud = cloud

    def _setUp(self):
        cloud = self.cloud
        record = cloud.database._record

        def destroy(instance, hard_delete=False):
            # nova's instance_destroy: the row is soft-deleted; a second
            # destroy finds none.
            try:
                cloud.database.store.soft_delete(instance.uuid)
            except Exception:
                raise nova_exception.InstanceNotFound(
                    instance_id=instance.uuid)
            instance.deleted = True
            instance.obj_reset_changes()

        def service(context, host, use_slave=False):
            return cloud.database.services[host].obj_clone()

        patches = [
            ('nova.objects.instance.Instance.destroy', destroy),
            ('nova.objects.service.Service.get_by_compute_host',
             doubles.class_call(service)),
            ('nova.objects.instance_action.InstanceAction.action_start',
             doubles.class_call(record('action.start'))),
            ('nova.objects.console_auth_token.ConsoleAuthToken.'
             'clean_console_auths_for_instance',
             doubles.class_call(record('console_auth.clean'))),
            ('nova.compute.utils.notify_about_instance_delete',
             record('notify.delete')),
            # The API database's mapping, queued for deletion.
            ('nova.objects.instance_mapping.InstanceMapping.save',
             record('instance_mapping.save')),
        ]
        for name, value in patches:
            self.useFixture(fixtures.MonkeyPatch(name, value))
