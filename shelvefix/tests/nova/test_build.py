"""A server's build on nova's own code (:mod:`shelvefix.nova.build`).

What nova 34.0.0 shows: the build ends ``ACTIVE`` on compute-1, holding
compute-1 only, whatever compute-1's audit does meanwhile (it skips a
server claimed but not in the cell yet). compute-1's spawn failing
(``build-fails``), the build is rescheduled: compute-1 frees the
allocations, the conductor claims the alternate, the server ends
``ACTIVE`` on compute-2 holding compute-2 only. placement refusing that
claim (``alternate-claim-fails``), the conductor sets the server to
``ERROR``, holding nothing. compute-1 restarting once it took the build
(``compute-restarts``), its ``init_host`` sets the server to ``ERROR``
but leaves it holding compute-1: no tracker counts it there, and nothing
but the server's delete frees it (``allocations leaked``, a finding).
"""

import collections
import logging

import fixtures

from shelvefix import race
from shelvefix.race import outcomes
from shelvefix.race import random_runs
from shelvefix.race import scenarios
from shelvefix.tests.nova import base
from shelvefix.tests.nova import test_moves

#: Runs of the whole search of each cell (by fault).
RUNS = {None: 12, race.BUILD_FAILS: 48, race.ALTERNATE_CLAIM_FAILS: 28,
        race.COMPUTE_RESTARTS: 7, race.PCI_BUILD_FAILS: 48,
        race.PCI_PARALLEL_BUILDS: 32}
ACTIVE_ON = {
    'compute-1': {'instance': ('active', None, 'compute-1'),
                  'deleted': False, 'held': ['compute-1'],
                  'build request': False},
    'compute-2': {'instance': ('active', None, 'compute-2'),
                  'deleted': False, 'held': ['compute-2'],
                  'build request': False},
}


