"""nova's own services around one moving server: resize confirm and revert.

:class:`NovaMoveCloud` is the nova counterpart of
:class:`shelvefix.race.move_cloud.MoveCloud`, built on the lifecycle
harness (:class:`~.lifecycle.NovaCloud`: the same hosts, locks, RPC
transport, database stubs and placement backend). What runs is nova's code,
from the installed release:

* on compute-1, the source, ``ComputeManager.confirm_resize`` (with
  ``_confirm_resize`` and ``_delete_allocation_after_move``) and
  ``finish_revert_resize`` (with ``_finish_revert_resize`` and
  ``_revert_allocation``, which moves the migration's allocations back to
  the server);
* on compute-2, the destination, ``revert_resize``, which casts
  ``finish_revert_resize`` to compute-1 through nova's compute RPC API;
* on each host nova's ``ResourceTracker``: ``drop_move_claim_at_source``
  and ``drop_move_claim_at_dest``, and the periodic audit
  ``update_available_resource``, down to
  ``_update_usage_from_migrations`` and
  ``_remove_deleted_instances_allocations``;
* before compute-1's (or compute-2's) manager, the API's part, in the
  order of nova's ``API.confirm_resize`` (migration ``confirming``) and
  ``API.revert_resize`` (the server ``RESIZE_REVERTING``, then the
  migration ``reverting``).

The server starts resized from ``m1.small`` on compute-1 to ``m1.medium``
on compute-2 and not yet confirmed, as nova leaves it after
``finish_resize``: ``RESIZED`` on compute-2 with its migration context and
both flavors, the migration ``finished``, placement holding the old flavor
on compute-1 for the migration and the new one on compute-2 for the
server (moved and claimed with nova's report client), and both trackers
having audited their node once. That state is set, not explored: the
resize itself (``prep_resize``, ``resize_instance``, ``finish_resize``)
needs image, volume and hypervisor services the harness does not have.

The migration records live in a shelvefix
:class:`~shelvefix.objects.migration.MigrationStore`, read and written by
nova's migration methods (:class:`~.move_database.MoveDatabase`), so that
the explorer schedules every access to them, as it does the instance's.
An evacuation's run is :mod:`~.evacuation`'s.

This module imports nova (see :mod:`shelvefix.nova`).
"""

import fixtures
from nova.compute import power_state
from nova.compute import task_states
from nova.compute import vm_states
import nova.conf
from nova import objects
from oslo_utils import timeutils
from oslo_utils import uuidutils

from shelvefix.nova import doubles
from shelvefix.nova import harness
from shelvefix.nova import lifecycle
from shelvefix.nova import move_database
from shelvefix.objects import instance as instance_obj
from shelvefix.objects import migration as migration_obj

SOURCE = lifecycle.SOURCE
DESTINATION = lifecycle.DESTINATION
HOSTS = lifecycle.HOSTS
RESIZED = 'resized'
DriverFailed = doubles.DriverFailed
CONF = nova.conf.CONF

old_flavor = lifecycle.flavor


def new_flavor():
    """The flavor the server is resized to."""
    return lifecycle.flavor(flavor_id=2, name='m1.medium', vcpus=2,
                            memory_mb=1024, root_gb=20)


def resources(flavor):
    """What placement holds for one server of ``flavor``."""
    return {'VCPU': flavor.vcpus, 'MEMORY_MB': flavor.memory_mb,
            'DISK_GB': flavor.root_gb + flavor.ephemeral_gb}


def library_flavor(flavor):
    """The shelvefix :class:`~shelvefix.objects.instance.Flavor` of one.

    The end-state checks (:mod:`shelvefix.race.move_outcomes`) read the
    resources a flavor implies from it.
    """
    if flavor is None:
        return None
    return instance_obj.Flavor(
        name=flavor.name, vcpus=flavor.vcpus, memory_mb=flavor.memory_mb,
        root_gb=flavor.root_gb, ephemeral_gb=flavor.ephemeral_gb)


