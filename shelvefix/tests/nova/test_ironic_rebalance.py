"""An ironic node moving from compute-1 to compute-2, on nova's code.

The ``ironic-rebalance`` scenario (nova's only; see
:mod:`shelvefix.nova.ironic_rebalance`): compute-1's audit (``periodic-1``)
finds the node no longer its own, compute-2's (``periodic-2``) takes it
over; each service audits once more after the run. nova 34.0.0 keeps the
orphan's record and provider unless ironic says the node was deleted.
"""

import logging

import fixtures

from shelvefix import explorer
from shelvefix import race
from shelvefix.race import outcomes
from shelvefix.race import scenarios
from shelvefix.tests.nova import base

#: Runs of the whole search on the corrected cell.
RUNS = 2
#: Runs of the whole search with a driver that says the node was deleted
#: (nova's ironic driver before 947bb5f641), and their outcomes.
DELETED_RUNS = 26
DELETED_OUTCOMES = {
    (outcomes.OK,): 16,
    ('provider lost',): 6,
    ('node not taken over', 'provider lost'): 4,
}


class IronicRebalanceTestCase(base.NovaTestCase):

    def setUp(self):
        super(IronicRebalanceTestCase, self).setUp()
        self.useFixture(fixtures.LogHandler(logging.NullHandler(),
                                            level=logging.CRITICAL))
        self.target = base.load('shelvefix.nova.target')
        self.module = base.load('shelvefix.nova.ironic_rebalance')
        self.scenario = scenarios.get_scenario(race.IRONIC_REBALANCE)
        self.cell = scenarios.Cell(race.CORRECTED, None)

    def cloud(self, **kwargs):
        return self.useFixture(self.module.RebalanceCloud(**kwargs))

    def test_both_targets(self):
        # The library's: shelvefix.tests.unit.race.test_node_programs.
        self.assertEqual((race.LIBRARY, race.NOVA), self.scenario.targets)
        self.assertEqual(scenarios.NODE_ON_SOURCE, self.scenario.start)
        for label in (self.module.NODE_LOST, self.module.NOT_TAKEN_OVER,
                      self.module.PROVIDER_LOST):
            self.assertIn(label, self.scenario.symptoms)
        prog = self.target.program('double', self.scenario, self.cell)
        self.addCleanup(prog.close)
        self.assertIsInstance(prog.inner, self.module.RebalanceProgram)
        self.assertEqual(('periodic-1', 'periodic-2'), prog.actors)

    def test_the_start(self):
        run = self.cloud().start()
        # compute-1 manages the node; the ring has just moved it.
        self.assertEqual(('compute-1', False), run.end_state()['node'])
        self.assertEqual(['compute-1'], run.end_state()['tracked'])
        self.assertEqual(self.module.INVENTORY, run.inventory())
        self.assertEqual([], run.drivers['compute-1'].get_available_nodes())
        self.assertEqual({run.node_uuid: 'node-1'},
                         run.drivers['compute-2'].get_nodenames_by_uuid())
        self.assertFalse(run.drivers['compute-1'].is_node_deleted('node-1'))

    def test_in_either_order_compute_2_takes_the_node_over(self):
        cloud = self.cloud()
        for order in (('compute-1', 'compute-2'), ('compute-2', 'compute-1')):
            run = cloud.start()
            for host in order:
                self.assertIs(True, run.periodic(host))
            end = run.end_state()
            self.assertEqual(('compute-2', False), end['node'], order)
            self.assertEqual(self.module.INVENTORY, end['inventory'])
            self.assertEqual([], run.end_labels())
            # compute-1 let go of it, its record and provider kept, at the
            # first audit that no longer lists it.
            self.assertEqual(['compute-1', 'compute-2'] if order[0] ==
                             'compute-1' else ['compute-2'], end['tracked'])
            run.settle()
            self.assertEqual(['compute-2'], run.end_state()['tracked'])
            self.assertEqual([], run.end_state()['settle_errors'])

    def test_the_judge(self):
        cloud = self.cloud()
        run = cloud.start()
        node = run.node()
        # Still compute-1's.
        self.assertEqual([self.module.NOT_TAKEN_OVER], run.end_labels())
        node.deleted = True
        self.assertEqual([self.module.NODE_LOST], run.end_labels())
        del cloud.database.compute_nodes[run.node_uuid]
        cloud.placement.delete_provider(run.node_uuid)
        self.assertEqual([self.module.NODE_LOST, self.module.PROVIDER_LOST],
                         run.end_labels())

    def test_the_released_rebalance_keeps_the_node(self):
        prog = self.target.program('double', self.scenario, self.cell)
        exploration = scenarios.explore(prog)
        self.assertExplored(exploration)
        self.assertTrue(exploration.complete)
        self.assertEqual(RUNS, len(exploration.runs))
        for run, end in zip(exploration.runs, prog.inner.ends):
            self.assertEqual((outcomes.OK,), run.outcome, run.format_trace())
            self.assertEqual(('compute-2', False), end['node'])
            labels = [entry.step.label for entry in run.trace]
            self.assertNotIn('delete compute node node-1', labels)

    def test_a_driver_saying_deleted_loses_the_provider(self):
        # A finding: with the driver answering as before 947bb5f641 (the
        # orphan deleted whatever ironic has), nova 34.0.0, all of bug
        # 1853009's fixes in, can still lose the node's provider for good:
        # compute-1 deletes the record before compute-2 takes it over
        # (compute-2 undeletes it), then deletes the provider after
        # compute-2 read it; compute-2's report client keeps the provider
        # it read, and never makes it again (its take-over may even fail
        # at every audit, the record left compute-1's).
        cloud = self.cloud(says_deleted=True)
        prog = self.module.RebalanceProgram(cloud)
        exploration = explorer.explore(prog)
        self.assertExplored(exploration)
        self.assertEqual(DELETED_RUNS, len(exploration.runs))
        counts = {}
        for run in exploration.runs:
            counts[run.outcome] = counts.get(run.outcome, 0) + 1
        self.assertEqual(DELETED_OUTCOMES, counts)
        for run, end in zip(exploration.runs, prog.ends):
            if run.outcome != (outcomes.OK,):
                self.assertIsNone(end['inventory'], run.format_trace())
                self.assertEqual(
                    'node not taken over' in run.outcome,
                    end['node'] == ('compute-1', False))
