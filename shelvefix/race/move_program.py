"""The move scenarios as programs the explorer runs.

Every actor runs the library's real code on a
:class:`~shelvefix.race.move_cloud.MoveCloud` and pauses before each access
to shared state (:mod:`shelvefix.race.steps`: placement, the instance and
migration records, each host's locks, the casts between hosts); the end
state is judged by :mod:`shelvefix.race.move_outcomes`.

``resize-confirm`` (bugs 1879878, 1821594)
    the server is resized to compute-2; ``compute-1`` is the API
    confirming it (migration ``confirming``) and compute-1's
    ``confirm_resize``; ``periodic-1`` is compute-1's audit. Cells:
    corrected, corrected with compute-1's driver failing to clean up
    (``confirm-fails``), pre-1879878, pre-1821594 with that fault.
``resize-revert``
    the same server; ``compute-2`` is the API reverting it and
    compute-2's ``revert_resize``, which casts ``finish_revert_resize`` to
    ``compute-1``; ``periodic-1`` and ``periodic-2`` audit both nodes.
    Cells: corrected, pre-1879878.
``evacuate``
    compute-1 is down and an evacuation accepted; ``conductor`` is the
    scheduler's claim of compute-2 (on top of compute-1's allocations) and
    the cast; ``compute-2`` serves ``rebuild_instance``; ``compute-1`` is
    its service starting again (``init_host`` cleans up after the
    evacuation); ``periodic-2`` audits compute-2. Cells: corrected,
    corrected with compute-2's rebuild failing (``rebuild-fails``), and
    nova-evacuate (the start-up cleaning up after an evacuation in
    flight, as nova does).
``resize-delete``
    the resized server again; ``compute-1`` is the API confirming it (as
    nova's API checks it first) and compute-1's ``confirm_resize``;
    ``delete`` is the API deleting it (``DELETING``, the resize confirmed
    first by a call to compute-1 if the server is still ``RESIZED``, then
    ``terminate_instance`` cast to compute-2); ``compute-2`` serves it;
    ``periodic-1`` is compute-1's audit (compute-2's would multiply the
    runs by twenty). Cells: corrected, and corrected with
    ``confirm-fails``.
``resize-migrate``
    the resized server again, both hosts enabled; ``compute-1`` is the
    API confirming it and compute-1's ``confirm_resize``; ``migrate`` is a
    client migrating it again as soon as it reads it ``ACTIVE`` with no
    task (the API's ``RESIZE_PREP``, then the conductor: a second
    migration, its allocations, the scheduler's claim of compute-1, the
    cast); ``compute-1-prep`` serves that ``prep_resize`` on compute-1
    (its move claim, racing the confirm's clean-up of the same host);
    ``periodic-1`` is compute-1's audit. The rest of the second move
    (compute-2's ``resize_instance``, compute-1's ``finish_resize``) runs
    after each run, unexplored, and the end state judges both
    migrations. Cells: corrected, corrected with ``confirm-fails`` (the
    server goes to ``ERROR``; the client gives up), and the two
    variants of ``resize-confirm``, which show their symptoms here too.
"""

from shelvefix.compute import collaborators
from shelvefix.explorer import model
from shelvefix import race
from shelvefix.race import move_cloud
from shelvefix.race import move_outcomes
from shelvefix.race import program
from shelvefix.race import random_runs
from shelvefix.race import steps
from shelvefix.race import variants

SOURCE = move_cloud.SOURCE
DESTINATION = move_cloud.DESTINATION

#: What each fault makes a host's virt driver fail.
FAILING = {race.CONFIRM_FAILS: {SOURCE: ('confirm_migration',)},
           race.REBUILD_FAILS: {DESTINATION: ('rebuild',)}}


def _no_wait(seconds):
    pass


class MoveRaceProgram(program.CloudProgram):
    """One cell of a move scenario.

    See :class:`~shelvefix.race.program.CloudProgram` for the
    parameters.
    """

    def __init__(self, placement, cell, scenario):
        super(MoveRaceProgram, self).__init__(placement, cell, scenario)
        self.name = scenario.name
        self.injected = ((collaborators.DriverFailed,)
                         if cell.fault in FAILING else ())

    def _cloud(self, explored):
        if self.providers is None:
            self.providers = move_cloud.create_providers(
                self.placement, enabled=self.name == race.RESIZE_MIGRATE)
        code = variants.code(self.cell.variant)
        # The explorer orders the actors: a retry's back-off would only
        # make the run slower.
        return move_cloud.MoveCloud(
            self.placement, self.providers,
            start=self.scenario.start,
            manager_cls=code.manager_cls, tracker_cls=code.tracker_cls,
            failing=FAILING.get(self.cell.fault),
            sleep=_no_wait if explored else None)

    def _names(self, cloud):
        src, dst = self.providers
        first, second = cloud.migration_uuids
        return steps.Names([(cloud.instance.uuid, '{instance}'),
                            (first, '{migration}'),
                            (second, '{migration 2}'),
                            (src, '{compute-1}'), (dst, '{compute-2}')])

    def _holdings(self, cloud):
        return {consumer: set(cloud.held(consumer))
                for consumer in [cloud.instance.uuid] +
                cloud.migration_uuids}

    def _actors(self, cloud, timeout=60.0, poll_interval=None, done=None):
        # No actor of a move polls: poll_interval is the base's signature.
        done = done or {}

        def after(name):
            return lambda: random_runs.finished(done, name)

        funcs = {
            'periodic-1': lambda: cloud.periodic(SOURCE),
            'periodic-2': lambda: cloud.periodic(DESTINATION),
            'conductor': cloud.schedule_evacuation,
        }
        if self.name == race.RESIZE_CONFIRM:
            funcs['compute-1'] = cloud.confirm
        elif self.name == race.RESIZE_DELETE:
            funcs['compute-1'] = cloud.api_confirm
            funcs['delete'] = cloud.delete
            funcs['compute-2'] = lambda: cloud.serve(
                DESTINATION, timeout=timeout, give_up=after('delete'))
        elif self.name == race.RESIZE_MIGRATE:
            funcs['compute-1'] = cloud.api_confirm
            funcs['migrate'] = lambda: cloud.migrate_again(
                timeout=timeout, give_up=after('compute-1'))
            funcs['compute-1-prep'] = lambda: cloud.serve(
                SOURCE, timeout=timeout, give_up=after('migrate'))
        elif self.name == race.RESIZE_REVERT:
            funcs['compute-2'] = cloud.revert
            funcs['compute-1'] = lambda: cloud.serve(
                SOURCE, timeout=timeout, give_up=after('compute-2'))
        else:
            funcs['compute-2'] = lambda: cloud.serve(
                DESTINATION, timeout=timeout, give_up=after('conductor'))
            funcs['compute-1'] = cloud.source_starts
        return [(name, funcs[name]) for name in self.actors]

    def _finish(self, cloud, results):
        try:
            results = dict(results)
            for name, error in cloud.finish_moves().items():
                results[name] = model.ActorResult(None, error, False)
            return move_outcomes.classify_move(cloud, results, self.injected)
        finally:
            cloud.remove_from_placement()
