"""nova's own services reverting or confirming a cross-cell resize.

The race lab's ``cross-cell-revert`` and ``cross-cell-confirm`` scenarios
(nova only). A server was resized from ``m1.small`` on compute-1, in
``cell1``, to ``m1.medium`` on compute-2, in ``cell2``, by nova's
``CrossCellMigrationTask``; :class:`CrossCellRun` starts where that task
leaves it (set, not explored: the task needs image, volume and hypervisor
services the harness does not have):

* in ``cell2``, the server ``RESIZED`` on compute-2 with its migration
  context, both flavors and ``old_vm_state``, and the migration
  ``finished`` (nova's ``finish_snapshot_based_resize_at_dest``);
* in ``cell1``, its hidden copy: ``hidden``, still on compute-1 with
  ``m1.small``, powered off, ``RESIZE_MIGRATED``, with the same migration
  context, and the migration ``post-migrating``, the status
  ``prep_snapshot_based_resize_at_source`` leaves it in (nothing in the
  task writes ``finished`` there);
* the instance mapping pointing at ``cell2``;
* placement holding the old flavor on compute-1 for the migration and the
  new one on compute-2 for the server, both trackers having audited
  their node once, each in its own cell.

The cells are two databases (:mod:`~.cross_cell_stores`,
:mod:`~.cross_cell_database`). What runs is nova's code, the actors:

``conductor``
    ``cross-cell-revert``: the API's part of ``API.revert_resize`` (the
    server ``RESIZE_REVERTING``, the migration ``reverting``, in cell2),
    then the conductor's ``revert_snapshot_based_resize``
    (``RevertResizeTask``): the cell1 copy and migration updated from
    cell2's, the mapping back to cell1 (the copy shown, cell2's hidden),
    compute-2's ``revert_snapshot_based_resize_at_dest`` (an RPC call: the
    guest destroyed, the tracker's move claim dropped), cell2's instance
    hard-deleted, compute-1's
    ``finish_revert_snapshot_based_resize_at_source`` (an RPC call: the
    old flavor back, the migration's allocations moved back to the
    server, the guest started); ``cross-cell-confirm``: the API's part of
    ``API.confirm_resize`` (the migration ``confirming``), then
    ``confirm_snapshot_based_resize`` (``ConfirmResizeTask``):
    compute-1's ``confirm_snapshot_based_resize_at_source`` (an RPC call:
    the guest's disks, the move claim and the migration's allocations on
    compute-1), cell1's copy hard-deleted, the server ``ACTIVE`` in cell2;
``periodic-1``, ``periodic-2``
    each host's ``update_available_resource``, in its own cell.

A run is judged as the other move scenarios' are
(:func:`~.move_program.classify`) on the records of the cell the mapping
points to at the end, and (:meth:`CrossCellRun.end_labels`) the cell the
server left must no longer have it (:data:`COPY_LEFT`).

This module imports nova (see :mod:`shelvefix.nova`).
"""

import copy

from nova.compute import power_state
from nova.compute import task_states
from nova.compute import vm_states
from nova import context as nova_context
from nova import objects
from oslo_messaging import opts as messaging_opts
from oslo_utils import timeutils
from oslo_utils import uuidutils

from shelvefix import explorer
from shelvefix.nova import bus
from shelvefix.nova import cross_cell_database
from shelvefix.nova import cross_cell_stores as cells_db
from shelvefix.nova import doubles
from shelvefix.nova import harness
from shelvefix.nova import lifecycle
from shelvefix.nova import move_database
from shelvefix.nova import move_program
from shelvefix.nova import moves
from shelvefix.nova import second_move
from shelvefix import race
from shelvefix.race import steps

SOURCE = moves.SOURCE
DESTINATION = moves.DESTINATION
CELL1 = cells_db.CELL1
CELL2 = cells_db.CELL2
RESIZED = moves.RESIZED
#: The server is still in the cell it left (not destroyed there).
COPY_LEFT = 'instance left in the other cell'
#: The scenarios :class:`CrossCellProgram` runs.
SCENARIOS = (race.CROSS_CELL_REVERT, race.CROSS_CELL_CONFIRM)


