"""``live-migrate-abort`` on the library.

:mod:`shelvefix.race.live_migration_abort`. Both targets run it (nova's:
``shelvefix/tests/nova/test_live_migration_abort``).
Where nova 34.0.0 can ignore an abort its API accepted (its job may take
the placeholder entry before compute-1 stores the job's future), the
library is clean: the entry is stored once, with its future, before the
job is submitted. The last test puts nova's order back and shows
:data:`~shelvefix.race.live_migration_abort.ABORT_IGNORED`.
"""

import collections
import logging
from unittest import mock

import fixtures

from shelvefix.backends import fixture
from shelvefix.compute import decorators
from shelvefix.compute import manager as manager_mod
from shelvefix.explorer import runner
from shelvefix.objects import migration as migration_obj
from shelvefix import race
from shelvefix.race import live_migration_abort
from shelvefix.race import outcomes
from shelvefix.race import scenarios
from shelvefix.race import targets
from shelvefix.race import variants
from shelvefix.tests import base
from shelvefix.tests.unit.race import test_live_migration

#: Runs of the search without the audits, and with compute-1's only (the
#: whole cell, both audits, is 6,822 runs: ``shelvefix race``).
WITHOUT_AUDITS = 41
SOURCE_AUDIT = 677
REFUSED = live_migration_abort.REFUSED
labels = test_live_migration.labels


def scenario(*actors):
    """The live-migrate-abort scenario, only ``actors`` (default: all)."""
    whole = scenarios.get_scenario(race.LIVE_MIGRATE_ABORT)
    if not actors:
        return whole
    return whole._replace(actors=tuple(
        (name, host) for name, host in whole.actors if name in actors))


class NovaOrderManager(manager_mod.ComputeManager):
    """nova 34.0.0's order: a placeholder, the job submitted, its future."""

    @decorators.errors_out_migration
    def live_migration(self, context, dest, instance, block_migration,
                       migration, migrate_data):
        self._set_migration_status(migration, migration_obj.QUEUED)
        self._waiting_live_migrations[instance.uuid] = (None, None)
        executor = self._live_migration_executor
        future = executor.future()
        executor.submit(self._live_migration_job, future, context, dest,
                        instance, block_migration, migration, migrate_data)
        self._waiting_live_migrations[instance.uuid] = (migration, future)


class AbortTestBase(base.TestCase):

    def setUp(self):
        super(AbortTestBase, self).setUp()
        # Hundreds of runs: keep their logs out of the details.
        self.useFixture(fixtures.FakeLogger(level=logging.WARNING))
        self.placement = self.useFixture(fixture.PlacementFixture())

    def program(self, scn=None):
        prog = live_migration_abort.AbortProgram(
            self.placement, scenarios.Cell(race.CORRECTED, None),
            scn or scenario())
        prog.clouds = []
        cloud_of = prog._cloud
        prog._cloud = lambda explored: prog.clouds.append(
            cloud_of(explored)) or prog.clouds[-1]
        return prog

    def explore(self, prog):
        exploration = scenarios.explore(prog)
        self.assertTrue(exploration.complete)
        self.assertEqual(0, exploration.blocked)
        self.assertEqual({}, self.placement.state.consumers)
        self.assertEqual({}, self.placement.state.providers)
        return exploration


