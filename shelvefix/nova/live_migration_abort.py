"""nova's own services aborting a live migration that waits in its queue.

The race lab's ``live-migrate-abort`` scenario (nova only): the live
migration of :mod:`~.live_migration`, but compute-1 runs its migration
job in a pool of its own, as nova does, and the user aborts the migration
(``DELETE /servers/{id}/migrations/{id}``, microversion 2.65, which may
abort a migration still ``queued`` or ``preparing``). The actors:

``conductor``
    the API's live-migrate and nova's conductor, as in ``live-migrate``;
``compute-1``
    compute-1's service serving the casts it gets, in order: nova's
    ``live_migration`` (the migration ``queued``, its job submitted to the
    pool and kept in ``_waiting_live_migrations``), then, if the user's
    abort was accepted, nova's ``live_migration_abort``: the job cancelled
    if it has not started (the allocations moved back to the server, the
    destination's networking torn down, the task state cleared, the
    migration ``cancelled``), else left to the job, which rolls back when
    it finds itself no longer waiting;
``job``
    compute-1's live migration pool's worker: it takes the job when it
    may and runs nova's ``_do_live_migration`` unless it was cancelled;
``abort``
    a client that aborts as soon as the API lists the migration past the
    conductor: nova's ``API.live_migrate_abort`` (refused by the API for a
    migration no longer in progress, or a server no longer ``MIGRATING``),
    which casts ``live_migration_abort`` to compute-1.

The pool's queue, each job's future and compute-1's
``_waiting_live_migrations`` are shared between compute-1's actors: each
access of theirs is a step of the explorer (:class:`Pool`).

A run is judged as the other move scenarios' are
(:func:`~.move_program.classify`): a cancelled or rolled-back migration
leaves the server ``ACTIVE`` on compute-1 holding compute-1 only, with no
task state; a completed one, on compute-2.

This module imports nova (see :mod:`shelvefix.nova`).
"""

import collections
from concurrent import futures

import fixtures
from nova.compute import api as compute_api
from nova.compute import rpcapi as compute_rpcapi
from nova import exception as nova_exception
from nova import thread_pool_factory

from shelvefix.explorer import model
from shelvefix.nova import doubles
from shelvefix.nova import harness
from shelvefix.nova import live_migration
from shelvefix.nova import program
from shelvefix import race
from shelvefix import rpc

SOURCE = live_migration.SOURCE
#: The pool's queue: a topic of the run's transport, so that the worker's
#: take is a guarded step as a service's receive is.
JOB_TOPIC = 'live-migration-pool'
#: The microversion the user's abort asks for: queued migrations too.
MICROVERSION = '2.65'
#: What an actor's result is when the API refuses the abort.
REFUSED = 'refused'
#: A migration the API lists as past the conductor.
SUBMITTED = ('accepted',)


class _Stepped(object):
    """Where compute-1's job state is shared: one resource of the explorer.

    ``step(label)`` is a step of the explorer while a program runs
    (:attr:`controller` set), nothing otherwise.
    """

    controller = None

    def __init__(self, resource):
        self.resource = frozenset([resource])

    def step(self, label):
        if self.controller is None:
            return None
        return self.controller.step('job', self.resource,
                                    access=model.WRITE, label=label)

    @staticmethod
    def done(handle, result):
        if handle is not None:
            handle.done(result)


class JobFuture(futures.Future):
    """A queued job's future, whose cancel and start are steps."""

    def __init__(self, stepped):
        super(JobFuture, self).__init__()
        self.stepped = stepped

    def cancel(self):
        handle = self.stepped.step('cancel the job')
        cancelled = super(JobFuture, self).cancel()
        self.stepped.done(handle, 'cancelled' if cancelled else 'started')
        return cancelled

    def set_running_or_notify_cancel(self):
        handle = self.stepped.step('start the job')
        running = super(JobFuture, self).set_running_or_notify_cancel()
        self.stepped.done(handle, 'running' if running else 'cancelled')
        return running


class WaitingMigrations(dict):
    """compute-1's ``_waiting_live_migrations``, each access a step."""

    def __init__(self, stepped):
        super(WaitingMigrations, self).__init__()
        self.stepped = stepped

    def __setitem__(self, key, value):
        handle = self.stepped.step('queue the migration')
        super(WaitingMigrations, self).__setitem__(key, value)
        self.stepped.done(handle, 'queued')

    def pop(self, key, *default):
        handle = self.stepped.step('pop the waiting migration')
        found = key in self
        try:
            return super(WaitingMigrations, self).pop(key, *default)
        finally:
            self.stepped.done(handle, 'found' if found else 'missing')


