"""``live-migrate`` on the library (:mod:`shelvefix.race.live_migration`).

Both targets run it (nova's: ``shelvefix/tests/nova/test_live_migration``).
Where nova shows ``usage untracked`` (compute-2 counts the server only from
its next audit, in about half of nova's runs), the library is clean: the
destination saves the server and counts it in one critical section. The
last test puts nova's order back to show the window the library closes.
"""

import logging
from unittest import mock

import fixtures

from shelvefix.backends import fixture
from shelvefix.compute import resource_tracker
from shelvefix.compute import task_states
from shelvefix.explorer import runner
from shelvefix import race
from shelvefix.race import live_migration
from shelvefix.race import outcomes
from shelvefix.race import scenarios
from shelvefix.race import targets
from shelvefix.race import variants
from shelvefix.tests import base

#: Runs of the whole search on the library, without and with the fault.
RUNS = 154
FAILED_RUNS = 242


def scenario(*actors):
    """The live-migrate scenario, only ``actors`` (default: all)."""
    whole = scenarios.get_scenario(race.LIVE_MIGRATE)
    if not actors:
        return whole
    return whole._replace(actors=tuple(
        (name, host) for name, host in whole.actors if name in actors))


def labels(trace, actor=None):
    """``actor: label -> result`` of each step (of one actor)."""
    return ['%s: %s%s' % (entry.step.actor, entry.step.label,
                          '' if entry.result is None
                          else ' -> %s' % entry.result)
            for entry in trace if actor in (None, entry.step.actor)]


class LiveMigrateTestBase(base.TestCase):

    def setUp(self):
        super(LiveMigrateTestBase, self).setUp()
        # Hundreds of runs: keep their logs out of the details.
        self.useFixture(fixtures.FakeLogger(level=logging.WARNING))
        self.placement = self.useFixture(fixture.PlacementFixture())

    def program(self, scn=None, fault=None):
        return live_migration.LiveMigrationProgram(
            self.placement, scenarios.Cell(race.CORRECTED, None, fault),
            scn or scenario())

    def explore(self, prog):
        exploration = scenarios.explore(prog)
        self.assertTrue(exploration.complete)
        self.assertEqual(0, exploration.blocked)
        # Every run removed what it made, and the program its providers.
        self.assertEqual({}, self.placement.state.consumers)
        self.assertEqual({}, self.placement.state.providers)
        return exploration


