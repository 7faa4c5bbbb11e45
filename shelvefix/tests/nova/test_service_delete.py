"""The compute service of an evacuated host deleted through nova's API.

The ``service-delete`` scenario (nova's only; see
:mod:`shelvefix.nova.service_delete`): the server was evacuated from
compute-1 to compute-2, compute-1 never comes back, and ``api`` is nova's
``ServiceController.delete`` of compute-1's service, against compute-2's
audit (``periodic-2``). nova 34.0.0 removes compute-1 from the allocations
of the servers evacuated from it (the fix of bug 1829479) before deleting
compute-1's provider.
"""

import fixtures

from shelvefix import race
from shelvefix.race import outcomes
from shelvefix.race import scenarios
from shelvefix.tests.nova import base

#: Runs of the whole search on the corrected cell.
RUNS = 3


def steps(run, actor):
    return [(entry.step.label, entry.result) for entry in run.trace
            if entry.step.actor == actor]


class ServiceDeleteTestCase(base.NovaTestCase):

    def setUp(self):
        super(ServiceDeleteTestCase, self).setUp()
        self.target = base.load('shelvefix.nova.target')
        self.module = base.load('shelvefix.nova.service_delete')
        self.moves = base.load('shelvefix.nova.moves')
        self.scenario = scenarios.get_scenario(race.SERVICE_DELETE)
        self.cell = scenarios.Cell(race.CORRECTED, None)

    def program(self):
        # scenarios.explore closes it.
        return self.target.program('double', self.scenario, self.cell)

    def test_nova_only(self):
        self.assertEqual((race.NOVA,), self.scenario.targets)
        self.assertEqual(scenarios.EVACUATED, self.scenario.start)
        prog = self.program()
        self.addCleanup(prog.close)
        self.assertIsInstance(prog.inner, self.module.ServiceDeleteProgram)
        self.assertEqual(('api', 'periodic-2'), prog.actors)

    def test_the_released_delete_frees_the_evacuated_host(self):
        prog = self.program()
        exploration = scenarios.explore(prog)
        self.assertExplored(exploration)
        self.assertTrue(exploration.complete)
        self.assertEqual(RUNS, len(exploration.runs))
        for run, end in zip(exploration.runs, prog.inner.ends):
            self.assertEqual((outcomes.OK,), run.outcome, run.format_trace())
            self.assertIs(True, run.results['api'].value)
            # compute-1's provider deleted (made again for the next run),
            # the server holding compute-2 only.
            self.assertIn(('DELETE /resource_providers/{compute-1}', '204'),
                          steps(run, 'api'), run.format_trace())
            self.assertEqual(['compute-2'], end['held'])
            self.assertEqual(('active', None, 'compute-2'), end['instance'])

    def test_a_delete_leaving_the_evacuated_allocations_leaks_them(self):
        # nova before bug 1829479's fix: only the host's own servers'
        # allocations go; the provider delete meets the evacuated server's
        # and fails (placement's 409, which nova ignores).
        self.useFixture(fixtures.MockPatch(
            'nova.scheduler.client.report.SchedulerReportClient.'
            '_remove_allocations_for_evacuated_instances'))
        prog = self.program()
        exploration = scenarios.explore(prog)
        self.assertExplored(exploration)
        for run, end in zip(exploration.runs, prog.inner.ends):
            self.assertEqual((outcomes.LEAKED,), run.outcome,
                             run.format_trace())
            self.assertEqual(['compute-1', 'compute-2'], end['held'])
            refused = [result for label, result in steps(run, 'api')
                       if label == 'DELETE /resource_providers/{compute-1}']
            self.assertEqual(1, len(refused))
            self.assertTrue(refused[0].startswith('409 '), refused)

    def test_the_api_refuses_a_host_with_a_server(self):
        cloud = self.useFixture(self.moves.NovaMoveCloud())
        cloud.useFixture(self.module.ServiceDatabase(cloud))
        run = cloud.start(scenarios.EVACUATED, self.module.ServiceDeleteRun)
        self.addCleanup(run.remove_from_placement)
        # The server back on compute-1, as if it had never left.
        run.store.update(run.uuid, {'host': 'compute-1',
                                    'node': 'compute-1'})
        self.assertEqual(self.module.REFUSED, run.delete_service())
        self.assertIn(('api refused', 409), run.events)
        self.assertFalse(run.service_deleted)
        self.assertEqual([], run.end_labels())
