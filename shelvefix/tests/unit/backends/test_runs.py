"""The run registry and the reaping of what dead runs left.

Real processes (``sleep`` in a session of its own) and real directories;
each test has a run directory of its own (``SHELVEFIX_RUNS_DIR``).
"""

import io
import json
import os
import subprocess

import fixtures

from shelvefix.backends import reap
from shelvefix.backends import runs
from shelvefix.cmd import main
from shelvefix.tests import base


class RunsTestCase(base.TestCase):

    def setUp(self):
        super().setUp()
        self.directory = self.useFixture(fixtures.TempDir()).path
        self.useFixture(fixtures.EnvironmentVariable(runs.DIR_VARIABLE,
                                                     self.directory))

    def sleeper(self):
        """A process leading a session of its own, killed at the end."""
        proc = subprocess.Popen(['sleep', '60'], start_new_session=True)
        self.addCleanup(proc.wait)
        self.addCleanup(proc.kill)
        return proc

    def dead_pid(self):
        """A pid and start time of a process that has ended."""
        proc = subprocess.Popen(['sleep', '0.01'])
        start = runs.start_time(proc.pid)
        proc.wait()
        return proc.pid, start

    def write_run(self, pid, start, processes=(), dirs=()):
        path = os.path.join(self.directory, '%d-%d.json' % (pid, start))
        with open(path, 'w') as f:
            json.dump({'pid': pid, 'start': start, 'command': 'shelvefix x',
                       'processes': [
                           {'pid': p.pid, 'start': runs.start_time(p.pid),
                            'what': 'sleep', 'ports': [1234]}
                           for p in processes],
                       'clusters': [],
                       'dirs': [{'path': d} for d in dirs]}, f)
        return path

    def scratch_dir(self):
        path = os.path.join(self.useFixture(fixtures.TempDir()).path, 'd')
        os.mkdir(path)
        return path

    def test_alive_checks_the_start_time(self):
        pid = os.getpid()
        start = runs.start_time(pid)
        self.assertTrue(runs.alive(pid, start))
        # The same pid, started at another time: another process.
        self.assertFalse(runs.alive(pid, start - 1))
        self.assertFalse(runs.alive(*self.dead_pid()))

    def test_a_dead_runs_processes_and_dirs_are_removed(self):
        sleeper = self.sleeper()
        directory = self.scratch_dir()
        path = self.write_run(*self.dead_pid(), processes=[sleeper],
                              dirs=[directory])
        [dead] = reap.dead_runs()
        reap.reap(dead)
        self.assertIsNotNone(sleeper.poll())
        self.assertFalse(os.path.exists(directory))
        self.assertFalse(os.path.exists(path))
        self.assertEqual([], dead.left)
        self.assertEqual(2, len(dead.done), dead.done)
        line = reap.summary([dead])
        self.assertNotIn('\n', line)
        self.assertIn('process %d (sleep, port 1234)' % sleeper.pid, line)
        self.assertIn(directory, line)

    def test_a_live_run_is_left_alone(self):
        sleeper = self.sleeper()
        directory = self.scratch_dir()
        pid = os.getpid()
        path = self.write_run(pid, runs.start_time(pid), processes=[sleeper],
                              dirs=[directory])
        self.assertEqual([], reap.dead_runs())
        self.assertIsNone(sleeper.poll())
        self.assertTrue(os.path.exists(directory))
        self.assertTrue(os.path.exists(path))

    def test_a_reused_pid_is_not_the_runs(self):
        # The run's pid now belongs to another process (this one, started
        # at another time): the run is dead. The process it listed has
        # ended and its pid belongs to a newer process: not killed.
        sleeper = self.sleeper()
        pid = os.getpid()
        path = self.write_run(pid, runs.start_time(pid) - 1)
        with open(path) as f:
            content = json.load(f)
        content['processes'] = [{'pid': sleeper.pid, 'what': 'sleep',
                                 'start': runs.start_time(sleeper.pid) - 1}]
        with open(path, 'w') as f:
            json.dump(content, f)
        [dead] = reap.dead_runs()
        reap.reap(dead)
        self.assertIsNone(sleeper.poll())
        self.assertFalse(os.path.exists(path))

    def test_dry_run_removes_nothing(self):
        sleeper = self.sleeper()
        directory = self.scratch_dir()
        path = self.write_run(*self.dead_pid(), processes=[sleeper],
                              dirs=[directory])
        out = io.StringIO()
        self.assertEqual(0, main.main(['cleanup', '--dry-run'], out=out,
                                      err=io.StringIO()))
        self.assertIn('would remove process %d (sleep' % sleeper.pid,
                      out.getvalue())
        self.assertIn('would remove directory %s' % directory,
                      out.getvalue())
        self.assertIsNone(sleeper.poll())
        self.assertTrue(os.path.exists(directory))
        self.assertTrue(os.path.exists(path))
        # Then for real.
        out = io.StringIO()
        self.assertEqual(0, main.main(['cleanup'], out=out,
                                      err=io.StringIO()))
        self.assertIn('removed directory %s' % directory, out.getvalue())
        self.assertIsNotNone(sleeper.wait(10))
        self.assertFalse(os.path.exists(path))
        out = io.StringIO()
        self.assertEqual(0, main.main(['cleanup'], out=out,
                                      err=io.StringIO()))
        self.assertIn('Nothing left by dead runs', out.getvalue())

    def test_what_cannot_be_removed_is_said_and_kept(self):
        # rmtree refuses a file: the run stays listed, exit 1.
        not_a_dir = os.path.join(self.scratch_dir(), 'file')
        open(not_a_dir, 'w').close()
        path = self.write_run(*self.dead_pid(), dirs=[not_a_dir])
        out = io.StringIO()
        self.assertEqual(1, main.main(['cleanup'], out=out,
                                      err=io.StringIO()))
        self.assertIn('not removed: directory %s: ' % not_a_dir,
                      out.getvalue())
        with open(path) as f:
            self.assertEqual([{'path': not_a_dir}], json.load(f)['dirs'])

    def test_the_next_command_reaps_in_one_line(self):
        directory = self.scratch_dir()
        self.write_run(*self.dead_pid(), dirs=[directory])
        err = io.StringIO()
        main.main(['cleanup', '--dry-run'], out=io.StringIO(), err=err)
        # cleanup says it itself, on stdout.
        self.assertEqual('', err.getvalue())
        main.main(['timeline', '--backend', 'double'], out=io.StringIO(),
                  err=err)
        lines = err.getvalue().splitlines()
        self.assertEqual(1, len(lines), lines)
        self.assertTrue(lines[0].startswith(
            'shelvefix: removed what 1 dead run left (pid '), lines)
        self.assertFalse(os.path.exists(directory))
        self.assertEqual([], os.listdir(self.directory))

    def test_a_run_lists_what_it_started_while_it_runs(self):
        holder = fixtures.Fixture()
        holder.setUp()
        with runs.registered(['stress']) as run:
            directory = runs.temp_dir(holder, 'shelvefix-test-')
            with open(run.path) as f:
                self.assertEqual([{'path': directory}],
                                 json.load(f)['dirs'])
            self.assertIsNone(run.watchdog.poll())
            # Not this run's: nothing reaps it.
            self.assertEqual([], reap.dead_runs())
            holder.cleanUp()
        self.assertFalse(os.path.exists(directory))
        self.assertFalse(os.path.exists(run.path))
        self.assertIsNotNone(run.watchdog.poll())

    def test_outside_a_run_nothing_is_recorded(self):
        runs.record('dirs', path='/nonexistent')
        self.assertEqual([], os.listdir(self.directory))
