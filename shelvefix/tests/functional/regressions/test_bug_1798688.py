"""Regression tests for bug 1798688.

Shelve-offloading a server used to save ``vm_state = SHELVED_OFFLOADED``
before freeing the server's allocations in placement. An API client that
unshelved as soon as it saw that state raced the cleanup: the scheduler read
the old allocations and their consumer generation, compute deleted them (and
with them the consumer), and the scheduler's PUT failed with 409 "consumer
generation conflict - expected null but got 1". Other interleavings of the
legacy order silently wipe the unshelve's claim, or make compute's own
delete fail after the server was already reported offloaded.

The fix frees the allocations first. These tests check the order in the
ordered call log, prove that the check catches the legacy order, and replay
each legacy failure step by step (real threads, scripted request order)
beside the corrected order, against both the placement double and the real
placement service (openstack-placement in-process over sqlite), so every
409 detail asserted here is placement's own.
"""

import threading

import testscenarios

from shelvefix import backends
from shelvefix.backends import real
from shelvefix.compute import manager
from shelvefix.compute import vm_states
from shelvefix import exception
from shelvefix import race
from shelvefix.race import scenario
from shelvefix.race import timeline as timeline_mod
from shelvefix.race import variants
from shelvefix.tests import base
from shelvefix.tests.functional import sequencer

load_tests = testscenarios.load_tests_apply_scenarios

FREE_STRATEGIES = [
    ('get_put_empty', {'free': race.GET_PUT}),
    ('delete', {'free': race.DELETE}),
]
BACKENDS = [
    ('double', {'backend': 'double'}),
    ('real', {'backend': 'real'}),
]
MATRIX = testscenarios.multiply_scenarios(BACKENDS, FREE_STRATEGIES)


class BackendTestCase(testscenarios.WithScenarios, base.TestCase):
    """Runs on the placement backend named by the scenario."""

    def scenario_fixture(self, manager_cls):
        if self.backend == 'real' and not real.available():
            self.skipTest(real.INSTALL_HINT)
        return self.useFixture(scenario.ShelveScenario(
            free=self.free, manager_cls=manager_cls,
            placement=backends.make_backend(self.backend)))


class CallOrderTestCase(BackendTestCase):
    """The allocations are freed before SHELVED_OFFLOADED is saved."""

    scenarios = MATRIX

    def _run(self, manager_cls):
        scn = self.scenario_fixture(manager_cls)
        scn.shelve_offload()
        return scn

    def test_corrected_order(self):
        scn = self._run(manager.ComputeManager)
        timeline = scn.timeline()
        self.assertEqual([], timeline_mod.order_violations(timeline,
                                                           scn.instance.uuid))
        url = '/allocations/%s' % scn.instance.uuid
        calls = [(c.method, c.path, c.status) for c in scn.placement.calls]
        if self.free == race.DELETE:
            self.assertEqual([('DELETE', url, 204)], calls)
        else:
            self.assertEqual([('GET', url, 200), ('PUT', url, 204)], calls)
            put = scn.placement.calls[1]
            self.assertEqual('1.28', put.microversion)
            self.assertEqual({'allocations': {}, 'consumer_generation': 1,
                              'project_id': scenario.PROJECT,
                              'user_id': scenario.USER}, put.body)
        self.assertEqual({'allocations': {}}, scn.allocations())
        self.assertEqual(vm_states.SHELVED_OFFLOADED,
                         scn.saved()['vm_state'])

    def test_legacy_order_fails_the_order_check(self):
        scn = self._run(variants.legacy_compute_manager())
        timeline = scn.timeline()
        # The very assertion test_corrected_order makes fails here.
        self.assertRaises(AssertionError, self.assertEqual, [],
                          timeline_mod.order_violations(timeline,
                                                        scn.instance.uuid))
        url = '/allocations/%s' % scn.instance.uuid
        expected = (['DELETE %s' % url] if self.free == race.DELETE
                    else ['GET %s' % url, 'PUT %s' % url])
        self.assertEqual(
            ['%s came after the save that made SHELVED_OFFLOADED visible'
             % r for r in expected],
            timeline_mod.order_violations(timeline, scn.instance.uuid))
        # Same requests, only in the wrong place relative to the save.
        saved_at = timeline_mod.index_of_offloaded_save(timeline)
        self.assertEqual(0, saved_at)


