"""An evacuated server deleted while its old host's service starts again.

The ``evacuate-delete`` scenario (nova's only; see
:mod:`shelvefix.nova.evacuated_delete`): the server was evacuated from
compute-1 to compute-2; ``delete`` is nova's ``API.delete``, ``compute-2``
serves the ``terminate_instance`` it casts, and ``compute-1`` is
compute-1's service starting again, which destroys the guest it still
runs and removes its node from the server's allocations. Reading the
flavor of a server deleted meanwhile is a lazy-load of a destroyed
instance: nova 34.0.0 reads it (``read_deleted='yes'``, the fix of bug
1794996 as 604819b29c moved it into ``Instance.obj_load_attr``), so the
start-up never fails; before the fix it raised ``InstanceNotFound``.
"""

import types

from shelvefix import race
from shelvefix.race import outcomes
from shelvefix.race import scenarios
from shelvefix.tests.nova import base

#: Runs of the whole search on the corrected cell.
RUNS = 50
START_FAILED = 'compute-1 error: InstanceNotFound'
#: Runs whose start-up lazy-loads the flavor of a destroyed instance.
DESTROYED_READS = 10


def destroyed_read(run):
    """True if compute-1 read the server after compute-2 destroyed it."""
    steps = [(entry.step.actor, entry.step.label) for entry in run.trace]
    destroy = ('compute-2', 'destroy instance')
    return destroy in steps and ('compute-1', 'read instance') in steps[
        steps.index(destroy):]


class EvacuateDeleteTestCase(base.NovaTestCase):

    def setUp(self):
        super(EvacuateDeleteTestCase, self).setUp()
        self.target = base.load('shelvefix.nova.target')
        self.module = base.load('shelvefix.nova.evacuated_delete')
        self.moves = base.load('shelvefix.nova.moves')
        self.nova_exception = base.load('nova.exception')
        self.objects = base.load('nova.objects')
        self.scenario = scenarios.get_scenario(race.EVACUATE_DELETE)
        self.cell = scenarios.Cell(race.CORRECTED, None)

    def start(self):
        cloud = self.useFixture(self.moves.NovaMoveCloud())
        run = cloud.start(self.module.EVACUATED,
                          self.module.EvacuatedDeleteRun)
        self.addCleanup(run.remove_from_placement)
        return run

    def test_nova_only(self):
        self.assertEqual((race.NOVA,), self.scenario.targets)
        self.assertEqual(scenarios.EVACUATED, self.scenario.start)
        prog = self.target.program('double', self.scenario, self.cell)
        self.addCleanup(prog.close)
        self.assertIsInstance(prog.inner,
                              self.module.EvacuatedDeleteProgram)
        self.assertEqual(('delete', 'compute-2', 'compute-1'), prog.actors)

    def test_the_run_starts_evacuated_with_compute_1_down(self):
        run = self.start()
        row = run.saved()
        self.assertEqual(('active', None, 'compute-2'),
                         (row['vm_state'], row['task_state'], row['host']))
        self.assertEqual('done', run.saved_migration()['status'])
        # Allocations on both hosts until compute-1 starts again.
        self.assertEqual(set(run.providers.values()), set(run.held()))
        # Its guest still runs there; its new tracker counts nothing yet.
        driver = run.computes['compute-1'].driver
        self.assertEqual([run.uuid], driver.list_instance_uuids())
        self.assertEqual(set(), set(run.rts['compute-1'].tracked_instances))

    def test_a_destroyed_instance_lazy_loads_only_reading_deleted(self):
        run = self.start()
        run.store.soft_delete(run.uuid)
        context = self.harness.context('compute-1', is_admin=True)
        listed = self.objects.InstanceList.get_by_filters(
            context, {'uuid': [run.uuid]})
        self.assertEqual([run.uuid], [inst.uuid for inst in listed])
        instance = listed[0]
        # Only the columns, as nova's list by filters.
        self.assertTrue(instance.deleted)
        self.assertFalse(instance.obj_attr_is_set('flavor'))
        # The read of the row follows the context, as nova's database API.
        self.assertRaises(self.nova_exception.InstanceNotFound,
                          instance._obj_load_attr, 'flavor')
        reading_deleted = context.elevated(read_deleted='yes')
        loaded = self.objects.InstanceList.get_by_filters(
            reading_deleted, {'uuid': [run.uuid]})[0]
        loaded._obj_load_attr('flavor')
        self.assertEqual('m1.small', loaded.flavor.name)
        # nova's own lazy-load reads deleted rows whatever the context.
        self.assertEqual('m1.small', instance.flavor.name)

    def test_a_failed_start_is_judged_when_the_server_is_deleted(self):
        run = self.start()
        run.store.soft_delete(run.uuid)
        run.scheduler_client.delete_allocation_for_instance(
            run.admin, run.uuid, force=True)
        done = types.SimpleNamespace(error=None, value=True)
        failed = types.SimpleNamespace(
            error=self.nova_exception.InstanceNotFound(instance_id=run.uuid),
            value=None)
        self.assertEqual((outcomes.OK,), self.module.classify(
            run, {'delete': done, 'compute-2': done, 'compute-1': done}))
        # compute-2 finding the server gone ends its operation; compute-1
        # failing to start is judged.
        self.assertEqual((outcomes.OK,), self.module.classify(
            run, {'delete': done, 'compute-2': failed, 'compute-1': done}))
        self.assertEqual((START_FAILED,), self.module.classify(
            run, {'delete': done, 'compute-2': done, 'compute-1': failed}))

    def test_the_released_start_up_survives_every_delete(self):
        prog = self.target.program('double', self.scenario, self.cell)
        exploration = scenarios.explore(prog)
        self.assertExplored(exploration)
        self.assertTrue(exploration.complete)
        self.assertEqual(RUNS, len(exploration.runs))
        for run in exploration.runs:
            self.assertEqual((outcomes.OK,), run.outcome, run.format_trace())
            self.assertIsNone(run.results['compute-1'].error,
                              run.format_trace())
        for end in prog.inner.ends:
            # Deleted, holding nothing; the start-up ended the evacuation.
            self.assertEqual(('deleted', None, 'compute-2'),
                             end['instance'])
            self.assertEqual([], end['held'])
            self.assertEqual('completed', end['migration'])
        # In 10 runs the delete destroyed the record before compute-1
        # read the flavor of the guest it destroys: nova's lazy-load found
        # the row only reading deleted ones.
        self.assertEqual(DESTROYED_READS, sum(
            destroyed_read(run) for run in exploration.runs))