class Driver(doubles.HostDriver):
    """A hypervisor that also cleans up a guest's leftovers on request."""

    def cleanup(self, context, instance, network_info, block_device_info=None,
                destroy_disks=True, migrate_data=None, destroy_vifs=True,
                destroy_secrets=True):
        """What is left of a guest (its disks) goes."""
        self._record('cleanup', destroy_disks)
        self.running.discard(instance.uuid)


class NetworkAPI(doubles.NetworkAPI):
    """neutron, with the port bindings a cross-cell move deletes."""

    def cleanup_instance_network_on_host(self, context, instance, host):
        """The ports' bindings to ``host`` are deleted."""
        self._record('cleanup_instance_network_on_host')


class CrossCellCloud(moves.NovaMoveCloud):
    """nova's services around a server resized from cell1 to cell2.

    :ivar cells: the :class:`~.cross_cell_stores.Cells`
    """

    def _setUp(self):
        super(CrossCellCloud, self)._setUp()
        # The timeout of the RPC calls the tasks make, an option of
        # oslo.messaging's RPC client, which the lab's bus does not load.
        conf = self.useFixture(harness.NovaConfig())
        conf.register_opts([opt for group, opts in
                            messaging_opts.list_opts() if group is None
                            for opt in opts
                            if opt.name == 'rpc_response_timeout'])
        self.cells = cells_db.Cells(self.locks)
        self.useFixture(cross_cell_database.CellDatabase(self))


