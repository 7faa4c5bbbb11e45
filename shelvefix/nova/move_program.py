"""nova's move operations as programs of the interleaving explorer.

:class:`NovaMoveProgram` runs a :class:`~.moves.NovaMoveCloud` under
:func:`shelvefix.explorer.explore`, instrumented as the lifecycle program
(:class:`~.program.NovaRaceProgram`) is, and the migration store's reads
and writes are steps too. The scenarios (:data:`SCENARIOS`) are those of
the library's move lab (:mod:`shelvefix.race.move_program`):

``resize-confirm``
    ``compute-1`` is the API's confirm, then compute-1's
    ``confirm_resize``; ``periodic-1`` audits compute-1;
``resize-revert``
    ``compute-2`` is the API's revert, then compute-2's
    ``revert_resize``, which casts ``finish_revert_resize`` to
    ``compute-1``; ``periodic-1`` and ``periodic-2`` audit both nodes;
``resize-delete``
    ``compute-1`` is the user's confirm (nova's API, then compute-1 runs
    the cast), ``delete`` nova's ``API.delete`` (which confirms the resize
    first, an RPC call compute-1 runs), ``compute-2`` serves the
    ``terminate_instance`` cast, ``periodic-1`` audits compute-1
    (:mod:`~.deletion`);
``resize-migrate``
    ``compute-1`` is the user's confirm, ``migrate`` a client that moves
    the server again as soon as it may (nova's conductor and scheduler:
    back to compute-1, enabled here), ``compute-1-prep`` serves the
    ``prep_resize`` cast, ``periodic-1`` audits compute-1; the rest of the
    second move runs after each run (:mod:`~.second_move`);
``evacuate``
    compute-1 is down and the API accepted an evacuation
    (:mod:`~.evacuation`); ``conductor`` is nova's conductor and
    scheduler, ``compute-2`` serves the ``rebuild_instance`` cast,
    ``compute-1`` is its service starting again (its clean-up after
    evacuations) and ``periodic-2`` audits compute-2.

Each run's end state is judged as the library's is
(:func:`shelvefix.race.move_outcomes.classify_move`): placement against
both consumers' records, each node's tracked usage against what the
records imply, and the task state.

This module imports nova (see :mod:`shelvefix.nova`).
"""

from nova import exception as nova_exception

from shelvefix import explorer
from shelvefix.nova import database as database_mod
from shelvefix.nova import deletion
from shelvefix.nova import evacuation
from shelvefix.nova import moves
from shelvefix.nova import program
from shelvefix.nova import second_move
from shelvefix import race
from shelvefix.race import move_outcomes
from shelvefix.race import outcomes
from shelvefix.race import scenarios
from shelvefix.race import steps

RESIZE_CONFIRM = race.RESIZE_CONFIRM
RESIZE_REVERT = race.RESIZE_REVERT
EVACUATE = race.EVACUATE
RESIZE_DELETE = race.RESIZE_DELETE
RESIZE_MIGRATE = race.RESIZE_MIGRATE

SCENARIOS = (RESIZE_CONFIRM, RESIZE_REVERT, EVACUATE, RESIZE_DELETE,
             RESIZE_MIGRATE)
#: Where each scenario starts, and the run class that sets it up.
STARTS = {RESIZE_CONFIRM: (moves.RESIZED, moves.MoveRun),
          RESIZE_REVERT: (moves.RESIZED, moves.MoveRun),
          RESIZE_DELETE: (moves.RESIZED, deletion.DeleteRun),
          RESIZE_MIGRATE: (moves.RESIZED, second_move.SecondMoveRun),
          EVACUATE: (evacuation.EVACUATING, evacuation.EvacuationRun)}


def library_row(row):
    """The fields of a nova instance row the library's checks read."""
    return {'uuid': row['uuid'], 'vm_state': row['vm_state'],
            'task_state': row['task_state'],
            'power_state': row['power_state'], 'host': row['host'],
            'node': row['node'], 'project_id': row['project_id'],
            'user_id': row['user_id'],
            'flavor': moves.library_flavor(row['flavor'])}


class _Judged(object):
    """A :class:`~.moves.MoveRun` as :func:`classify_move` reads a cloud."""

    def __init__(self, run):
        self.run = run
        self.providers = run.providers
        self.placement = run.cloud.placement
        self.migration_uuid = run.migration_uuid
        self.rts = run.rts
        self.store = run.store
        self.instance = type('Server', (), {'uuid': run.uuid})

    def saved(self):
        return library_row(self.run.saved())

    def saved_migration(self):
        return self.run.saved_migration()

    def saved_migrations(self):
        saved = getattr(self.run, 'saved_migrations', None)
        return saved() if saved else [self.run.saved_migration()]

    def held(self, consumer=None):
        return self.run.held(consumer)

    def usage(self):
        return self.run.usage()


def classify(run, results, injected=()):
    """The outcome of one run (labels of :mod:`shelvefix.race.outcomes`).

    nova's 409s are read as the lifecycle's are
    (:func:`~.program.conflicts`), the rest as the library's move lab
    judges its runs.
    """
    labels, others = program.conflicts(results)
    if run.store.is_deleted(run.uuid):
        # An operation whose server was destroyed under it ends there, as
        # the library's do (:func:`~shelvefix.race.outcomes.actor_labels`).
        others = {name: result for name, result in others.items()
                  if not isinstance(result.error,
                                    nova_exception.InstanceNotFound)}
    judged_run = _Judged(run)
    judged = move_outcomes.classify_move(judged_run, others, injected)
    # What only the run's own records say (an evacuated guest's disk).
    extra = getattr(run, 'end_labels', lambda: [])()
    if run.scheduler_info is not None and move_outcomes.stale_hosts(
            judged_run.saved(), judged_run.saved_migrations(),
            run.scheduler_info, deleted=run.store.is_deleted(run.uuid)):
        extra.append(move_outcomes.SCHEDULER_INFO_STALE)
    labels += [label for label in judged if label != outcomes.OK]
    return outcomes.as_outcome(
        labels + [label for label in extra if label not in labels])


