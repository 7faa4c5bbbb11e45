"""A migration record whose ``save`` writes through a shared store.

Resize, cold migration, evacuation and live migration each leave a
migration row behind that the resource tracker of both the source and the
destination host reads to decide which resources are still claimed. As with
:mod:`shelvefix.objects.instance`, changing a :class:`Migration` in memory
is invisible to every other reader until :meth:`Migration.save` succeeds.
"""

import copy
import datetime

from oslo_utils import timeutils

from shelvefix import exception
from shelvefix.objects import base
from shelvefix.objects import instance as instance_obj
from shelvefix import utils

# Migration types (the values of nova's fields.MigrationType used here).
MIGRATION = 'migration'  # a cold migration: same flavor, another host
RESIZE = 'resize'
EVACUATION = 'evacuation'
LIVE_MIGRATION = 'live-migration'
MIGRATION_TYPES = (MIGRATION, RESIZE, EVACUATION, LIVE_MIGRATION)

# Statuses, as nova's conductor and compute manager spell them.
PRE_MIGRATING = 'pre-migrating'
MIGRATING = 'migrating'
POST_MIGRATING = 'post-migrating'
FINISHED = 'finished'
CONFIRMING = 'confirming'
CONFIRMED = 'confirmed'
REVERTING = 'reverting'
REVERTED = 'reverted'
ACCEPTED = 'accepted'
DONE = 'done'
COMPLETED = 'completed'
ERROR = 'error'
FAILED = 'failed'
CANCELLED = 'cancelled'
# A live migration's, on the source while it runs.
QUEUED = 'queued'
PREPARING = 'preparing'
RUNNING = 'running'
ALL_STATUSES = (PRE_MIGRATING, MIGRATING, POST_MIGRATING, FINISHED,
                CONFIRMING, CONFIRMED, REVERTING, REVERTED, ACCEPTED, DONE,
                COMPLETED, ERROR, FAILED, CANCELLED, QUEUED, PREPARING,
                RUNNING)

# The statuses a migration has no more claim on a host in, i.e. those that
# migration_get_in_progress_by_host_and_node leaves out. FINISHED is not one
# of them: a finished resize still waits to be confirmed or reverted.
NOT_IN_PROGRESS = (CONFIRMED, REVERTED, ERROR, FAILED, COMPLETED, CANCELLED,
                   DONE)

FIELDS = ('uuid', 'instance_uuid', 'source_compute', 'source_node',
          'dest_compute', 'dest_node', 'migration_type', 'status',
          'old_flavor', 'new_flavor', 'created_at', 'updated_at')

# The fields only the store writes: when the row was inserted, and when it
# was last updated (None until then), as nova's database sets them.
TIMESTAMPS = ('created_at', 'updated_at')

# What an update may write.
_UPDATABLE = frozenset(FIELDS) - {'uuid'} - set(TIMESTAMPS)


def _as_list(value):
    """A single string (or None) becomes a one-item list."""
    if value is None or isinstance(value, str):
        return [value]
    return list(value)


def _validate(values):
    """:raises Invalid: ``values`` (a full row) is not a valid migration."""
    utils.validate_uuid(values['uuid'])
    if values['migration_type'] not in MIGRATION_TYPES:
        raise exception.Invalid(reason='unknown migration_type %r'
                                % values['migration_type'])
    if values['status'] not in ALL_STATUSES:
        raise exception.Invalid(reason='unknown migration status %r'
                                % values['status'])
    for field in ('old_flavor', 'new_flavor'):
        if not (values[field] is None or
                isinstance(values[field], instance_obj.Flavor)):
            raise exception.Invalid(reason='%s must be a Flavor or None, '
                                    'got %r' % (field, values[field]))


