"""nova's own services resizing a server, from the API to finish_resize.

The race lab's ``resize`` scenario (nova only): a server ``ACTIVE`` on
compute-1 with ``m1.small`` is resized to ``m1.medium`` and ends
``VERIFY_RESIZE`` (``RESIZED``) on compute-2, both hosts' periodic audits
running meanwhile. :class:`ResizeRun` is a :class:`~.moves.MoveRun`
starting before the move (:data:`ACTIVE_ON_SOURCE`), in a
:class:`ResizeCloud`. What runs is nova's code, the actors:

``conductor``
    the API's part of nova's ``API.resize`` (``RESIZE_PREP`` saved only
    if no other task owns the server, compute-1 in the request spec's
    ``ignore_hosts``), then the conductor's ``migrate_server``: its
    ``MigrationTask`` creates the migration (``pre-migrating``, its
    source compute-1), moves the server's allocations on compute-1 to it,
    has the scheduler claim compute-2 for the new flavor and casts
    ``prep_resize`` there;
``compute-2``
    compute-2's service serving its two casts in order:
    ``prep_resize`` (the tracker's ``resize_claim``: the migration's
    destination and the server's migration context, then
    ``resize_instance`` cast to compute-1), later ``finish_resize``;
``compute-1``
    compute-1's service serving ``resize_instance``: the driver's
    ``migrate_disk_and_power_off``, the server saved on compute-2, then
    ``finish_resize`` cast there;
``periodic-1``, ``periodic-2``
    each host's ``update_available_resource``.

The migration's flavors: nova keeps them as flavor ids, the store's rows
as flavors, which nova's ``Migration.create`` does not fill; the judge
reads this scenario's two (:meth:`ResizeRun.saved_migrations`).

The faults (:data:`INJECTED`): ``resize-fails`` (compute-1's driver fails
``migrate_disk_and_power_off``), ``finish-fails`` (compute-2's fails
``finish_migration``), ``prep-fails`` (compute-2's claim test refuses the
claim, as its PCI test does when the devices the scheduler counted are
taken: ``ComputeResourcesUnavailable`` from ``resize_claim``). A failed
``prep_resize`` is not rescheduled: ``[scheduler] max_attempts`` is 1,
as there is no third host to try.

This module imports nova (see :mod:`shelvefix.nova`).
"""

import fixtures
from nova.compute import power_state
from nova.compute import task_states
from nova.compute import vm_states
from nova import exception as nova_exception
from oslo_utils import timeutils
from oslo_utils import uuidutils

from shelvefix.nova import harness
from shelvefix.nova import lifecycle
from shelvefix.nova import move_program
from shelvefix.nova import moves
from shelvefix.nova import program
from shelvefix.nova import second_move
from shelvefix.objects import migration as migration_obj
from shelvefix import race
from shelvefix.race import move_outcomes
from shelvefix.race import outcomes
from shelvefix.race import scenarios

SOURCE = moves.SOURCE
DESTINATION = moves.DESTINATION
#: Where the run starts: ``ACTIVE`` on compute-1, no move yet.
ACTIVE_ON_SOURCE = scenarios.ACTIVE_ON_SOURCE
#: The fault that makes compute-2's claim test refuse the move claim.
CLAIM_REFUSED = 'claim refused on compute-2'
#: ``usage untracked``, with the hosts whose node counts too little.
UNTRACKED_ON = outcomes.USAGE_UNTRACKED + ' on %s'
#: What each fault raises on purpose (not judged).
INJECTED = {race.RESIZE_FAILS: (moves.DriverFailed,),
            race.FINISH_FAILS: (moves.DriverFailed,),
            race.PREP_FAILS: (nova_exception.ComputeResourcesUnavailable,)}


