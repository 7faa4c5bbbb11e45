"""Bug 1798688 regression tests on nova's own code.

The same assertions as ``shelvefix/tests/functional/regressions/
test_bug_1798688.py``, made on nova's real
``ComputeManager.shelve_offload_instance`` / ``_shelve_offload_instance``,
nova's ``ResourceTracker`` and ``SchedulerReportClient`` and, for the
unshelve, ``nova.scheduler.utils.claim_resources``, against the placement
double and the real placement service (see
:mod:`shelvefix.nova.harness` for what is stubbed: only what needs a
database, a hypervisor or RPC).

The installed nova must free the allocations before SHELVED_OFFLOADED is
saved, and must win the race. A copy of its method moved back to the
legacy order (the ``legacy`` variant of :mod:`shelvefix.nova.variants`)
must fail the very same order check, and replaying the race on it must
produce the scheduler's 409 with placement's own "expected null but got 1",
and the silently wiped claim.
"""

import testscenarios

from shelvefix.backends import real
from shelvefix import race
from shelvefix.tests.functional import sequencer
from shelvefix.tests.nova import base

load_tests = testscenarios.load_tests_apply_scenarios

BACKENDS = [
    ('double', {'backend': 'double'}),
    ('real', {'backend': 'real'}),
]
# nova frees with DELETE /allocations/{uuid} (force=True) since Ussuri.
FREE_STEPS = [('compute', 'DELETE')]


class NovaScenarioTestCase(testscenarios.WithScenarios, base.NovaTestCase):

    scenarios = BACKENDS

    def setUp(self):
        super(NovaScenarioTestCase, self).setUp()
        if self.backend == 'real' and not real.available():
            self.skipTest(real.INSTALL_HINT)

    def scenario(self, legacy=False):
        manager_cls = self.harness.nova_manager.ComputeManager
        if legacy:
            variants = base.load('shelvefix.nova.variants')
            manager_cls = variants.code(race.LEGACY).manager_cls
        return self.useFixture(self.harness.NovaShelveScenario(
            backend=self.backend, manager_cls=manager_cls))

    def violations(self, scn):
        return self.harness.order_violations(scn.timeline(),
                                             scn.instance.uuid)


class CallOrderTestCase(NovaScenarioTestCase):
    """nova frees the allocations before SHELVED_OFFLOADED is saved."""

    def test_nova_frees_allocations_first(self):
        scn = self.scenario()
        scn.shelve_offload()
        self.assertEqual([], self.violations(scn))
        url = '/allocations/%s' % scn.instance.uuid
        self.assertEqual([('DELETE', url, 204)],
                         [(c.method, c.path, c.status)
                          for c in scn.placement.calls])
        self.assertTrue(scn.placement.calls[0].request_id.startswith(
            'req-compute-'))
        self.assertEqual({'allocations': {}}, scn.allocations())
        self.assertEqual(0, scn.usages(scn.src).get('VCPU', 0))
        saved = scn.saved()
        vm_states = self.harness.vm_states
        self.assertEqual((vm_states.SHELVED_OFFLOADED, None, None, None),
                         (saved['vm_state'], saved['task_state'],
                          saved['host'], saved['node']))
        # Both of nova's saves, the first making the state visible.
        self.assertEqual(
            [(vm_states.SHELVED_OFFLOADED, 'compute-1'),
             (vm_states.SHELVED_OFFLOADED, None)],
            [(row['vm_state'], row['host'])
             for kind, row in scn.timeline() if kind == 'save'])
        self.assertEqual(1, self.harness.index_of_offloaded_save(
            scn.timeline()))

    def test_all_of_novas_method_ran(self):
        scn = self.scenario()
        scn.shelve_offload()
        kinds = [event[0] for event in scn.events]
        for expected in ('action_event.start', 'notify.usage',
                         'notify.action', 'driver.power_off',
                         'network.unbind_ports', 'driver.destroy',
                         'scheduler.delete_instance_info',
                         'action_event.finish'):
            self.assertIn(expected, kinds)
        self.assertNotIn('notify.exception', kinds)
        self.assertNotIn('instance_fault', kinds)
        self.assertEqual(['shelve_offload.start', 'start',
                          'shelve_offload.end', 'end'],
                         [e[1] for e in scn.events
                          if e[0].startswith('notify.')])

    def test_legacy_copy_fails_the_same_check(self):
        scn = self.scenario(legacy=True)
        scn.shelve_offload()
        violations = self.violations(scn)
        # The very assertion test_nova_frees_allocations_first makes.
        self.assertRaises(AssertionError, self.assertEqual, [], violations)
        self.assertEqual(
            ['DELETE /allocations/%s came after the save that made '
             'SHELVED_OFFLOADED visible' % scn.instance.uuid], violations)
        # Same request, same outcome once all is done: only the order moved.
        self.assertEqual(['DELETE'], [c.method for c in scn.placement.calls])
        self.assertEqual(0, self.harness.index_of_offloaded_save(
            scn.timeline()))
        self.assertEqual({'allocations': {}}, scn.allocations())