class MigrationStore(base.RowStore):
    """The saved migration rows: what every reader but their writer sees.

    A :class:`~shelvefix.objects.base.RowStore`, as
    :class:`~shelvefix.objects.instance.InstanceStore` is (copies,
    observers and the ``interceptor`` are described there), whose updates
    compare the current status.

    The store stamps each row as nova's database does: ``created_at``
    when it is inserted (``updated_at`` None), ``updated_at`` at each
    update, whatever the values written say. The stamps are UTC times
    that increase strictly within one store, a microsecond past the last
    one if the clock has not moved on, so two writes never tie.
    """

    kind = 'migration'

    def __init__(self):
        super(MigrationStore, self).__init__()
        self._last_stamp = None

    def _now(self):
        now = timeutils.utcnow()
        if self._last_stamp is not None and now <= self._last_stamp:
            now = self._last_stamp + datetime.timedelta(microseconds=1)
        self._last_stamp = now
        return now

    def _stamp(self, row, created):
        if created:
            row['created_at'] = self._now()
            row['updated_at'] = None
        else:
            row['updated_at'] = self._now()

    def _not_found(self, uuid):
        return exception.MigrationNotFound(migration_id=uuid)

    def _describe(self, row):
        return 'status=%s' % row['status']

    def update(self, uuid, values, expected_status=None):
        """Write ``values`` if the row's status is as expected.

        :param expected_status: None (not checked), a status, or a list of
            acceptable current statuses
        :returns: a copy of the new row
        :raises MigrationUpdateConflict: the saved status is not expected;
            nothing is written
        :raises MigrationNotFound: no such migration
        :raises Invalid: ``values`` names ``uuid``, a timestamp or an
            unknown field
        """
        return self._update(uuid, values, expected_status=expected_status)

    def _check_update(self, uuid, row, values, expected_status):
        unknown = sorted(set(values) - _UPDATABLE)
        if unknown:
            raise exception.Invalid(
                reason='cannot update migration field(s) %s' % unknown)
        if expected_status is not None:
            expected = _as_list(expected_status)
            if row['status'] not in expected:
                raise exception.MigrationUpdateConflict(
                    migration_id=uuid, expected={'status': expected},
                    actual={'status': row['status']})


class Migration(object):
    """A migration as a service holds it in memory.

    Attribute changes stay local until :meth:`save`, which writes only the
    changed fields and reloads the saved row.
    """

    def __init__(self, store, uuid, instance_uuid=None, source_compute=None,
                 source_node=None, dest_compute=None, dest_node=None,
                 migration_type=MIGRATION, status=PRE_MIGRATING,
                 old_flavor=None, new_flavor=None, created_at=None,
                 updated_at=None):
        object.__setattr__(self, '_store', store)
        object.__setattr__(self, '_changed', set())
        values = {'uuid': uuid, 'instance_uuid': instance_uuid,
                  'source_compute': source_compute,
                  'source_node': source_node, 'dest_compute': dest_compute,
                  'dest_node': dest_node, 'migration_type': migration_type,
                  'status': status, 'old_flavor': old_flavor,
                  'new_flavor': new_flavor, 'created_at': created_at,
                  'updated_at': updated_at}
        _validate(values)
        self._load(values)

    @classmethod
    def create(cls, store, uuid, **fields):
        """Build a migration and insert it into ``store``.

        The migration returned holds the row as saved, with the store's
        ``created_at``.

        :raises Invalid: a bad field value, or the uuid exists
        """
        migration = cls(store, uuid, **fields)
        migration._load(store.create(migration._values()))
        return migration

    @classmethod
    def get_by_uuid(cls, store, uuid):
        """Load a migration from ``store``.

        :raises MigrationNotFound: no such migration
        """
        return cls(store, **store.get(uuid))

    def _load(self, values):
        for field in FIELDS:
            object.__setattr__(self, field, values[field])
        self._changed.clear()

    def _values(self):
        return {field: getattr(self, field) for field in FIELDS}

    def __setattr__(self, name, value):
        if name not in FIELDS:
            raise AttributeError('Migration has no field %r' % name)
        if name == 'uuid':
            raise AttributeError('uuid cannot be changed')
        if name in TIMESTAMPS:
            raise AttributeError('%s is set by the store' % name)
        object.__setattr__(self, name, value)
        self._changed.add(name)

    @property
    def is_resize(self):
        return self.migration_type == RESIZE

    @property
    def is_evacuation(self):
        return self.migration_type == EVACUATION

    def obj_clone(self):
        """A copy with the same values and the same unsaved changes."""
        clone = type(self)(self._store, **copy.deepcopy(self._values()))
        clone._changed.update(self._changed)
        return clone

    def obj_what_changed(self):
        """The fields set since the last save or refresh."""
        return set(self._changed)

    def save(self, expected_status=None):
        """Write the changed fields through the store, then reload.

        :param expected_status: None (not checked), a status, or a list of
            statuses the saved row must be in
        :raises Invalid: a changed field holds a bad value; nothing is
            written
        :raises MigrationUpdateConflict: the saved status is not expected;
            the in-memory changes are kept
        """
        _validate(self._values())
        updates = {field: getattr(self, field) for field in self._changed}
        row = self._store.update(self.uuid, updates,
                                 expected_status=expected_status)
        self._load(row)

    def refresh(self):
        """Drop in-memory changes and reload the saved row."""
        self._load(self._store.get(self.uuid))

    def __repr__(self):
        return ('Migration(uuid=%s, type=%s, status=%s, %s/%s -> %s/%s)'
                % (self.uuid, self.migration_type, self.status,
                   self.source_compute, self.source_node, self.dest_compute,
                   self.dest_node))


