"""The conductor's live migration: a destination, its checks, the cast.

:class:`LiveMigrationTask` runs what nova's conductor runs for a live
migration the API accepted (the server ``ACTIVE``, ``MIGRATING``; the
migration record ``accepted``):

1. the server must be running (or paused), and its host's service up;
2. what the server holds on the source goes to the migration consumer
   (:func:`~shelvefix.conductor.migrate.replace_allocation_with_migration`),
   so that the scheduler claims the destination for the server as a new
   consumer;
3. ``_find_destination``: the scheduler chooses and claims a host (never
   the source), then that host checks it can take the server (an RPC
   call, which asks the source in turn); a host that refuses gets its
   claim removed and is left out of the next choice;
4. the migration's destination is saved and ``live_migration`` cast to the
   source (see :mod:`shelvefix.compute.live_migration`).

Any failure before the cast gives the server back what the migration
holds (:meth:`LiveMigrationTask.rollback`: one write that also drops a
destination claimed for it).

A destination the user forces (nova's ``force=True``) skips the
scheduler: the server claims that host's node in placement with what it
held on the source (a new consumer: the source went to the migration),
and the host's check follows; a refusal removes that claim. The lab's
hosts have one node each, named as the host.
"""

from oslo_log import log as logging
from oslo_utils import excutils

from shelvefix.compute import power_state
from shelvefix.conductor import migrate
from shelvefix import exception

LOG = logging.getLogger(__name__)

#: The placement microversion of a forced destination's claim.
CLAIM_VERSION = '1.28'

#: How many hosts the task tries after the first one refused (nova's
#: ``migrate_max_retries``; nova's default, -1, tries every host).
MIGRATE_MAX_RETRIES = 5


