"""Two corpus rows on a real Dask cluster, against one process.

A scheduler and two worker processes on 127.0.0.1
(:class:`shelvefix.cluster.fixture.DaskProcesses`); each worker makes its
own patched copy of the installed nova for a row and its own runner
process (:mod:`shelvefix.cluster.tasks`). The self-test on the cluster
must come to what it comes to in this process, run for run: each row's
patched exploration and each whole exploration the same runs, in the
same order, with the same outcomes.
"""

import contextlib
import pickle

import fixtures
import testtools

from shelvefix import cluster
from shelvefix.cluster import engine
from shelvefix.cluster import fixture
from shelvefix.cluster import lab as cluster_lab
from shelvefix.cluster import tasks
from shelvefix import corpus
from shelvefix.corpus import runs
from shelvefix.explorer import subtrees
from shelvefix.nova import lab as nova_lab
from shelvefix import race
from shelvefix.race import scenarios

#: One row of a concurrency race, one of a failure path.
BUGS = ('1798688', '1862633')


class CorpusOnClusterTestCase(testtools.TestCase):

    def test_two_rows_run_for_run(self):
        rows = corpus.select(corpus.load(), bugs=BUGS)
        self.assertEqual(len(BUGS), len(rows))
        description, alone = runs.self_test(rows)
        dask = self.useFixture(fixture.DaskProcesses(workers=2))
        with engine.Engine(cluster.parse(dask.address)) as cluster_engine:
            with cluster_lab.ClusterLab(cluster_engine, race.NOVA,
                                        'double') as lab:
                described, together = runs.self_test(rows, lab=lab)
                # Two patched rows, two whole explorations.
                self.assertEqual(4, lab.figures.tasks)
        self.assertEqual(description, described)
        self.assertTrue(runs.proven(together))
        for one, other in zip(alone, together):
            self.assertEqual(one.row, other.row)
            self.assertEqual(runs.REPRODUCED, other.status)
            for mine, theirs in ((one.patched, other.patched),
                                 (one.explored, other.explored)):
                self.assertEqual((mine.runs, mine.counts, mine.digest),
                                 (theirs.runs, theirs.counts, theirs.digest))


class RunnerSubtreesTestCase(testtools.TestCase):
    """A worker's runner alternates subtree tasks and explorations.

    nova's programs set up process-wide state: the program a runner keeps
    for an exploration's subtree tasks is closed before it makes another,
    and made again when that exploration's tasks come back.
    """

    def subtree(self, runner, job):
        # The whole search's first run, as a subtree from the root.
        runs, rest = runner.subtree(job, pickle.dumps([]), True, 10.0, 0.0)
        self.assertEqual(1, len(runs))
        self.assertIsNotNone(rest)
        key, observed = pickle.loads(runs[0])
        return key, observed.record.schedule, observed.record.outcome

    def test_subtrees_around_an_exploration(self):
        periodic = scenarios.get_scenario(race.UNSHELVE_PERIODIC)
        cell = scenarios.Cell(race.CORRECTED, None, None)
        job = tasks.Job(race.NOVA, race.UNSHELVE_PERIODIC, cell, 'double')
        other = tasks.Job(race.NOVA, race.UNSHELVE_PERIODIC,
                          scenarios.Cell(race.CORRECTED, None,
                                         'port-binding'), 'double')
        with nova_lab.NovaLab(None, 'double') as runner:
            first = self.subtree(runner, job)
            self.assertNotEqual(first, self.subtree(runner, other))
            result = runner.explore(periodic, cell)
            self.assertTrue(result.complete)
            self.assertEqual(first, self.subtree(runner, job))
            self.assertEqual(result.digest, runner.explore(periodic,
                                                           cell).digest)


class SubtreeElsewhereTestCase(testtools.TestCase):
    """A subtree searched in another process replays the same steps.

    The runs a worker hands out are replayed by another worker's runner,
    a process with its own nova programs: whatever a step's label names
    (a lock's key, a record's uuid) must be named alike there.
    """

    def passed_between_runners(self, scenario, seeds=(None, None)):
        """Each run's stack to go on from goes to the next runner.

        Which replays it, until that subtree is over; a runner per seed,
        each started with that hash seed (None: the parent's environment).
        """
        cell = scenarios.Cell(race.CORRECTED, None, None)
        job = tasks.Job(race.NOVA, scenario, cell, 'double')
        schedules = []
        runners = []
        with contextlib.ExitStack() as stack:
            for seed in seeds:
                with fixtures.EnvironmentVariable('PYTHONHASHSEED', seed):
                    runners.append(stack.enter_context(
                        nova_lab.NovaLab(None, 'double')))
            payload = pickle.dumps([])
            for runner in runners * 10:
                runs, payload = runner.subtree(job, payload, True, 10.0,
                                               0.0)
                self.assertEqual(1, len(runs))
                key, observed = pickle.loads(runs[0])
                self.assertIsInstance(observed, subtrees.Observed)
                schedules.append(tuple(observed.record.schedule))
                if payload is None:
                    break
        self.assertGreater(len(schedules), 1)
        self.assertEqual(len(schedules), len(set(schedules)))

    def test_a_uuid_made_once_per_process(self):
        # live-migrate-group's conductors take the cell's lock (nova's
        # set_target_cell): a label naming a uuid that was made once per
        # process.
        self.passed_between_runners(race.LIVE_MIGRATE_GROUP)

    def test_processes_ordering_hosts_alike(self):
        # The conductor of live-migrate-abort takes the lock of one host or
        # the other first, in the order nova's scheduler lists them: by the
        # hash of their names (seeds 3 and 4 differed before the runner
        # fixed its own) and by their providers' uuids (made once per
        # process, they sorted either way: four runners all sorted them
        # alike one time in eight before the uuids were fixed by name).
        self.passed_between_runners(race.LIVE_MIGRATE_ABORT,
                                    seeds=('3', '4', '3', '4'))
