"""``tools/nova_functional.py`` on a toy nova tree: what it may call a pass.

The toy tree has a ``nova.tests.functional.fixtures`` with a
``PlacementFixture`` for the workers to swap, and a few tests whose
behaviour the environment chooses: one waits to be killed, one deadlocks
natively (no Python code runs again), one fails where the fixture was
swapped. The tool runs as users run it, in a subprocess, with real stestr
workers.
"""

import glob
import os
import signal
import subprocess
import sys
import time

import fixtures
import testtools

from shelvefix.tests import shipped

TOY_TESTS = '''
import _thread
import os
import time
import unittest

import testscenarios

from nova.tests.functional import fixtures


class ToyTest(unittest.TestCase):

    def test_a_passes(self):
        pass

    def test_b_waits(self):
        mode = os.environ.get('TOY_B', 'pass')
        if mode == 'hang':
            lock = _thread.allocate_lock()
            lock.acquire()
            lock.acquire()
        elif mode == 'wait':
            open(os.environ['TOY_MARK'], 'w').close()
            time.sleep(120)

    def test_c_passes(self):
        pass


class ScenarioTest(testscenarios.WithScenarios, unittest.TestCase):

    scenarios = [('one', {'n': 1}), ('two', {'n': 2})]

    def test_n(self):
        pass


class SwapTest(unittest.TestCase):

    def test_fixture_is_novas(self):
        if os.environ.get('TOY_SWAP_FAILS'):
            self.assertEqual('nova.tests.functional.fixtures',
                             fixtures.PlacementFixture.__module__)
'''
#: Bounds every wait of these tests.
LIMIT = 120


class NovaFunctionalToolTestCase(testtools.TestCase):

    def setUp(self):
        super(NovaFunctionalToolTestCase, self).setUp()
        self.tool = shipped.use_script(self, 'tools', 'nova_functional.py')
        root = self.useFixture(fixtures.TempDir()).path
        self.tree = os.path.join(root, 'tree')
        package = os.path.join(self.tree, 'nova', 'tests', 'functional')
        os.makedirs(package)
        for folder in ('nova', 'nova/tests', 'nova/tests/functional'):
            open(os.path.join(self.tree, folder, '__init__.py'), 'w').close()
        with open(os.path.join(package, 'fixtures.py'), 'w') as out:
            out.write('class PlacementFixture(object):\n    pass\n')
        with open(os.path.join(package, 'test_toy.py'), 'w') as out:
            out.write(TOY_TESTS)
        self.workdir = os.path.join(root, 'work')
        self.env = dict(os.environ, PYTHONWARNINGS='ignore')

    def start(self, *args):
        return subprocess.Popen(
            (sys.executable, self.tool.__file__, '--tree', self.tree,
             '--workdir', self.workdir) + args,
            env=self.env, stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
            text=True)

    def run_tool(self, *args):
        process = self.start(*args)
        output, _ = process.communicate(timeout=LIMIT)
        return process.returncode, output

    def test_agreeing_backends_pass(self):
        rc, output = self.run_tool('ToyTest')
        self.assertEqual(0, rc, output)
        for backend in ('real', 'double'):
            self.assertIn('%s: selected 3, ran 3, passed 3, failed 0, '
                          'skipped 0, did not finish 0' % backend, output)
        self.assertRegex(output, r'double/real time on the 3 tests both '
                         r'passed: \d+\.\d\d \(sum\), \d+\.\d\d \(median')
        self.assertIn('verdict: every test finished, the backends agree',
                      output)

    def test_a_killed_worker_is_not_a_pass(self):
        mark = os.path.join(self.workdir, 'b-running')
        self.env.update(TOY_B='wait', TOY_MARK=mark)
        process = self.start('--backend', 'real', 'ToyTest')
        self.addCleanup(process.kill)
        deadline = time.monotonic() + LIMIT
        while not os.path.exists(mark) and time.monotonic() < deadline:
            time.sleep(0.1)
        self.assertTrue(os.path.exists(mark), 'test_b never started')
        [pid] = [int(os.path.basename(path)) for path in glob.glob(
            os.path.join(self.workdir, 'run', 'real', 'progress', '*'))
            if os.path.basename(path).isdigit()]
        os.kill(pid, signal.SIGKILL)
        output, _ = process.communicate(timeout=LIMIT)
        self.assertEqual(1, process.returncode, output)
        self.assertRegex(output, r'real: selected 3, ran [12], passed [12], '
                         r'failed 0, skipped 0, did not finish [12] ')
        self.assertRegex(output, r'verdict: real: [12] tests did not '
                         r'finish')

    def test_a_hung_worker_is_killed_with_its_stacks(self):
        self.env['TOY_B'] = 'hang'
        rc, output = self.run_tool('--backend', 'real', '--hang-timeout',
                                   '3', 'ToyTest')
        self.assertEqual(1, rc, output)
        self.assertRegex(output, r'real: worker \d+ hung running \S+'
                         r'ToyTest\.test_b_waits for \d+ s; stacks in \S+, '
                         r'killed')
        self.assertIn('1 worker hung', output)
        [stacks] = glob.glob(os.path.join(self.workdir, 'hangs',
                                          'real-*.stacks'))
        with open(stacks) as dumped:
            self.assertIn('test_b_waits', dumped.read())

    def test_disagreeing_backends_fail(self):
        self.env['TOY_SWAP_FAILS'] = '1'
        rc, output = self.run_tool('SwapTest')
        self.assertEqual(1, rc, output)
        self.assertRegex(output, r'differs: \S+SwapTest\.'
                         r'test_fixture_is_novas: real passed, double '
                         r'failed')
        self.assertIn('1 test ended differently on real and double', output)

    def test_a_listed_test_runs_once_per_scenario(self):
        rc, output = self.run_tool('--backend', 'real', 'ScenarioTest')
        self.assertEqual(0, rc, output)
        self.assertIn('real: selected 1, ran 2, passed 2, failed 0, '
                      'skipped 0, did not finish 0', output)

    def test_a_differential_run_that_compared_nothing_is_not_a_pass(self):
        rc, output = self.run_tool('--backend', 'differential', 'ToyTest')
        self.assertEqual(1, rc, output)
        self.assertIn('differential: selected 3, ran 3, passed 3', output)
        self.assertIn('verdict: differential: no request was compared',
                      output)

    def test_repeats_add_up(self):
        rc, output = self.run_tool('--backend', 'real', '--repeat', '2',
                                   'ToyTest')
        self.assertEqual(0, rc, output)
        self.assertEqual(2, output.count('repeat '), output)
        self.assertIn('real: selected 6, ran 6, passed 6, failed 0, '
                      'skipped 0, did not finish 0', output)

    def test_shards_add_up(self):
        for shard in ('1/2', '2/2'):
            rc, output = self.run_tool('--backend', 'real', '--shard',
                                       shard, '--all')
            self.assertEqual(0, rc, output)
        rc, output = self.run_tool('--backend', 'real', '--report', '2',
                                   '--all')
        self.assertEqual(0, rc, output)
        self.assertIn('real: selected 5, ran 6, passed 6', output)
        os.remove(glob.glob(os.path.join(self.workdir, 'results', '*',
                                         'real-2of2.json'))[0])
        rc, output = self.run_tool('--backend', 'real', '--report', '2',
                                   '--all')
        self.assertEqual(1, rc, output)
        self.assertIn('shards never run: 2', output)
        self.assertIn('did not finish', output)


