"""Exploring on a real Dask cluster: a scheduler and two worker processes.

Each test starts ``python -m distributed.cli.dask_scheduler`` and two
``dask_worker`` processes on 127.0.0.1
(:class:`shelvefix.cluster.fixture.DaskProcesses`) and compares what the
cluster explored with the same explorations in this process, run for run
(:func:`shelvefix.race.digest.digest`: every run's schedule, what its
steps saw and its outcome, in order). The corpus's rows on a cluster need
nova: they are in ``shelvefix/tests/nova/test_cluster.py``.
"""

import io
import json
import logging
import os
import signal
import threading
import time
from unittest import mock

import fixtures
import testtools

from shelvefix import backends
from shelvefix import cluster
from shelvefix.cluster import ahead
from shelvefix.cluster import engine
from shelvefix.cluster import fixture
from shelvefix.cluster import lab as cluster_lab
from shelvefix.cluster import tasks
from shelvefix.cmd import main
from shelvefix import explorer
from shelvefix.explorer import runner
from shelvefix import race
from shelvefix.race import scenarios
from shelvefix.race import targets
from shelvefix.tests.unit.explorer import programs

LIFECYCLE = scenarios.get_scenario(race.LIFECYCLE)
#: The lifecycle's longest cell: 264 runs, seconds on the double.
LEGACY = scenarios.Cell(race.LEGACY, None, None)


def here(scenario, cells, backend=backends.DOUBLE):
    """The cells explored in this process, as ``shelvefix race`` does."""
    with backends.make_backend(backend) as placement:
        lab = targets.LibraryLab(placement)
        return [lab.explore(scenario, cell) for cell in cells]


def kill_own_worker():
    """A task that kills the worker process running it, every time."""
    os.kill(os.getpid(), signal.SIGKILL)


