"""The ``live-migrate-abort`` scenario on the library's code.

The live migration of :mod:`~shelvefix.race.live_migration`, but compute-1
runs its migration job in a pool of its own, as nova does, and the user
aborts the migration. The actors, as on the nova target
(:mod:`shelvefix.nova.live_migration_abort`):

``conductor``
    the API's live-migrate and the conductor, as in ``live-migrate``;
``compute-1``
    compute-1's service serving its casts in order: ``live_migration``
    (the migration ``queued``, its entry and future stored, the job
    submitted to the pool), then, if the API accepted the user's abort,
    ``live_migration_abort``
    (:mod:`~shelvefix.compute.live_migration_abort`): a job not started is
    cancelled and the migration rolled back at once (``cancelled``); a job
    started but not past its entry rolls back itself; a ``running``
    migration is aborted in the hypervisor; any other is refused;
``job``
    the pool's worker: it takes the job once submitted and runs it unless
    it was cancelled (``preparing``, compute-2's ``pre_live_migration``,
    ``running``, the hypervisor's job and its callback);
``abort``
    a client that aborts as soon as the API lists the migration past the
    conductor: the API's ``live_migrate_abort`` (refused unless the server
    is ``MIGRATING`` and the migration ``queued``, ``preparing`` or
    ``running``), which casts ``live_migration_abort`` to compute-1;
``periodic-1``, ``periodic-2``
    each node's audit.

What compute-1's two actors share is stepped, each access a step of the
explorer: the pool's queue (a topic of the run's transport),
``_waiting_live_migrations`` (:class:`WaitingMigrations`), the job's future
(:class:`SteppedFuture`), and the hypervisor's migration job
(:class:`AbortableDriver`: it starts and ends in two steps; an abort
between them makes it end through the rollback with ``cancelled``).

The end state is judged as ``live-migrate``'s
(:func:`~shelvefix.race.move_outcomes.classify_move`), and one more
label: :data:`ABORT_IGNORED`, an abort the API accepted and compute-1
neither refused nor carried out (the migration completed).
"""

import collections
from concurrent import futures

from shelvefix.compute import collaborators
from shelvefix.compute import live_migration_abort as abort_mod
from shelvefix.compute import task_states
from shelvefix import exception
from shelvefix.explorer import model
from shelvefix.objects import instance as instance_obj
from shelvefix.objects import migration as migration_obj
from shelvefix.race import live_migration
from shelvefix.race import outcomes
from shelvefix.race import random_runs
from shelvefix import rpc

SOURCE = live_migration.SOURCE
DESTINATION = live_migration.DESTINATION
#: The pool's queue: a topic of the run's transport, so that the worker's
#: take is a guarded step, as a service's receive is.
JOB_TOPIC = 'live-migration-pool'
#: What the ``abort`` actor (the API) or ``compute-1`` returns for a
#: refused abort.
REFUSED = 'refused'
#: The migration's states the client waits to see the end of.
SUBMITTED = (migration_obj.ACCEPTED,)
#: An abort the API accepted that compute-1 neither refused nor carried
#: out: the migration completed.
ABORT_IGNORED = 'abort ignored'


class NoActiveJob(exception.ShelvefixException):
    """The hypervisor has no migration job of the guest to abort.

    What libvirt answers an abort with when the migration job is over or
    not started.
    """

    msg_fmt = 'no live migration job of instance %(instance_uuid)s'


#: compute-1's answers to an abort that came too late.
TOO_LATE = (exception.InvalidMigrationState, NoActiveJob)


class JobStepper(object):
    """Steps of compute-1's shared job state, while the explorer runs.

    :param host: the host whose pool, entries and hypervisor these are
    :ivar controller: the explorer's controller (None: no steps)
    """

    def __init__(self, host):
        self.host = host
        self.controller = None

    def step(self, what, label):
        """A write step on ``<what>:<host>``; its handle, or None."""
        if self.controller is None:
            return None
        return self.controller.step(
            'job', frozenset(['%s:%s' % (what, self.host)]),
            access=model.WRITE, label=label)

    @staticmethod
    def done(handle, result):
        """End a step :meth:`step` began (None: none)."""
        if handle is not None:
            handle.done(result)


class SteppedFuture(futures.Future):
    """A queued job's future whose cancel and start are steps."""

    def __init__(self, stepper):
        super(SteppedFuture, self).__init__()
        self.stepper = stepper

    def cancel(self):
        """Cancel the job unless it started (a step)."""
        handle = self.stepper.step('future', 'cancel the job')
        cancelled = super(SteppedFuture, self).cancel()
        self.stepper.done(handle, 'cancelled' if cancelled else 'started')
        return cancelled

    def set_running_or_notify_cancel(self):
        """Start the job unless it was cancelled (a step)."""
        handle = self.stepper.step('future', 'start the job')
        running = super(SteppedFuture, self).set_running_or_notify_cancel()
        self.stepper.done(handle, 'running' if running else 'cancelled')
        return running