# The get_by_filters keys and how each matches a row. 'host' and 'node'
# match either end of the migration; 'source_compute' is ignored when 'host'
# is given, as in nova. 'dest_compute' is a shelvefix addition: nova's
# migration_get_all_by_filters has no such filter and would ignore the key.
_FILTERS = {
    'uuid': lambda row, v: row['uuid'] in _as_list(v),
    'status': lambda row, v: row['status'] in _as_list(v),
    'host': lambda row, v: v in (row['source_compute'], row['dest_compute']),
    'source_compute': lambda row, v: row['source_compute'] == v,
    'dest_compute': lambda row, v: row['dest_compute'] == v,
    'node': lambda row, v: v in (row['source_node'], row['dest_node']),
    'migration_type': lambda row, v: row['migration_type'] == v,
    'instance_uuid': lambda row, v: row['instance_uuid'] == v,
}


class MigrationList(object):
    """Queries returning several migrations, named as nova names them."""

    @staticmethod
    def get_in_progress_by_host_and_node(store, host, node):
        """The migrations still holding resources on ``host``/``node``.

        :param host: the compute host, as source or destination
        :param node: the node, on the same end as ``host``
        :returns: the :class:`Migration` objects whose status is not in
            :data:`NOT_IN_PROGRESS`, in uuid order
        """
        def in_progress(row):
            return (row['status'] not in NOT_IN_PROGRESS and
                    ((row['source_compute'], row['source_node']) ==
                     (host, node) or
                     (row['dest_compute'], row['dest_node']) == (host, node)))
        return [Migration(store, **row)
                for row in store.query(predicate=in_progress)]

    @staticmethod
    def get_by_filters(store, filters):
        """The migrations matching every filter, in uuid order.

        :param filters: a dict with any of the keys ``uuid`` and
            ``status`` (a value or a list), ``host``, ``source_compute``,
            ``dest_compute``, ``node``, ``migration_type`` and
            ``instance_uuid``
        :returns: a list of :class:`Migration` objects
        :raises Invalid: an unknown filter key (nova ignores those)
        """
        unknown = sorted(set(filters) - set(_FILTERS))
        if unknown:
            raise exception.Invalid(
                reason='unsupported migration filter(s) %s' % unknown)
        checks = [(_FILTERS[key], value) for key, value in filters.items()
                  if not (key == 'source_compute' and 'host' in filters)]

        def matches(row):
            return all(check(row, value) for check, value in checks)
        return [Migration(store, **row)
                for row in store.query(predicate=matches)]