class ScenarioTestCase(LiveMigrateTestBase):

    def test_both_targets(self):
        scn = scenario()
        self.assertEqual((race.LIBRARY, race.NOVA), scn.targets)
        self.assertEqual(scenarios.ACTIVE_ON_SOURCE, scn.start)
        self.assertEqual(
            [scenarios.Cell(race.CORRECTED, None),
             scenarios.Cell(race.CORRECTED, None,
                            race.LIVE_MIGRATION_FAILS)],
            targets.LibraryLab.cells(scn))
        for cell in scn.cells():
            prog = targets.program(self.placement, scn, cell)
            self.assertIsInstance(prog, live_migration.LiveMigrationProgram)
            self.assertEqual(('conductor', 'compute-1', 'periodic-1',
                              'periodic-2'), prog.actors)
            self.assertEqual(['compute-1', 'compute-1', 'compute-2',
                              'compute-2', 'compute-2'],
                             [h for h in prog._actor_hosts() if h])

    def test_one_run_in_order(self):
        # The actors one after the other: the audits of a cloud where the
        # server is on compute-2 already.
        prog = self.program()
        with scenarios.closing(prog):
            record = runner.replay(prog, ())
        self.assertEqual((outcomes.OK,), record.outcome)
        self.assertEqual([
            'conductor: read instance -> vm_state=active task_state=None '
            'host=compute-1',
            'conductor: save instance -> vm_state=active '
            'task_state=migrating host=compute-1',
            'conductor: create migration -> status=accepted',
            # replace_allocation_with_migration, then the move itself
            'conductor: GET /allocations/{instance} -> 200 gen=1',
            'conductor: GET /allocations/{instance} -> 200 gen=1',
            'conductor: GET /allocations/{migration} -> 200 gen=none',
            'conductor: POST /allocations -> 204',
            # the scheduler's claim of compute-2 for the server
            'conductor: GET /allocation_candidates -> 200 1 candidate(s)',
            'conductor: GET /allocations/{instance} -> 200 gen=none',
            'conductor: PUT /allocations/{instance} gen=null -> 204',
            # compute-2's check (a call) took no lock; the destination
            'conductor: save migration -> status=accepted',
            'conductor: cast to compute.compute-1 -> live_migration',
        ], labels(record.trace, 'conductor'))
        self.assertEqual([
            'compute-1: receive on compute.compute-1 -> live_migration',
            'compute-1: save migration -> status=queued',
            'compute-1: save migration -> status=preparing',
            'compute-1: save migration -> status=running',
            # compute-2's post_live_migration_at_destination (a call):
            # saved there and counted, in its tracker's critical section
            'compute-1: acquire lock compute_resources',
            'compute-1: save instance -> vm_state=active task_state=None '
            'host=compute-2',
            'compute-1: release lock compute_resources',
            # compute-1 stops counting it, then the source is freed
            'compute-1: acquire lock compute_resources',
            'compute-1: release lock compute_resources',
            'compute-1: save migration -> status=completed',
            'compute-1: GET /allocations/{migration} -> 200 gen=1',
            'compute-1: PUT /allocations/{migration} (empty) gen=1 -> 204',
        ], labels(record.trace, 'compute-1'))

    def test_the_migration_completes(self):
        prog = self.program(scenario('conductor', 'compute-1'))
        clouds = []
        cloud_of = prog._cloud
        prog._cloud = lambda explored: clouds.append(
            cloud_of(explored)) or clouds[-1]
        exploration = self.explore(prog)
        self.assertEqual(1, len(exploration.runs))
        self.assertEqual((outcomes.OK,), exploration.runs[0].outcome)
        cloud = clouds[0]
        saved = cloud.saved()
        self.assertEqual(('active', None, 'compute-2', 'compute-2'),
                         (saved['vm_state'], saved['task_state'],
                          saved['host'], saved['node']))
        migration = cloud.saved_migration()
        self.assertEqual(('live-migration', 'completed', 'compute-1',
                          'compute-2'),
                         (migration['migration_type'], migration['status'],
                          migration['source_compute'],
                          migration['dest_compute']))
        # compute-2 counts the server, compute-1 no longer does.
        self.assertEqual({'compute-1': {},
                          'compute-2': cloud.instance.flavor.resources},
                         cloud.usage())
        self.assertEqual([
            ('check_can_live_migrate_destination', cloud.instance.uuid),
            ('cleanup_live_migration_destination_check',),
            ('pre_live_migration', cloud.instance.uuid),
            ('post_live_migration_at_destination', cloud.instance.uuid),
            ('get_info', cloud.instance.uuid)],
            cloud.drivers['compute-2'].calls)
        self.assertEqual([
            ('check_can_live_migrate_source', cloud.instance.uuid),
            ('live_migration', cloud.instance.uuid, 'compute-2'),
            ('post_live_migration', cloud.instance.uuid),
            ('post_live_migration_at_source', cloud.instance.uuid)],
            cloud.drivers['compute-1'].calls)


class SearchTestCase(LiveMigrateTestBase):

    def test_whole_search(self):
        exploration = self.explore(self.program())
        self.assertEqual({(outcomes.OK,): RUNS},
                         exploration.outcome_counts())

    def test_the_hypervisor_fails_the_migration(self):
        exploration = self.explore(
            self.program(fault=race.LIVE_MIGRATION_FAILS))
        self.assertEqual({(outcomes.OK,): FAILED_RUNS},
                         exploration.outcome_counts())
        for run in exploration.runs:
            steps = labels(run.trace, 'compute-1')
            # The rollback: the migration's allocations go back to the
            # server (dropping compute-2's claim), the task is cleared.
            self.assertIn('compute-1: POST /allocations -> 204', steps)
            self.assertIn('compute-1: save instance -> vm_state=active '
                          'task_state=None host=compute-1', steps)
            self.assertEqual('compute-1: save migration -> status=failed',
                             steps[-1])

    def test_nova_order_leaves_the_destination_uncounted(self):
        # The destination saves the server as nova does, outside its
        # tracker's lock, counting nothing: an audit of compute-2 between
        # its list of instances and its read of the migration misses the
        # server (``usage untracked``) until the next audit.
        class NovaOrderTracker(resource_tracker.ResourceTracker):
            def finish_live_migration_at_dest(self, context, instance,
                                              nodename, power_state):
                instance.host = self.host
                instance.node = nodename
                instance.power_state = power_state
                instance.task_state = None
                instance.save(expected_task_state=[task_states.MIGRATING])

        code = variants.code(race.CORRECTED)
        actors = scenario('conductor', 'compute-1', 'periodic-2')
        with mock.patch.object(variants, 'code', lambda variant: code._replace(
                tracker_cls=NovaOrderTracker)):
            counts = self.explore(self.program(actors)).outcome_counts()
        self.assertEqual({(outcomes.OK,), (outcomes.USAGE_UNTRACKED,)},
                         set(counts))
        # The library's order, the same actors: clean.
        counts = self.explore(self.program(actors)).outcome_counts()
        self.assertEqual({(outcomes.OK,)}, set(counts))
