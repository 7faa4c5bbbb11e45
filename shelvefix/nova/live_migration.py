"""nova's own services live-migrating a server, from the API to the end.

The race lab's ``live-migrate`` scenario (nova only, for now): a server
``ACTIVE`` on compute-1 is live-migrated with no host named, and ends
``ACTIVE`` on compute-2, both hosts' periodic audits running meanwhile.
:class:`LiveMigrationRun` starts as a resize's run does, before the move
(:class:`~.resize.ResizeRun`, :data:`ACTIVE_ON_SOURCE`). What runs is
nova's code, the actors:

``conductor``
    the API's part of nova's ``API.live_migrate`` (``MIGRATING`` saved only
    if no other task owns the server), then the conductor's
    ``live_migrate_instance``: the migration record (``accepted``, its
    source compute-1), then ``LiveMigrationTask``: the source's service
    up, the server's allocations on compute-1 moved to the migration, the
    scheduler's claim of compute-2, the destination's checks (an RPC call
    to compute-2's ``check_can_live_migrate_destination``, which calls
    compute-1's ``check_can_live_migrate_source``), the migration's
    destination saved, and ``live_migration`` cast to compute-1;
``compute-1``
    compute-1's service serving that cast: ``live_migration`` (the
    migration ``queued``) and the migration job it starts, run at once
    here: ``_do_live_migration`` (``preparing``; compute-2's
    ``pre_live_migration``, an RPC call; ``running``), the driver's live
    migration, which calls back ``_post_live_migration`` as libvirt's
    does on completion (the guest's clean-up, compute-2's
    ``post_live_migration_at_destination``, an RPC call that saves the
    server there, and the migration's allocations on compute-1 freed);
``periodic-1``, ``periodic-2``
    each host's ``update_available_resource``.

An RPC call runs the callee's method at once, in the caller's thread,
under the callee's service's locks (:mod:`~.bus`).

This module imports nova (see :mod:`shelvefix.nova`).
"""

from concurrent import futures
import contextlib

import fixtures
from nova.compute import task_states
from nova import exception as nova_exception
from nova.objects import migrate_data as migrate_data_obj
from oslo_messaging import opts as messaging_opts

from shelvefix.nova import deletion
from shelvefix.nova import doubles
from shelvefix.nova import harness
from shelvefix.nova import lifecycle
from shelvefix.nova import move_program
from shelvefix.nova import moves
from shelvefix.nova import program
from shelvefix.nova import resize
from shelvefix.nova import second_move
from shelvefix import race
from shelvefix.race import scenarios

SOURCE = moves.SOURCE
DESTINATION = moves.DESTINATION
#: The host a live migration retries on when its first destination's
#: pre-check fails (the ``precheck-fails`` fault).
THIRD = scenarios.THIRD
#: Where the run starts: ``ACTIVE`` on compute-1, no move yet.
ACTIVE_ON_SOURCE = scenarios.ACTIVE_ON_SOURCE


def run_now(executor_type, func, *args, **kwargs):
    """nova's ``spawn_on`` of a job, run at once in the calling thread.

    The live migration job runs in its service's actor: the explorer
    orders its steps as it orders the actor's.

    :returns: a done ``Future`` with the job's result or exception
    """
    future = futures.Future()
    try:
        future.set_result(func(*args, **kwargs))
    except Exception as e:
        future.set_exception(e)
    return future