class BuildTestCase(base.NovaTestCase):

    def setUp(self):
        super(BuildTestCase, self).setUp()
        # Hundreds of runs of nova's code: see test_lifecycle.
        self.useFixture(fixtures.LogHandler(logging.NullHandler(),
                                            level=logging.CRITICAL))
        self.target = base.load('shelvefix.nova.target')
        self.module = base.load('shelvefix.nova.build_program')
        self.scenario = scenarios.get_scenario(race.BUILD)

    def explore(self, without=(), fault=None):
        cell = scenarios.Cell(race.CORRECTED, None, fault)
        prog = self.target.program('double', self.scenario, cell, without)
        exploration = scenarios.explore(prog)
        self.assertExplored(exploration)
        self.assertTrue(exploration.complete)
        return exploration, prog.inner.ends

    def test_both_targets(self):
        # The library's: shelvefix/tests/unit/race/test_build.py.
        self.assertEqual((race.LIBRARY, race.NOVA), self.scenario.targets)
        self.assertEqual(scenarios.BUILD_REQUESTED, self.scenario.start)
        prog = self.target.program(
            'double', self.scenario, scenarios.Cell(race.CORRECTED, None))
        self.addCleanup(prog.close)
        self.assertIsInstance(prog.inner, self.module.BuildProgram)
        self.assertEqual(('conductor', 'conductor-2', 'compute-1',
                          'compute-2', 'periodic-1'), prog.actors)
        self.assertEqual('conductor-2', prog.inner.hosts['conductor-2'])

    def test_the_conductor_and_compute_1_build_the_server(self):
        # Alone, one order: the conductor's part, then compute-1's.
        exploration, ends = self.explore(
            ('periodic-1', 'compute-2', 'conductor-2'))
        self.assertEqual(1, len(exploration.runs))
        self.assertEqual([ACTIVE_ON['compute-1']], ends)
        run = exploration.runs[0]
        self.assertEqual((outcomes.OK,), run.outcome)
        steps = [(entry.step.actor, entry.step.label) for entry in run.trace]
        # The scheduler claims before the record is created in the cell;
        # the build request goes once the server is mapped to the cell.
        for earlier, later in [
                (('conductor', 'PUT /allocations/{instance} gen=null'),
                 ('conductor', 'create instance')),
                (('conductor', 'create instance'),
                 ('conductor', 'save instance mapping')),
                (('conductor', 'save instance mapping'),
                 ('conductor', 'destroy build request')),
                (('conductor', 'destroy build request'),
                 ('conductor', 'cast to compute.compute-1')),
                (('compute-1', 'receive on compute.compute-1'),
                 ('compute-1', 'save instance'))]:
            self.assertLess(steps.index(earlier), steps.index(later))
        saves = [entry.result for entry in run.trace
                 if entry.step.label == 'save instance']
        self.assertEqual(
            'vm_state=active task_state=None host=compute-1', saves[-1])

    def test_whole_search(self):
        exploration, ends = self.explore()
        self.assertEqual(RUNS[None], len(exploration.runs))
        self.assertEqual({outcomes.OK}, test_moves.labels(exploration))
        self.assertEqual([ACTIVE_ON['compute-1']] * RUNS[None], ends)
        # In some run the audit read compute-1's allocations between the
        # scheduler's claim and the record's creation (bug 1729371's
        # window), and left them.
        window = 0
        for run in exploration.runs:
            claimed = test_moves.position(
                run, 'conductor', 'PUT /allocations/{instance} gen=null')
            read = test_moves.position(
                run, 'periodic-1',
                'GET /resource_providers/{compute-1}/allocations')
            created = test_moves.position(run, 'conductor',
                                          'create instance')
            window += claimed < read < created
        self.assertGreater(window, 0)

    def test_a_failed_spawn_is_rescheduled(self):
        exploration, ends = self.explore(fault=race.BUILD_FAILS)
        self.assertEqual(RUNS[race.BUILD_FAILS], len(exploration.runs))
        self.assertEqual({outcomes.OK}, test_moves.labels(exploration))
        self.assertEqual([ACTIVE_ON['compute-2']] * len(ends), ends)
        for run in exploration.runs:
            freed = test_moves.position(run, 'compute-1',
                                        'DELETE /allocations/{instance}')
            cast = test_moves.position(run, 'compute-1',
                                       'cast to conductor.conductor')
            self.assertIsNotNone(freed, run.format_trace())
            self.assertLess(freed, cast)
            self.assertIsNotNone(cast)

    def test_a_refused_alternate_claim_errors_the_server(self):
        exploration, ends = self.explore(fault=race.ALTERNATE_CLAIM_FAILS)
        self.assertEqual(RUNS[race.ALTERNATE_CLAIM_FAILS],
                         len(exploration.runs))
        self.assertEqual({outcomes.OK}, test_moves.labels(exploration))
        self.assertEqual([{'instance': ('error', None, None),
                           'deleted': False, 'held': [],
                           'build request': False}] * len(ends), ends)

    def test_a_restart_errors_the_build_and_keeps_its_allocations(self):
        # A finding: nova's init_host sets the interrupted build to ERROR
        # (bug 1833581's fix) but leaves its allocations on compute-1.
        exploration, ends = self.explore(fault=race.COMPUTE_RESTARTS)
        self.assertEqual(RUNS[race.COMPUTE_RESTARTS], len(exploration.runs))
        self.assertEqual({outcomes.LEAKED}, test_moves.labels(exploration))
        self.assertEqual([{'instance': ('error', None, None),
                           'deleted': False, 'held': ['compute-1'],
                           'build request': False}] * len(ends), ends)
        for run in exploration.runs:
            self.assertIsNotNone(test_moves.position(
                run, 'compute-1', 'save instance',
                'vm_state=error task_state=None host=None'))

    def test_a_rescheduled_pci_build_gets_the_alternate_s_device(self):
        exploration, ends = self.explore(fault=race.PCI_BUILD_FAILS)
        self.assertEqual(RUNS[race.PCI_BUILD_FAILS], len(exploration.runs))
        self.assertEqual({outcomes.OK}, test_moves.labels(exploration))
        self.assertEqual([ACTIVE_ON['compute-2']] * len(ends), ends)

    def test_parallel_pci_builds_reschedule_the_second_claim(self):
        # Both schedulers pick compute-1; the build that claims second
        # finds too few devices left there and is rescheduled to
        # compute-2, whichever of the two it is.
        exploration, ends = self.explore(fault=race.PCI_PARALLEL_BUILDS)
        self.assertEqual(RUNS[race.PCI_PARALLEL_BUILDS],
                         len(exploration.runs))
        self.assertEqual({outcomes.OK}, test_moves.labels(exploration))
        placed = collections.Counter(
            (end['instance'][2], end['second'][0][2]) for end in ends)
        self.assertEqual({('compute-1', 'compute-2'): len(ends) // 2,
                          ('compute-2', 'compute-1'): len(ends) // 2},
                         placed)
        for end in ends:
            self.assertEqual([end['instance'][2]], end['held'])
            self.assertEqual([end['second'][0][2]], end['second'][1])

    def test_the_pci_judge(self):
        # The guest compute-2 started with compute-1's device too: what
        # bug 1860555 did.
        build_pci = base.load('shelvefix.nova.build_pci')
        cell = scenarios.Cell(race.CORRECTED, None, race.PCI_BUILD_FAILS)
        prog = self.target.program('double', self.scenario, cell,
                                   ('periodic-1',))
        self.addCleanup(prog.close)
        run = prog.inner._start()
        run.schedule_and_build()
        run.serve('compute-1')
        run.serve_conductor()
        run.serve('compute-2')
        self.assertEqual('active', run.saved()['vm_state'])
        self.assertEqual([], build_pci.end_labels(run))
        given = run.computes['compute-2'].driver.spawned_pci[run.uuid]
        self.assertEqual([(2, '0000:81:00.0')], given)
        run.computes['compute-2'].driver.spawned_pci[run.uuid] = (
            [(1, '0000:81:00.0')] + given)
        self.assertEqual([build_pci.PCI_MISMATCH], build_pci.end_labels(run))
        run.remove_from_placement()

    def test_random_runs(self):
        cell = scenarios.Cell(race.CORRECTED, None, race.BUILD_FAILS)
        prog = self.target.program('double', self.scenario, cell)
        result = random_runs.run_random(prog, cell, 5, seed=3)
        self.assertEqual({outcomes.OK: 5}, result.counts)
