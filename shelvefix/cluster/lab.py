"""The race lab on a Dask cluster: every cell a task at once.

:class:`ClusterLab` has the interface of the labs of
:mod:`shelvefix.race.targets` (``description``, ``cells``,
``explore``), and :meth:`ClusterLab.explore_many`, which submits every
exploration asked for as a task (:func:`shelvefix.cluster.tasks.explore`)
and returns their :class:`~shelvefix.race.report.CellResult` in order:
what ``shelvefix race --cluster`` and ``shelvefix corpus --cluster`` use.
"""

import collections
import os

from shelvefix.cluster import tasks
from shelvefix import race


class Request(collections.namedtuple('Request', [
        'scenario', 'cell', 'patch', 'stop_at', 'without'],
        defaults=(None, (), ()))):
    """One exploration asked of :meth:`ClusterLab.explore_many`.

    ``patch`` is the corpus row (bug) whose patch the nova tree gets, or
    None; ``stop_at`` the symptoms that end the search at their first run
    (:func:`shelvefix.race.scenarios.shows`); ``without`` the actors left
    out.
    """

    __slots__ = ()


class ClusterLab(object):
    """Explorations of one target as tasks of a Dask cluster.

    :param engine: the :class:`~shelvefix.cluster.engine.Engine`, entered
    :param target: ``library`` or ``nova``
    :param backend: the placement backend's name, made on each worker
    :param nova: the nova tree or wheel each worker loads (None: the
        installed nova); a path every worker can read
    :param config_files: oslo.config files for the backend, read by each
        worker
    """

    #: Whether :meth:`explore_many` runs its explorations at once.
    concurrent = True

    def __init__(self, engine, target, backend, nova=None, config_files=()):
        self.engine = engine
        self.target = target
        self.backend = backend
        self.nova = os.path.abspath(nova) if nova else nova
        self.config_files = tuple(config_files)
        self.description = None
        self.figures = None

    def job(self, scenario, cell, patch=None, without=()):
        """The :class:`~shelvefix.cluster.tasks.Job` of one exploration."""
        return tasks.Job(self.target, scenario.name, cell, self.backend,
                         self.nova, patch, tuple(without or ()),
                         self.config_files)

    def __enter__(self):
        """Learn what the workers load (for nova: a worker loads it)."""
        if self.target != race.NOVA:
            self.description = "the library's code"
            return self
        from shelvefix.race import scenarios
        scenario = scenarios.get_scenario(race.OFFLOAD_UNSHELVE)
        job = self.job(scenario, scenarios.Cell(race.CORRECTED, None, None))
        self.description, = self.engine.run(
            [('describe-nova', tasks.describe, (job,))])
        return self

    def __exit__(self, *exc_info):
        pass

    def cells(self, scenario, ghost=False):
        """The scenario's cells on the target."""
        if self.target == race.NOVA:
            from shelvefix.nova import lab
            return lab.NovaLab.cells(scenario)
        from shelvefix.race import targets
        return targets.LibraryLab.cells(scenario, ghost=ghost)

    def explore(self, scenario, cell, reduce=True, progress=None,
                workers=1, stop_at=(), without=()):
        """Explore one cell as a task; its ``CellResult``."""
        return self.explore_many(
            [Request(scenario, cell, None, stop_at, without)],
            reduce=reduce)[0]

    def explore_many(self, requests, reduce=True, progress=None):
        """Explore each :class:`Request` as a task, all at once.

        :param progress: None or ``progress(done, total, in_flight)``
        :returns: the ``CellResult`` of each, in order
        :raises shelvefix.cluster.engine.EngineError: the cluster lost a
            task
        """
        calls = []
        for request in requests:
            job = self.job(request.scenario, request.cell, request.patch,
                           request.without)
            calls.append((job.key, tasks.explore,
                          (job, reduce, tuple(request.stop_at or ()))))
        results = self.engine.run(calls, progress=progress)
        self.figures = self.engine.figures
        return results