class LiveMigrationDriver(doubles.HostDriver):
    """A hypervisor that live-migrates, calling back as libvirt's does.

    Its checks answer with libvirt's migrate data, the instance's path on
    storage both hosts share (as most clouds that live-migrate have it);
    ``live_migration`` moves the guest at once and calls ``post_method``,
    as libvirt's driver does when the migration completes, or, when
    ``live_migration`` is one of its ``failing`` calls (the
    ``live-migration-fails`` fault), ``recover_method``, as it does when
    the migration fails.

    :ivar refusals: a list the destinations share: while it holds
        anything, a destination's pre-check takes one item and refuses
        the migration (the ``precheck-fails`` fault: the first destination
        asked, whichever the scheduler picked)
    """

    refusals = ()

    def check_can_live_migrate_destination(
            self, context, instance, src_compute_info, dst_compute_info,
            block_migration=False, disk_over_commit=False):
        self._record('check_can_live_migrate_destination')
        if self.refusals:
            self.refusals.pop()
            raise nova_exception.MigrationPreCheckError(
                reason='%s cannot take the guest' % self.host)
        data = migrate_data_obj.LibvirtLiveMigrateData()
        data.filename = 'shelvefix'
        data.image_type = 'default'
        data.graphics_listen_addr_vnc = '127.0.0.1'
        data.graphics_listen_addr_spice = '127.0.0.1'
        data.serial_listen_addr = None
        data.block_migration = bool(block_migration)
        data.disk_over_commit = bool(disk_over_commit)
        data.disk_available_mb = self.inventory['DISK_GB'] * 1024
        data.is_shared_instance_path = True
        data.is_shared_block_storage = False
        return data

    def cleanup_live_migration_destination_check(self, context,
                                                 dest_check_data):
        self._record('cleanup_live_migration_destination_check')

    def check_can_live_migrate_source(self, context, instance,
                                      dest_check_data,
                                      block_device_info=None):
        self._record('check_can_live_migrate_source')
        return dest_check_data

    def check_source_migrate_data_at_dest(self, ctxt, instance,
                                          migrate_data, migration, limits,
                                          allocs):
        self._record('check_source_migrate_data_at_dest')
        return migrate_data

    def post_claim_migrate_data(self, context, instance, migrate_data,
                                claim):
        return migrate_data

    def get_instance_disk_info(self, instance, block_device_info=None):
        return '[]'

    def pre_live_migration(self, context, instance, block_device_info,
                           network_info, disk_info, migrate_data):
        self._record('pre_live_migration')
        return migrate_data

    def live_migration(self, context, instance, dest, post_method,
                       recover_method, block_migration=False,
                       migrate_data=None):
        self._record('live_migration', dest)
        if 'live_migration' in self.failing:
            recover_method(context, instance, dest, migrate_data)
            return
        post_method(context, instance, dest, block_migration, migrate_data)

    def rollback_live_migration_at_source(self, context, instance,
                                          migrate_data):
        self._record('rollback_live_migration_at_source')

    def post_live_migration(self, context, instance, block_device_info,
                            migrate_data=None):
        self._record('post_live_migration')
        self.running.discard(instance.uuid)

    def cleanup(self, context, instance, network_info, block_device_info=None,
                destroy_disks=True, migrate_data=None, destroy_vifs=True,
                destroy_secrets=True):
        self._record('cleanup', destroy_disks)
        self.running.discard(instance.uuid)

    def post_live_migration_at_source(self, context, instance, network_info):
        self._record('post_live_migration_at_source')

    def post_live_migration_at_destination(self, context, instance,
                                           network_info,
                                           block_migration=False,
                                           block_device_info=None):
        self._record('post_live_migration_at_destination')
        self.running.add(instance.uuid)


class NetworkAPI(doubles.NetworkAPI):
    """neutron without the port binding extension.

    A live migration then binds no port on the destination ahead of the
    move: the binding follows the server in ``migrate_instance_finish``.
    """

    def has_port_binding_extension(self, context=None, client=None):
        return False

    def cleanup_instance_network_on_host(self, context, instance, host):
        self._record('cleanup_instance_network_on_host')

    def supports_port_binding_extension(self, context):
        return False


class VirtAPI(object):
    """The compute's virt API: no external event to wait for.

    neutron without the port binding extension sends no
    ``network-vif-plugged`` the source must wait for before the move.
    """

    def __init__(self, host, events):
        self.host = host
        self.events = events

    @contextlib.contextmanager
    def wait_for_instance_event(self, instance, event_names, deadline=300,
                                error_callback=None, timeout=None):
        self.events.append(('%s virtapi.wait_for_instance_event' % self.host,
                            tuple(event_names)))
        yield


class LiveMigrationCloud(second_move.SecondMoveCloud):
    """nova's services around a server to be live-migrated.

    :param precheck_fails: the first destination the conductor asks (the
        scheduler's pick) refuses the migration in its pre-check; a third
        host, compute-3, is there for the conductor's retry
    """

    def __init__(self, precheck_fails=False, **kwargs):
        super(LiveMigrationCloud, self).__init__(**kwargs)
        self.precheck_fails = precheck_fails
        if precheck_fails:
            self.hosts = moves.HOSTS + (THIRD,)

    def _setUp(self):
        super(LiveMigrationCloud, self)._setUp()
        database = self.database
        # The timeout of the calls the live migration makes, an option of
        # oslo.messaging's RPC client, which the lab's bus does not load.
        conf = self.useFixture(harness.NovaConfig())
        conf.register_opts([opt for group, opts in
                            messaging_opts.list_opts() if group is None
                            for opt in opts
                            if opt.name == 'rpc_response_timeout'])

        def first_node(context, host):
            for node in database.compute_nodes.values():
                if node.host == host:
                    return node.obj_clone()
            raise nova_exception.ComputeHostNotFound(host=host)

        cloud = self
        for name, value in [
                ('nova.compute.manager.thread_pool_factory.spawn_on',
                 run_now),
                ('nova.conductor.tasks.live_migrate.neutron.API',
                 lambda: NetworkAPI(lifecycle.CONDUCTOR, cloud.run.events)),
                ('nova.objects.compute_node.ComputeNode.'
                 'get_first_node_by_host_for_old_compat',
                 doubles.class_call(first_node))]:
            self.useFixture(fixtures.MonkeyPatch(name, value))


