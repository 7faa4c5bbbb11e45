"""Aborting a live migration on nova's own code.

:mod:`shelvefix.nova.live_migration_abort`: what nova 34.0.0 shows is
that every abort leaves the records and placement agreeing: a migration
cancelled while queued, or aborted while the hypervisor migrates, leaves
the server ``ACTIVE`` on compute-1 holding compute-1 only; an abort that
comes too late is refused (by the API, or by compute-1) and the migration
completes.
"""

import collections
import logging

import fixtures

from shelvefix import race
from shelvefix.race import move_outcomes
from shelvefix.race import outcomes
from shelvefix.race import scenarios
from shelvefix.tests.nova import base
from shelvefix.tests.nova import test_moves

#: Runs of the search without the audits.
WITHOUT_AUDITS = 224
AUDITS = ('periodic-1', 'periodic-2')
CANCELLED = {'instance': ('active', None, 'compute-1'), 'flavor': 'm1.small',
             'migration': 'cancelled', 'held': ['compute-1'],
             'migration_held': []}
COMPLETED = {'instance': ('active', None, 'compute-2'), 'flavor': 'm1.small',
             'migration': 'completed', 'held': ['compute-2'],
             'migration_held': []}


class LiveMigrationAbortTestCase(base.NovaTestCase):

    def setUp(self):
        super(LiveMigrationAbortTestCase, self).setUp()
        self.useFixture(fixtures.LogHandler(logging.NullHandler(),
                                            level=logging.CRITICAL))
        self.target = base.load('shelvefix.nova.target')
        self.module = base.load('shelvefix.nova.live_migration_abort')
        self.scenario = scenarios.get_scenario(race.LIVE_MIGRATE_ABORT)

    def cloud(self):
        cloud = self.module.AbortCloud(backend='double')
        cloud.setUp()
        self.addCleanup(cloud.cleanUp)
        return cloud, cloud.start(self.module.live_migration.ACTIVE_ON_SOURCE,
                                  self.module.AbortRun)

    def test_registered(self):
        self.assertEqual((race.LIBRARY, race.NOVA), self.scenario.targets)
        prog = self.target.program(
            'double', self.scenario, scenarios.Cell(race.CORRECTED, None))
        self.addCleanup(prog.close)
        self.assertIsInstance(prog.inner, self.module.AbortProgram)
        self.assertEqual(('conductor', 'compute-1', 'job', 'abort',
                          'periodic-1', 'periodic-2'), prog.actors)

    def test_the_job_runs_from_the_pool(self):
        cloud, run = self.cloud()
        self.assertTrue(run.live_migrate())
        run.serve(self.module.SOURCE, timeout=1)
        # compute-1 only queued the job: nothing moved yet.
        self.assertEqual('queued', run.saved_migration()['status'])
        self.assertEqual(1, len(run.pool.jobs))
        self.assertTrue(run.pool.work(timeout=1))
        self.assertEqual([('_do_live_migration', 'done')], run.pool.ran)
        self.assertEqual(COMPLETED, run.end_state())
        self.assertEqual({}, dict(run.pool.waiting))

    def test_a_queued_migration_is_cancelled(self):
        cloud, run = self.cloud()
        run.live_migrate()
        run.serve(self.module.SOURCE, timeout=1)
        self.assertTrue(run.abort())
        self.assertIn(('action.start', None), run.events)
        run.serve(self.module.SOURCE, timeout=1)
        # The worker takes the job, finds it cancelled and runs nothing.
        self.assertTrue(run.pool.work(timeout=1))
        self.assertEqual([('_do_live_migration', 'cancelled')], run.pool.ran)
        self.assertEqual(CANCELLED, run.end_state())
        self.assertNotIn(('compute-1 driver.live_migration', 'compute-2'),
                         run.events)

    def test_a_late_abort_is_refused_by_the_api(self):
        cloud, run = self.cloud()
        run.live_migrate()
        run.serve(self.module.SOURCE, timeout=1)
        run.pool.work(timeout=1)
        self.assertEqual(self.module.REFUSED, run.abort())
        self.assertEqual(('api refused', 'InstanceInvalidState'),
                         run.events[-1])
        self.assertEqual(COMPLETED, run.end_state())

    def test_the_hypervisor_job_is_aborted(self):
        cloud, run = self.cloud()
        driver = run.computes[self.module.SOURCE].driver
        self.assertIsInstance(driver, self.module.AbortableDriver)
        self.assertRaises(self.module.NoActiveJob,
                          driver.live_migration_abort,
                          run.cloud.database.load(
                              run.admin, run.store.peek(run.uuid)))

    def test_whole_search_without_audits(self):
        prog = self.target.program(
            'double', self.scenario, scenarios.Cell(race.CORRECTED, None),
            AUDITS)
        exploration = scenarios.explore(prog)
        self.assertExplored(exploration)
        self.assertTrue(exploration.complete)
        self.assertEqual(WITHOUT_AUDITS, len(exploration.runs))
        # compute-2 counts the server only from its next audit, and the
        # scheduler is told a live-migrated server is on compute-1, as in
        # live-migrate; nothing else.
        self.assertEqual({outcomes.OK, outcomes.USAGE_UNTRACKED,
                          move_outcomes.SCHEDULER_INFO_STALE},
                         test_moves.labels(exploration))
        ends = collections.Counter()
        for run, end in zip(exploration.runs, prog.inner.ends):
            self.assertIn(end, (CANCELLED, COMPLETED))
            abort = run.results['abort']
            ends[end['migration'], abort.value] += 1
            if end == CANCELLED:
                self.assertEqual((outcomes.OK,), run.outcome)
                self.assertTrue(abort.value)
        # Cancelled in the queue, or aborted on the hypervisor; refused by
        # the API once the server is no longer migrating.
        self.assertEqual({('cancelled', True), ('completed', True),
                          ('completed', self.module.REFUSED)}, set(ends))
        # A cancelled job and an aborted hypervisor job both happen.
        labels = set(entry.result for run in exploration.runs
                     for entry in run.trace)
        self.assertIn('cancelled', labels)
        self.assertIn('aborted', labels)
