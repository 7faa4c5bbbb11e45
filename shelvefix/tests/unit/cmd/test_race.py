"""Tests for ``shelvefix race``.

The random runs (real threads, real start delays), those over real HTTP
and the scenarios explored in worker processes are in the functional
tests.
"""

import io
import json
import os
import socket
from unittest import mock

import fixtures

from shelvefix.backends import real
from shelvefix.cmd import main
from shelvefix.race import targets
from shelvefix.race import variants
from shelvefix.tests import base


class RaceCommandTestCase(base.TestCase):

    def run_main(self, *argv):
        out, err = io.StringIO(), io.StringIO()
        with mock.patch('sys.stderr', err):
            rc = main.main(list(argv), out=out)
        return rc, out.getvalue(), err.getvalue()

    def test_text_report_on_the_double(self):
        rc, out, _err = self.run_main('race', '--backend', 'double')
        self.assertEqual(0, rc)
        self.assertIn('on the placement double', out)
        lines = out.splitlines()
        header = [line for line in lines if line.startswith('ordering')][0]
        for column in ('interleavings', 'ok', 'scheduler 409', 'compute 409',
                       'claim wiped', 'allocations leaked'):
            self.assertIn(column, header)
        rows = {tuple(line.split()[:2]): line.split()[2:]
                for line in lines if line.startswith(('corrected', 'legacy'))}
        self.assertEqual(4, len(rows))
        for free in ('get-put', 'delete'):
            runs, ok = rows[('corrected', free)][:2]
            self.assertEqual(runs, ok)
        self.assertIn('First counterexample: legacy order, free with get-put:'
                      ' scheduler 409', out)
        self.assertIn('compute', out)
        self.assertIn('| scheduler', out)
        self.assertIn('Corrected order: no bad outcome in any interleaving',
                      out)
        # Each run once, with every outcome it shows.
        self.assertEqual(
            ['legacy order, free with get-put: scheduler 409',
             'legacy order, free with get-put: compute 409, allocations '
             'leaked',
             'legacy order, free with get-put: claim wiped',
             'legacy order, free with delete: scheduler 409',
             'legacy order, free with delete: claim wiped'],
            [line.split(': ', 1)[1] for line in lines
             if line.startswith('First counterexample: ')])

    def test_json_and_diagram(self):
        path = os.path.join(self.useFixture(fixtures.TempDir()).path,
                            'race.md')
        rc, out, _err = self.run_main('race', '--backend', 'double', '--json',
                                      '--free', 'get-put', '--diagram', path)
        self.assertEqual(0, rc)
        data = json.loads(out)
        self.assertTrue(data['corrected_is_clean'])
        cells = {(c['ordering'], c['free']): c for c in data['cells']}
        self.assertEqual({('corrected', 'get-put'), ('legacy', 'get-put')},
                         set(cells))
        legacy_cell = cells[('legacy', 'get-put')]
        self.assertEqual({'ok', 'scheduler 409', 'compute 409',
                          'claim wiped', 'allocations leaked'},
                         set(legacy_cell['outcomes']))
        example = legacy_cell['first_counterexamples']['scheduler 409']
        self.assertEqual(['scheduler 409'], example['outcome'])
        self.assertIn('AllocationUpdateConflict',
                      example['errors']['scheduler'])
        self.assertEqual(len(example['schedule']), len(example['trace']))
        with open(path) as f:
            diagrams = f.read()
        # Compute's 409 and the leak it causes show in one run: one
        # diagram names both.
        self.assertEqual(3, diagrams.count('```mermaid'))
        self.assertEqual(1, diagrams.count(
            '## legacy order, free with get-put: compute 409, allocations '
            'leaked'))
        self.assertIn('S->>P: PUT /allocations/{instance} gen=1', diagrams)
        self.assertIn('P-->>S: 409 consumer generation conflict - expected '
                      'null but got 1', diagrams)

    def test_no_reduce_counts_every_interleaving(self):
        rc, out, _err = self.run_main('race', '--backend', 'double',
                                      '--no-reduce', '--json',
                                      '--ordering', 'corrected')
        cells = json.loads(out)['cells']
        # compute's last shared step is the save that makes the state
        # visible, and only then can the unshelve start: one interleaving.
        self.assertEqual([1, 1], [c['interleavings'] for c in cells])
        self.assertEqual([0, 0], [c['pruned'] for c in cells])

    def test_bad_corrected_order_fails_the_gate(self):
        legacy = variants.legacy_compute_manager()
        with mock.patch.object(variants, 'compute_manager',
                               return_value=legacy):
            rc, out, _err = self.run_main('race', '--backend', 'double',
                                          '--ordering', 'corrected')
        self.assertEqual(1, rc)
        self.assertIn('Corrected order: BAD OUTCOMES FOUND', out)

    def test_debug_before_or_after_the_command(self):
        for argv in (['--debug', 'race'], ['race', '--debug']):
            with mock.patch.object(main, 'setup_logging') as setup:
                self.run_main(*argv + ['--backend', 'double', '--ordering',
                                       'corrected', '--free', 'delete'])
            setup.assert_called_once_with(True)
        with mock.patch.object(main, 'setup_logging') as setup:
            self.run_main('race', '--backend', 'double', '--ordering',
                          'corrected', '--free', 'delete')
        setup.assert_called_once_with(False)

    def test_random_runs_show_every_symptom_column(self):
        # Runs that happen to show no scheduler 409 (or nothing bad at
        # all) still print the scenario's columns, with 0: the table's
        # shape does not depend on the luck of the threads.
        from shelvefix.race import outcomes
        from shelvefix.race import random_runs

        def lucky(placement, cell, runs, **kwargs):
            counts = {outcomes.OK: runs - 1}
            if cell.variant == 'legacy':
                counts[outcomes.CLAIM_WIPED] = 1
            else:
                counts[outcomes.OK] = runs
            return random_runs.RandomResult(cell, runs, counts, 0.1)
        with mock.patch.object(targets, 'run_random', lucky):
            rc, out, _err = self.run_main('race', '--random', '5',
                                          '--backend', 'double')
        self.assertEqual(0, rc)
        header = [line for line in out.splitlines()
                  if line.startswith('ordering')][0]
        self.assertEqual(['ordering', 'free', 'with', 'runs', 'ok',
                          'scheduler', '409', 'compute', '409', 'claim',
                          'wiped', 'allocations', 'leaked'], header.split())
        self.assertIn('\ncorrected  get-put       5   5              0     '
                      '       0            0                   0\n', out)

    def test_unwritable_diagram_is_refused_before_exploring(self):
        with mock.patch.object(targets, 'explore_cell') as explore:
            rc, out, err = self.run_main('race', '--backend', 'double',
                                         '--diagram', '/no/such/dir/x.md')
        self.assertEqual((2, ''), (rc, out))
        self.assertEqual('shelvefix race: cannot write /no/such/dir/x.md: '
                         'no directory /no/such/dir\n', err)
        explore.assert_not_called()

    def test_unreachable_placement_is_one_line(self):
        # A port nothing listens on.
        sock = socket.socket()
        sock.bind(('127.0.0.1', 0))
        port = sock.getsockname()[1]
        sock.close()
        path = self.write_conf(
            '[placement]\nauth_type = admin_token\ntoken = admin\n'
            'endpoint_override = http://127.0.0.1:%d\n' % port)
        for command in ('race', 'faults', 'stress'):
            rc, out, err = self.run_main(command, '--backend', 'remote',
                                         '--config-file', path)
            self.assertEqual((2, ''), (rc, out), command)
            self.assertEqual(1, len(err.splitlines()), err)
            self.assertIn('shelvefix %s: cannot reach placement at '
                          'http://127.0.0.1:%d' % (command, port), err)
            self.assertNotIn('Traceback', err)

    def test_bad_input(self):
        rc, _out, err = self.run_main('race', '--backend', 'remote')
        self.assertEqual(2, rc)
        self.assertIn('--backend remote needs --config-file', err)
        rc, _out, err = self.run_main('race', '--random', '0')
        self.assertEqual(2, rc)
        self.assertIn('--random needs a positive number', err)
        with mock.patch.object(real, 'available', return_value=False):
            rc, _out, err = self.run_main('race')
        self.assertEqual(2, rc)
        self.assertIn('pip install "shelvefix[placement]"', err)
        rc, _out, err = self.run_main('race', '--workers', '0')
        self.assertEqual(2, rc)
        self.assertIn('--workers needs a positive number', err)
        rc, _out, err = self.run_main('race', '--workers', '2')
        self.assertEqual(2, rc)
        self.assertIn('--workers 2 needs --backend double', err)
        path = self.write_conf('[placement]\nclaim_retry_attempts = many\n')
        rc, _out, err = self.run_main('race', '--backend', 'remote',
                                      '--config-file', path)
        self.assertEqual(2, rc)
        self.assertIn('bad configuration', err)
        path = self.write_conf('[placement]\n')
        rc, _out, err = self.run_main('race', '--backend', 'remote',
                                      '--config-file', path)
        self.assertEqual(2, rc)
        self.assertIn('no placement endpoint', err)

    def write_conf(self, text):
        path = os.path.join(self.useFixture(fixtures.TempDir()).path,
                            'shelvefix.conf')
        with open(path, 'w') as f:
            f.write(text)
        return path