class NovaMoveCloud(lifecycle.NovaCloud):
    """nova's services around a resized server; one :class:`MoveRun` at a time.

    :param backend: ``'double'`` or ``'real'``
    :param manager_cls: the compute manager class of both hosts
    :param tracker_cls: the resource tracker class of both hosts
    :param failing: names of driver methods that fail: compute-1's on a
        resized server (``confirm_migration``: bug 1821594's fault),
        compute-2's on an evacuated one (``spawn``)
    :param claim_fails: compute-2's tracker refuses an evacuated server's
        rebuild claim (``ComputeResourcesUnavailable``)
    :param guest_lost: compute-1's hypervisor no longer has an evacuated
        server's guest (the host was redeployed while it was down)
    """

    def __init__(self, backend='double', failing=(), claim_fails=False,
                 guest_lost=False, **kwargs):
        super(NovaMoveCloud, self).__init__(backend=backend, **kwargs)
        self.failing = tuple(failing)
        self.claim_fails = claim_fails
        self.guest_lost = guest_lost

    def _setUp(self):
        super(NovaMoveCloud, self)._setUp()
        self.move_database = self.useFixture(
            move_database.MoveDatabase(self.database))
        self.useFixture(move_database.DeletionDatabase(self))
        for name in ('notify_usage_exists', 'notify_about_instance_rebuild',
                     'notify_about_compute_task_error'):
            self.useFixture(fixtures.MonkeyPatch(
                'nova.compute.utils.' + name,
                self.database._record('notify.' + name)))
        # The legacy notifier of the conductor's error path.
        self.useFixture(fixtures.MonkeyPatch(
            'nova.rpc.get_notifier',
            lambda service, host=None: doubles.Notifier(
                self.database.events, service)))

    def start(self, start=RESIZED, run_cls=None):
        """A fresh run: a :class:`MoveRun` (or ``run_cls``) from ``start``."""
        self.locks.reset()
        self.database.events = []
        self.run = (run_cls or MoveRun)(self, start)
        self.router.transport = self.run.transport
        # After the run's set-up: the faults hit the actors' requests.
        self.arm_faults()
        return self.run


