"""The cloud of the cross-cell scenarios: two hosts in two cells.

compute-1 is in ``cell1``, compute-2 in ``cell2``; each cell is an instance
store and a migration store (:class:`~shelvefix.objects.cells.Cells`), each
host's tracker audits from its own cell's, and the instance mapping says
which cell the server is in. :class:`CrossCellCloud` starts where nova's
``CrossCellMigrationTask`` leaves a server resized from ``m1.small`` on
compute-1 to ``m1.medium`` on compute-2 (set up by the library's code, not
explored):

* the conductor's :class:`~shelvefix.conductor.migrate.MigrationTask` in
  cell1: the migration, the server's allocations on compute-1 moved to
  it, the scheduler's claim of compute-2 for the server; its
  ``prep_resize`` cast is taken off compute-2's queue unserved (nova's
  task runs the cross-cell task instead of casting, for a host of
  another cell);
* what the cross-cell task does next: the server and the migration copied
  into cell2 (the copy hidden), compute-2's resize claim there, the
  source's copy powered off, ``RESIZE_MIGRATED``, its migration
  ``post-migrating``; the server ``RESIZED`` on compute-2 in cell2 with
  the migration ``finished``, shown, the mapping pointing at cell2 and
  cell1's copy hidden; the scheduler told the server is on compute-2;
* both hosts' audits, each in its cell.

Both hosts report to one scheduler view
(:class:`~shelvefix.compute.collaborators.SchedulerQueryClient`), which
the judge reads (:meth:`CrossCellCloud.end_labels`). The programs are
:mod:`shelvefix.race.cross_cell`'s.
"""

from oslo_utils import uuidutils

from shelvefix.compute import collaborators
from shelvefix.compute import manager as manager_mod
from shelvefix.compute import power_state
from shelvefix.compute import resource_tracker
from shelvefix.compute import rpcapi
from shelvefix.compute import task_states
from shelvefix.compute import vm_states
from shelvefix.conductor import migrate
from shelvefix.explorer import model
from shelvefix.objects import cells as cells_obj
from shelvefix.objects import instance as instance_obj
from shelvefix.objects import migration as migration_obj
from shelvefix.race import cloud as cloud_mod
from shelvefix.race import move_cloud
from shelvefix.race import move_outcomes
from shelvefix.race import scenario
from shelvefix.race import steps
from shelvefix.scheduler.client import report
from shelvefix.scheduler import request_spec

SOURCE = move_cloud.SOURCE
DESTINATION = move_cloud.DESTINATION
HOSTS = move_cloud.HOSTS
CELL1 = cells_obj.CELL1
CELL2 = cells_obj.CELL2
#: The cell of each compute host.
HOST_CELLS = {SOURCE: CELL1, DESTINATION: CELL2}
#: The flavors of the resize.
OLD_FLAVOR = scenario.FLAVOR
NEW_FLAVOR = instance_obj.Flavor(name='m1.medium', vcpus=2, memory_mb=1024,
                                 root_gb=20)
#: The cell the server left still has it (the nova target's label too).
COPY_LEFT = 'instance left in the other cell'


class CellStepper(steps.StoreStepper):
    """A cell store's interceptor: its rows named after their cell.

    A hard delete of an instance also writes the cell's migration rows of
    the instance (they go in the same transaction).
    """

    def __init__(self, controller, store, wait_label, names, kind,
                 migrations=None):
        super(CellStepper, self).__init__(controller, store, wait_label,
                                          names, kind=kind)
        self.migrations = migrations

    def __call__(self, op, uuid, guard=None):
        if op != 'destroy' or self.migrations is None:
            return super(CellStepper, self).__call__(op, uuid, guard)
        kind = self.migrations.kind
        resource = {self.names('%s:%s' % (self.kind, uuid)),
                    '%s:*' % self.kind, '%s:*' % kind}
        resource.update(self.names('%s:%s' % (kind, each)) for each in
                        self.migrations.store.of_instance(uuid))
        return self.controller.step(
            self.kind, frozenset(resource), access=model.WRITE,
            label=self.LABELS[op] % self.kind)


class _Kind(object):
    """A cell's migration store and the name of its rows."""

    def __init__(self, store, kind):
        self.store = store
        self.kind = kind