class LiveMigrationRun(resize.ResizeRun):
    """One run: a server ``ACTIVE`` on compute-1, to be live-migrated."""

    def _build_host(self, host):
        super(LiveMigrationRun, self)._build_host(host)
        compute = self.computes[host]
        driver = LiveMigrationDriver(host, self.providers[host],
                                     lifecycle.INVENTORY, self.events)
        compute.driver = compute.rt.driver = driver
        compute.network_api = NetworkAPI(host, self.events)
        compute.virtapi = VirtAPI(host, self.events)
        harness.add_share_manager(compute, driver)
        # What nova's constructor sets for the live migrations.
        compute._waiting_live_migrations = {}
        compute._pending_dest_live_migrations = {}

    def _create_instance(self, start):
        """As a resize's run; compute-2 also serves the calls made to it.

        The scheduler's view of the hosts' servers is kept: compute-1
        reported the server as it runs there.
        """
        cloud = self.cloud
        cloud.router.timed_out = []
        for host in cloud.hosts:
            cloud.router.endpoints[host] = self._endpoint(host)
        uuid = super(LiveMigrationRun, self)._create_instance(start)
        if cloud.precheck_fails:
            refusals = ['the first destination asked']
            for host in cloud.hosts:
                self.computes[host].driver.refusals = refusals
        self.scheduler_info = {host: set() for host in cloud.hosts}
        self.scheduler_info[SOURCE].add(uuid)
        for compute in self.computes.values():
            compute.query_client.instance_info = self.scheduler_info
        return uuid

    # -- the actors ---------------------------------------------------------

    def live_migrate(self):
        """The API's live-migrate (no host), then nova's conductor."""
        instance = self.cloud.database.load(harness.context('api'),
                                            self.store.get(self.uuid))
        instance.task_state = task_states.MIGRATING
        instance.save(expected_task_state=[None])
        self.conductor.servicegroup_api = deletion.ServiceGroup()
        self.conductor.live_migrate_instance(
            harness.context(lifecycle.CONDUCTOR, is_admin=True), instance,
            {'host': None}, False, False, self.request_spec())
        return True

    # -- what happened --------------------------------------------------------

    def saved_migrations(self):
        """The migration's row once created, with the server's flavor."""
        if self.migration_uuid not in set(self.migrations.uuids()):
            return []
        row = dict(self.migrations.peek(self.migration_uuid))
        flavor = moves.library_flavor(moves.old_flavor())
        row['old_flavor'] = row['old_flavor'] or flavor
        row['new_flavor'] = row['new_flavor'] or flavor
        return [row]


class LiveMigrationProgram(move_program.NovaMoveProgram):
    """The ``live-migrate`` scenario on a set-up :class:`LiveMigrationCloud`.

    :param without: actors left out (the ``periodic-*`` audits only)
    """

    def __init__(self, cloud, scenario=race.LIVE_MIGRATE, without=()):
        if set(without) - {'periodic-1', 'periodic-2'}:
            raise ValueError('the live migration needs its conductor and '
                             'compute-1')
        super(LiveMigrationProgram, self).__init__(cloud, scenario, without)
        #: The conductor's and compute-1's calls run on the other hosts.
        self.called = tuple(host for host in cloud.hosts if host != SOURCE)

    def _start(self):
        return self.cloud.start(ACTIVE_ON_SOURCE, LiveMigrationRun)

    def _actors(self, run, timeout=60.0, done=None):
        done = done or {}
        funcs = {
            'conductor': run.live_migrate,
            'compute-1': lambda: run.serve(
                SOURCE, timeout=timeout,
                give_up=program.after(done, 'conductor')),
            'periodic-1': lambda: run.periodic(SOURCE),
            'periodic-2': lambda: run.periodic(DESTINATION),
        }
        return self._as_services(funcs)
