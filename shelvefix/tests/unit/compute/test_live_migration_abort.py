"""Tests for the source's live migration queue and the user's abort.

:mod:`shelvefix.compute.live_migration_abort` on the cloud of
``live-migrate-abort``
(:class:`~shelvefix.race.live_migration_abort.AbortCloud`: compute-1's
jobs wait in its pool until ``QueuedExecutor.work`` takes one; the
hypervisor's migration job can be aborted). A :class:`_Hook` stands for
the explorer's controller to run the abort at one chosen step of the
job.
"""

from concurrent import futures

from shelvefix.compute import collaborators
from shelvefix.compute import live_migration_abort
from shelvefix import exception
from shelvefix.objects import migration as migration_obj
from shelvefix.race import live_migration_abort as race_abort
from shelvefix.tests.unit.compute import test_live_migration

SOURCE = race_abort.SOURCE
DESTINATION = race_abort.DESTINATION


class _Handle(object):

    def __init__(self, after):
        self.after = after

    def done(self, result=None):
        if self.after is not None:
            self.after()


class _Hook(object):
    """A controller whose step ``label`` runs ``action`` once it is done."""

    def __init__(self, label, action):
        self.label = label
        self.action = action
        self.ran = []

    def step(self, kind, resource, access=None, label=None, guard=None,
             guard_model=None):
        if label != self.label or self.ran:
            return _Handle(None)

        def after():
            self.ran.append(label)
            try:
                self.action()
            except Exception as e:
                self.ran.append(type(e).__name__)
        return _Handle(after)


class AbortTestCase(test_live_migration.LiveMigrationTestBase):

    def cloud(self, **kwargs):
        cloud = race_abort.AbortCloud(
            self.placement, (self.src_rp, self.dst_rp), **kwargs)
        self.addCleanup(cloud.remove_from_placement)
        return cloud

    def queued(self):
        """compute-1 has queued the job; nothing else ran."""
        cloud = self.scheduled()
        cloud.serve(SOURCE, timeout=5)
        return cloud

    def abort(self, cloud):
        """compute-1 aborts, as the API's cast asks."""
        cloud.computes[SOURCE].live_migration_abort(
            cloud.ctx, self.instance(cloud), cloud.migration_uuid)

    def test_the_job_waits_in_the_pool(self):
        cloud = self.queued()
        self.assertEqual(migration_obj.QUEUED,
                         cloud.saved_migration()['status'])
        migration, future = cloud.computes[SOURCE]._waiting_live_migrations[
            cloud.instance.uuid]
        self.assertEqual(cloud.migration_uuid, migration.uuid)
        self.assertFalse(future.running() or future.done())
        self.assertTrue(cloud.pool.work(timeout=1))
        self.assertEqual([('_live_migration_job', 'done')], cloud.pool.ran)
        self.assertTrue(future.done())
        self.assertEqual({}, dict(
            cloud.computes[SOURCE]._waiting_live_migrations))
        self.assertSaved(cloud, 'active', None, DESTINATION)
        self.assertEqual(migration_obj.COMPLETED,
                         cloud.saved_migration()['status'])

    def test_a_queued_migration_is_cancelled(self):
        cloud = self.queued()
        self.assertEqual(True, cloud.live_migrate_abort())
        cloud.serve(SOURCE, timeout=5)
        # Rolled back at once: the server holds compute-1 again.
        self.assertRolledBack(cloud, migration_obj.CANCELLED)
        self.assertIn(('setup_networks_on_host', cloud.instance.uuid,
                       DESTINATION, True),
                      cloud.computes[SOURCE].network_api.calls)
        # The worker takes the job, finds it cancelled and runs nothing.
        self.assertTrue(cloud.pool.work(timeout=1))
        self.assertEqual([('_live_migration_job', 'cancelled')],
                         cloud.pool.ran)
        self.assertNotIn('live_migration',
                         [call[0] for call in cloud.drivers[SOURCE].calls])
        self.assertRolledBack(cloud, migration_obj.CANCELLED)

    def test_a_started_job_rolls_back(self):
        # The abort comes after the job started, before it took its
        # entry: it is left to the job, which rolls back.
        cloud = self.queued()
        hook = _Hook('start the job', lambda: self.abort(cloud))
        cloud.stepper.controller = hook
        cloud.pool.work(timeout=1)
        self.assertEqual(['start the job'], hook.ran)
        self.assertRolledBack(cloud, migration_obj.CANCELLED)
        self.assertNotIn('live_migration',
                         [call[0] for call in cloud.drivers[SOURCE].calls])

    def test_a_running_migration_is_aborted_in_the_hypervisor(self):
        cloud = self.queued()
        hook = _Hook('start the migration job', lambda: self.abort(cloud))
        cloud.stepper.controller = hook
        cloud.pool.work(timeout=1)
        self.assertEqual(['start the migration job'], hook.ran)
        self.assertIn(('live_migration aborted', cloud.instance.uuid,
                       DESTINATION), cloud.drivers[SOURCE].calls)
        self.assertRolledBack(cloud, migration_obj.CANCELLED)
        self.assertIn(('rollback_live_migration_at_source',
                       cloud.instance.uuid), cloud.drivers[SOURCE].calls)

    def test_a_preparing_migration_past_its_entry_is_refused(self):
        # The job took its entry and has not saved ``running`` yet.
        cloud = self.queued()
        hook = _Hook('take the waiting migration',
                     lambda: self.abort(cloud))
        cloud.stepper.controller = hook
        cloud.pool.work(timeout=1)
        self.assertEqual(['take the waiting migration',
                          'InvalidMigrationState'], hook.ran)
        self.assertEqual(migration_obj.COMPLETED,
                         cloud.saved_migration()['status'])

    def test_an_abort_between_the_hypervisor_jobs_is_refused(self):
        # ``running`` is saved, the hypervisor's job is over.
        cloud = self.queued()
        hook = _Hook('end the migration job', lambda: self.abort(cloud))
        cloud.stepper.controller = hook
        cloud.pool.work(timeout=1)
        self.assertEqual(['end the migration job', 'NoActiveJob'],
                         hook.ran)
        self.assertEqual(migration_obj.COMPLETED,
                         cloud.saved_migration()['status'])

    def test_the_api_refuses_a_late_abort(self):
        cloud = self.queued()
        cloud.pool.work(timeout=1)
        self.assertEqual(race_abort.REFUSED, cloud.live_migrate_abort())
        self.assertEqual([('api', 'InstanceInvalidState')], cloud.refusals)
        self.assertEqual(0, cloud.transport.waiting('compute', SOURCE))

    def test_compute_1_refuses_an_abort_it_cannot_do(self):
        # compute-1 runs the job in its own thread: the abort cast after
        # the live migration finds it completed.
        cloud = self.scheduled()
        cloud.computes[SOURCE]._live_migration_executor = (
            live_migration_abort.InlineExecutor())
        cloud.compute_rpcapi.live_migration_abort(
            cloud.ctx, self.instance(cloud), cloud.migration_uuid)
        self.assertEqual(race_abort.REFUSED, cloud.source(timeout=1))
        self.assertEqual(migration_obj.COMPLETED,
                         cloud.saved_migration()['status'])
        self.assertEqual([(SOURCE, 'InvalidMigrationState')],
                         cloud.refusals)


