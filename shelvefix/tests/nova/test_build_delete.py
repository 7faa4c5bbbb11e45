"""A delete while nova's conductor builds the server (``build-delete``).

What nova 34.0.0 shows: whichever of the API and the conductor gets to
the build request first, the server ends deleted (or never created in the
cell), holding nothing in placement, and the API answers the delete 204:
also where the conductor destroys the record between the API's look-up
and its own destroy (bug 1914777's window), after which the API looks the
server up again, finds none and frees its allocations itself.
"""

import logging

import fixtures

from shelvefix import race
from shelvefix.race import outcomes
from shelvefix.race import random_runs
from shelvefix.race import scenarios
from shelvefix.tests.nova import base
from shelvefix.tests.nova import test_moves

#: Runs of the whole search, and without compute-1's audit.
RUNS = 395
WITHOUT_AUDIT = 42
DELETED = {'instance': ('building', 'scheduling', None), 'deleted': True,
           'held': [], 'build request': False}
NEVER_CREATED = {'instance': None, 'deleted': False, 'held': [],
                 'build request': False}


class BuildDeleteTestCase(base.NovaTestCase):

    def setUp(self):
        super(BuildDeleteTestCase, self).setUp()
        # Hundreds of runs of nova's code: see test_lifecycle.
        self.useFixture(fixtures.LogHandler(logging.NullHandler(),
                                            level=logging.CRITICAL))
        self.target = base.load('shelvefix.nova.target')
        self.module = base.load('shelvefix.nova.build_delete')
        self.scenario = scenarios.get_scenario(race.BUILD_DELETE)

    def explore(self, without=()):
        cell = scenarios.Cell(race.CORRECTED, None)
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
        self.assertIsInstance(prog.inner, self.module.BuildDeleteProgram)
        self.assertEqual(('conductor', 'delete', 'periodic-1'), prog.actors)
        self.assertEqual('api', prog.inner.hosts['delete'])

    def test_first_run_the_conductor_builds_then_the_api_deletes(self):
        exploration, ends = self.explore(('periodic-1',))
        run = exploration.runs[0]
        self.assertEqual((outcomes.OK,), run.outcome)
        self.assertEqual(DELETED, ends[0])
        self.assertTrue(run.results['delete'].value)
        # The build request was gone: the API read the server in the cell
        # and destroyed it there, then freed its allocations.
        self.assertEqual('RecordNotFound', run.trace[test_moves.position(
            run, 'delete', 'read build request')].result)
        self.assertLess(
            test_moves.position(run, 'delete', 'destroy instance',
                                'deleted'),
            test_moves.position(run, 'delete',
                                'DELETE /allocations/{instance}'))

    def test_whole_search_without_the_audit(self):
        exploration, ends = self.explore(('periodic-1',))
        self.assertEqual(WITHOUT_AUDIT, len(exploration.runs))
        self.assertEqual({outcomes.OK}, test_moves.labels(exploration))
        self.assertEqual({repr(DELETED), repr(NEVER_CREATED)},
                         {repr(end) for end in ends})

    def test_whole_search(self):
        exploration, ends = self.explore()
        self.assertEqual(RUNS, len(exploration.runs))
        self.assertEqual({outcomes.OK}, test_moves.labels(exploration))
        self.assertEqual({repr(DELETED), repr(NEVER_CREATED)},
                         {repr(end) for end in ends})
        self.assertEqual([True] * RUNS, [run.results['delete'].value
                                         for run in exploration.runs])
        # Bug 1914777's window: the conductor destroyed the record the API
        # had just read; the API's destroy deleted nothing, and it freed
        # the allocations once it found the server gone.
        window = [run for run in exploration.runs
                  if test_moves.position(run, 'conductor',
                                         'destroy instance', 'deleted')
                  is not None and
                  test_moves.position(run, 'delete', 'destroy instance',
                                      'not deleted') is not None]
        self.assertTrue(window)
        for run in window:
            self.assertIsNotNone(test_moves.position(
                run, 'delete', 'DELETE /allocations/{instance}'),
                run.format_trace())

    def test_random_runs(self):
        cell = scenarios.Cell(race.CORRECTED, None)
        prog = self.target.program('double', self.scenario, cell)
        result = random_runs.run_random(prog, cell, 5, seed=3)
        self.assertEqual({outcomes.OK: 5}, result.counts)