class CrossCellRun(moves.MoveRun):
    """One run: the server resized across cells, not yet confirmed.

    Its ``store`` and ``migrations`` are the cells'
    (:class:`~.cross_cell_stores.Routed`): read from the run's own thread
    (the judge), those of the cell the mapping points to. The migration
    rows load with ``cross_cell_move`` False (the moves' loader), which
    nothing on these paths reads: the API, which does, is the run's own.
    """

    def _build_host(self, host):
        super(CrossCellRun, self)._build_host(host)
        compute = self.computes[host]
        driver = Driver(host, self.providers[host], lifecycle.INVENTORY,
                        self.events)
        compute.driver = compute.rt.driver = driver
        compute.network_api = NetworkAPI(host, self.events)
        second_move.manager_state(compute)

    def _create_instance(self, start):
        if start != RESIZED:
            raise ValueError('a cross-cell run starts %r, not %r'
                             % (RESIZED, start))
        cloud = self.cloud
        uuid = uuidutils.generate_uuid()
        self.migration_uuid = uuidutils.generate_uuid()
        cloud.cells.reset(uuid, CELL2)
        # The stubs' one instance and migration store are the cells'.
        self.store = cloud.database.store = cells_db.Routed(
            cloud.cells, 'instances')
        self.migrations = cells_db.Routed(cloud.cells, 'migrations')
        cloud.move_database.migrations = self.migrations
        cloud.move_database.extra = {}
        cloud.move_database.next_uuid = uuidutils.generate_uuid()
        cloud.database.static = lifecycle.static_fields(uuid)
        cloud.router.timed_out = []
        for host in moves.HOSTS:
            cloud.router.endpoints[host] = self._endpoint(host)
        old, new = moves.old_flavor(), moves.new_flavor()
        for cell, row, status in self._rows(uuid, old, new):
            cloud.cells.cells[cell].instances.create(row)
            cloud.cells.cells[cell].migrations.create({
                'uuid': self.migration_uuid, 'instance_uuid': uuid,
                'source_compute': SOURCE, 'source_node': SOURCE,
                'dest_compute': DESTINATION, 'dest_node': DESTINATION,
                'migration_type': 'resize', 'status': status,
                'old_flavor': moves.library_flavor(old),
                'new_flavor': moves.library_flavor(new)})
        self._claim(uuid, old, new)
        self.computes[DESTINATION].driver.running.add(uuid)
        self.scheduler_info = {SOURCE: {uuid}, DESTINATION: {uuid}}
        for compute in self.computes.values():
            compute.query_client.instance_info = self.scheduler_info
        # Each tracker audits its node once, in its own cell.
        for host in moves.HOSTS:
            cloud.locks.running(host, lambda host=host: self.rts[
                host].update_available_resource(self.admin, host))()
        return uuid

    def _rows(self, uuid, old, new):
        """Each cell's row of the server and status of its migration."""
        context = objects.MigrationContext(
            instance_uuid=uuid, migration_id=move_database.MIGRATION_ID,
            new_numa_topology=None, old_numa_topology=None,
            new_pci_devices=None, old_pci_devices=None,
            new_pci_requests=None, old_pci_requests=None,
            new_resources=None, old_resources=None)
        common = {
            'id': 1, 'uuid': uuid, 'project_id': harness.PROJECT,
            'user_id': harness.USER, 'availability_zone': 'nova',
            'launched_on': SOURCE, 'launched_at': timeutils.utcnow(),
            'old_flavor': old, 'new_flavor': new,
            'migration_context': context,
            'system_metadata': {'old_vm_state': vm_states.ACTIVE},
        }
        target = dict(
            copy.deepcopy(common), vm_state=vm_states.RESIZED,
            task_state=None, power_state=power_state.RUNNING,
            host=DESTINATION, node=DESTINATION, compute_id=2, hidden=False,
            flavor=new, instance_type_id=new.id, vcpus=new.vcpus,
            memory_mb=new.memory_mb, root_gb=new.root_gb,
            ephemeral_gb=new.ephemeral_gb)
        source = dict(
            copy.deepcopy(common), vm_state=vm_states.ACTIVE,
            task_state=task_states.RESIZE_MIGRATED,
            power_state=power_state.SHUTDOWN, host=SOURCE, node=SOURCE,
            compute_id=1, hidden=True, flavor=old, instance_type_id=old.id,
            vcpus=old.vcpus, memory_mb=old.memory_mb, root_gb=old.root_gb,
            ephemeral_gb=old.ephemeral_gb)
        return [(CELL2, target, 'finished'), (CELL1, source, 'post-migrating')]

    def _claim(self, uuid, old, new):
        """Placement as the move left it (nova's report client's calls)."""
        client, src, dst = (self.scheduler_client, self.providers[SOURCE],
                            self.providers[DESTINATION])
        harness.NovaShelveScenario.assert_claimed(client.claim_resources(
            self.admin, uuid, {'allocations': {
                src: {'resources': moves.resources(old)}}},
            harness.PROJECT, harness.USER, harness.CLAIM_VERSION))
        # The conductor's swap, then the scheduler's claim of compute-2.
        client.move_allocations(self.admin, uuid, self.migration_uuid)
        harness.NovaShelveScenario.assert_claimed(client.claim_resources(
            self.admin, uuid, {'allocations': {
                dst: {'resources': moves.resources(new)}}},
            harness.PROJECT, harness.USER, harness.CLAIM_VERSION))
        self.holdings = {uuid: {dst}, self.migration_uuid: {src}}

    def _api(self):
        """The API's context, targeted at the mapped cell, and its records.

        :returns: ``(context, instance, migration)``, the migration the
            ``finished`` one
        """
        context = harness.context('api')
        mapping = objects.InstanceMapping.get_by_instance_uuid(
            context, self.uuid)
        nova_context.set_target_cell(context, mapping.cell_mapping)
        instance = objects.Instance.get_by_uuid(context, self.uuid)
        migration = objects.Migration.get_by_instance_and_status(
            context.elevated(), self.uuid, 'finished')
        return context, instance, migration

    @staticmethod
    def _cast(instance, migration):
        """What the conductor gets of the API's cast: its own copies."""
        context = bus.received(harness.context(lifecycle.CONDUCTOR,
                                               is_admin=True))
        instance, migration = instance.obj_clone(), migration.obj_clone()
        instance._context = migration._context = context
        return context, instance, migration

    # -- the actors ---------------------------------------------------------

    def revert(self):
        """The API reverts the resize; the conductor's revert task."""
        context, instance, migration = self._api()
        instance.task_state = task_states.RESIZE_REVERTING
        instance.save(expected_task_state=[None])
        migration.status = 'reverting'
        migration.save()
        self.conductor.revert_snapshot_based_resize(
            *self._cast(instance, migration))
        return True

    def confirm(self):
        """The API confirms the resize; the conductor's confirm task."""
        context, instance, migration = self._api()
        migration.status = 'confirming'
        migration.save()
        self.conductor.confirm_snapshot_based_resize(
            *self._cast(instance, migration))
        return True

    # -- what happened --------------------------------------------------------

    def copies(self):
        """The cells whose database still has the server, in order."""
        return [name for name, cell in sorted(self.cloud.cells.cells.items())
                if cell.instances.has(self.uuid)]

    def mapped_cell(self):
        """The cell the instance mapping points to."""
        return self.cloud.cells.mapped().name

    def saved_migrations(self):
        """The migration's row in the mapped cell (none if it went)."""
        if self.migration_uuid not in set(self.migrations.uuids()):
            return []
        return [self.migrations.peek(self.migration_uuid)]

    def saved_migration(self):
        """The migration's row in the mapped cell, or None."""
        rows = self.saved_migrations()
        return rows[0] if rows else None

    def end_labels(self):
        """:data:`COPY_LEFT` if the cell the server left still has it."""
        if [cell for cell in self.copies() if cell != self.mapped_cell()]:
            return [COPY_LEFT]
        return []

    def end_state(self):
        """What the run ended with, in the cell the mapping points to.

        :returns: ``{'cell', 'copies', 'instance': (vm_state, task_state,
            host), 'hidden', 'flavor', 'migration', 'held',
            'migration_held'}``
        """
        host_of = {rp: host for host, rp in self.providers.items()}
        row = self.saved()
        migration = self.saved_migration()
        return {
            'cell': self.mapped_cell(), 'copies': self.copies(),
            'instance': (row['vm_state'], row['task_state'], row['host']),
            'hidden': row['hidden'], 'flavor': row['flavor'].name,
            'migration': migration and migration['status'],
            'held': sorted(host_of[rp] for rp in self.held()),
            'migration_held': sorted(
                host_of[rp] for rp in self.held(self.migration_uuid)),
        }


