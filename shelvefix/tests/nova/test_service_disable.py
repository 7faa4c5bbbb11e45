"""nova's API disabling compute-1's service against compute-1's audit.

The ``service-disable`` scenario (nova's only; see
:mod:`shelvefix.nova.service_disable`): ``api`` is nova's
``ServiceController.update`` (the record saved, then compute-1's
``set_host_enabled``, an RPC call, adding ``COMPUTE_STATUS_DISABLED`` to
the node's provider), ``periodic-1`` compute-1's audit, with nova's
inventory report. A server has booted on compute-1 since the last audit:
the provider's generation is past the one compute-1's report client
cached.
"""

import logging
import os

import fixtures
import testtools

from shelvefix import race
from shelvefix.race import outcomes
from shelvefix.race import scenarios
from shelvefix.tests.nova import base
from shelvefix.tests.nova import test_moves

#: Runs of the whole search on the corrected cell, and their outcomes.
RUNS = 1417
OUTCOMES = {(outcomes.OK,): 1412, ('trait out of sync',): 5}
#: The errors of compute's trait update nova swallowed, in those runs: a
#: 409 (the audit wrote the provider between the update's read and
#: write), a ValueError (the audit's 409 emptied the cache the update then
#: writes to); the audit then set the trait.
SWALLOWED = {(): 1287, ('ValueError',): 109,
             ('ResourceProviderUpdateConflict',): 21}
#: The same, enabling the service again (the ``enabled-again`` cell): the
#: same runs, mirrored.
SWALLOWED_ENABLING = SWALLOWED
CONFLICT = 'api error: ResourceProviderUpdateConflict'


