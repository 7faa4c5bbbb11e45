"""The race lab's nova target: its cells, its command, the trees it takes.

The registry's scenarios (:mod:`shelvefix.race.scenarios`) run on nova's
code through :func:`shelvefix.nova.target.program`, each pre-fix variant
derived from nova's own classes (:mod:`shelvefix.nova.variants`). What
nova's latest release shows:

* the two-actor ``offload-unshelve`` (compute-1's shelve-offload against
  the API's unshelve and the scheduler's claim): every run ``ok``; on the
  ``legacy`` variant, the scheduler's 409 and the wiped claim, as the
  library's legacy order freeing with a DELETE;
* each pre-fix variant of issue 33, in every cell of its scenario, the bad
  outcomes the library's same variant shows in the same cell;
* ``resize-revert`` as nova has it: ``usage untracked``, the revert
  defect the lab found, and the scheduler's stale view of the reverted
  server, so that ``shelvefix race --target nova`` ends 1.

The library's target cannot run here: it loads :mod:`shelvefix.conf`,
whose ``[placement]`` group clashes with nova's (see
:mod:`shelvefix.tests.nova.base`). The comparisons run both targets as
the user does, ``python -m shelvefix race ... --json``, each in a process
of its own; so do the tests of ``--nova PATH``, since loading a tree
imports ``nova`` into the process, and nova is imported here already.
"""

import importlib.metadata
import json
import logging
import os
import re
import shutil
import signal
import subprocess
import sys
import time

import fixtures
import testscenarios

from shelvefix import nova as nova_target
from shelvefix.nova import tree
from shelvefix import race
from shelvefix.race import move_outcomes
from shelvefix.race import outcomes
from shelvefix.race import scenarios
from shelvefix.tests.nova import base

load_tests = testscenarios.load_tests_apply_scenarios

#: Seconds a command may take: resize-revert explores 2272 runs on nova.
TIMEOUT = 900


def race_command(*args):
    """Run ``python -m shelvefix race ARGS``; the finished process."""
    return subprocess.run(
        [sys.executable, '-m', 'shelvefix', 'race'] + list(args),
        stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
        timeout=TIMEOUT)


def bad_labels(document):
    """``{(variant, fault): bad labels}`` of a ``--json`` document's cells.

    Each cell must be explored completely, or its labels prove nothing.
    """
    found = {}
    for cell in document['cells']:
        if not cell['complete'] or not cell['interleavings']:
            raise AssertionError('cell not explored: %s' % cell)
        found[cell['variant'], cell['fault']] = (
            set(cell['outcomes']) - {outcomes.OK})
    return found


class TwoActorTestCase(base.NovaTestCase):
    """The registry's offload-unshelve, explored on nova's code here."""

    def setUp(self):
        super(TwoActorTestCase, self).setUp()
        # Tens of runs of nova's code: see test_lifecycle.
        self.useFixture(fixtures.LogHandler(logging.NullHandler(),
                                            level=logging.CRITICAL))
        self.target = base.load('shelvefix.nova.target')
        self.scenario = scenarios.get_scenario(race.OFFLOAD_UNSHELVE)

    def labels(self, variant):
        """Every label a run of the variant's cell ended with."""
        prog = self.target.program('double', self.scenario,
                                   scenarios.Cell(variant, None))
        self.assertEqual(('compute', 'scheduler'), prog.actors)
        exploration = scenarios.explore(prog)
        self.assertExplored(exploration)
        self.assertTrue(exploration.complete)
        return {label for run in exploration.runs for label in run.outcome}

    def test_corrected_every_run_ok(self):
        # The host lost needs compute-2's part explored too
        # (program.OFFLOAD_TAIL, test_lifecycle): here compute-2 serves
        # the cast after the run.
        self.assertEqual({outcomes.OK}, self.labels(race.CORRECTED))

    def test_legacy_scheduler_409_and_claim_wiped(self):
        self.assertEqual(
            {outcomes.OK, outcomes.SCHEDULER_409, outcomes.CLAIM_WIPED},
            self.labels(race.LEGACY))


#: Labels only the nova target judges (its own records).
NOVA_ONLY = {move_outcomes.SCHEDULER_INFO_STALE,
             move_outcomes.SOURCE_DISK_KEPT}