class NovaMoveProgram(program.NovaProgram):
    """One move scenario on a set-up :class:`~.moves.NovaMoveCloud`.

    :param cloud: the cloud fixture; placement and providers are shared by
        all runs, everything else is made anew for each
    :param scenario: one of :data:`SCENARIOS`
    :param without: actors of the scenario left out; an evacuation
        without the ``conductor`` starts once it has run
        (:data:`~.evacuation.SCHEDULED`)
    """

    #: The services other actors' RPC calls run on, besides their own.
    called = ()

    def __init__(self, cloud, scenario, without=()):
        actors = scenarios.get_scenario(scenario).actors
        unknown = sorted(set(without) - set(dict(actors)))
        if unknown:
            raise ValueError('%s has no actor %s' % (scenario, unknown))
        self.cloud = cloud
        self.scenario = scenario
        self.hosts = {name: program.service(host) for name, host in actors
                      if name not in without}
        self.actors = tuple(name for name, _host in actors
                            if name not in without)
        self.injected = (moves.DriverFailed,) if cloud.failing else ()
        #: Each run's :meth:`~.moves.MoveRun.end_state`, in order.
        self.ends = []

    def _as_services(self, funcs):
        """The actors, each function run as its actor's service.

        :param funcs: ``{actor: function}``, at least every actor's
        :returns: ``[(actor, function)]`` in the scenario's order
        """
        return [(name, self.cloud.locks.running(self.hosts[name],
                                                funcs[name]))
                for name in self.actors]

    def _actors(self, run, timeout=60.0, done=None):
        done = done or {}

        def serve(host, after):
            return lambda: run.serve(host, timeout=timeout,
                                     give_up=program.after(done, after))
        funcs = {
            'periodic-1': lambda: run.periodic(moves.SOURCE),
            'periodic-2': lambda: run.periodic(moves.DESTINATION),
        }
        if self.scenario == RESIZE_CONFIRM:
            funcs['compute-1'] = run.confirm
        elif self.scenario == RESIZE_DELETE:
            funcs['compute-1'] = run.user_confirm
            funcs['delete'] = run.delete
            funcs['compute-2'] = serve(moves.DESTINATION, 'delete')
        elif self.scenario == RESIZE_MIGRATE:
            funcs['compute-1'] = run.confirm
            funcs['migrate'] = lambda: run.migrate_again(timeout=timeout)
            funcs['compute-1-prep'] = serve(moves.SOURCE, 'migrate')
        elif self.scenario == RESIZE_REVERT:
            funcs['compute-2'] = run.revert
            funcs['compute-1'] = serve(moves.SOURCE, 'compute-2')
        else:
            funcs['conductor'] = run.schedule_evacuation
            funcs['compute-2'] = (serve(moves.DESTINATION, 'conductor')
                                  if 'conductor' in self.actors
                                  else run.rebuild)
            funcs['compute-1'] = run.source_starts
        return self._as_services(funcs)

    def _start(self):
        start, run_cls = STARTS[self.scenario]
        if self.scenario == EVACUATE and 'conductor' not in self.actors:
            start = evacuation.SCHEDULED
        return self.cloud.start(start, run_cls)

    def _finish(self, run, results):
        """The run's outcome, the rest of a second move run first."""
        try:
            finish = getattr(run, 'finish_moves', None)
            if finish is not None:
                results = dict(results, **finish())
            self.ends.append(run.end_state())
            return classify(run, results, self.injected)
        finally:
            run.remove_from_placement()

    def _names(self, run):
        """How the run's resources read in the timelines.

        The same in every run: the server, the migrations, the cell, the
        hosts' providers, and what the run adds (its ``names()``, if it
        has one).
        """
        return steps.Names([
            (run.uuid, '{instance}'), (run.migration_uuid, '{migration}'),
            (self.cloud.move_database.next_uuid, '{new migration}'),
            (database_mod.CELL_UUID, '{cell1}')] +
            [(run.providers[host], '{%s}' % host)
             for host in self.cloud.hosts] +
            list(getattr(run, 'names', lambda: ())()))

    def _stores(self, run):
        """The run's other record stores, each with its steps' kind.

        Every access to them is a step, as the instance store's are.
        """
        return [(run.migrations, 'migration')]

    def __call__(self, controller):
        run = self._start()
        names = self._names(run)
        # A service the actors' RPC calls run on shares its locks with its
        # own actor: they are contended, explorer steps.
        undo = program.instrument(
            controller, self.cloud, run, names,
            list(self.hosts.values()) + list(self.called), 'wait')
        stores = self._stores(run)
        for store, kind in stores:
            store.interceptor = steps.StoreStepper(controller, store, 'wait',
                                                   names, kind=kind)

        def check(results):
            undo()
            for store, _kind in stores:
                store.interceptor = None
            return self._finish(run, results)
        return explorer.RunSpec(actors=self._actors(run), check=check)


def explore(cloud, scenario, reduce=True, max_runs=None, without=()):
    """Explore a move scenario's interleavings on ``cloud``.

    :param without: actors left out (see :class:`NovaMoveProgram`)
    :returns: the :class:`~shelvefix.explorer.Exploration`
    """
    return explorer.explore(NovaMoveProgram(cloud, scenario, without),
                            reduce=reduce, max_runs=max_runs)