class WatchdogTestCase(testtools.TestCase):

    def setUp(self):
        super(WatchdogTestCase, self).setUp()
        self.tool = shipped.use_script(self, 'tools', 'nova_functional.py')
        self.progress = self.useFixture(fixtures.TempDir()).path
        self.runner = self.tool.Runner('.', self.progress, hang_timeout=5)
        self.run_ = dict(backend='real', progress=self.progress, hung=[])

    def quiet_since(self, pid, seconds, state='between', test_id=''):
        path = os.path.join(self.progress, str(pid))
        self.tool.worker.write_progress(path, state, test_id)
        when = time.time() - seconds
        with open(path, 'w') as out:
            out.write('%.3f %s %s\n' % (when, state, test_id))
        return path

    def test_a_worker_that_ended_is_not_hung(self):
        ended = subprocess.Popen((sys.executable, '-c', 'pass'))
        ended.wait(LIMIT)
        path = self.quiet_since(ended.pid, 60)
        self.runner.kill_hung(self.run_)
        self.assertEqual([], self.run_['hung'])
        self.assertFalse(os.path.exists(path))

    def test_a_live_worker_quiet_too_long_is_killed(self):
        waiting = subprocess.Popen((sys.executable, '-c',
                                    'import time; time.sleep(%d)' % LIMIT))
        self.addCleanup(waiting.kill)
        self.quiet_since(waiting.pid, 60, 'running', 'm.C.test_x')
        self.quiet_since(os.getpid(), 1, 'running', 'm.C.test_y')
        self.runner.kill_hung(self.run_)
        self.assertLess(waiting.wait(LIMIT), 0)
        self.assertEqual([(waiting.pid, 'running', 'm.C.test_x')],
                         [(hung['pid'], hung['state'], hung['test'])
                          for hung in self.run_['hung']])


class ShardTestCase(testtools.TestCase):

    def setUp(self):
        super(ShardTestCase, self).setUp()
        self.tool = shipped.use_script(self, 'tools', 'nova_functional.py')

    def test_every_test_in_one_shard_and_classes_whole(self):
        ids = ['m.C%d.test_%d' % (n // 3, n) for n in range(30)]
        ids += ['m.S.test_x(scenario%d)' % n for n in range(5)]
        for shards in (1, 2, 3, 7, 40):
            parts = [self.tool.shard_of(ids, shard, shards)
                     for shard in range(1, shards + 1)]
            self.assertEqual(sorted(ids), sorted(sum(parts, [])))
            owners = [set(test_id.split('(')[0].rsplit('.', 1)[0]
                          for test_id in part) for part in parts]
            for n, part in enumerate(owners):
                for other in owners[n + 1:]:
                    self.assertFalse(part & other)

    def test_a_bad_shard_is_refused(self):
        for text in ('0/3', '4/3', '1', 'a/b'):
            self.assertRaises(self.tool.argparse.ArgumentTypeError,
                              self.tool.parse_shard, text)
        self.assertEqual((2, 3), self.tool.parse_shard('2/3'))
