"""A live migration on nova's own code (:mod:`shelvefix.nova.live_migration`).

What nova 34.0.0 shows: the migration always completes (the server
``ACTIVE`` on compute-2, the migration ``completed``, placement holding
compute-2 only), but the scheduler is told the server is on compute-1
(the source's ``_post_live_migration`` reports it as its own, and
compute-2 reports nothing): ``scheduler instance info stale`` in every
run; compute-2 counts the server only from its next audit,
since nova claims nothing on the destination's tracker for a server with
no NUMA topology: an audit of compute-2 that lists its instances before
the source saves the server there leaves it uncounted (``usage
untracked``) until the audit after. With the hypervisor failing the
migration (``live-migration-fails``), nova's rollback leaves the server
``ACTIVE`` on compute-1 holding compute-1 only.
"""

import logging

import fixtures

from shelvefix import race
from shelvefix.race import move_outcomes
from shelvefix.race import outcomes
from shelvefix.race import scenarios
from shelvefix.tests.nova import base
from shelvefix.tests.nova import test_moves

#: Runs of the whole search, and without compute-1's audit.
RUNS = 334
WITHOUT_SOURCE_AUDIT = 18
#: Runs without compute-1's audit, the hypervisor failing the migration.
FAILED_WITHOUT_SOURCE_AUDIT = 35
STALE = move_outcomes.SCHEDULER_INFO_STALE
SAVED_THERE = ('compute-1', 'save instance',
               'vm_state=active task_state=None host=compute-2')