class CrossCellProgram(move_program.NovaMoveProgram):
    """A cross-cell scenario on a set-up :class:`CrossCellCloud`.

    :param without: actors left out (the ``periodic-*`` audits only)
    """

    #: The conductor's calls run on both hosts.
    called = (SOURCE, DESTINATION)

    def __init__(self, cloud, scenario=race.CROSS_CELL_REVERT, without=()):
        if scenario not in SCENARIOS:
            raise ValueError('not a cross-cell scenario: %s' % scenario)
        if set(without) - {'periodic-1', 'periodic-2'}:
            raise ValueError('the cross-cell move needs its conductor')
        super(CrossCellProgram, self).__init__(cloud, scenario, without)

    def _start(self):
        return self.cloud.start(RESIZED, CrossCellRun)

    def _actors(self, run, timeout=60.0, done=None):
        funcs = {
            'conductor': (run.revert if self.scenario ==
                          race.CROSS_CELL_REVERT else run.confirm),
            'periodic-1': lambda: run.periodic(SOURCE),
            'periodic-2': lambda: run.periodic(DESTINATION),
        }
        return self._as_services(funcs)

    def __call__(self, controller):
        spec = super(CrossCellProgram, self).__call__(controller)
        run = self.cloud.run
        names = steps.Names([
            (run.uuid, '{instance}'), (run.migration_uuid, '{migration}')])
        undo = cells_db.instrument(controller, self.cloud.cells, names)

        def check(results):
            undo()
            return spec.check(results)
        return spec._replace(check=check)


def explore(cloud, scenario=race.CROSS_CELL_REVERT, reduce=True,
            max_runs=None, without=()):
    """Explore a cross-cell scenario's interleavings on ``cloud``.

    :returns: the :class:`~shelvefix.explorer.Exploration`
    """
    return explorer.explore(CrossCellProgram(cloud, scenario, without),
                            reduce=reduce, max_runs=max_runs)