class ResizeCloud(second_move.SecondMoveCloud):
    """nova's services around a server resized from compute-1 to compute-2.

    :param failing: names of driver methods that fail, on either host
        (each is called on one: ``migrate_disk_and_power_off`` on
        compute-1, ``finish_migration`` on compute-2)
    :param claim_refused: compute-2's claim test refuses the move claim
    :param injected: the exception classes the faults raise on purpose
    """

    def __init__(self, backend='double', failing=(), claim_refused=False,
                 injected=(), **kwargs):
        super(ResizeCloud, self).__init__(backend=backend, failing=failing,
                                          **kwargs)
        self.claim_refused = claim_refused
        self.injected = tuple(injected)

    def _setUp(self):
        super(ResizeCloud, self)._setUp()
        conf = self.useFixture(harness.NovaConfig())
        conf.config(max_attempts=1, group='scheduler')
        if self.claim_refused:
            def test_pci(claim):
                if claim.tracker.host == DESTINATION:
                    return CLAIM_REFUSED
                return None
            self.useFixture(fixtures.MonkeyPatch(
                'nova.compute.claims.MoveClaim._test_pci', test_pci))


class ResizeRun(moves.MoveRun):
    """One run: a server ``ACTIVE`` on compute-1, to be resized."""

    def _create_instance(self, start):
        if start != ACTIVE_ON_SOURCE:
            raise ValueError('a resize run starts %r, not %r'
                             % (ACTIVE_ON_SOURCE, start))
        cloud = self.cloud
        self.migrations = migration_obj.MigrationStore()
        cloud.move_database.migrations = self.migrations
        cloud.move_database.extra = {}
        # The conductor creates it: its uuid is known, for the names.
        self.migration_uuid = uuidutils.generate_uuid()
        cloud.move_database.next_uuid = self.migration_uuid
        for compute in self.computes.values():
            second_move.manager_state(compute)
            compute.driver.failing = cloud.failing
        return self._create_active()

    def _create_active(self):
        """The server ``ACTIVE`` on compute-1 at ``m1.small``.

        Placement holds its allocations there; both hosts have audited.
        """
        cloud = self.cloud
        uuid = uuidutils.generate_uuid()
        cloud.database.static = lifecycle.static_fields(uuid)
        old = moves.old_flavor()
        self.store.create({
            'id': 1, 'uuid': uuid, 'project_id': harness.PROJECT,
            'user_id': harness.USER, 'availability_zone': 'nova',
            'vm_state': vm_states.ACTIVE, 'task_state': None,
            'power_state': power_state.RUNNING,
            'host': SOURCE, 'node': SOURCE, 'launched_on': SOURCE,
            'compute_id': 1, 'launched_at': timeutils.utcnow(),
            'flavor': old, 'old_flavor': None, 'new_flavor': None,
            'instance_type_id': old.id, 'vcpus': old.vcpus,
            'memory_mb': old.memory_mb, 'root_gb': old.root_gb,
            'ephemeral_gb': old.ephemeral_gb, 'migration_context': None,
            'system_metadata': {},
        })
        src = self.providers[SOURCE]
        harness.NovaShelveScenario.assert_claimed(
            self.scheduler_client.claim_resources(
                self.admin, uuid, {'allocations': {
                    src: {'resources': moves.resources(old)}}},
                harness.PROJECT, harness.USER, harness.CLAIM_VERSION))
        self.computes[SOURCE].driver.running.add(uuid)
        self.holdings = {uuid: {src}, self.migration_uuid: set()}
        for host in self.cloud.hosts:
            self.rts[host].update_available_resource(self.admin, host)
        return uuid

    # -- the actors ---------------------------------------------------------

    def resize(self):
        """The API's resize, then nova's conductor (and scheduler)."""
        instance = self.cloud.database.load(harness.context('api'),
                                            self.store.get(self.uuid))
        instance.task_state = task_states.RESIZE_PREP
        instance.save(expected_task_state=[None])
        flavor = moves.new_flavor()
        spec = self.request_spec()
        spec.flavor = flavor
        # nova's API.resize, allow_resize_to_same_host off.
        spec.ignore_hosts = [instance.host]
        self.conductor.migrate_server(
            harness.context(lifecycle.CONDUCTOR, is_admin=True), instance,
            {'filter_properties': {'ignore_hosts': [instance.host]}},
            False, False, flavor, None, None, clean_shutdown=True,
            request_spec=spec, host_list=None)
        return True

    def destination(self, timeout=60.0, give_up=None):
        """compute-2 serves ``prep_resize``, then ``finish_resize``.

        :param give_up: ``{'conductor': ..., 'compute-1': ...}``: when to
            stop waiting for each cast (runs with real threads)
        """
        give_up = give_up or {}
        for sender in ('conductor', 'compute-1'):
            self.serve(DESTINATION, timeout=timeout,
                       give_up=give_up.get(sender))
        return True

    # -- what happened --------------------------------------------------------

    def saved_migrations(self):
        """The migration's row once created, with the scenario's flavors."""
        if self.migration_uuid not in set(self.migrations.uuids()):
            return []
        row = dict(self.migrations.peek(self.migration_uuid))
        row['old_flavor'] = (row['old_flavor'] or
                             moves.library_flavor(moves.old_flavor()))
        row['new_flavor'] = (row['new_flavor'] or
                             moves.library_flavor(moves.new_flavor()))
        return [row]

    def saved_migration(self):
        rows = self.saved_migrations()
        return rows[0] if rows else None

    def end_state(self):
        """:meth:`~.moves.MoveRun.end_state`; ``migration`` None if none."""
        host_of = {rp: host for host, rp in self.providers.items()}
        row = self.saved()
        migration = self.saved_migration()
        return {
            'instance': (row['vm_state'], row['task_state'], row['host']),
            'flavor': row['flavor'].name,
            'migration': migration and migration['status'],
            'held': sorted(host_of[rp] for rp in self.held()),
            'migration_held': sorted(
                host_of[rp] for rp in self.held(self.migration_uuid)),
        }