class ScenarioCommandTestCase(base.TestCase):
    """``--scenario``: the unshelve and lifecycle scenarios."""

    run_main = RaceCommandTestCase.run_main

    def test_options_of_another_scenario_are_refused(self):
        for argv in (['--ghost'], ['--free', 'delete']):
            rc, out, err = self.run_main('race', '--backend', 'double',
                                         '--scenario', 'lifecycle', *argv)
            self.assertEqual((2, ''), (rc, out))
            self.assertIn('applies to the offload-unshelve scenario only',
                          err)
        rc, out, err = self.run_main('race', '--backend', 'double',
                                     '--scenario', 'unshelve-periodic',
                                     '--variant', 'legacy')
        self.assertEqual((2, ''), (rc, out))
        self.assertIn('--variant legacy is not a variant of --scenario '
                      'unshelve-periodic (it has: corrected, pre-2025480, '
                      'pre-1862633)', err)


class EvidenceTestCase(base.TestCase):
    """No clean verdict without runs that show it (report.unearned)."""

    run_main = RaceCommandTestCase.run_main

    def explorations(self, *outcomes_of_runs, legacy=None):
        """``explore_cell`` made to return runs with these outcomes.

        :param legacy: the outcomes of the legacy cells' runs, if not those
        """
        from shelvefix import explorer
        from shelvefix.explorer import search

        def explore_cell(placement, cell, **kwargs):
            exploration = search.Exploration(True)
            exploration.complete = True
            exploration.elapsed = 0.0
            results = {actor: explorer.ActorResult(None, None, False)
                       for actor in ('compute', 'scheduler')}
            chosen = (legacy if legacy is not None and
                      cell.variant == 'legacy' else outcomes_of_runs)
            exploration.runs = [
                explorer.RunRecord(index, (), [], results, outcome)
                for index, outcome in enumerate(chosen)]
            return exploration
        return mock.patch.object(targets, 'explore_cell', explore_cell)

    def assertNoVerdict(self, why, *argv):
        rc, out, err = self.run_main('race', '--backend', 'double', *argv)
        self.assertEqual(1, rc, out + err)
        lines = [line for line in out.splitlines()
                 if line.startswith('Corrected order')]
        self.assertEqual(['Corrected order: no verdict, the runs do not show '
                          'it: ' + why], lines)
        self.assertNotIn('no bad outcome', out)

    def test_no_run_is_no_verdict(self):
        with self.explorations():
            self.assertNoVerdict('corrected order, free with get-put: no run '
                                 'was made')

    def test_every_run_failed_by_placement_is_no_verdict(self):
        with self.explorations(('placement failed',), ('placement failed',)):
            self.assertNoVerdict('corrected order, free with get-put: '
                                 'placement failed in all 2 runs, so none '
                                 'was judged', '--ordering', 'corrected')

    def test_an_unclassified_error_is_no_verdict(self):
        # A legacy cell whose actor raised what no outcome names: the lab
        # broke, and the table cannot be trusted either.
        with self.explorations(('ok',), legacy=[
                ('ok',), ('compute error: TypeError',)]):
            self.assertNoVerdict(
                'legacy order, free with delete: runs ended in an error no '
                'outcome classifies (compute error: TypeError)',
                '--free', 'delete')

    def test_json_says_why(self):
        with self.explorations():
            rc, out, err = self.run_main('race', '--backend', 'double',
                                         '--json', '--free', 'delete')
        self.assertEqual(1, rc)
        self.assertEqual('corrected order, free with delete: no run was made',
                         json.loads(out)['unearned'])
        self.assertEqual('shelvefix race: no verdict: offload-unshelve: '
                         'corrected order, free with delete: no run was '
                         'made\n', err)

    def test_random_runs_without_outcomes_are_no_verdict(self):
        from shelvefix.race import random_runs

        def empty(placement, cell, runs, **kwargs):
            return random_runs.RandomResult(cell, runs, {}, 0.1)
        with mock.patch.object(targets, 'run_random', empty):
            rc, out, _err = self.run_main('race', '--random', '3',
                                          '--backend', 'double')
        self.assertEqual(1, rc)
        self.assertEqual(
            'No verdict, the runs do not show it: offload-unshelve: '
            'corrected order, free with get-put: no run ended with an '
            'outcome', out.splitlines()[-1])


