"""``cross-cell-revert`` and ``cross-cell-confirm`` on the library's code.

compute-1 is in ``cell1``, compute-2 in ``cell2``, each cell an instance
store and a migration store; the server was resized from compute-1 to
compute-2 across them and waits to be confirmed or reverted
(:class:`~.cross_cell_cloud.CrossCellCloud`, which starts where nova's
``CrossCellMigrationTask`` leaves it).

The actors, as on the nova target (:mod:`shelvefix.nova.cross_cell`):

``conductor``
    ``cross-cell-revert``: the API (the mapping read, cell2's copy
    ``RESIZE_REVERTING``, its migration ``reverting``), then the
    conductor's ``revert_snapshot_based_resize``; ``cross-cell-confirm``:
    the API (the migration ``confirming``), then
    ``confirm_snapshot_based_resize``
    (:mod:`shelvefix.conductor.cross_cell`). Their RPC calls run the
    hosts' code (:mod:`shelvefix.compute.cross_cell`) in this actor, so
    both hosts' locks are explorer steps;
``periodic-1``, ``periodic-2``
    each host's ``update_available_resource``, reading its own cell.

The end is judged as the other moves' (:mod:`~.move_outcomes`) on the
records of the cell the mapping points to, and besides: the cell the
server left must not have it any more
(:data:`~.cross_cell_cloud.COPY_LEFT`), and the
scheduler's view of the hosts' servers (one
:class:`~shelvefix.compute.collaborators.SchedulerQueryClient` both
hosts report to) must hold the server only where it is
(``scheduler instance info stale``): nova's confirm leaves it on the
source, the library's does not.
"""

from shelvefix import race
from shelvefix.race import cross_cell_cloud
from shelvefix.race import move_cloud
from shelvefix.race import move_outcomes
from shelvefix.race import move_program
from shelvefix.race import outcomes
from shelvefix.race import steps
from shelvefix.race import variants

SOURCE = cross_cell_cloud.SOURCE
DESTINATION = cross_cell_cloud.DESTINATION
#: The scenarios :class:`CrossCellProgram` runs.
SCENARIOS = (race.CROSS_CELL_REVERT, race.CROSS_CELL_CONFIRM)


def _no_wait(seconds):
    pass


class CrossCellProgram(move_program.MoveRaceProgram):
    """One cell of ``cross-cell-revert`` or ``cross-cell-confirm``.

    See :class:`~shelvefix.race.program.CloudProgram` for the parameters.
    """

    def __init__(self, placement, cell, scenario):
        if scenario.name not in SCENARIOS:
            raise ValueError('not a cross-cell scenario: %s' % scenario.name)
        super(CrossCellProgram, self).__init__(placement, cell, scenario)

    def _cloud(self, explored):
        if self.providers is None:
            self.providers = move_cloud.create_providers(self.placement)
        code = variants.code(self.cell.variant)
        return cross_cell_cloud.CrossCellCloud(
            self.placement, self.providers, manager_cls=code.manager_cls,
            tracker_cls=code.tracker_cls,
            sleep=_no_wait if explored else None)

    def _names(self, cloud):
        src, dst = self.providers
        return steps.Names([(cloud.instance.uuid, '{instance}'),
                            (cloud.migration_uuid, '{migration}'),
                            (src, '{compute-1}'), (dst, '{compute-2}')])

    def _holdings(self, cloud):
        src, dst = self.providers
        return {cloud.instance.uuid: {dst}, cloud.migration_uuid: {src}}

    def _actor_hosts(self):
        # The conductor's calls run both hosts' code.
        return super(CrossCellProgram, self)._actor_hosts() + [
            SOURCE, DESTINATION]

    def _actors(self, cloud, timeout=60.0, poll_interval=None, done=None):
        funcs = {
            'conductor': (cloud.revert if self.name == race.CROSS_CELL_REVERT
                          else cloud.confirm),
            'periodic-1': lambda: cloud.periodic(SOURCE),
            'periodic-2': lambda: cloud.periodic(DESTINATION),
        }
        return [(name, funcs[name]) for name in self.actors]

    def _finish(self, cloud, results):
        try:
            extra = cloud.end_labels()
            labels = [label for label in move_outcomes.classify_move(
                cloud, dict(results), self.injected) if label != outcomes.OK]
            return outcomes.as_outcome(labels + extra)
        finally:
            cloud.remove_from_placement()