class ClusterTestCase(testtools.TestCase):

    def setUp(self):
        super().setUp()
        # Hundreds of runs' warnings (the 409s the scenarios are made of):
        # too much for a test's details.
        self.useFixture(fixtures.LogHandler(logging.NullHandler(),
                                            nuke_handlers=True))
        self.dask = self.useFixture(fixture.DaskProcesses(workers=2))
        self.spec = cluster.parse(self.dask.address)

    def assertSameResults(self, alone, together):
        self.assertEqual(len(alone), len(together))
        for one, other in zip(alone, together):
            self.assertEqual(one.cell, other.cell)
            self.assertEqual((one.runs, one.counts, one.complete),
                             (other.runs, other.counts, other.complete))
            self.assertEqual(one.digest, other.digest, one.cell)

    def test_shelve_scenario_run_for_run(self):
        cells = targets.LibraryLab.cells(LIFECYCLE)
        with engine.Engine(self.spec) as cluster_engine:
            self.assertEqual(2, cluster_engine.width)
            with cluster_lab.ClusterLab(cluster_engine, race.LIBRARY,
                                        'double') as lab:
                together = lab.explore_many(
                    [cluster_lab.Request(LIFECYCLE, cell) for cell in cells])
                figures = lab.figures
        self.assertSameResults(here(LIFECYCLE, cells), together)
        self.assertEqual(len(cells), figures.tasks)
        self.assertGreater(figures.busy, 0)

    def test_subtrees_as_tasks_run_for_run(self):
        job = tasks.Job(race.LIBRARY, race.LIFECYCLE, LEGACY, 'double')
        client = engine.connect(self.dask.address)
        self.addCleanup(client.close)
        run_here = runner.run_here
        helpers = []

        def make_helper(reduce, step_timeout):
            helpers.append(ahead.ClusterAhead(client, job, reduce,
                                              step_timeout, 2))
            return helpers[-1]

        def waiting_here(*args):
            # Until a worker's runs have reached the search, each run of its
            # own waits for a subtree task to end (at most a minute): the
            # workers get ahead of it however loaded the machine is.
            deadline = time.monotonic() + 60
            while (helpers and not helpers[-1].received and
                   helpers[-1]._futures and
                   not any(future.done()
                           for future in helpers[-1]._futures.values()) and
                   time.monotonic() < deadline):
                time.sleep(0.01)
            return run_here(*args)
        with backends.make_backend(backends.DOUBLE) as placement:
            alone = explorer.explore(
                targets.program(placement, LIFECYCLE, LEGACY))
            # Short tasks: the search takes runs from many of them.
            with mock.patch.object(ahead, 'BUDGET', 0.1), \
                    mock.patch.object(runner, 'WORKERS_AFTER', 0), \
                    mock.patch.object(runner, 'run_here', waiting_here):
                together = explorer.explore(
                    targets.program(placement, LIFECYCLE, LEGACY),
                    ahead=make_helper)
        self.assertEqual(programs.summary(alone), programs.summary(together))
        self.assertGreater(together.tasks, 0)
        self.assertGreater(helpers[-1].received, 0)
        self.assertGreater(together.ahead, 0)

    def test_race_command_on_a_scheduler_started_by_hand(self):
        def race_json(*extra):
            out = io.StringIO()
            with mock.patch('sys.stderr', io.StringIO()):
                rc = main.main(['race', '--scenario', 'lifecycle',
                                '--backend', 'double', '--json'] +
                               list(extra), out=out)
            document = json.loads(out.getvalue())
            return rc, [(cell['variant'], cell['fault'], cell['interleavings'],
                         cell['outcomes']) for cell in document['cells']]
        rc, alone = race_json('--workers', '1')
        self.assertEqual(0, rc)
        rc, together = race_json('--cluster', self.dask.address)
        self.assertEqual(0, rc)
        self.assertEqual(alone, together)

    def test_real_placement_on_each_worker(self):
        scenario = scenarios.get_scenario(race.OFFLOAD_UNSHELVE)
        cells = targets.LibraryLab.cells(scenario)
        with engine.Engine(self.spec) as cluster_engine:
            with cluster_lab.ClusterLab(cluster_engine, race.LIBRARY,
                                        'real') as lab:
                together = lab.explore_many(
                    [cluster_lab.Request(scenario, cell) for cell in cells])
        self.assertSameResults(here(scenario, cells, backends.REAL),
                               together)

    def test_a_worker_killed_mid_exploration_changes_nothing(self):
        results, errors = [], []
        with engine.Engine(self.spec) as cluster_engine:
            lab = cluster_lab.ClusterLab(cluster_engine, race.LIBRARY,
                                         'double').__enter__()

            def explore():
                try:
                    results.extend(lab.explore_many(
                        [cluster_lab.Request(LIFECYCLE, LEGACY)]))
                except Exception as e:
                    errors.append(e)
            thread = threading.Thread(target=explore)
            thread.start()
            victim = self.running_exploration(cluster_engine.client)
            time.sleep(0.5)
            self.dask.kill(self.dask.pid_of(victim))
            # Killed mid-task: the exploration had not ended.
            self.assertEqual(([], []), (results, errors))
            thread.join(300)
            self.assertFalse(thread.is_alive())
        self.assertEqual([], errors)
        self.assertSameResults(here(LIFECYCLE, [LEGACY]), results)
        self.assertEqual(1, sum(process.poll() is None
                                for process in self.dask.workers))

    def running_exploration(self, client, timeout=60):
        """The worker running the exploration task, once one is."""
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            for worker, keys in client.processing().items():
                if any(key.startswith('library-lifecycle-legacy')
                       for key in keys):
                    return worker
            time.sleep(0.02)
        self.fail('no worker took the exploration')


class LostTaskTestCase(testtools.TestCase):
    """A task that loses every worker it runs on: one line, no hang."""

    def test_engine_error_names_the_task(self):
        self.useFixture(fixtures.LogHandler(logging.NullHandler(),
                                            nuke_handlers=True))
        # A nanny starts a new worker after each death; the scheduler
        # gives up on the task after its allowed failures.
        with engine.Engine(cluster.parse('local:1')) as cluster_engine:
            e = self.assertRaises(
                engine.EngineError, cluster_engine.run,
                [('suicide', kill_own_worker, ())])
        self.assertIn('--cluster local:1: task suicide lost every worker '
                      'it ran on', str(e))