class InlineExecutorTestCase(test_live_migration.LiveMigrationTestBase):

    def test_runs_at_once(self):
        executor = live_migration_abort.InlineExecutor()
        future = executor.future()
        self.assertIsInstance(future, futures.Future)
        ran = []
        executor.submit(ran.append, 1)
        self.assertEqual([1], ran)

    def test_the_default_manager_runs_the_job_in_its_thread(self):
        cloud = self.scheduled()
        cloud.serve(SOURCE, timeout=5)
        self.assertEqual(migration_obj.COMPLETED,
                         cloud.saved_migration()['status'])
        self.assertEqual({}, cloud.computes[SOURCE]._waiting_live_migrations)

    def test_a_failed_job_errors_the_migration(self):
        cloud = self.scheduled(failing={DESTINATION: ('pre_live_migration',)})
        self.assertRaises(collaborators.DriverFailed, cloud.serve, SOURCE,
                          timeout=5)
        self.assertRolledBack(cloud, migration_obj.ERROR)

    def test_a_placeholder_entry_is_not_cancelled(self):
        # An entry with no future (nova's placeholder) is left to the job.
        cloud = self.scheduled()
        source = cloud.computes[SOURCE]
        migration = self.migration(cloud)
        source._waiting_live_migrations[cloud.instance.uuid] = (
            migration, None)
        source.live_migration_abort(cloud.ctx, self.instance(cloud),
                                    cloud.migration_uuid)
        self.assertEqual({}, source._waiting_live_migrations)
        self.assertEqual(migration_obj.ACCEPTED,
                         cloud.saved_migration()['status'])
        self.assertRaises(exception.InvalidMigrationState,
                          source.live_migration_abort, cloud.ctx,
                          self.instance(cloud), cloud.migration_uuid)
