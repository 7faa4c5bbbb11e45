"""The source's live migration queue, and the user's abort.

nova's compute service does not run a live migration in the thread that
received the ``live_migration`` cast: it saves the migration ``queued``,
hands the migration job (``_do_live_migration``) to a pool of its own and
keeps the job's future in ``_waiting_live_migrations`` under the server's
uuid. The user may abort the migration (``DELETE
/servers/{id}/migrations/{id}``, microversion 2.65) while it is
``queued``, ``preparing`` or ``running``; the API casts
``live_migration_abort`` to the source, which:

* takes the server's entry off ``_waiting_live_migrations``; if the job
  has not started, its future is cancelled and the migration rolled back
  at once (``_rollback_live_migration`` with ``cancelled``: the server
  gets back what the migration holds on the source, which drops the
  destination's claim; the destination's networking is torn down; the
  task state cleared; the migration ``cancelled``);
* if the job has started but has not taken its entry yet, leaves it to
  the job: finding its entry gone, the job rolls back the same way
  (:meth:`~shelvefix.compute.live_migration.LiveMigrationMixin._do_live_migration`);
* if the job took its entry, the migration must be ``running``: the
  hypervisor is asked to abort it, and its job ends through the rollback
  (``recover_method``) with ``cancelled``; in any other state the abort
  is refused (:class:`~shelvefix.exception.InvalidMigrationState`).

The order that differs from nova 34.0.0's: the entry is stored once, with
its future, *before* the job is submitted. nova stores a placeholder,
submits, then stores the future under the same key: with native threads
a job that starts at once can take the placeholder before that second
store, which then stays for good, and the user's abort takes that stale
entry, cannot cancel a job that has started and leaves the migration to a
job that will not look again (the finding "A queued migration's abort
ignored" of the guide). Here the job's future is made before the job
exists (:meth:`InlineExecutor.future`) and runs the job only if nobody
cancelled it (:meth:`LiveMigrationQueueMixin._live_migration_job`).

The mixin expects the live migration mixin's ``_do_live_migration`` and
``_rollback_live_migration``, the manager's ``rt`` (its
``migration_store``), ``driver``, ``_set_migration_status`` and
``_notify_about_instance_usage``, and ``_waiting_live_migrations``.
"""

from concurrent import futures

from oslo_log import log as logging

from shelvefix.compute import decorators
from shelvefix import exception
from shelvefix.objects import migration as migration_obj

LOG = logging.getLogger(__name__)

#: The states the API lets a user abort a live migration in (2.65).
ABORTABLE = (migration_obj.QUEUED, migration_obj.PREPARING,
             migration_obj.RUNNING)


class InlineExecutor(object):
    """A live migration pool that runs each job at once, in the caller.

    A compute manager's default: the ``live_migration`` cast's thread runs
    the job before it returns. The race lab's pool queues the jobs for a
    worker of their own
    (:class:`~shelvefix.race.live_migration_abort.QueuedExecutor`).
    """

    def future(self):
        """A pending future for a job about to be submitted."""
        return futures.Future()

    def submit(self, fn, *args, **kwargs):
        """Run ``fn(*args, **kwargs)`` now; what it raises is raised."""
        fn(*args, **kwargs)


class LiveMigrationQueueMixin(object):
    """The source's ``live_migration`` cast, its queued job, the abort."""

    #: Where the live migration jobs run (nova's ``LIVE_MIGRATION`` pool).
    _live_migration_executor = InlineExecutor()

    @decorators.errors_out_migration
    def live_migration(self, context, dest, instance, block_migration,
                       migration, migrate_data):
        """Queue the live migration of ``instance`` to ``dest`` (RPC entry).

        The migration is ``queued``, its entry (with the job's future)
        stored, then the job submitted to :attr:`_live_migration_executor`.
        """
        self._set_migration_status(migration, migration_obj.QUEUED)
        executor = self._live_migration_executor
        future = executor.future()
        # Stored before the job exists, so the job always finds this very
        # entry, or none if an abort took it.
        self._waiting_live_migrations[instance.uuid] = (migration, future)
        executor.submit(self._live_migration_job, future, context, dest,
                        instance, block_migration, migration, migrate_data)

    def _live_migration_job(self, future, context, dest, instance,
                            block_migration, migration, migrate_data):
        """The pool's job: ``_do_live_migration`` unless it was cancelled.

        :returns: False for a cancelled job, True once it ran
        """
        if not future.set_running_or_notify_cancel():
            LOG.info('Live migration %s of instance %s was cancelled in '
                     'its queue', migration.uuid, instance.uuid)
            return False
        try:
            self._do_live_migration(context, dest, instance,
                                    block_migration, migration, migrate_data)
        except Exception as e:
            future.set_exception(e)
            raise
        future.set_result(None)
        return True

    def live_migration_abort(self, context, instance, migration_id):
        """Abort the live migration of ``instance`` (the user asked).

        :param migration_id: the migration's uuid
        :raises InvalidMigrationState: the job took the migration and it
            is not ``running`` (preparing still, or over)
        :raises: whatever the driver raises when it has no migration job
            of the guest to abort
        """
        self._notify_about_instance_usage(context, instance,
                                          'live_migration.abort.start')
        entry = self._waiting_live_migrations.pop(instance.uuid, None)
        if entry is None:
            migration = migration_obj.Migration.get_by_uuid(
                self.rt.migration_store, migration_id)
            if migration.status != migration_obj.RUNNING:
                raise exception.InvalidMigrationState(
                    migration_id=migration_id, instance_uuid=instance.uuid,
                    state=migration.status, method='abort live migration')
            self.driver.live_migration_abort(instance)
        else:
            migration, future = entry
            if future is not None and future.cancel():
                LOG.info('Live migration %s of instance %s cancelled in '
                         'its queue', migration.uuid, instance.uuid)
                # Nothing ran on either host: no migrate data, no source
                # rollback; the destination's networking torn down.
                self._rollback_live_migration(
                    context, instance, migration.dest_compute,
                    migration_status=migration_obj.CANCELLED,
                    migration=migration, pre_live_migration=True)
            else:
                LOG.info('Live migration %s of instance %s is being '
                         'prepared: its job rolls back', migration_id,
                         instance.uuid)
        self._notify_about_instance_usage(context, instance,
                                          'live_migration.abort.end')
