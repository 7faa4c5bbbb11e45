"""The conductor's side of a move: the migration record and its allocations.

Since Queens a move's allocations on the source are held by the migration
record, not the instance: before the destination is scheduled,
:func:`replace_allocation_with_migration` moves what the instance holds to
the migration (one ``POST /allocations``), so that the scheduler can claim
the destination for the instance as a new consumer, and either end of the
move can give one of the two back without touching the other.

An evacuation is the exception: its source is down, so the instance keeps
its source allocations and the scheduler's claim adds the destination's
(the consumer holds both until the source's start-up removes its own).
"""

from oslo_log import log as logging

from shelvefix import exception
from shelvefix.objects import migration as migration_obj

LOG = logging.getLogger(__name__)


def replace_allocation_with_migration(context, instance, migration,
                                      reportclient, source_provider):
    """Move the instance's allocations to the migration consumer.

    :param source_provider: the source node's provider uuid
    :returns: the instance's allocations before the move
        (``{rp: {'resources': ...}}``), or None if it held nothing on the
        source (nothing is moved)
    :raises NoValidHost: placement refused the move
    """
    held = reportclient.get_allocs_for_consumer(context,
                                                instance.uuid)['allocations']
    if not held.get(source_provider, {}).get('resources'):
        LOG.debug('Instance %s holds nothing on the source node; no '
                  'allocations to move to migration %s', instance.uuid,
                  migration.uuid)
        return None
    if not reportclient.move_allocations(context, instance.uuid,
                                         migration.uuid):
        raise exception.NoValidHost(
            reason='unable to replace the allocations of instance %s with '
                   'migration %s' % (instance.uuid, migration.uuid))
    return held


def revert_allocation_for_migration(context, source_provider, instance,
                                    migration, reportclient):
    """Give the instance back what the migration holds (a move failed).

    Whatever the instance holds on a destination is dropped in the same
    write.
    """
    if not reportclient.move_allocations(context, migration.uuid,
                                         instance.uuid):
        LOG.error('Unable to give instance %(uuid)s back its allocations on '
                  '%(rp)s held by migration %(migration)s',
                  {'uuid': instance.uuid, 'rp': source_provider,
                   'migration': migration.uuid})


class MigrationTask(object):
    """A cold migration or resize: the migration, its allocations, a host.

    :param compute_rpcapi: a :class:`~shelvefix.compute.rpcapi.ComputeAPI`
    :param query_client: the scheduler (``select_destinations``)
    :param reportclient: a ``SchedulerReportClient``
    :param migration_store: where the migration record is saved
    :param source_provider: the source node's provider uuid
    """

    def __init__(self, context, instance, flavor, request_spec,
                 compute_rpcapi, query_client, reportclient,
                 migration_store, source_provider, migration_uuid):
        self.context = context
        self.instance = instance
        self.flavor = flavor
        self.request_spec = request_spec
        self.compute_rpcapi = compute_rpcapi
        self.query_client = query_client
        self.reportclient = reportclient
        self.migration_store = migration_store
        self.source_provider = source_provider
        self.migration_uuid = migration_uuid
        self.migration = None

    def execute(self):
        """Record the migration, move its allocations, schedule, cast.

        The API saved the instance ``RESIZE_PREP`` before (see
        :func:`shelvefix.race.client.move`), and the request spec's
        ``ignore_hosts`` names the source unless the move may stay there.

        :returns: the migration
        :raises NoValidHost: no destination fits; on this and any other
            failure before the cast the allocations are given back to the
            instance, the migration is ``error`` and the instance's task
            state is cleared
        """
        self.migration = migration_obj.Migration.create(
            self.migration_store, self.migration_uuid,
            instance_uuid=self.instance.uuid,
            source_compute=self.instance.host,
            source_node=self.instance.node,
            migration_type=(migration_obj.MIGRATION
                            if self.flavor == self.instance.flavor
                            else migration_obj.RESIZE),
            status=migration_obj.PRE_MIGRATING,
            old_flavor=self.instance.flavor, new_flavor=self.flavor)
        moved = None
        try:
            moved = replace_allocation_with_migration(
                self.context, self.instance, self.migration,
                self.reportclient, self.source_provider)
            self.request_spec.flavor = self.flavor
            selection = self.query_client.select_destinations(
                self.context, self.request_spec, None,
                spec_obj=self.request_spec,
                instance_uuids=[self.instance.uuid], return_objects=True,
                return_alternates=False)[0][0]
        except Exception:
            # As nova's task roll-back: whatever failed before the cast,
            # the instance gets back what the migration holds (and drops a
            # destination claimed for it), and the migration ends; then,
            # as nova's conductor, the API's task state is cleared.
            if moved is not None:
                revert_allocation_for_migration(
                    self.context, self.source_provider, self.instance,
                    self.migration, self.reportclient)
            self.migration.status = migration_obj.ERROR
            self.migration.save()
            self.instance.task_state = None
            self.instance.save()
            raise
        self.compute_rpcapi.prep_resize(
            self.context, self.instance, None, self.flavor,
            selection.service_host, self.migration, self.request_spec,
            {'limits': selection.limits}, selection.nodename,
            clean_shutdown=True)
        return self.migration