class WaitingMigrations(dict):
    """compute-1's ``_waiting_live_migrations``: stores and pops are steps."""

    def __init__(self, stepper):
        super(WaitingMigrations, self).__init__()
        self.stepper = stepper

    def __setitem__(self, key, value):
        handle = self.stepper.step('waiting', 'store the waiting migration')
        super(WaitingMigrations, self).__setitem__(key, value)
        self.stepper.done(handle, 'stored')

    def pop(self, key, *default):
        """Take the entry of ``key`` (a step), as ``dict.pop``."""
        handle = self.stepper.step('waiting', 'take the waiting migration')
        found = key in self
        try:
            return super(WaitingMigrations, self).pop(key, *default)
        finally:
            self.stepper.done(handle, 'found' if found else 'missing')


class QueuedExecutor(object):
    """compute-1's live migration pool: one worker, the ``job`` actor.

    :param transport: the run's :class:`~shelvefix.rpc.Transport` (the
        queue is its topic :data:`JOB_TOPIC`)
    :param stepper: the host's :class:`JobStepper`
    :ivar ran: ``(job name, outcome)`` of each job the worker took
    """

    def __init__(self, transport, stepper):
        self.transport = transport
        self.stepper = stepper
        self.jobs = collections.deque()
        self.ran = []

    def future(self):
        """A pending :class:`SteppedFuture`."""
        return SteppedFuture(self.stepper)

    def submit(self, fn, *args, **kwargs):
        """Queue ``fn(*args, **kwargs)`` for the worker; returns at once."""
        self.jobs.append((fn, args, kwargs))
        self.transport.cast(JOB_TOPIC, self.stepper.host, fn.__name__, None)

    def work(self, timeout=60.0, give_up=None):
        """The worker: take the next job and run it.

        :param give_up: see :meth:`shelvefix.rpc.Transport.receive`
        :returns: True
        :raises: what the job raised
        """
        message = self.transport.receive(JOB_TOPIC, self.stepper.host,
                                         timeout=timeout, give_up=give_up)
        fn, args, kwargs = self.jobs.popleft()
        try:
            ran = fn(*args, **kwargs)
        except Exception as e:
            self.ran.append((message.method, type(e).__name__))
            raise
        self.ran.append((message.method, 'done' if ran else 'cancelled'))
        return True


class AbortableDriver(collaborators.RecordingDriver):
    """The hypervisor of ``live-migrate-abort``'s source.

    Its migration job starts and ends in two steps; an abort between them
    (:meth:`live_migration_abort`) makes it end as libvirt's monitor ends
    an aborted job: ``recover_method`` with the migration ``cancelled``.
    An abort with no job running raises :class:`NoActiveJob`.

    :param stepper: the host's :class:`JobStepper`
    :param failing: see
        :class:`~shelvefix.compute.collaborators.RecordingDriver`
    """

    def __init__(self, stepper, failing=()):
        super(AbortableDriver, self).__init__(failing=failing)
        self.stepper = stepper
        self.jobs = set()
        self.aborted = set()

    def live_migration(self, context, instance, dest, post_method,
                       recover_method, block_migration=False,
                       migrate_data=None):
        """The migration job: started, ended, then the callback."""
        handle = self.stepper.step('hypervisor', 'start the migration job')
        self.jobs.add(instance.uuid)
        self.stepper.done(handle, 'started')
        handle = self.stepper.step('hypervisor', 'end the migration job')
        self.jobs.discard(instance.uuid)
        aborted = instance.uuid in self.aborted
        self.stepper.done(handle, 'aborted' if aborted else 'ended')
        if not aborted:
            super(AbortableDriver, self).live_migration(
                context, instance, dest, post_method, recover_method,
                block_migration=block_migration, migrate_data=migrate_data)
            return
        self._record('live_migration aborted', instance.uuid, dest)
        recover_method(context, instance, dest, migrate_data,
                       migration_status=migration_obj.CANCELLED)

    def live_migration_abort(self, instance):
        """Abort the guest's migration job (a step).

        :raises NoActiveJob: none is running
        """
        handle = self.stepper.step('hypervisor', 'abort the migration job')
        running = instance.uuid in self.jobs
        if running:
            self.aborted.add(instance.uuid)
        self.stepper.done(handle, 'aborted' if running else 'no job')
        self._call('live_migration_abort', instance)
        if not running:
            raise NoActiveJob(instance_uuid=instance.uuid)