class VariantTestCase(testscenarios.WithScenarios, base.NovaTestCase):
    """Each pre-fix variant shows on nova what it shows on the library.

    Every cell of the variant in its scenario, with and without the fault,
    must show the same set of bad labels on both targets (nova shows no
    extra label in any of them). On ``offload-unshelve`` nova frees with
    a DELETE (since Ussuri), so its cell is the library's ``delete`` one:
    the library's GET-then-PUT also shows ``compute 409`` and ``allocations
    leaked``, which a DELETE cannot give.
    """

    scenarios = [
        ('legacy', {'scenario': race.OFFLOAD_UNSHELVE,
                    'variant': race.LEGACY, 'free': ('--free', race.DELETE),
                    'symptom': (None, outcomes.SCHEDULER_409,
                                outcomes.CLAIM_WIPED)}),
        ('pre_2025480', {'scenario': race.UNSHELVE_PERIODIC,
                         'variant': race.PRE_2025480, 'free': (),
                         'symptom': (None, outcomes.USAGE_UNTRACKED)}),
        ('pre_1862633', {'scenario': race.UNSHELVE_PERIODIC,
                         'variant': race.PRE_1862633, 'free': (),
                         'symptom': (race.PORT_BINDING, outcomes.LEAKED)}),
        ('pre_1879878', {'scenario': race.RESIZE_CONFIRM,
                         'variant': race.PRE_1879878, 'free': (),
                         'symptom': (None, outcomes.USAGE_UNTRACKED)}),
        ('pre_1821594', {'scenario': race.RESIZE_CONFIRM,
                         'variant': race.PRE_1821594, 'free': (),
                         'symptom': (race.CONFIRM_FAILS,
                                     move_outcomes.MIGRATION_LEAKED)}),
    ]

    def explore(self, target, *extra):
        proc = race_command('--target', target, '--backend', 'double',
                            '--scenario', self.scenario,
                            '--variant', self.variant, '--workers', '1',
                            '--json', *extra)
        # No corrected cell is explored: the verdict is clean.
        self.assertEqual(0, proc.returncode, proc.stderr)
        return bad_labels(json.loads(proc.stdout))

    def test_same_bad_labels_as_the_library(self):
        library = self.explore(race.LIBRARY, *self.free)
        on_nova = self.explore(race.NOVA)
        # But for what only nova's records say: pre-1821594's failed
        # confirm also skips telling the scheduler (bug 1869050's fix is
        # in the same finally), which the library has no scheduler for.
        self.assertEqual(library, {
            cell: labels - NOVA_ONLY for cell, labels in on_nova.items()})
        fault, *symptom = self.symptom
        self.assertEqual(set(symptom),
                         on_nova[self.variant, fault] & set(symptom))


class TreeTestCase(base.NovaTestCase):
    """``--nova PATH``: what cannot be driven is one line, exit status 2."""

    def setUp(self):
        super(TreeTestCase, self).setUp()
        self.tmp = self.useFixture(fixtures.TempDir()).path

    def assertRefused(self, path, *fragments):
        proc = race_command('--nova', path, '--backend', 'double')
        self.assertEqual(2, proc.returncode, proc.stderr)
        self.assertEqual('', proc.stdout)
        lines = proc.stderr.splitlines()
        self.assertEqual(1, len(lines), proc.stderr)
        self.assertTrue(lines[0].startswith('shelvefix race: '), lines[0])
        for fragment in (path,) + fragments:
            self.assertIn(fragment, lines[0])

    def test_no_such_path(self):
        path = sys.path[:]
        e = self.assertRaises(nova_target.NovaUnusable, tree.load,
                              '/nonexistent')
        self.assertEqual(['--nova /nonexistent: no such file or directory'],
                         str(e).splitlines())
        self.assertEqual(path, sys.path)

    def test_tree_that_does_not_import(self):
        os.mkdir(os.path.join(self.tmp, 'nova'))
        with open(os.path.join(self.tmp, 'nova', '__init__.py'), 'w') as f:
            f.write("raise ImportError('no')\n")
        self.assertRefused(self.tmp, 'cannot be imported',
                           'ImportError: no')

    def test_tree_without_confirm_resize(self):
        nova = base.load('nova')
        copy = os.path.join(self.tmp, 'nova')
        shutil.copytree(os.path.dirname(nova.__file__), copy,
                        ignore=shutil.ignore_patterns('tests',
                                                      '__pycache__'))
        manager = os.path.join(copy, 'compute', 'manager.py')
        with open(manager) as f:
            text = f.read()
        text, count = re.subn(r'\bdef confirm_resize\(',
                              'def confirm_resize_gone(', text)
        self.assertEqual(1, count)
        with open(manager, 'w') as f:
            f.write(text)
        self.assertRefused(
            self.tmp, 'cannot be driven by the nova target',
            'nova.compute.manager.ComputeManager.confirm_resize is missing')