class NovaTargetCommandTestCase(base.TestCase):
    """``--target nova`` and ``--nova``: refused in one line, exit 2."""

    run_main = RaceCommandTestCase.run_main

    def assertRefused(self, text, *argv):
        from shelvefix.nova import lab
        with mock.patch.object(lab.NovaLab, '__enter__') as enter:
            rc, out, err = self.run_main('race', *argv)
        self.assertEqual((2, ''), (rc, out))
        self.assertEqual(1, len(err.splitlines()), err)
        self.assertIn(text, err)
        enter.assert_not_called()

    def test_nova_needs_the_nova_target(self):
        self.assertRefused('shelvefix race: --nova names a nova to explore: '
                           'it needs --target nova, not library',
                           '--nova', 'X', '--target', 'library')

    def test_nova_runs_on_the_double_or_real(self):
        self.assertRefused('--target nova runs nova\'s code on --backend '
                           'double or real', '--target', 'nova',
                           '--backend', 'remote')
        path = RaceCommandTestCase.write_conf(
            self, '[placement]\nendpoint_override = http://127.0.0.1:9\n')
        self.assertRefused('not on remote', '--nova', 'X', '--backend',
                           'remote', '--config-file', path)

    def test_real_placement_must_be_installed(self):
        from shelvefix.backends import real
        with mock.patch.object(real, 'available', return_value=False):
            self.assertRefused('the real placement backend needs '
                               'openstack-placement', '--target', 'nova',
                               '--backend', 'real')

    def test_nova_runs_on_the_double_by_default(self):
        from shelvefix import nova
        from shelvefix.nova import lab
        with mock.patch.object(lab.NovaLab, '__init__',
                               return_value=None) as init, \
                mock.patch.object(lab.NovaLab, '__enter__',
                                  side_effect=nova.NovaUnusable('stop')):
            rc, _out, err = self.run_main('race', '--target', 'nova')
        self.assertEqual(2, rc)
        self.assertEqual('shelvefix race: stop\n', err)
        init.assert_called_once_with(None, 'double')

    def test_library_options_are_refused(self):
        for option in (['--ghost'], ['--free', 'delete']):
            self.assertRefused(
                '%s applies to the library target only: nova frees '
                'allocations its own way' % option[0],
                '--target', 'nova', '--backend', 'double', *option)

    def test_a_variant_nova_does_not_have(self):
        self.assertRefused('--variant nova-revert is not a variant of '
                           '--scenario resize-revert on nova (it has: '
                           'corrected)',
                           '--target', 'nova', '--backend', 'double',
                           '--scenario', 'resize-revert',
                           '--variant', 'nova-revert')

    def test_an_unusable_nova_is_one_line(self):
        # The runner starts, finds nothing at the path and says so.
        path = os.path.join(self.useFixture(fixtures.TempDir()).path,
                            'nonexistent')
        rc, out, err = self.run_main('race', '--nova', path, '--backend',
                                     'double')
        self.assertEqual((2, ''), (rc, out))
        self.assertEqual('shelvefix race: --nova %s: no such file or '
                         'directory\n' % path, err)

    def test_nova_unusable_on_entry_is_one_line(self):
        from shelvefix import nova
        with mock.patch('shelvefix.nova.lab.NovaLab.__enter__',
                        side_effect=nova.NovaUnusable('nova is missing')):
            rc, out, err = self.run_main('race', '--target', 'nova',
                                         '--backend', 'double')
        self.assertEqual((2, ''), (rc, out))
        self.assertEqual('shelvefix race: nova is missing\n', err)

    def test_without_names_actors_of_the_scenario(self):
        self.assertRefused(
            '--without periodic-9: --scenario live-migrate has no such '
            'actor (it has: conductor, compute-1, periodic-1, periodic-2)',
            '--target', 'nova', '--scenario', 'live-migrate',
            '--without', 'periodic-9')

    def test_without_needs_one_scenario_on_nova(self):
        self.assertRefused('--without applies to the nova target only',
                           '--scenario', 'resize-revert', '--without',
                           'periodic-1')
        self.assertRefused('--without names actors of one scenario',
                           '--target', 'nova', '--scenario', 'all',
                           '--without', 'periodic-1')
        self.assertRefused('--without applies to an exploration',
                           '--target', 'nova', '--scenario',
                           'resize-revert', '--without', 'periodic-1',
                           '--random', '3')

    def test_without_reaches_the_nova_lab(self):
        from shelvefix.nova import lab
        from shelvefix.race import report
        from shelvefix.race import scenarios
        cell = scenarios.Cell('corrected', None)
        result = report.CellResult(cell, 1, {'ok': 1}, {}, 0.5, 0, True)
        with mock.patch.object(lab.NovaLab, '__init__',
                               return_value=None), \
                mock.patch.object(lab.NovaLab, '__enter__',
                                  side_effect=lambda: lab.NovaLab.__new__(
                                      lab.NovaLab)), \
                mock.patch.object(lab.NovaLab, '__exit__'), \
                mock.patch.object(lab.NovaLab, 'description', 'nova',
                                  create=True), \
                mock.patch.object(lab.NovaLab, 'explore',
                                  return_value=result) as explore:
            rc, out, err = self.run_main(
                'race', '--target', 'nova', '--scenario', 'resize-revert',
                '--without', 'periodic-1', '--without', 'periodic-2',
                '--json')
        self.assertEqual(0, rc, err)
        self.assertEqual(['periodic-1', 'periodic-2'],
                         json.loads(out)['without'])
        for call in explore.call_args_list:
            self.assertEqual(['periodic-1', 'periodic-2'],
                             call.kwargs['without'])
        self.assertTrue(explore.called)
