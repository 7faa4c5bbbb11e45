"""``service-disable`` and ``ironic-rebalance`` on the library.

Both targets run them (nova's: ``shelvefix/tests/nova/test_service_disable``
and ``test_ironic_rebalance``). Where nova 34.0.0 ends ``trait out of
sync`` in a few runs (its ``set_host_enabled`` writes the trait outside the
lock its audit holds), the library is clean: compute-1 changes the trait
under the tracker's ``compute_resources`` lock, and the audit reads the
service's ``disabled`` under it. The tests put each guard of the
library's order away to show the window it closes.
"""

import logging
from unittest import mock

import fixtures

from shelvefix.backends import fixture
from shelvefix.compute import node_manager
from shelvefix.explorer import runner
from shelvefix.objects import compute_node as node_obj
from shelvefix import race
from shelvefix.race import node_programs
from shelvefix.race import outcomes
from shelvefix.race import scenarios
from shelvefix.tests import base
from shelvefix.tests.unit.explorer import programs

OK = (outcomes.OK,)
#: Runs of the whole search on the library (each cell of service-disable,
#: and ironic-rebalance).
SERVICE_RUNS = 3
REBALANCE_RUNS = 11


def labels(trace, actor=None):
    """``actor: label -> result`` of each step (of one actor)."""
    return ['%s: %s%s' % (entry.step.actor, entry.step.label,
                          '' if entry.result is None
                          else ' -> %s' % entry.result)
            for entry in trace if actor in (None, entry.step.actor)]


class NodeProgramTestBase(base.TestCase):

    def setUp(self):
        super(NodeProgramTestBase, self).setUp()
        self.useFixture(fixtures.FakeLogger(level=logging.WARNING))
        self.placement = self.useFixture(fixture.PlacementFixture())

    def explore(self, prog, reduce=True):
        exploration = scenarios.explore(prog, reduce=reduce)
        self.assertTrue(exploration.complete)
        self.assertEqual(0, exploration.blocked)
        # Every run removed what it made, and the program its providers.
        self.assertEqual({}, self.placement.state.consumers)
        self.assertEqual({}, self.placement.state.providers)
        return exploration


class ServiceDisableTestCase(NodeProgramTestBase):

    def program(self, fault=None):
        return node_programs.ServiceDisableProgram(
            self.placement, scenarios.Cell(race.CORRECTED, None, fault),
            scenarios.get_scenario(race.SERVICE_DISABLE))

    def test_both_targets(self):
        scn = scenarios.get_scenario(race.SERVICE_DISABLE)
        self.assertEqual((race.LIBRARY, race.NOVA), scn.targets)
        self.assertEqual(
            [scenarios.Cell(race.CORRECTED, None),
             scenarios.Cell(race.CORRECTED, None, race.ENABLED_AGAIN)],
            scn.cells())

    def test_one_run_in_order(self):
        prog = self.program()
        try:
            record = runner.replay(prog, ())
        finally:
            prog.close()
        self.assertEqual(OK, record.outcome)
        self.assertEqual([
            'api: list services on the node -> 1 row(s)',
            'api: save service -> compute-1 disabled',
            'api: acquire lock compute_resources',
            'api: GET /resource_providers/{compute-1}/traits -> 200',
            'api: PUT /resource_providers/{compute-1}/traits -> 200',
            'api: provider tree of compute-1: update_traits',
            'api: release lock compute_resources',
        ], labels(record.trace, 'api'))
        audit = labels(record.trace, 'periodic-1')
        # The service's flag read while the lock is held.
        self.assertLess(audit.index('periodic-1: acquire lock '
                                    'compute_resources'),
                        audit.index('periodic-1: list services on the node '
                                    '-> 1 row(s)'))
        self.assertLess(audit.index('periodic-1: list services on the node '
                                    '-> 1 row(s)'),
                        audit.index('periodic-1: release lock '
                                    'compute_resources'))

    def test_whole_search(self):
        for fault in (None, race.ENABLED_AGAIN):
            exploration = self.explore(self.program(fault))
            self.assertEqual({OK: SERVICE_RUNS},
                             exploration.outcome_counts(), fault)

    @staticmethod
    def unlocked(compute, context, enabled):
        """nova's ``_update_compute_provider_status``: no lock taken."""
        for node in list(compute.rt.compute_nodes.values()):
            compute.virtapi.update_compute_provider_status(
                context, node.uuid, enabled)

    def test_a_trait_update_outside_the_lock_goes_out_of_sync(self):
        # nova's set_host_enabled: the trait written without the lock the
        # audit holds; the audit reads the service enabled, the API adds
        # the trait (the new generation in the shared cache), and the
        # audit's report removes it with that generation.
        with mock.patch.object(node_manager.NodesMixin,
                               '_update_compute_provider_status',
                               self.unlocked):
            for fault in (None, race.ENABLED_AGAIN):
                counts = self.explore(self.program(fault)).outcome_counts()
                self.assertIn(OK, counts)
                self.assertIn((node_programs.OUT_OF_SYNC,), counts)

    def test_the_reduction_runs_each_trace_once(self):
        # Every interleaving (128) against one run per class (3): the
        # same outcomes, and one run per trace (the records' and the
        # provider cache's steps commute only where they should).
        full = self.explore(self.program(), reduce=False)
        reduced = self.explore(self.program())
        self.assertEqual(128, len(full.runs))
        self.assertEqual(set(full.outcome_counts()),
                         set(reduced.outcome_counts()))
        traces = {programs.foata(run) for run in full.runs}
        self.assertEqual(traces,
                         {programs.foata(run) for run in reduced.runs})
        self.assertEqual(len(traces), len(reduced.runs))