class NoActiveJob(Exception):
    """The hypervisor has no migration job of the guest to abort.

    What libvirt answers ``abortJob`` with then; nova's driver logs it and
    raises it on.
    """


class AbortableDriver(live_migration.LiveMigrationDriver):
    """The live migration's hypervisor, whose migration job can be aborted.

    The migration is a job of the hypervisor that starts and ends in two
    steps of the explorer (on compute-1's job resource, see :class:`Pool`);
    an abort between them makes it end as libvirt's monitor ends an
    aborted job: ``recover_method`` with the migration ``cancelled``. An
    abort with no job running raises :class:`NoActiveJob`.
    """

    #: The run's :class:`_Stepped` (set by :class:`AbortRun`).
    stepped = None

    def __init__(self, *args, **kwargs):
        super(AbortableDriver, self).__init__(*args, **kwargs)
        self.jobs = set()
        self.aborted = set()

    def live_migration(self, context, instance, dest, post_method,
                       recover_method, block_migration=False,
                       migrate_data=None):
        handle = self.stepped.step('start the migration job')
        self.jobs.add(instance.uuid)
        self.stepped.done(handle, 'started')
        handle = self.stepped.step('end the migration job')
        self.jobs.discard(instance.uuid)
        aborted = instance.uuid in self.aborted
        self.stepped.done(handle, 'aborted' if aborted else 'ended')
        if not aborted:
            return super(AbortableDriver, self).live_migration(
                context, instance, dest, post_method, recover_method,
                block_migration=block_migration, migrate_data=migrate_data)
        self._record('live_migration aborted', dest)
        recover_method(context, instance, dest, migrate_data,
                       migration_status='cancelled')

    def live_migration_abort(self, instance):
        handle = self.stepped.step('abort the migration job')
        running = instance.uuid in self.jobs
        if running:
            self.aborted.add(instance.uuid)
        self.stepped.done(handle, 'aborted' if running else 'no job')
        self._record('live_migration_abort', running)
        if not running:
            raise NoActiveJob('no migration job of %s' % instance.uuid)


#: What compute-1 answers an abort that came too late with: the migration
#: is no longer running, or the hypervisor's job is over.
TOO_LATE = (nova_exception.InvalidMigrationState, NoActiveJob)


class Pool(object):
    """compute-1's live migration pool: one worker, the ``job`` actor.

    :param transport: the run's :class:`shelvefix.rpc.Transport`
    :param host: the pool's host
    """

    def __init__(self, transport, host):
        self.transport = transport
        self.host = host
        self.stepped = _Stepped('job:%s' % host)
        self.jobs = collections.deque()
        self.waiting = WaitingMigrations(self.stepped)
        #: ``(job name, outcome)`` of each job the worker took, in order.
        self.ran = []

    def spawn_on(self, executor_type, func, *args, **kwargs):
        """nova's ``spawn_on``: the job queued, its future returned."""
        future = JobFuture(self.stepped)
        self.jobs.append((future, func, args, kwargs))
        self.transport.cast(JOB_TOPIC, self.host, func.__name__, None)
        return future

    def work(self, timeout=60.0, give_up=None):
        """The worker: take the next job and run it unless cancelled."""
        message = self.transport.receive(JOB_TOPIC, self.host,
                                         timeout=timeout, give_up=give_up)
        future, func, args, kwargs = self.jobs.popleft()
        if not future.set_running_or_notify_cancel():
            self.ran.append((message.method, 'cancelled'))
            return True
        try:
            result = func(*args, **kwargs)
        except Exception as e:
            self.ran.append((message.method, type(e).__name__))
            future.set_exception(e)
            raise
        self.ran.append((message.method, 'done'))
        future.set_result(result)
        return True


class AbortCloud(live_migration.LiveMigrationCloud):
    """The live migration's cloud, compute-1's jobs in its pool."""

    def _setUp(self):
        super(AbortCloud, self)._setUp()
        cloud = self

        def spawn_on(executor_type, func, *args, **kwargs):
            # Only the live migrations wait in a pool of their own.
            if executor_type != thread_pool_factory.ExecutorType.\
                    LIVE_MIGRATION:
                return live_migration.run_now(executor_type, func, *args,
                                              **kwargs)
            return cloud.run.pool.spawn_on(executor_type, func, *args,
                                           **kwargs)

        def by_id(context, migration_id, instance_uuid=None):
            # One read of the migration's row, as nova's database API.
            database = cloud.move_database
            for uuid, extra in database.extra.items():
                if extra.get('id') != migration_id:
                    continue
                row = database.migrations.get(uuid)
                if instance_uuid in (None, row['instance_uuid']):
                    return database.load(context, row)
            if instance_uuid is None:
                raise nova_exception.MigrationNotFound(
                    migration_id=migration_id)
            raise nova_exception.MigrationNotFoundForInstance(
                migration_id=migration_id, instance_id=instance_uuid)

        for name, value in [
                ('nova.compute.manager.thread_pool_factory.spawn_on',
                 spawn_on),
                ('nova.objects.migration.Migration.get_by_id',
                 doubles.class_call(by_id)),
                ('nova.objects.migration.Migration.get_by_id_and_instance',
                 doubles.class_call(by_id)),
                ('nova.objects.instance_action.InstanceAction.action_start',
                 doubles.class_call(cloud.database._record(
                     'action.start')))]:
            self.useFixture(fixtures.MonkeyPatch(name, value))