class MoveRun(lifecycle.Run):
    """One run: the services, the resized server and its migration.

    :ivar migrations: the migration store
    :ivar migration_uuid: the migration's uuid (its placement consumer)
    :ivar scheduler_info: the scheduler's view of each host's servers, as
        the computes' casts leave it (see :class:`~.doubles.SchedulerRPC`),
        for a run that starts resized; None for the others
    """

    scheduler_info = None

    def _create_instance(self, start):
        if start != RESIZED:
            raise ValueError('a move run starts %r, not %r' % (RESIZED,
                                                               start))
        cloud = self.cloud
        self.migrations = migration_obj.MigrationStore()
        cloud.move_database.migrations = self.migrations
        cloud.move_database.extra = {}
        cloud.move_database.next_uuid = uuidutils.generate_uuid()
        self.computes[SOURCE].driver.failing = cloud.failing
        uuid = self._create_resized(old_flavor(), new_flavor())
        for host in cloud.hosts:
            self.rts[host].update_available_resource(self.admin, host)
        return uuid

    def _create_resized(self, old, new):
        uuid = uuidutils.generate_uuid()
        self.migration_uuid = uuidutils.generate_uuid()
        self.cloud.database.static = lifecycle.static_fields(uuid)
        context = objects.MigrationContext(
            instance_uuid=uuid, migration_id=move_database.MIGRATION_ID,
            new_numa_topology=None, old_numa_topology=None,
            new_pci_devices=None, old_pci_devices=None,
            new_pci_requests=None, old_pci_requests=None,
            new_resources=None, old_resources=None)
        self.store.create({
            'id': 1, 'uuid': uuid, 'project_id': harness.PROJECT,
            'user_id': harness.USER, 'availability_zone': 'nova',
            'vm_state': vm_states.RESIZED, 'task_state': None,
            'power_state': power_state.RUNNING,
            'host': DESTINATION, 'node': DESTINATION,
            'launched_on': SOURCE, 'compute_id': 2,
            'launched_at': timeutils.utcnow(),
            'flavor': new, 'old_flavor': old, 'new_flavor': new,
            'instance_type_id': new.id, 'vcpus': new.vcpus,
            'memory_mb': new.memory_mb, 'root_gb': new.root_gb,
            'ephemeral_gb': new.ephemeral_gb,
            'migration_context': context,
            'system_metadata': {'old_vm_state': vm_states.ACTIVE},
        })
        self.migrations.create({
            'uuid': self.migration_uuid, 'instance_uuid': uuid,
            'source_compute': SOURCE, 'source_node': SOURCE,
            'dest_compute': DESTINATION, 'dest_node': DESTINATION,
            'migration_type': 'resize', 'status': 'finished',
            'old_flavor': library_flavor(old),
            'new_flavor': library_flavor(new),
        })
        client, src, dst = (self.scheduler_client, self.providers[SOURCE],
                            self.providers[DESTINATION])
        harness.NovaShelveScenario.assert_claimed(client.claim_resources(
            self.admin, uuid, {'allocations': {
                src: {'resources': resources(old)}}},
            harness.PROJECT, harness.USER, harness.CLAIM_VERSION))
        # The conductor's swap, then the scheduler's claim of compute-2.
        client.move_allocations(self.admin, uuid, self.migration_uuid)
        harness.NovaShelveScenario.assert_claimed(client.claim_resources(
            self.admin, uuid, {'allocations': {
                dst: {'resources': resources(new)}}},
            harness.PROJECT, harness.USER, harness.CLAIM_VERSION))
        self.computes[DESTINATION].driver.running.add(uuid)
        self.holdings = {uuid: {dst}, self.migration_uuid: {src}}
        # Both hosts reported the server to the scheduler: compute-1 as it
        # ran there, compute-2 as the resize finished.
        self.scheduler_info = {SOURCE: {uuid}, DESTINATION: {uuid}}
        for compute in self.computes.values():
            compute.query_client.instance_info = self.scheduler_info
        return uuid

    def _endpoint(self, host):
        """``host``'s service, serving the RPC calls made to it."""
        return (lambda func: self.cloud.locks.running(host, func),
                self.computes[host])

    def _api_load(self, actor):
        context = harness.context(actor)
        instance = self.cloud.database.load(context,
                                            self.store.get(self.uuid))
        migration = objects.Migration.get_by_instance_and_status(
            context.elevated(), self.uuid, 'finished')
        return context, instance, migration

    # -- the actors ---------------------------------------------------------

    def confirm(self):
        """The API confirms the resize; compute-1's ``confirm_resize``."""
        context, instance, migration = self._api_load('api')
        migration.status = 'confirming'
        migration.save()
        self.computes[SOURCE].confirm_resize(
            harness.context(SOURCE, is_admin=True), instance, migration)
        return True

    def revert(self):
        """The API reverts the resize; compute-2's ``revert_resize``."""
        context, instance, migration = self._api_load('api')
        instance.task_state = task_states.RESIZE_REVERTING
        instance.save(expected_task_state=[None])
        migration.status = 'reverting'
        migration.save()
        self.computes[DESTINATION].revert_resize(
            harness.context(DESTINATION, is_admin=True), instance,
            migration, self.request_spec())
        return True

    # -- what happened --------------------------------------------------------

    def held(self, consumer=None):
        """``{rp_uuid: resources}`` placement holds for a consumer."""
        allocations = self.scheduler_client.get_allocs_for_consumer(
            self.admin, consumer or self.uuid)['allocations']
        return {rp: alloc['resources'] for rp, alloc in allocations.items()}

    def saved_migration(self):
        return self.migrations.peek(self.migration_uuid)

    def usage(self):
        """``{host: usage}`` each tracker counts on its node.

        From the compute node record the tracker keeps, less what nova
        reserves for the host. A tracker with no record yet (a service
        that started again, before its first audit) counts nothing and is
        left out: its first audit follows its start-up.
        """
        counted = {}
        for host, rt in self.rts.items():
            node = rt.compute_nodes.get(host)
            if node is None:
                continue
            counted[host] = {
                'VCPU': node.vcpus_used - CONF.reserved_host_cpus,
                'MEMORY_MB': node.memory_mb_used -
                CONF.reserved_host_memory_mb,
                'DISK_GB': node.local_gb_used -
                CONF.reserved_host_disk_mb // 1024,
            }
        return counted

    def end_state(self):
        """What the run ended with: the records, and who holds what where.

        :returns: ``{'instance': (vm_state, task_state, host),
            'migration': status, 'held': hosts, 'migration_held': hosts}``
        """
        host_of = {rp: host for host, rp in self.providers.items()}
        row = self.saved()
        return {
            'instance': (row['vm_state'], row['task_state'], row['host']),
            'migration': self.saved_migration()['status'],
            'held': sorted(host_of[rp] for rp in self.held()),
            'migration_held': sorted(
                host_of[rp] for rp in self.held(self.migration_uuid)),
        }

    def remove_from_placement(self):
        for consumer in (self.uuid, self.migration_uuid):
            self.scheduler_client.delete_allocation_for_instance(
                self.admin, consumer, force=True)