class AbortCloud(live_migration.LiveMigrationCloud):
    """The live migration's cloud, compute-1's jobs in its pool.

    See :class:`~shelvefix.race.live_migration.LiveMigrationCloud` for the
    parameters.
    """

    def __init__(self, placement, providers, **kwargs):
        super(AbortCloud, self).__init__(placement, providers, **kwargs)
        self.stepper = JobStepper(SOURCE)
        self.pool = QueuedExecutor(self.transport, self.stepper)
        compute = self.computes[SOURCE]
        driver = AbortableDriver(self.stepper,
                                 failing=self.drivers[SOURCE].failing)
        self.drivers[SOURCE] = compute.driver = compute.rt.driver = driver
        compute._live_migration_executor = self.pool
        compute._waiting_live_migrations = WaitingMigrations(self.stepper)
        #: ``(who, exception name)`` of each refused abort.
        self.refusals = []

    def instrument(self, controller, names, holdings, wait_label,
                   actor_hosts):
        """As the base's, and compute-1's job state stepped too."""
        undo = super(AbortCloud, self).instrument(
            controller, names, holdings, wait_label, actor_hosts)
        self.stepper.controller = controller

        def undo_all():
            self.stepper.controller = None
            undo()
        return undo_all

    def live_migrate_abort(self):
        """The user's abort, once the API lists the migration as started.

        The API's ``live_migrate_abort``: the server must be
        ``MIGRATING``, the migration in a state it can be aborted in
        (:data:`~shelvefix.compute.live_migration_abort.ABORTABLE`); then
        ``live_migration_abort`` is cast to the server's host.

        :returns: True, or :data:`REFUSED` for the API's refusal
        """
        self.migrations.wait_for(
            self.migration_uuid,
            lambda row: row['status'] not in SUBMITTED, missing=True)
        instance = instance_obj.Instance.get_by_uuid(self.store,
                                                     self.instance.uuid)
        migration = migration_obj.Migration.get_by_uuid(self.migrations,
                                                        self.migration_uuid)
        try:
            if instance.task_state != task_states.MIGRATING:
                raise exception.InstanceInvalidState(
                    instance_uuid=instance.uuid, attr='task_state',
                    state=instance.task_state,
                    method='live_migrate_abort')
            if migration.status not in abort_mod.ABORTABLE:
                raise exception.InvalidMigrationState(
                    migration_id=migration.uuid,
                    instance_uuid=instance.uuid, state=migration.status,
                    method='abort live migration')
        except (exception.InstanceInvalidState,
                exception.InvalidMigrationState) as e:
            self.refusals.append(('api', type(e).__name__))
            return REFUSED
        self.compute_rpcapi.live_migration_abort(self.ctx, instance,
                                                 migration.uuid)
        return True

    def source(self, timeout=60.0, give_up=None):
        """compute-1 serves ``live_migration``, then the abort if it came.

        :param give_up: ``{'conductor': ..., 'abort': ...}``: when to stop
            waiting for each cast (runs with real threads)
        :returns: True, or :data:`REFUSED` if it refused the abort
        """
        give_up = give_up or {}
        self.serve(SOURCE, timeout=timeout, give_up=give_up.get('conductor'))
        try:
            self.serve(SOURCE, timeout=timeout, give_up=give_up.get('abort'))
        except rpc.NothingToReceive:
            pass
        except TOO_LATE as e:
            self.refusals.append((SOURCE, type(e).__name__))
            return REFUSED
        return True


def abort_ignored(cloud, results):
    """True if an abort the API accepted did nothing at all.

    compute-1 served it without refusing it, and the migration completed.
    """
    def value(name):
        result = results.get(name)
        return None if result is None else result.value

    return (value('abort') is True and value(SOURCE) is True and
            cloud.saved_migration()['status'] == migration_obj.COMPLETED)


class AbortProgram(live_migration.LiveMigrationProgram):
    """One cell of ``live-migrate-abort`` on the library.

    See :class:`~shelvefix.race.program.CloudProgram` for the parameters.
    """

    cloud_cls = AbortCloud

    def _actors(self, cloud, timeout=60.0, poll_interval=None, done=None):
        done = done or {}

        def after(name):
            return lambda: random_runs.finished(done, name)

        funcs = {
            'conductor': cloud.live_migrate,
            'compute-1': lambda: cloud.source(timeout=timeout, give_up={
                'conductor': after('conductor'), 'abort': after('abort')}),
            'job': lambda: cloud.pool.work(timeout=timeout,
                                           give_up=after('compute-1')),
            'abort': cloud.live_migrate_abort,
            'periodic-1': lambda: cloud.periodic(SOURCE),
            'periodic-2': lambda: cloud.periodic(DESTINATION),
        }
        return [(name, funcs[name]) for name in self.actors]

    def _finish(self, cloud, results):
        outcome = super(AbortProgram, self)._finish(cloud, results)
        if not abort_ignored(cloud, results):
            return outcome
        return outcomes.as_outcome(
            [label for label in outcome if label != outcomes.OK] +
            [ABORT_IGNORED])