class RaceTestCase(BackendTestCase):
    """Replays of the race: compute and scheduler in threads.

    The API actor waits for SHELVED_OFFLOADED to become visible, then starts
    the scheduler's claim; the sequencer imposes the request order.
    """

    scenarios = MATRIX

    def _race(self, manager_cls, script):
        scn = self.scenario_fixture(manager_cls)
        seq = sequencer.Sequencer(scn.placement.transport, script)
        seq.install(self)
        offloaded = threading.Event()
        scn.store.observers.append(
            lambda uuid, row: row['vm_state'] == vm_states.SHELVED_OFFLOADED
            and offloaded.set())

        def api_then_scheduler():
            # The API client polls until the server shows SHELVED_OFFLOADED
            # and unshelves; the scheduler then claims for it.
            self.assertTrue(offloaded.wait(sequencer.WAIT_SECONDS))
            return scn.unshelve_claim()

        compute = sequencer.Actor('compute', scn.shelve_offload)
        scheduler = sequencer.Actor('scheduler', api_then_scheduler)
        compute.start()
        scheduler.start()
        errors = compute.finish(self), scheduler.finish(self)
        self.assertTrue(seq.finished, 'script not played to the end')
        return scn, errors

    def _free_steps(self):
        if self.free == race.DELETE:
            return [('compute', 'DELETE')]
        return [('compute', 'GET'), ('compute', 'PUT')]

    def test_legacy_scheduler_409(self):
        # Bug doc steps 1-6: scheduler GET, compute frees, scheduler PUT.
        script = ([('scheduler', 'GET')] + self._free_steps() +
                  [('scheduler', 'PUT')])
        scn, (compute_error, scheduler_error) = self._race(
            variants.legacy_compute_manager(), script)
        self.assertIsNone(compute_error)
        self.assertIsInstance(scheduler_error,
                              exception.AllocationUpdateFailed)
        self.assertIn('consumer generation conflict - expected null but '
                      'got 1', str(scheduler_error))
        self.assertIn(scn.instance.uuid, str(scheduler_error))
        put = scn.placement.calls[-1]
        self.assertEqual(('PUT', 409), (put.method, put.status))
        self.assertEqual(1, put.body['consumer_generation'])
        # The unshelve failed and the server holds nothing.
        self.assertEqual({'allocations': {}}, scn.allocations())

    def test_legacy_claim_silently_wiped(self):
        # The scheduler's claim lands (doubled up, generation 1 -> 2), then
        # compute frees "its" allocations and takes the new claim with them.
        script = ([('scheduler', 'GET'), ('scheduler', 'PUT')] +
                  self._free_steps())
        scn, (compute_error, scheduler_error) = self._race(
            variants.legacy_compute_manager(), script)
        self.assertIsNone(compute_error)
        self.assertIsNone(scheduler_error)
        self.assertEqual({'allocations': {}}, scn.allocations())
        usages = scn.client.get_provider_usages(scn.compute_ctx, scn.dst)
        self.assertEqual(0, usages.get('VCPU', 0))

    def test_legacy_compute_409(self):
        if self.free == race.DELETE:
            self.skipTest('DELETE ignores generations: no compute 409')
        script = [('compute', 'GET'), ('scheduler', 'GET'),
                  ('scheduler', 'PUT'), ('compute', 'PUT')]
        scn, (compute_error, scheduler_error) = self._race(
            variants.legacy_compute_manager(), script)
        self.assertIsNone(scheduler_error)
        self.assertIsInstance(compute_error,
                              exception.AllocationDeleteFailed)
        self.assertIn('consumer generation conflict - expected 2 but got 1',
                      str(compute_error))
        # Legacy: the server was already reported offloaded.
        self.assertEqual(vm_states.SHELVED_OFFLOADED,
                         scn.saved()['vm_state'])

    def test_corrected_order_claim_succeeds(self):
        script = self._free_steps() + [('scheduler', 'GET'),
                                       ('scheduler', 'PUT')]
        scn, (compute_error, scheduler_error) = self._race(
            manager.ComputeManager, script)
        self.assertIsNone(compute_error)
        self.assertIsNone(scheduler_error)
        get, put = scn.placement.calls[-2:]
        self.assertEqual(('GET', 200), (get.method, get.status))
        self.assertEqual(('PUT', 204), (put.method, put.status))
        self.assertIsNone(put.body['consumer_generation'])
        allocs = scn.allocations()
        self.assertEqual({scn.dst: {'VCPU': 1, 'MEMORY_MB': 512,
                                    'DISK_GB': 10}},
                         {rp: a['resources']
                          for rp, a in allocs['allocations'].items()})
        self.assertEqual(1, allocs['consumer_generation'])