class ServiceDisableTestCase(base.NovaTestCase):

    def setUp(self):
        super(ServiceDisableTestCase, self).setUp()
        self.useFixture(fixtures.LogHandler(logging.NullHandler(),
                                            level=logging.CRITICAL))
        self.target = base.load('shelvefix.nova.target')
        self.module = base.load('shelvefix.nova.service_disable')
        self.scenario = scenarios.get_scenario(race.SERVICE_DISABLE)
        self.cell = scenarios.Cell(race.CORRECTED, None)

    def cloud(self, **kwargs):
        return self.useFixture(self.module.ServiceDisableCloud(**kwargs))

    def cached_generation(self):
        # nova before bug 1886418's fix: compute writes the traits with
        # the generation its provider tree cache holds.
        report = base.load('nova.scheduler.client.report')
        set_traits = report.SchedulerReportClient.set_traits_for_provider

        def cached(client, context, rp_uuid, traits, generation=None):
            return set_traits(client, context, rp_uuid, traits)
        self.useFixture(fixtures.MonkeyPatch(
            'nova.scheduler.client.report.SchedulerReportClient.'
            'set_traits_for_provider', cached))

    def test_both_targets(self):
        # The library's: shelvefix.tests.unit.race.test_node_programs.
        self.assertEqual((race.LIBRARY, race.NOVA), self.scenario.targets)
        self.assertEqual(scenarios.ACTIVE_ON_SOURCE, self.scenario.start)
        self.assertIn(self.module.OUT_OF_SYNC, self.scenario.symptoms)
        prog = self.target.program('double', self.scenario, self.cell)
        self.addCleanup(prog.close)
        self.assertIsInstance(prog.inner,
                              self.module.ServiceDisableProgram)
        self.assertEqual(('periodic-1', 'api'), prog.actors)

    def test_the_start(self):
        run = self.cloud().start()
        end = run.end_state()
        self.assertEqual({'disabled': False, 'trait': False, 'failed': []},
                         end)
        # The audits reported the nodes, then the server's claim.
        self.assertIn('COMPUTE_NODE', run.traits())
        self.assertEqual({run.providers['compute-1']},
                         set(run.held()))

    def test_disabling_adds_the_trait(self):
        cloud = self.cloud()
        for order in (('api', 'periodic-1'), ('periodic-1', 'api')):
            run = cloud.start()
            for actor in order:
                self.assertIs(True, run.update_service() if actor == 'api'
                              else run.periodic('compute-1'))
            self.assertEqual(
                {'disabled': True, 'trait': True, 'failed': []},
                run.end_state(), order)
            self.assertEqual([], run.end_labels())
            run.remove_from_placement()

    def test_enabling_removes_the_trait(self):
        cloud = self.cloud(enabling=True)
        run = cloud.start()
        # Disabled, and the audits reported it.
        self.assertEqual({'disabled': True, 'trait': True, 'failed': []},
                         run.end_state())
        self.assertIs(True, run.update_service())
        self.assertEqual({'disabled': False, 'trait': False, 'failed': []},
                         run.end_state())
        run.periodic('compute-1')
        self.assertEqual([], run.end_labels())
        prog = self.target.program(
            'double', self.scenario,
            scenarios.Cell(race.CORRECTED, None, race.ENABLED_AGAIN))
        self.addCleanup(prog.close)
        self.assertTrue(prog.cloud.enabling)

    def test_the_stale_generation_leaves_the_trait_out_of_sync(self):
        self.cached_generation()
        cloud = self.cloud()
        # The API first: its update fails, the audit then adds the trait.
        run = cloud.start()
        run.update_service()
        self.assertEqual(['ResourceProviderUpdateConflict'],
                         run.end_state()['failed'])
        self.assertEqual([self.module.OUT_OF_SYNC, CONFLICT],
                         run.end_labels())
        run.periodic('compute-1')
        self.assertTrue(run.end_state()['trait'])
        # A conflict the audit healed is not judged.
        self.assertEqual([], run.end_labels())
        run.remove_from_placement()
        # The audit first: nothing heals the API's failed update.
        run = cloud.start()
        run.periodic('compute-1')
        run.update_service()
        self.assertEqual([self.module.OUT_OF_SYNC, CONFLICT],
                         run.end_labels())

    def explore(self, cell, disabled):
        prog = self.target.program('double', self.scenario, cell)
        exploration = scenarios.explore(prog)
        self.assertExplored(exploration)
        self.assertTrue(exploration.complete)
        self.assertEqual(RUNS, len(exploration.runs))
        counts = {}
        for run in exploration.runs:
            counts[run.outcome] = counts.get(run.outcome, 0) + 1
        self.assertEqual(OUTCOMES, counts)
        swallowed = {}
        for run, end in zip(exploration.runs, prog.inner.ends):
            self.assertIs(True, run.results['api'].value)
            failed = tuple(end['failed'])
            swallowed[failed] = swallowed.get(failed, 0) + 1
            if run.outcome != (outcomes.OK,):
                # A finding: the audit read the service as it was, the API
                # then changed it and the trait, and the audit's report
                # undid the trait, with the generation the API's update
                # left in the shared cache.
                self.assertEqual({'disabled': disabled,
                                  'trait': not disabled, 'failed': []}, end)
                labels = [(entry.step.actor, entry.step.label)
                          for entry in run.trace]
                read = labels.index(('periodic-1',
                                     'read service compute-1'))
                saved = labels.index(('api', 'save service compute-1'))
                self.assertLess(read, saved)
        return swallowed

    def test_the_released_search(self):
        self.assertEqual(SWALLOWED, self.explore(self.cell, disabled=True))

    @testtools.skipUnless(os.environ.get(test_moves.FULL),
                          'a minute of nova code: set %s=1' % test_moves.FULL)
    def test_the_released_search_enabling(self):
        # The mirror of test_the_released_search (as long: CI runs that
        # one only).
        cell = scenarios.Cell(race.CORRECTED, None, race.ENABLED_AGAIN)
        self.assertEqual(SWALLOWED_ENABLING,
                         self.explore(cell, disabled=False))