class ScenarioTestCase(AbortTestBase):

    def test_both_targets(self):
        scn = scenario()
        self.assertEqual((race.LIBRARY, race.NOVA), scn.targets)
        self.assertEqual([scenarios.Cell(race.CORRECTED, None)],
                         targets.LibraryLab.cells(scn))
        prog = targets.program(self.placement, scn, scn.cells()[0])
        self.assertIsInstance(prog, live_migration_abort.AbortProgram)
        self.assertEqual(('conductor', 'compute-1', 'job', 'abort',
                          'periodic-1', 'periodic-2'), prog.actors)
        # compute-1 runs three actors, compute-2's code four.
        self.assertEqual(['compute-1'] * 3 + ['compute-2'] * 3,
                         [h for h in prog._actor_hosts() if h])

    def test_one_run_in_order(self):
        # The actors one after the other: the abort comes too late.
        prog = self.program()
        with scenarios.closing(prog):
            record = runner.replay(prog, ())
        self.assertEqual((outcomes.OK,), record.outcome)
        self.assertEqual([
            'compute-1: receive on compute.compute-1 -> live_migration',
            'compute-1: save migration -> status=queued',
            'compute-1: store the waiting migration -> stored',
            'compute-1: cast to live-migration-pool.compute-1 -> '
            '_live_migration_job',
        ], labels(record.trace, 'compute-1'))
        self.assertEqual([
            'job: receive on live-migration-pool.compute-1 -> '
            '_live_migration_job',
            'job: start the job -> running',
            'job: save migration -> status=preparing',
            'job: take the waiting migration -> found',
            'job: save migration -> status=running',
            'job: start the migration job -> started',
            'job: end the migration job -> ended',
        ], labels(record.trace, 'job')[:7])
        self.assertEqual([
            'abort: wait -> status=completed',
            'abort: read instance -> vm_state=active task_state=None '
            'host=compute-2',
            'abort: read migration -> status=completed',
        ], labels(record.trace, 'abort'))
        self.assertEqual(REFUSED, record.results['abort'].value)
        # No abort came: compute-1 still waits for one.
        self.assertTrue(record.results['compute-1'].stuck)


class SearchTestCase(AbortTestBase):

    def test_search_without_audits(self):
        prog = self.program(scenario('conductor', 'compute-1', 'job',
                                     'abort'))
        exploration = self.explore(prog)
        self.assertEqual({(outcomes.OK,): WITHOUT_AUDITS},
                         exploration.outcome_counts())
        ends = collections.Counter()
        for run, cloud in zip(exploration.runs, prog.clouds):
            status = cloud.saved_migration()['status']
            self.assertIn(status, (migration_obj.CANCELLED,
                                   migration_obj.COMPLETED))
            compute = run.results['compute-1']
            ends[status, run.results['abort'].value,
                 None if compute.stuck else compute.value] += 1
            if status == migration_obj.CANCELLED:
                # Back on compute-1, no task; the migration holds nothing.
                saved = cloud.saved()
                self.assertEqual(('active', None, 'compute-1'),
                                 (saved['vm_state'], saved['task_state'],
                                  saved['host']))
        # Cancelled (in the queue, by the job, in the hypervisor);
        # refused by compute-1 (too late for the state it found) or by
        # the API; never accepted and then ignored.
        self.assertEqual({
            (migration_obj.CANCELLED, True, True),
            (migration_obj.COMPLETED, True, REFUSED),
            (migration_obj.COMPLETED, REFUSED, None)}, set(ends))
        steps = set(entry.step.label + ' -> ' + str(entry.result)
                    for run in exploration.runs for entry in run.trace)
        for seen in ('cancel the job -> cancelled',
                     'start the job -> cancelled',
                     'cancel the job -> started',
                     'abort the migration job -> aborted',
                     'abort the migration job -> no job',
                     'end the migration job -> aborted'):
            self.assertIn(seen, steps)

    def test_search_with_compute_1_audit(self):
        # The rollbacks on compute-1 (in the queue, by the job, from the
        # hypervisor) against compute-1's audit: clean.
        prog = self.program(scenario('conductor', 'compute-1', 'job',
                                     'abort', 'periodic-1'))
        exploration = self.explore(prog)
        self.assertEqual({(outcomes.OK,): SOURCE_AUDIT},
                         exploration.outcome_counts())
        self.assertIn(migration_obj.CANCELLED, set(
            cloud.saved_migration()['status'] for cloud in prog.clouds))

    def test_nova_order_ignores_an_accepted_abort(self):
        code = variants.code(race.CORRECTED)
        actors = scenario('conductor', 'compute-1', 'job', 'abort')
        with mock.patch.object(variants, 'code', lambda variant: code._replace(
                manager_cls=NovaOrderManager)):
            prog = self.program(actors)
            counts = self.explore(prog).outcome_counts()
        self.assertEqual({(outcomes.OK,),
                          (live_migration_abort.ABORT_IGNORED,)},
                         set(counts))
        # The library's order, the same actors: clean.
        counts = self.explore(self.program(actors)).outcome_counts()
        self.assertEqual({(outcomes.OK,): WITHOUT_AUDITS}, counts)
