"""The race lab's cells on nova's code: what the nova target runs.

:func:`program` is the explorer program of one cell (the cells are
:func:`shelvefix.nova.cells`): a cloud fixture of
nova's services with the cell's code variant (:mod:`~shelvefix.nova.
variants`) and fault, and the scenario's actors on it
(:class:`~shelvefix.nova.program.NovaRaceProgram`,
:class:`~shelvefix.nova.move_program.NovaMoveProgram`).

This module imports nova (see :mod:`shelvefix.nova`).
"""

from shelvefix.nova import lifecycle
from shelvefix.nova import move_program
from shelvefix.nova import moves
from shelvefix.nova import program as program_mod
from shelvefix.nova import second_move
from shelvefix.nova import variants
from shelvefix import race
from shelvefix.race import scenarios

#: What each fault makes a host's virt driver fail (nova's evacuation
#: rebuilds through ``spawn``).
FAILING = {race.CONFIRM_FAILS: ('confirm_migration',),
           race.REBUILD_FAILS: ('spawn',)}


class CellProgram(object):
    """One cell of a scenario on nova's code, for the explorer.

    :param backend: the placement backend's name (``double``, ``real``)
    :param scenario: the :class:`~shelvefix.race.scenarios.Scenario`
    :param cell: the :class:`~shelvefix.race.scenarios.Cell`
    """

    def __init__(self, backend, scenario, cell):
        code = variants.code(cell.variant)
        kwargs = dict(backend=backend, manager_cls=code.manager_cls,
                      tracker_cls=code.tracker_cls)
        if scenario.start in (scenarios.ON_SOURCE, scenarios.OFFLOADED):
            cloud_cls = lifecycle.NovaCloud
            kwargs['binding_fails'] = cell.fault == race.PORT_BINDING
        else:
            cloud_cls = (second_move.SecondMoveCloud
                         if scenario.name == race.RESIZE_MIGRATE
                         else moves.NovaMoveCloud)
            kwargs['failing'] = FAILING.get(cell.fault, ())
        self.cloud = cloud_cls(**kwargs)
        self.cloud.setUp()
        try:
            if cloud_cls is lifecycle.NovaCloud:
                self.inner = program_mod.NovaRaceProgram(self.cloud,
                                                         scenario.name)
            else:
                self.inner = move_program.NovaMoveProgram(self.cloud,
                                                          scenario.name)
        except Exception:
            self.cloud.cleanUp()
            raise
        self.actors = self.inner.actors

    def __call__(self, controller):
        return self.inner(controller)

    def random_run(self, rng, poll_interval, max_start_delay):
        """One run with real threads; returns its outcome."""
        return self.inner.random_run(rng, poll_interval, max_start_delay)

    def close(self, interrupted=False):
        """Remove the cloud: its placement, providers and patches."""
        self.cloud.cleanUp()


def program(backend, scenario, cell):
    """The explorer program of one cell (see :class:`CellProgram`)."""
    return CellProgram(backend, scenario, cell)
