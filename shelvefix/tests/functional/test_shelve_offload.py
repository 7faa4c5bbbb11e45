"""Shelve-offload end to end against the placement double.

Compute manager, resource tracker and report client are the library's own;
only the placement service is the double. Faults are injected on each of
the offload's placement requests to check the failure policy: the offload
stops before the state change, nothing is lost and an ERROR names the
consumer.
"""

import testscenarios

from shelvefix.compute import task_states
from shelvefix.compute import vm_states
from shelvefix import exception
from shelvefix import race
from shelvefix.race import scenario
from shelvefix.tests import base

load_tests = testscenarios.load_tests_apply_scenarios

FAULTS = [
    ('connect', {'exception': 'connect'}),
    ('timeout', {'exception': 'timeout'}),
    ('500', {'status': 500}),
    ('503_html', {'status': 503, 'body': '<html>Service Unavailable</html>'}),
    ('409', {'status': 409}),
]


class ShelveOffloadTestCase(base.TestCase):

    def test_offload_with_delete(self):
        scn = self.useFixture(scenario.ShelveScenario(free=race.DELETE))
        scn.shelve_offload()
        saved = scn.saved()
        self.assertEqual((vm_states.SHELVED_OFFLOADED, None, None, None),
                         (saved['vm_state'], saved['task_state'],
                          saved['host'], saved['node']))
        self.assertEqual({'allocations': {}}, scn.allocations())
        self.assertEqual({}, scn.rt.usage('compute-1'))
        self.assertEqual(0, scn.client.get_provider_usages(
            scn.compute_ctx, scn.src)['VCPU'])

    def test_offload_then_unshelve_claim(self):
        scn = self.useFixture(scenario.ShelveScenario(free=race.GET_PUT))
        scn.shelve_offload()
        self.assertTrue(scn.unshelve_claim())
        allocs = scn.allocations()
        self.assertEqual([scn.dst], list(allocs['allocations']))
        put = scn.placement.transport.calls_for('PUT')[-1]
        self.assertIsNone(put.body['consumer_generation'])

    def test_offload_without_allocations(self):
        # Nothing to free (already gone): both strategies still offload.
        for free in race.FREE_METHODS:
            scn = self.useFixture(scenario.ShelveScenario(free=free))
            scn.client.delete_allocation_for_instance(
                scn.compute_ctx, scn.instance.uuid, force=True)
            scn.shelve_offload()
            self.assertEqual(vm_states.SHELVED_OFFLOADED,
                             scn.saved()['vm_state'])

    def test_wrong_task_state_changes_nothing_in_placement(self):
        scn = self.useFixture(scenario.ShelveScenario())
        scn.instance.task_state = task_states.DELETING
        scn.instance.save()
        scn.placement.reset_calls()
        self.assertRaises(exception.UnexpectedTaskStateError,
                          scn.shelve_offload)
        self.assertEqual([], scn.placement.calls)
        self.assertEqual([scn.src], list(scn.allocations()['allocations']))
        self.assertEqual(task_states.DELETING, scn.saved()['task_state'])


class ShelveOffloadFaultTestCase(testscenarios.WithScenarios, base.TestCase):
    """A fault on any freeing request stops the offload, losing nothing."""

    scenarios = testscenarios.multiply_scenarios(
        [('delete', {'free': race.DELETE, 'methods': ['DELETE']}),
         ('get_put', {'free': race.GET_PUT, 'methods': ['GET', 'PUT']})],
        FAULTS)

    def _check(self, method):
        fault = {k: getattr(self, k) for k in ('exception', 'status', 'body')
                 if hasattr(self, k)}
        scn = self.useFixture(scenario.ShelveScenario(
            free=self.free))
        scn.placement.inject_fault(method=method, **fault)
        errors_before = len(self.error_logs())
        e = self.assertRaises(exception.AllocationDeleteFailed,
                              scn.shelve_offload)
        self.assertIn(scn.instance.uuid, str(e))
        saved = scn.saved()
        self.assertEqual((vm_states.SHELVED, None, 'compute-1'),
                         (saved['vm_state'], saved['task_state'],
                          saved['host']))
        # Neither leaked nor wiped: the shelved server still holds exactly
        # its allocations, and the resource tracker still counts it.
        self.assertEqual([scn.src], list(scn.allocations()['allocations']))
        self.assertEqual(scenario.FLAVOR.resources,
                         scn.rt.usage('compute-1'))
        errors = self.error_logs()[errors_before:]
        self.assertEqual(1, len(errors), errors)
        self.assertIn('consumer %s' % scn.instance.uuid, errors[0])
        # A retry after the fault clears completes the offload.
        scn.placement.clear_faults()
        scn.instance.task_state = task_states.SHELVING_OFFLOADING
        scn.instance.save()
        scn.shelve_offload()
        self.assertEqual(vm_states.SHELVED_OFFLOADED,
                         scn.saved()['vm_state'])
        self.assertEqual({'allocations': {}}, scn.allocations())

    def test_fault_on_each_request(self):
        for method in self.methods:
            self._check(method)
