"""Tests for the lifecycle harness: nova's path runs, and its stubs bite.

Without the explorer: one shelve-offload and unshelve in order runs the
whole of nova's path (compute-1, the conductor and scheduler, compute-2,
both audits); nova's locks are the locks of the service the thread runs
for; the instance store stands in for nova's database as nova's database
behaves.
"""

from oslo_concurrency import lockutils

from shelvefix.tests.nova import base


class LifecycleHarnessTestCase(base.NovaTestCase):

    def setUp(self):
        super(LifecycleHarnessTestCase, self).setUp()
        self.lifecycle = base.load('shelvefix.nova.lifecycle')
        self.cloud = self.useFixture(self.lifecycle.NovaCloud())
        self.run = self.cloud.start()

    def test_lifecycle_in_order(self):
        run, lifecycle = self.run, self.lifecycle
        run.shelve_offload()
        run.periodic(lifecycle.SOURCE)
        run.api_unshelve()
        run.serve()
        run.periodic(lifecycle.DESTINATION)
        saved = run.saved()
        self.assertEqual(
            ('active', None, lifecycle.DESTINATION, lifecycle.DESTINATION),
            (saved['vm_state'], saved['task_state'], saved['host'],
             saved['node']))
        self.assertEqual(
            {run.providers[lifecycle.DESTINATION]: self.harness.RESOURCES},
            run.held())
        self.assertEqual({lifecycle.SOURCE: set(),
                          lifecycle.DESTINATION: {run.uuid}}, run.tracked())
        kinds = [event[0] for event in run.events]
        for expected in ('compute-1 driver.destroy',
                         'scheduler notify', 'notify.scheduler',
                         'compute-2 network.setup', 'compute-2 driver.spawn',
                         'scheduler.update_instance_info'):
            self.assertIn(expected, kinds)
        self.assertNotIn('instance_fault', kinds)
        # Placement, not the harness, kept the drained compute-1 out.
        candidates, = self.cloud.placement.calls_for(
            'GET', '/allocation_candidates')
        self.assertIn('required=%21COMPUTE_STATUS_DISABLED', candidates.path)

    def test_locks_are_per_service(self):
        locks = self.cloud.locks
        held = []

        def compute_1():
            with lockutils.lock('compute_resources'):
                held.append({service: service_locks.held('compute_resources')
                             for service, service_locks in
                             locks.locks.items()})

        locks.running(self.lifecycle.SOURCE, compute_1)()
        # The same name on compute-2 is another lock, free meanwhile.
        self.assertEqual([{'compute-1': True, 'compute-2': False,
                           'conductor': False}], held)
        # No service: oslo.concurrency's own lock.
        with lockutils.lock('compute_resources'):
            self.assertFalse(any(service_locks.held('compute_resources')
                                 for service_locks in locks.locks.values()))

    def test_novas_locks_reach_the_interceptor(self):
        calls = []
        source = self.lifecycle.SOURCE
        self.cloud.locks.locks[source].interceptor = (
            lambda op, name, held: calls.append((op, name, held())))
        self.cloud.locks.running(source,
                                 lambda: self.run.periodic(source))()
        # Acquire is announced while the lock is free, release while held.
        self.assertEqual([('acquire', 'compute_resources', False),
                          ('release', 'compute_resources', True)], calls)

    def test_save_enforces_the_expected_task_state(self):
        instance = self.run.offloading
        self.run.store.update(instance.uuid, {'task_state': 'unshelving'})
        instance.task_state = None
        self.assertRaises(
            self.harness.nova_exception.UnexpectedTaskStateError,
            instance.save, expected_task_state=['shelving_offloading'])
        self.assertEqual('unshelving', self.run.saved()['task_state'])

    def test_save_reloads_what_others_saved(self):
        instance = self.run.offloading
        self.run.store.update(instance.uuid, {'host': 'compute-2'})
        instance.power_state = 4
        instance.save()
        self.assertEqual(('compute-2', set()),
                         (instance.host, instance.obj_what_changed()))

    def test_unset_fields_are_never_loaded(self):
        e = self.assertRaises(AssertionError, getattr, self.run.offloading,
                              'tags')
        self.assertIn('Instance.tags', str(e))