class RevertCommandTestCase(base.NovaTestCase):
    """``shelvefix race --target nova --scenario resize-revert``."""

    def test_installed_nova_shows_the_revert_defect(self):
        proc = race_command('--target', 'nova', '--backend', 'double',
                            '--scenario', race.RESIZE_REVERT)
        self.assertEqual(1, proc.returncode, proc.stderr)
        lines = proc.stdout.splitlines()
        on = ("with nova's code: the installed nova (nova %s, "
              % importlib.metadata.version('nova'))
        self.assertTrue(any(line.startswith(on) for line in lines),
                        proc.stdout)
        # One cell on nova (nova-revert is nova's code as it is), whose
        # runs all left the scheduler's view stale (nova's revert never
        # updates it), some with compute-1's audit missing the server.
        header = [line for line in lines if line.startswith('variant ')]
        self.assertEqual([['variant', 'fault', 'interleavings', 'ok',
                           outcomes.USAGE_UNTRACKED,
                           move_outcomes.SCHEDULER_INFO_STALE]],
                         [re.split(r'\s{2,}', line.strip())
                          for line in header])
        rows = [line.split() for line in lines
                if re.match(r'\S+\s+\S+\s+\d+\s', line)]
        self.assertEqual(1, len(rows), rows)
        variant, _fault, runs, ok, _untracked, stale = rows[0]
        self.assertEqual((race.CORRECTED, '0', runs),
                         (variant, ok, stale))
        self.assertIn('First counterexample: corrected, no fault: '
                      'usage untracked, scheduler instance info stale',
                      lines)
        self.assertIn('First counterexample: corrected, no fault: '
                      'scheduler instance info stale', lines)
        self.assertIn("Nova's code as it is: BAD OUTCOMES FOUND", lines)


def _children(pid):
    """The pids of ``pid``'s children (Linux's /proc)."""
    found = []
    for entry in os.listdir('/proc'):
        if not entry.isdigit():
            continue
        try:
            with open('/proc/%s/stat' % entry) as f:
                fields = f.read().rsplit(')', 1)[1].split()
        except OSError:
            continue
        if int(fields[1]) == pid:
            found.append(int(entry))
    return found


def _gone(pid):
    try:
        with open('/proc/%d/stat' % pid) as f:
            return f.read().rsplit(')', 1)[1].split()[0] == 'Z'
    except OSError:
        return True


class RunnerTestCase(base.NovaTestCase):
    """The runner dies with the command, even when it is killed."""

    def test_sigkill_of_the_command_ends_the_runner(self):
        proc = subprocess.Popen(
            [sys.executable, '-m', 'shelvefix', 'race', '--target', 'nova',
             '--scenario', 'lifecycle', '--workers', '1'],
            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        self.addCleanup(proc.wait)
        self.addCleanup(proc.kill)
        runners = []
        for _ in range(300):
            runners = _children(proc.pid)
            if runners:
                break
            time.sleep(0.1)
        self.assertEqual(1, len(runners), runners)
        # Well into the lifecycle's exploration (minutes long), then held
        # as if in one long run: it sends nothing that would find the
        # command gone.
        time.sleep(8)
        self.assertIsNone(proc.poll())
        os.kill(runners[0], signal.SIGSTOP)
        self.addCleanup(self._end, runners[0])
        proc.kill()
        proc.wait(timeout=30)
        for _ in range(300):
            if _gone(runners[0]):
                break
            time.sleep(0.1)
        self.assertTrue(_gone(runners[0]), 'the runner outlived the command')

    @staticmethod
    def _end(pid):
        for signum in (signal.SIGCONT, signal.SIGKILL):
            try:
                os.kill(pid, signum)
            except ProcessLookupError:
                return
