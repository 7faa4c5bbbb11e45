"""Tests for ``shelvefix race``."""

import io
import json
import os
import socket
from unittest import mock

import fixtures

from shelvefix.backends import real
from shelvefix.cmd import main
from shelvefix.explorer import parallel as explorer_parallel
from shelvefix.explorer import runner
from shelvefix.placement import deploy as placement_app
from shelvefix.race import program
from shelvefix.race import variants
from shelvefix.tests import base
from shelvefix.tests.functional import wsgi_server


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

    def test_random(self):
        rc, out, _err = self.run_main('race', '--backend', 'double',
                                      '--random', '5', '--seed', '7',
                                      '--json')
        self.assertEqual(0, rc)
        data = json.loads(out)
        self.assertEqual((5, 7), (data['random'], data['seed']))
        for cell in data['cells']:
            self.assertEqual(5, cell['runs'])
            if cell['ordering'] == 'corrected':
                self.assertEqual({'ok': 5}, cell['outcomes'])
        rc, out, _err = self.run_main('race', '--backend', 'double',
                                      '--random', '3', '--free', 'delete')
        self.assertIn('runs', out.splitlines()[3])

    def test_progress_bar(self):
        rc, _out, err = self.run_main('race', '--backend', 'double',
                                      '--random', '40', '--ordering',
                                      'legacy', '--free', 'delete',
                                      '--progress')
        self.assertEqual(0, rc)
        # Shown only once a cell has run for a second.
        if err:
            self.assertIn('legacy/delete: [', err)

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

    def test_unwritable_diagram_is_refused_before_exploring(self):
        with mock.patch.object(program, 'explore_cell') as explore:
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

    def test_random_says_how_long_and_what_the_seed_fixes(self):
        rc, out, _err = self.run_main('race', '--backend', 'double',
                                      '--random', '2', '--ordering',
                                      'corrected')
        self.assertEqual(0, rc)
        self.assertRegex(out, r'\n4 runs in [0-9.]+ s\. The seed fixes the '
                              r'start delays')
        self.assertIn('counts vary from one run of this\ncommand to the '
                      'next, with the same seed too.', out)

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

    def test_remote_backend_over_http(self):
        server = self.useFixture(
            wsgi_server.WSGIServerFixture(placement_app.PlacementApp()))
        path = self.write_conf(
            '[placement]\nauth_type = admin_token\ntoken = admin\n'
            'endpoint_override = %s\n' % server.url)
        rc, out, _err = self.run_main('race', '--backend', 'remote',
                                      '--config-file', path, '--json')
        self.assertEqual(0, rc)
        data = json.loads(out)
        self.assertEqual('remote', data['backend'])
        legacy_cell = [c for c in data['cells']
                       if (c['ordering'], c['free']) ==
                       ('legacy', 'get-put')][0]
        self.assertIn('compute 409', legacy_cell['outcomes'])
        # Every run removed its providers and consumers again.
        self.assertEqual({}, server.app.state.consumers)
        self.assertEqual({}, server.app.state.providers)


class ScenarioCommandTestCase(base.TestCase):
    """``--scenario``: the unshelve and lifecycle scenarios."""

    run_main = RaceCommandTestCase.run_main

    def test_unshelve_periodic_table(self):
        rc, out, _err = self.run_main('race', '--backend', 'double',
                                      '--scenario', 'unshelve-periodic')
        self.assertEqual(0, rc)
        lines = out.splitlines()
        self.assertIn("compute-2's update_available_resource", lines[0])
        header = [line for line in lines if line.startswith('variant')][0]
        self.assertEqual(['variant', 'fault', 'interleavings', 'ok',
                          'allocations', 'leaked', 'usage', 'untracked'],
                         header.split())
        rows = {tuple(line.split()[:2]): line.split()[2:]
                for line in lines if line.startswith(('corrected', 'pre-'))}
        self.assertEqual(6, len(rows))
        for fault in ('-', 'port-binding'):
            runs, ok = rows[('corrected', fault)][:2]
            self.assertEqual(runs, ok)
        self.assertEqual('0', rows[('pre-1862633', 'port-binding')][1])
        self.assertIn('First counterexample: pre-2025480, no fault: usage '
                      'untracked', out)
        # More than two actors: one column of steps, named by actor.
        self.assertIn('  #  actor       step', out)
        self.assertIn('periodic-2  list instances on the node', out)
        self.assertIn('Corrected code: no bad outcome in any interleaving',
                      out)

    def test_json_diagram_and_variant(self):
        path = os.path.join(self.useFixture(fixtures.TempDir()).path,
                            'lifecycle.md')
        rc, out, _err = self.run_main(
            'race', '--backend', 'double', '--scenario', 'lifecycle',
            '--variant', 'pre-1862633', '--json', '--diagram', path)
        self.assertEqual(0, rc)
        data = json.loads(out)
        self.assertEqual('lifecycle', data['scenario'])
        [cell] = data['cells']
        self.assertEqual(('pre-1862633', 'port-binding'),
                         (cell['variant'], cell['fault']))
        self.assertEqual({'allocations leaked'}, set(cell['outcomes']))
        example = cell['first_counterexamples']['allocations leaked']
        self.assertIn('PortBindingFailed', example['errors']['compute-2'])
        with open(path) as f:
            diagrams = f.read()
        self.assertIn('# shelvefix race --scenario lifecycle', diagrams)
        self.assertIn('participant C2 as compute-2', diagrams)
        self.assertIn('## pre-1862633, fault port-binding: allocations '
                      'leaked', diagrams)

    def test_all_scenarios_json(self):
        rc, out, _err = self.run_main('race', '--backend', 'double',
                                      '--scenario', 'all', '--json',
                                      '--variant', 'corrected')
        self.assertEqual(0, rc)
        data = json.loads(out)
        self.assertTrue(data['corrected_is_clean'])
        self.assertEqual(['offload-unshelve', 'unshelve-periodic',
                          'lifecycle'],
                         [s['scenario'] for s in data['scenarios']])
        # One process per CPU on the double.
        self.assertEqual(explorer_parallel.available_cpus(),
                         data['workers'])

    def test_workers_give_the_same_table(self):
        self.useFixture(fixtures.MockPatchObject(runner, 'WORKERS_AFTER', 0))
        tables = []
        for workers in ('1', '2'):
            rc, out, _err = self.run_main(
                'race', '--backend', 'double', '--scenario',
                'unshelve-periodic', '--workers', workers, '--json')
            self.assertEqual(0, rc)
            data = json.loads(out)
            self.assertEqual(int(workers), data['workers'])
            tables.append([(cell['variant'], cell['fault'],
                            cell['interleavings'], cell['outcomes'])
                           for cell in data['cells']])
        self.assertEqual(tables[0], tables[1])

    def test_random_runs_of_a_scenario(self):
        rc, out, _err = self.run_main(
            'race', '--backend', 'double', '--scenario', 'unshelve-periodic',
            '--random', '3', '--json')
        self.assertEqual(0, rc)
        cells = json.loads(out)['cells']
        self.assertEqual(6, len(cells))
        for cell in cells:
            self.assertEqual(3, cell['runs'])
            if cell['variant'] == 'corrected':
                self.assertEqual({'ok': 3}, cell['outcomes'])
            if (cell['variant'], cell['fault']) == ('pre-1862633',
                                                    'port-binding'):
                self.assertEqual({'allocations leaked': 3},
                                 cell['outcomes'])

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
        self.assertIn('no cell of --scenario unshelve-periodic matches', err)