class RebalanceTestCase(NodeProgramTestBase):

    def program(self):
        return node_programs.RebalanceProgram(
            self.placement, scenarios.Cell(race.CORRECTED, None),
            scenarios.get_scenario(race.IRONIC_REBALANCE))

    def test_both_targets(self):
        scn = scenarios.get_scenario(race.IRONIC_REBALANCE)
        self.assertEqual((race.LIBRARY, race.NOVA), scn.targets)
        self.assertEqual(scenarios.NODE_ON_SOURCE, scn.start)

    def test_one_run_in_order(self):
        prog = self.program()
        try:
            record = runner.replay(prog, ())
        finally:
            prog.close()
        self.assertEqual(OK, record.outcome)
        node = prog.node[0]
        self.assertEqual([
            'periodic-1: list compute_nodes on the node -> 1 row(s)',
            'periodic-1: save compute_node -> %s of compute-1 (deleted)'
            % node,
            'periodic-1: provider tree of compute-1: remove',
            'periodic-1: GET /resource_providers/{node-1}/allocations -> 200',
            'periodic-1: DELETE /resource_providers/{node-1} -> 204',
            'periodic-1: provider tree of compute-1: remove',
        ], labels(record.trace, 'periodic-1'))
        take_over = labels(record.trace, 'periodic-2')
        self.assertIn('periodic-2: read compute_node -> %s of compute-1 '
                      '(deleted)' % node, take_over)
        self.assertIn('periodic-2: save compute_node -> %s of compute-2'
                      % node, take_over)
        self.assertIn('periodic-2: POST /resource_providers -> 200',
                      take_over)
        end = prog.ends[-1]
        self.assertEqual(('compute-2', False), end['node'])
        self.assertEqual(['compute-2'], end['tracking'])
        self.assertEqual({}, end['settle_errors'])

    def test_whole_search(self):
        prog = self.program()
        exploration = self.explore(prog)
        self.assertEqual({OK: REBALANCE_RUNS}, exploration.outcome_counts())
        # The actors always leave the record compute-2's; in some runs
        # compute-1 deletes the provider after compute-2 reported it (the
        # record was compute-1's when it destroyed it): compute-2's next
        # audit makes it again.
        unsettled = [end['unsettled'] for end in prog.ends]
        self.assertEqual({('compute-2', False)},
                         set(state['node'] for state in unsettled))
        self.assertIn(None, [state['inventory'] for state in unsettled])
        self.assertEqual([{}] * REBALANCE_RUNS,
                         [end['settle_errors'] for end in prog.ends])

    def test_a_destroy_without_the_host_constraint_deletes_a_taken_node(self):
        # Before bug 1853009's fix: the orphan's record deleted whoever
        # owns it now. compute-1 deletes the record compute-2 has just
        # taken over, and its provider: compute-2 works without both until
        # its next audit finds the record deleted, forgets it, takes it
        # over again and makes the provider again (the end is healed).
        def destroy(node):
            node._load(node._store.update(node.uuid, {'deleted': True}))

        prog = self.program()
        with mock.patch.object(node_obj.ComputeNode, 'destroy', destroy):
            counts = self.explore(prog).outcome_counts()
        self.assertEqual({OK}, set(counts))
        self.assertIn({'node': ('compute-2', True), 'inventory': None},
                      [end['unsettled'] for end in prog.ends])