class ResizeProgram(move_program.NovaMoveProgram):
    """The ``resize`` scenario on a set-up :class:`ResizeCloud`.

    :param without: actors left out (the ``periodic-*`` audits only: the
        others carry the resize)
    """

    def __init__(self, cloud, scenario=race.RESIZE, without=()):
        if set(without) - {'periodic-1', 'periodic-2'}:
            raise ValueError('the resize needs its conductor and both '
                             'computes')
        super(ResizeProgram, self).__init__(cloud, scenario, without)
        self.injected = cloud.injected

    def _start(self):
        return self.cloud.start(ACTIVE_ON_SOURCE, ResizeRun)

    def _finish(self, run, results):
        """The run's outcome, ``usage untracked`` once for each host."""
        outcome = super(ResizeProgram, self)._finish(run, results)
        labels = []
        for label in outcome:
            if label == outcomes.USAGE_UNTRACKED:
                labels += [UNTRACKED_ON % host
                           for host in untracked_hosts(run)]
            else:
                labels.append(label)
        return tuple(labels)

    def _actors(self, run, timeout=60.0, done=None):
        done = done or {}
        funcs = {
            'conductor': run.resize,
            'compute-2': lambda: run.destination(timeout, give_up={
                'conductor': program.after(done, 'conductor'),
                'compute-1': program.after(done, 'compute-1')}),
            'compute-1': lambda: run.serve(
                SOURCE, timeout=timeout,
                give_up=program.after(done, 'compute-2')),
            'periodic-1': lambda: run.periodic(SOURCE),
            'periodic-2': lambda: run.periodic(DESTINATION),
        }
        return self._as_services(funcs)


def untracked_hosts(run):
    """The hosts whose node counts less than the saved records imply.

    As :func:`~shelvefix.race.move_outcomes.classify_move` judges them,
    host by host: released nova under-counts compute-2 in some runs, and
    a bug may under-count compute-1.
    """
    row = move_program.library_row(run.saved())
    migrations = run.saved_migrations()
    counted = run.usage()
    return [host for host in sorted(counted)
            if move_outcomes.under_counted(
                move_outcomes.implied_usage(row, migrations, host),
                counted[host])]


def cloud_kwargs(fault):
    """:class:`ResizeCloud`'s keyword arguments for a cell's ``fault``."""
    failing = {race.RESIZE_FAILS: ('migrate_disk_and_power_off',),
               race.FINISH_FAILS: ('finish_migration',)}.get(fault, ())
    return dict(failing=failing, claim_refused=fault == race.PREP_FAILS,
                injected=INJECTED.get(fault, ()))