class LiveMigrationTestCase(base.NovaTestCase):

    def setUp(self):
        super(LiveMigrationTestCase, self).setUp()
        # Hundreds of runs of nova's code: see test_lifecycle.
        self.useFixture(fixtures.LogHandler(logging.NullHandler(),
                                            level=logging.CRITICAL))
        self.target = base.load('shelvefix.nova.target')
        self.module = base.load('shelvefix.nova.live_migration')
        self.scenario = scenarios.get_scenario(race.LIVE_MIGRATE)
        self.cell = scenarios.Cell(race.CORRECTED, None)

    def explore(self, without=(), fault=None):
        cell = scenarios.Cell(race.CORRECTED, None, fault)
        prog = self.prog = self.target.program('double', self.scenario,
                                               cell, without)
        exploration = scenarios.explore(prog)
        self.assertExplored(exploration)
        self.assertTrue(exploration.complete)
        return exploration, prog.inner.ends

    def test_the_scenario_on_nova(self):
        # Both targets run it (the library's: shelvefix.race.live_migration).
        self.assertEqual((race.LIBRARY, race.NOVA), self.scenario.targets)
        self.assertEqual(scenarios.ACTIVE_ON_SOURCE, self.scenario.start)
        prog = self.target.program('double', self.scenario, self.cell)
        self.addCleanup(prog.close)
        self.assertIsInstance(prog.inner, self.module.LiveMigrationProgram)
        self.assertEqual(('conductor', 'compute-1', 'periodic-1',
                          'periodic-2'), prog.actors)

    def test_the_migration_completes(self):
        exploration, ends = self.explore(('periodic-1', 'periodic-2'))
        self.assertEqual(1, len(exploration.runs))
        self.assertEqual([{
            'instance': ('active', None, 'compute-2'), 'flavor': 'm1.small',
            'migration': 'completed', 'held': ['compute-2'],
            'migration_held': []}], ends)
        run = exploration.runs[0]
        # Not audited since, compute-2 does not count the server yet; the
        # scheduler was told the server is on compute-1.
        self.assertEqual((outcomes.USAGE_UNTRACKED, STALE), run.outcome)
        last = self.prog.inner.cloud.run
        self.assertEqual({'compute-1': {last.uuid}, 'compute-2': set()},
                         last.scheduler_info)
        statuses = [entry.result for entry in run.trace
                    if entry.step.label in ('create migration',
                                            'save migration')]
        self.assertEqual(['status=accepted', 'status=accepted',
                          'status=queued', 'status=preparing',
                          'status=running', 'status=completed'], statuses)

    def test_destination_counts_the_server_from_its_audit(self):
        exploration, ends = self.explore(('periodic-1',))
        self.assertEqual(WITHOUT_SOURCE_AUDIT, len(exploration.runs))
        untracked = 0
        for run, end in zip(exploration.runs, ends):
            self.assertEqual(('active', None, 'compute-2'), end['instance'])
            self.assertEqual('completed', end['migration'])
            self.assertIn(run.outcome, ((STALE,),
                                        (outcomes.USAGE_UNTRACKED, STALE)))
            if run.outcome == (STALE,):
                continue
            untracked += 1
            # The audit listed compute-2's instances before the server was
            # saved there; the migration it may have listed too is no
            # longer counted once the server's task is over.
            listed = test_moves.position(run, 'periodic-2',
                                         'list instances on the node')
            saved = test_moves.position(run, *SAVED_THERE)
            self.assertLess(listed, saved, run.format_trace())
        self.assertEqual(WITHOUT_SOURCE_AUDIT // 2, untracked)

    def test_a_failed_migration_rolls_back(self):
        # The hypervisor fails the migration: nova's rollback gives the
        # server its allocations on compute-1 back (the scheduler's claim
        # of compute-2 removed) and leaves it ACTIVE there.
        exploration, ends = self.explore(('periodic-1',),
                                         fault=race.LIVE_MIGRATION_FAILS)
        self.assertEqual(FAILED_WITHOUT_SOURCE_AUDIT, len(exploration.runs))
        self.assertEqual({outcomes.OK}, test_moves.labels(exploration))
        self.assertEqual([{
            'instance': ('active', None, 'compute-1'), 'flavor': 'm1.small',
            'migration': 'failed',
            'held': ['compute-1'], 'migration_held': []}] * len(ends), ends)
        for run in exploration.runs:
            self.assertIsNone(test_moves.position(run, *SAVED_THERE))

    def test_whole_search(self):
        exploration, ends = self.explore()
        self.assertEqual(RUNS, len(exploration.runs))
        # Every run: the scheduler believes the server on compute-1.
        self.assertEqual({STALE, outcomes.USAGE_UNTRACKED},
                         test_moves.labels(exploration))
        self.assertEqual(RUNS, sum(STALE in run.outcome
                                   for run in exploration.runs))
        self.assertEqual([('active', None, 'compute-2')] * RUNS,
                         [end['instance'] for end in ends])

    def test_a_refused_precheck_retries_on_a_third_host(self):
        # The scheduler's first pick (compute-2 or compute-3, whichever it
        # weighs first) refuses the migration in its pre-check: nova's
        # conductor removes the claim the scheduler made there and
        # schedules again, to the other one; compute-3 is never audited
        # here.
        exploration, ends = self.explore(('periodic-1', 'periodic-2'),
                                         fault=race.PRECHECK_FAILS)
        self.assertEqual(1, len(exploration.runs))
        last = self.prog.inner.cloud.run
        checks = [event[0].split()[0] for event in last.events
                  if event[0].endswith('check_can_live_migrate_destination')]
        self.assertEqual(2, len(checks))
        refused, there = checks
        self.assertEqual({'compute-2', 'compute-3'}, {refused, there})
        self.assertEqual([{
            'instance': ('active', None, there), 'flavor': 'm1.small',
            'migration': 'completed', 'held': [there],
            'migration_held': []}], ends)
        run = exploration.runs[0]
        self.assertIn(STALE, run.outcome)
        self.assertNotIn(outcomes.LEAKED, run.outcome)
        claims = [entry.step.label for entry in run.trace
                  if entry.step.label.startswith('PUT /allocations/{inst')]
        # The first claim, its removal, the claim of the other host.
        self.assertEqual(['PUT /allocations/{instance} gen=null',
                          'PUT /allocations/{instance} (empty) gen=1',
                          'PUT /allocations/{instance} gen=null'], claims)