class RaceTestCase(NovaScenarioTestCase):
    """The race, replayed with nova's compute and scheduler code.

    The API actor waits for SHELVED_OFFLOADED to be saved, sets
    UNSHELVING, and runs nova's claim_resources; the sequencer imposes the
    order of the placement requests.
    """

    def race(self, script, legacy=False):
        scn = self.scenario(legacy=legacy)
        seq = sequencer.Sequencer(scn.placement.transport, script)
        seq.install(self)
        compute = sequencer.Actor('compute', scn.shelve_offload)
        scheduler = sequencer.Actor('scheduler', scn.api_unshelve)
        compute.start()
        scheduler.start()
        errors = compute.finish(self), scheduler.finish(self)
        self.assertTrue(seq.finished, 'script not played to the end')
        return scn, errors, scheduler.result

    def test_legacy_scheduler_409(self):
        # Bug steps 1-6: scheduler GET, compute DELETE, scheduler PUT.
        scn, (compute_error, scheduler_error), _ = self.race(
            [('scheduler', 'GET')] + FREE_STEPS + [('scheduler', 'PUT')],
            legacy=True)
        self.assertIsNone(compute_error)
        self.assertIsInstance(
            scheduler_error,
            self.harness.nova_exception.AllocationUpdateFailed)
        self.assertIn(scn.instance.uuid, str(scheduler_error))
        put = scn.placement.calls[-1]
        self.assertEqual(('PUT', 409, 1),
                         (put.method, put.status,
                          put.body['consumer_generation']))
        # nova's exception hides placement's words; the response has them.
        self.assertIn('consumer generation conflict - expected null but '
                      'got 1', scn.error_detail('PUT'))
        self.assertEqual({'allocations': {}}, scn.allocations())

    def test_legacy_claim_silently_wiped(self):
        scn, (compute_error, scheduler_error), claimed = self.race(
            [('scheduler', 'GET'), ('scheduler', 'PUT')] + FREE_STEPS,
            legacy=True)
        self.assertEqual((None, None, True),
                         (compute_error, scheduler_error, claimed))
        # The claim succeeded, then compute's DELETE took it away.
        self.assertEqual({'allocations': {}}, scn.allocations())
        self.assertEqual(0, scn.usages(scn.dst).get('VCPU', 0))

    def test_nova_claim_succeeds(self):
        scn, (compute_error, scheduler_error), claimed = self.race(
            FREE_STEPS + [('scheduler', 'GET'), ('scheduler', 'PUT')])
        self.assertEqual((None, None, True),
                         (compute_error, scheduler_error, claimed))
        get, put = scn.placement.calls[-2:]
        self.assertEqual(('GET', 200), (get.method, get.status))
        self.assertEqual(('PUT', 204), (put.method, put.status))
        self.assertIsNone(put.body['consumer_generation'])
        allocations = scn.allocations()
        self.assertEqual({scn.dst: self.harness.RESOURCES},
                         {rp: a['resources'] for rp, a in
                          allocations['allocations'].items()})
        self.assertEqual(self.harness.vm_states.SHELVED_OFFLOADED,
                         scn.saved()['vm_state'])
        self.assertEqual(self.harness.task_states.UNSHELVING,
                         scn.saved()['task_state'])