class CrossCellCloud(cloud_mod.TwoHosts):
    """Two hosts in two cells around a server resized across them.

    :param placement: a set-up placement fixture
    :param providers: ``(src, dst)`` from
        :func:`~shelvefix.race.move_cloud.create_providers` (compute-1
        disabled: the scheduler places the resize on compute-2)
    :param manager_cls: the compute manager class of both hosts
    :param tracker_cls: the resource tracker class of both hosts
    :param sleep: the report client's wait between retries (see
        :class:`~shelvefix.race.move_cloud.MoveCloud`)
    :param failing: ``{host: driver method names that fail}``
    :ivar cells: the :class:`~shelvefix.objects.cells.Cells`
    :ivar query_client: the scheduler's view of each host's servers
    """

    def __init__(self, placement, providers,
                 manager_cls=manager_mod.ComputeManager,
                 tracker_cls=resource_tracker.ResourceTracker, sleep=None,
                 failing=None):
        failing = failing or {}
        self.cells = cells_obj.Cells(HOST_CELLS)
        self.query_client = collaborators.SchedulerQueryClient()
        self.drivers = {host: collaborators.RecordingDriver(
            failing=failing.get(host, ())) for host in HOSTS}
        self._wire(
            placement, providers, report.SchedulerReportClient(
                adapter=placement.adapter, conf=placement.conf, sleep=sleep),
            manager_cls, tracker_cls, lambda host: (
                {'migration_store': self.cells.of_host(host).migrations,
                 'compute_nodes': {host: self.providers[host]}},
                {'driver': self.drivers[host],
                 'compute_rpcapi': self.compute_rpcapi,
                 'query_client': self.query_client}))
        for host in HOSTS:
            # Each host's service reads and writes its own cell only.
            self.rts[host].store = self.cells.of_host(host).instances
            self.transport.serve_calls(rpcapi.TOPIC, host,
                                       self.computes[host])
        self.conductor.cell_databases = self.cells
        self.migration_uuid = uuidutils.generate_uuid()
        self.migration_uuids = [self.migration_uuid]
        self._point_at(self.cells.of_host(SOURCE))
        self.instance = self._server_on_source(vm_state=vm_states.ACTIVE)
        self._resize_across_cells()
        self._point_at(self.cells.mapped(self.instance.uuid))

    def _point_at(self, cell):
        """Make ``store`` and ``migrations`` (the judge's) ``cell``'s."""
        self.store = cell.instances
        self.migrations = cell.migrations

    # -- the start: the resize across cells --------------------------------

    def _resize_across_cells(self):
        uuid = self.instance.uuid
        cell1, cell2 = self.cells.cells[CELL1], self.cells.cells[CELL2]
        self.cells.map_instance(uuid, cell1)
        self.query_client.update_instance_info(self.ctx, SOURCE,
                                               self.instance)
        source = instance_obj.Instance.get_by_uuid(cell1.instances, uuid)
        source.task_state = task_states.RESIZE_PREP
        source.save(expected_task_state=[None])
        spec = request_spec.RequestSpec.from_instance(source)
        spec.ignore_hosts = [SOURCE]
        migration = migrate.MigrationTask(
            self.ctx, source, NEW_FLAVOR, spec, self.compute_rpcapi,
            self.scheduler, self.client, cell1.migrations,
            self.providers[SOURCE], self.migration_uuid).execute()
        # The cross-cell task runs instead of the prep_resize cast.
        self.transport.receive(rpcapi.TOPIC, DESTINATION, timeout=0)
        # The target cell's records, the copy hidden.
        cell2.instances.create_copy(source.saved(), hidden=True)
        target_migration = migration_obj.Migration.create(
            cell2.migrations, migration.uuid, **{
                field: value for field, value in
                cell1.migrations.peek(migration.uuid).items()
                if field not in ('uuid',) + migration_obj.TIMESTAMPS})
        target = instance_obj.Instance.get_by_uuid(cell2.instances, uuid)
        # compute-2's claim (prep_snapshot_based_resize_at_dest).
        self.rts[DESTINATION].resize_claim(
            self.ctx, target, NEW_FLAVOR, DESTINATION, target_migration,
            self.held())
        # The source's guest goes, its disks stay
        # (prep_snapshot_based_resize_at_source).
        self.drivers[SOURCE].power_off(source)
        source.power_state = power_state.SHUTDOWN
        source.task_state = task_states.RESIZE_MIGRATED
        source.save(expected_task_state=[task_states.RESIZE_PREP])
        migration.dest_compute = DESTINATION
        migration.dest_node = DESTINATION
        migration.status = migration_obj.POST_MIGRATING
        migration.save()
        # The guest runs on compute-2 (finish_snapshot_based_resize_at_
        # dest), then the copies swap: the user sees cell2's.
        self.drivers[DESTINATION].finish_migration(
            self.ctx, target_migration, target, None, [], None)
        target.host = target.node = DESTINATION
        target.flavor = NEW_FLAVOR
        target.vm_state = vm_states.RESIZED
        target.task_state = None
        target.power_state = power_state.RUNNING
        target.save()
        target_migration.status = migration_obj.FINISHED
        target_migration.save()
        self.query_client.update_instance_info(self.ctx, DESTINATION, target)
        cell2.instances.set_hidden(uuid, False)
        self.cells.update_mapping(uuid, cell2)
        cell1.instances.set_hidden(uuid, True)
        for host in HOSTS:
            self.periodic(host)

    # -- the actors ---------------------------------------------------------

    def _api(self, status):
        """The API's records: the mapped cell's copy and its migration."""
        cell = self.cells.get_mapping(self.instance.uuid)
        instance = instance_obj.Instance.get_by_uuid(cell.instances,
                                                     self.instance.uuid)
        found = migration_obj.MigrationList.get_by_filters(
            cell.migrations, {'instance_uuid': self.instance.uuid,
                              'status': status})
        return instance, found[0] if found else None

    def revert(self):
        """The API reverts the resize; the conductor's revert task.

        :returns: False if the API refuses (not ``RESIZED``, no migration
            ``finished``)
        """
        instance, migration = self._api(migration_obj.FINISHED)
        if instance.vm_state != vm_states.RESIZED or migration is None:
            return False
        instance.task_state = task_states.RESIZE_REVERTING
        instance.save(expected_task_state=[None])
        migration.status = migration_obj.REVERTING
        migration.save()
        self.conductor.revert_snapshot_based_resize(self.ctx, instance,
                                                    migration)
        return True

    def confirm(self):
        """The API confirms the resize; the conductor's confirm task.

        :returns: False if the API refuses (as :meth:`revert`)
        """
        instance, migration = self._api(migration_obj.FINISHED)
        if instance.vm_state != vm_states.RESIZED or migration is None:
            return False
        migration.status = migration_obj.CONFIRMING
        migration.save()
        self.conductor.confirm_snapshot_based_resize(self.ctx, instance,
                                                     migration)
        return True

    # -- the explorer's steps ------------------------------------------------

    def instrument(self, controller, names, holdings, wait_label,
                   actor_hosts):
        """Make every access to shared state a step, each cell's apart.

        As :meth:`~shelvefix.race.cloud.TwoHosts.instrument`, with each
        cell's tables (``cell1 instance``, ``cell2 migration``...) and the
        instance mapping in place of the one instance and migration store.
        """
        undo_placement = cloud_mod.instrument_placement(
            controller, self.placement, names,
            tuple(self.providers[host] for host in HOSTS), holdings)
        mounted = [(self.transport, steps.RpcStepper(controller)),
                   (self.cells.mappings, steps.StoreStepper(
                       controller, self.cells.mappings, wait_label, names,
                       kind=self.cells.mappings.kind))]
        for name, cell in sorted(self.cells.cells.items()):
            kind = _Kind(cell.migrations, '%s migration' % name)
            mounted += [
                (cell.instances, CellStepper(
                    controller, cell.instances, wait_label, names,
                    '%s instance' % name, migrations=kind)),
                (cell.migrations, CellStepper(
                    controller, cell.migrations, wait_label, names,
                    kind.kind))]
        for host in HOSTS:
            if sum(on == host for on in actor_hosts) > 1:
                mounted.append((self.locks[host],
                                steps.LockStepper(controller, host, names)))
        for target, stepper in mounted:
            target.interceptor = stepper

        def undo():
            undo_placement()
            for target, _stepper in mounted:
                target.interceptor = None
        return undo

    # -- what happened --------------------------------------------------------

    def saved_migrations(self):
        """The migration's row in the mapped cell (none if it went)."""
        if self.migration_uuid not in set(self.migrations.uuids()):
            return []
        return [self.migrations.peek(self.migration_uuid)]

    def usage(self):
        """``{host: usage}`` each host's tracker counts on its node."""
        return {host: self.rts[host].usage(host) for host in HOSTS}

    def copies(self):
        """The cells that still have the server, in order."""
        return self.cells.holding(self.instance.uuid)

    def end_state(self):
        """The run's end, in the cell the mapping points to.

        :returns: ``{'cell', 'copies', 'instance': (vm_state, task_state,
            host), 'hidden', 'flavor', 'migration', 'held',
            'migration_held'}``, as the nova target's
        """
        cell = self.cells.mapped(self.instance.uuid)
        self._point_at(cell)
        host_of = {rp: host for host, rp in self.providers.items()}
        row = cell.instances.peek(self.instance.uuid)
        migrations = self.saved_migrations()
        return {
            'cell': cell.name, 'copies': self.copies(),
            'instance': (row['vm_state'], row['task_state'], row['host']),
            'hidden': cell.instances.is_hidden(self.instance.uuid),
            'flavor': row['flavor'].name,
            'migration': migrations[0]['status'] if migrations else None,
            'held': sorted(host_of[rp] for rp in self.held()),
            'migration_held': sorted(
                host_of[rp] for rp in self.held(self.migration_uuid)),
        }

    def end_labels(self):
        """What only a cross-cell run is judged on (see the module)."""
        self._point_at(self.cells.mapped(self.instance.uuid))
        labels = []
        mapped = self.cells.mapped(self.instance.uuid).name
        if [cell for cell in self.copies() if cell != mapped]:
            labels.append(COPY_LEFT)
        if move_outcomes.stale_hosts(self.saved(), self.saved_migrations(),
                                     self.query_client.instance_info):
            labels.append(move_outcomes.SCHEDULER_INFO_STALE)
        return labels

    def remove_from_placement(self):
        """Free what the run left in placement (the providers stay)."""
        for consumer in [self.instance.uuid] + self.migration_uuids:
            self.client.delete_allocation_for_instance(
                self.ctx, consumer, force=True)
