"""``--cluster`` values, the engine's figures and the tasks' names."""

import collections
from unittest import mock

import fixtures

import testtools

from shelvefix import cluster
from shelvefix.cluster import engine
from shelvefix.cluster import tasks
from shelvefix.race import scenarios


class ParseTestCase(testtools.TestCase):

    def test_local(self):
        spec = cluster.parse('local')
        self.assertFalse(spec.engine)
        self.assertEqual((None, None), (spec.workers, spec.address))

    def test_local_workers(self):
        spec = cluster.parse('local:3')
        self.assertTrue(spec.engine)
        self.assertEqual(3, spec.workers)

    def test_address(self):
        for text in ('tcp://127.0.0.1:8786', 'tcp://dask.example.org:1',
                     'tcp://[::1]:8786'):
            spec = cluster.parse(text)
            self.assertEqual(text, spec.address)
            self.assertTrue(spec.engine)

    def test_bad_values_say_what_is_wrong(self):
        for text, words in (('local:0', 'from 1 to 64'),
                            ('local:65', 'from 1 to 64'),
                            ('local:x', 'local:N needs'),
                            ('127.0.0.1:8786', 'expected local'),
                            ('tcp://host', 'expected local'),
                            ('tcp://host:99999', 'port must be'),
                            ('dask', 'expected local')):
            e = self.assertRaises(ValueError, cluster.parse, text)
            self.assertIn(words, str(e))
            self.assertIn('--cluster %s' % text, str(e))

    def test_available_follows_the_import(self):
        with mock.patch('importlib.util.find_spec', return_value=None):
            self.assertFalse(cluster.available())


class FiguresTestCase(testtools.TestCase):

    def test_busy_idle_and_overhead(self):
        figures = engine.TaskFigures(workers=2)
        # Submitted at 0, ran 1..3 on a worker free since 0, seen at 3.5.
        figures.add(0.0, 3.5, tasks.Timed(None, 1.0, 3.0, 'w1'), 0.0)
        # Queued behind the first on w1: the wait is not overhead.
        figures.add(0.0, 5.25, tasks.Timed(None, 3.25, 5.0, 'w1'), 3.0)
        figures.wall = 5.0
        self.assertEqual(2, figures.tasks)
        self.assertEqual(3.75, figures.busy)
        self.assertEqual(1.0 + 0.5 + 0.25 + 0.25, figures.overhead)
        self.assertEqual(1 - 3.75 / 10.0, figures.idle)

    def test_no_wall_time_no_idle(self):
        self.assertEqual(0.0, engine.TaskFigures(workers=2).idle)


class JobTestCase(testtools.TestCase):

    def test_key_names_the_work(self):
        job = tasks.Job('nova', 'evacuate',
                        scenarios.Cell('corrected', None, 'rebuild-fails'),
                        'double', '/srv/nova', '1879878')
        self.assertEqual('nova-evacuate-corrected-rebuild-fails-bug1879878',
                         job.key)
        self.assertEqual((), job.without)

    def test_timed_outside_a_worker(self):
        timed = tasks.timed(lambda a, b: a + b, 2, 3)
        self.assertEqual(5, timed.value)
        self.assertIsNone(timed.worker)
        self.assertLessEqual(timed.started, timed.ended)


class RunnersTestCase(testtools.TestCase):
    """A worker keeps the runners of its latest trees, no more."""

    def test_oldest_runner_stopped(self):
        from shelvefix.nova import lab
        self.useFixture(fixtures.MockPatchObject(
            tasks, '_RUNNERS', collections.OrderedDict()))
        started = []

        def fake_lab(path, backend):
            runner = mock.MagicMock(path=path)
            started.append(runner)
            return runner
        self.useFixture(fixtures.MockPatchObject(lab, 'NovaLab', fake_lab))
        cell = scenarios.Cell('corrected', None, None)
        jobs = [tasks.Job('nova', 'evacuate', cell, 'double', '/srv/nova%d'
                          % n) for n in range(tasks.RUNNERS + 1)]
        for job in jobs:
            tasks._nova_lab(job)
        self.assertEqual(tasks.RUNNERS + 1, len(started))
        # The first was stopped for the last; the others are kept.
        started[0].__exit__.assert_called_once_with(SystemExit, None, None)
        for runner in started[1:]:
            runner.__exit__.assert_not_called()
        self.assertIs(started[1], tasks._nova_lab(jobs[1]))
        self.assertEqual(tasks.RUNNERS + 1, len(started))