class LiveMigrationTask(object):
    """One live migration, from the accepted record to the cast.

    :param destination: the host the user forces, or None (the scheduler
        chooses)
    :param migration: the ``accepted``
        :class:`~shelvefix.objects.migration.Migration`
    :param compute_rpcapi: a :class:`~shelvefix.compute.rpcapi.ComputeAPI`
    :param servicegroup_api: ``service_is_up(host)``, or None (every
        service up)
    :param query_client: the scheduler (``select_destinations``)
    :param report_client: a ``SchedulerReportClient``
    :param request_spec: the server's
        :class:`~shelvefix.scheduler.request_spec.RequestSpec`
    :param source_provider: the source node's provider uuid
    :param compute_nodes: ``{node name: provider uuid}`` (a forced
        destination's node is found there)
    """

    def __init__(self, context, instance, destination, block_migration,
                 disk_over_commit, migration, compute_rpcapi,
                 servicegroup_api, query_client, report_client,
                 request_spec=None, source_provider=None,
                 compute_nodes=None):
        self.context = context
        self.instance = instance
        self.destination = destination
        self.block_migration = block_migration
        self.disk_over_commit = disk_over_commit
        self.migration = migration
        self.source = instance.host
        self.migrate_data = None
        self.limits = None
        self.compute_rpcapi = compute_rpcapi
        self.servicegroup_api = servicegroup_api
        self.query_client = query_client
        self.report_client = report_client
        self.request_spec = request_spec
        self.source_provider = source_provider
        self.compute_nodes = dict(compute_nodes or {})
        self._held_allocations = None

    def execute(self):
        """Run the task; on failure :meth:`rollback`, then re-raise."""
        try:
            return self._execute()
        except Exception as ex:
            self.rollback(ex)
            raise

    def _execute(self):
        self._check_instance_is_active()
        self._check_host_is_up(self.source)
        if self.destination:
            self._check_destination_is_not_source()
            self._check_host_is_up(self.destination)
        self._held_allocations = migrate.replace_allocation_with_migration(
            self.context, self.instance, self.migration, self.report_client,
            self.source_provider)
        if self.destination:
            dest_node = self._claim_forced_destination()
        else:
            self.destination, dest_node, self.limits = (
                self._find_destination())
        self.migration.source_node = self.instance.node
        self.migration.dest_compute = self.destination
        self.migration.dest_node = dest_node
        self.migration.save()
        self.compute_rpcapi.live_migration(
            self.context, self.instance, self.destination,
            self.block_migration, host=self.source, migration=self.migration,
            migrate_data=self.migrate_data)
        return self.migration

    def rollback(self, ex):
        """Give the server back what the migration holds, if it took any."""
        if self._held_allocations:
            migrate.revert_allocation_for_migration(
                self.context, self.source_provider, self.instance,
                self.migration, self.report_client)

    def _check_instance_is_active(self):
        if self.instance.power_state not in (power_state.RUNNING,
                                             power_state.PAUSED):
            raise exception.InstanceInvalidState(
                instance_uuid=self.instance.uuid, attr='power_state',
                state=self.instance.power_state, method='live migrate')

    def _check_host_is_up(self, host):
        if (self.servicegroup_api is not None and
                not self.servicegroup_api.service_is_up(host)):
            raise exception.MigrationPreCheckError(
                reason='the compute service of %s is down' % host)

    def _check_destination_is_not_source(self):
        if self.destination == self.source:
            raise exception.Invalid(
                reason='instance %s cannot live-migrate to its own host %s'
                       % (self.instance.uuid, self.source))

    def _claim_forced_destination(self):
        """Claim the forced host for the server, then check it; its node.

        :raises Invalid: the host has no node known here
        :raises NoValidHost: placement refused the claim
        :raises MigrationPreCheckError: the host refused (its claim
            removed)
        """
        provider = self.compute_nodes.get(self.destination)
        if provider is None:
            raise exception.Invalid(reason='compute host %s has no node'
                                    % self.destination)
        held = (self._held_allocations or {}).get(self.source_provider, {})
        resources = held.get('resources') or dict(
            self.instance.flavor.resources)
        if not self.report_client.claim_resources(
                self.context, self.instance.uuid,
                {'allocations': {provider: {'resources': resources}}},
                self.instance.project_id, self.instance.user_id,
                CLAIM_VERSION, consumer_generation=None):
            raise exception.NoValidHost(
                reason='placement refused host %s for instance %s'
                       % (self.destination, self.instance.uuid))
        try:
            self._call_livem_checks_on_host(self.destination)
        except Exception:
            with excutils.save_and_reraise_exception():
                self._remove_host_allocations(provider)
        return self.destination

    def _call_livem_checks_on_host(self, destination):
        self.migrate_data = (
            self.compute_rpcapi.check_can_live_migrate_destination(
                self.context, self.instance, destination,
                self.block_migration, self.disk_over_commit, self.migration,
                self.limits))

    def _find_destination(self):
        """Choose, claim and check a host; ``(host, node, limits)``.

        :raises NoValidHost: the scheduler found none, or every host it
            chose refused (:data:`MIGRATE_MAX_RETRIES`)
        """
        attempted_hosts = [self.source]
        spec = self.request_spec
        spec.ensure_project_and_user_id(self.instance)
        for _attempt in range(MIGRATE_MAX_RETRIES + 1):
            spec.ignore_hosts = list(attempted_hosts)
            selection = self.query_client.select_destinations(
                self.context, spec, None, spec_obj=spec,
                instance_uuids=[self.instance.uuid], return_objects=True,
                return_alternates=False)[0][0]
            host = selection.service_host
            try:
                self.limits = selection.limits
                self._call_livem_checks_on_host(host)
            except (exception.Invalid,
                    exception.MigrationPreCheckError) as e:
                LOG.debug('Skipping host %(host)s: %(error)s',
                          {'host': host, 'error': e})
                attempted_hosts.append(host)
                self._remove_host_allocations(selection.compute_node_uuid)
                self.limits = None
                continue
            return host, selection.nodename, selection.limits
        raise exception.NoValidHost(
            reason='exceeded %d retries live-migrating instance %s'
                   % (MIGRATE_MAX_RETRIES, self.instance.uuid))

    def _remove_host_allocations(self, compute_node_uuid):
        """Undo the scheduler's claim of one node for the server."""
        self.report_client.remove_provider_tree_from_instance_allocation(
            self.context, self.instance.uuid, compute_node_uuid)