class AbortRun(live_migration.LiveMigrationRun):
    """One run: a live migration the user aborts while it may be queued."""

    def _build_host(self, host):
        super(AbortRun, self)._build_host(host)
        if host != SOURCE:
            return
        self.pool = Pool(self.transport, host)
        compute = self.computes[host]
        compute._waiting_live_migrations = self.pool.waiting
        driver = AbortableDriver(host, self.providers[host],
                                 compute.driver.inventory, self.events)
        driver.running = compute.driver.running
        driver.failing = compute.driver.failing
        driver.stepped = self.pool.stepped
        compute.driver = compute.rt.driver = driver
        harness.add_share_manager(compute, driver)

    # -- the actors ---------------------------------------------------------

    def abort(self):
        """The user's abort: nova's ``API.live_migrate_abort``.

        It comes as soon as the API lists the migration past the
        conductor.

        :returns: True, or :data:`REFUSED` for the API's refusal
        """
        row = self.migrations.wait_for(
            self.migration_uuid,
            lambda row: row is not None and row['status'] not in SUBMITTED,
            missing=True)
        context = harness.context('api')
        instance = self.cloud.database.load(context, self.store.get(self.uuid))
        api = compute_api.API.__new__(compute_api.API)
        api.compute_rpcapi = compute_rpcapi.ComputeAPI.__new__(
            compute_rpcapi.ComputeAPI)
        migration_id = self.cloud.move_database.extra[row['uuid']]['id']
        try:
            api.live_migrate_abort(context, instance, migration_id,
                                   support_abort_in_queue=True)
        except (nova_exception.InvalidMigrationState,
                nova_exception.InstanceInvalidState) as e:
            self.events.append(('api refused', type(e).__name__))
            return REFUSED
        return True

    def source(self, timeout=60.0, give_up=None):
        """compute-1 serves ``live_migration``, then the abort if it came.

        :param give_up: ``{'conductor': ..., 'abort': ...}``: when to stop
            waiting for each cast (runs with real threads)
        """
        give_up = give_up or {}
        self.serve(SOURCE, timeout=timeout, give_up=give_up.get('conductor'))
        try:
            self.serve(SOURCE, timeout=timeout, give_up=give_up.get('abort'))
        except rpc.NothingToReceive:
            pass
        except TOO_LATE as e:
            # The abort came after the migration left the states it can
            # be aborted in: nova's answer, logged by the RPC server.
            self.events.append(('compute-1 refused', type(e).__name__))
            return REFUSED
        return True


class AbortProgram(live_migration.LiveMigrationProgram):
    """The ``live-migrate-abort`` scenario on a set-up :class:`AbortCloud`.

    :param without: actors left out (the ``periodic-*`` audits only)
    """

    def __init__(self, cloud, without=()):
        super(AbortProgram, self).__init__(cloud, race.LIVE_MIGRATE_ABORT,
                                           without)

    def _start(self):
        return self.cloud.start(live_migration.ACTIVE_ON_SOURCE, AbortRun)

    def __call__(self, controller):
        spec = super(AbortProgram, self).__call__(controller)
        run = self.cloud.run
        run.pool.stepped.controller = controller
        check = spec.check

        def unstep(results):
            run.pool.stepped.controller = None
            return check(results)
        return spec._replace(check=unstep)

    def _actors(self, run, timeout=60.0, done=None):
        done = done or {}
        funcs = {
            'conductor': run.live_migrate,
            'compute-1': lambda: run.source(timeout=timeout, give_up={
                'conductor': program.after(done, 'conductor'),
                'abort': program.after(done, 'abort')}),
            'job': lambda: run.pool.work(
                timeout=timeout, give_up=program.after(done, 'compute-1')),
            'abort': run.abort,
            'periodic-1': lambda: run.periodic(SOURCE),
            'periodic-2': lambda: run.periodic(live_migration.DESTINATION),
        }
        return self._as_services(funcs)
