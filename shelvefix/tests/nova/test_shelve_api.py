"""Two clients shelve one server at once, through nova's own REST API.

The ``shelve-api`` scenario (nova's only; see
:mod:`shelvefix.nova.shelve_api` for what runs and what is stubbed):
``api-1`` and ``api-2`` each post a shelve action for the same server,
active on compute-1. Each reads the server (no task), checks it, and
saves it ``SHELVING`` expecting no task: when both read before either
saves, the second save fails with ``UnexpectedTaskStateError``. nova's
controller answers that with a 409 since a423d8b277 (bug 1850694); before,
the error escaped it and the client got a 500.
"""

import types

import fixtures
import webob

from shelvefix import race
from shelvefix.race import outcomes
from shelvefix.race import random_runs
from shelvefix.race import scenarios
from shelvefix.tests.nova import base

#: Runs of the whole search on the corrected cell.
RUNS = 60
LOST = 'UnexpectedTaskStateError'


def lost_save(run):
    """The actor whose SHELVING save found a task already set, or None."""
    for entry in run.trace:
        if (entry.step.label == 'save instance' and
                LOST in str(entry.result)):
            return entry.step.actor
    return None


class ShelveApiTestCase(base.NovaTestCase):

    def setUp(self):
        super(ShelveApiTestCase, self).setUp()
        self.target = base.load('shelvefix.nova.target')
        self.shelve_api = base.load('shelvefix.nova.shelve_api')
        self.scenario = scenarios.get_scenario(race.SHELVE_API)
        self.cell = scenarios.Cell(race.CORRECTED, None)

    def explore(self):
        exploration = scenarios.explore(
            self.target.program('double', self.scenario, self.cell))
        self.assertExplored(exploration)
        self.assertTrue(exploration.complete)
        return exploration

    def test_nova_only(self):
        self.assertEqual((race.NOVA,), self.scenario.targets)
        self.assertEqual(('api-1', 'api-2'), self.scenario.actor_names)
        prog = self.target.program('double', self.scenario, self.cell)
        self.addCleanup(prog.close)
        self.assertIsInstance(prog.inner, self.shelve_api.ShelveApiProgram)
        self.assertEqual(('api-1', 'api-2'), prog.actors)

    def test_the_loser_of_the_race_is_answered_409(self):
        exploration = self.explore()
        self.assertEqual(RUNS, len(exploration.runs))
        raced = 0
        for run in exploration.runs:
            self.assertEqual((outcomes.OK,), run.outcome, run.format_trace())
            answers = sorted(result.value for result in run.results.values())
            # One shelve won; the other was refused with a conflict.
            self.assertEqual([202, 409], answers, run.format_trace())
            loser = lost_save(run)
            if loser is not None:
                raced += 1
                self.assertEqual(409, run.results[loser].value)
        # Both read the server before either saved in 2 runs of 3.
        self.assertEqual(40, raced)

    def test_without_the_fix_the_loser_is_answered_500(self):
        # The controller's except clause names an exception nova never
        # raises: what it was before a423d8b277.
        real = self.shelve_api.shelve_api.exception
        unfixed = types.SimpleNamespace(**{
            name: getattr(real, name) for name in dir(real)
            if not name.startswith('__')})
        unfixed.UnexpectedTaskStateError = type('NeverRaised',
                                                (Exception,), {})
        self.useFixture(fixtures.MonkeyPatch(
            'nova.api.openstack.compute.shelve.exception', unfixed))
        exploration = self.explore()
        self.assertEqual(RUNS, len(exploration.runs))
        for run in exploration.runs:
            loser = lost_save(run)
            if loser is None:
                self.assertEqual((outcomes.OK,), run.outcome)
                continue
            self.assertEqual(
                (outcomes.API_500,
                 '%s error: %s (HTTP 500)' % (loser, LOST)), run.outcome)
            self.assertIsInstance(run.results[loser].error,
                                  webob.exc.HTTPInternalServerError)
        self.assertEqual(40, sum(outcomes.API_500 in run.outcome
                                 for run in exploration.runs))

    def test_random_runs_are_judged_the_same_way(self):
        result = random_runs.run_random(
            self.target.program('double', self.scenario, self.cell),
            self.cell, runs=5, seed=1)
        self.assertEqual({outcomes.OK: 5}, result.counts)

    def test_an_inconsistent_end_state_is_a_stuck_task(self):
        cloud = self.useFixture(self.shelve_api.ShelveApiCloud())
        run = cloud.start()
        self.assertEqual(202, cloud.clients.shelve('api-1'))
        ok = types.SimpleNamespace(error=None, value=202)
        refused = types.SimpleNamespace(error=None, value=409)
        self.assertEqual((outcomes.OK,), self.shelve_api.classify(
            cloud.clients, {'api-1': ok, 'api-2': refused}))
        # Two shelves accepted, one cast: not one shelve's end state.
        self.assertEqual((outcomes.TASK_STUCK,), self.shelve_api.classify(
            cloud.clients, {'api-1': ok, 'api-2': ok}))
        # An exception that is no HTTP error is the actor's own.
        broken = types.SimpleNamespace(error=KeyError('x'), value=None)
        self.assertEqual(
            ('api-2 error: KeyError',), self.shelve_api.classify(
                cloud.clients, {'api-1': ok, 'api-2': broken}))
        run.remove_from_placement()
