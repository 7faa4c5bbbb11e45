"""``shelvefix race`` with real timing, over HTTP, and with workers.

The random runs start real threads after real delays (``--random``);
``--backend remote`` talks to a placement served over HTTP on 127.0.0.1;
the unshelve and lifecycle scenarios explore in worker processes. The rest
of the command is in the unit tests.
"""

import json
import logging
import os

import fixtures

from shelvefix.explorer import parallel as explorer_parallel
from shelvefix.explorer import runner
from shelvefix.placement import deploy as placement_app
from shelvefix.tests import base
from shelvefix.tests.functional import wsgi_server
from shelvefix.tests.unit.cmd import test_race


class RaceCommandTestCase(base.TestCase):

    run_main = test_race.RaceCommandTestCase.run_main
    write_conf = test_race.RaceCommandTestCase.write_conf

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

    def test_random_says_how_long_and_what_the_seed_fixes(self):
        rc, out, _err = self.run_main('race', '--backend', 'double',
                                      '--random', '2', '--ordering',
                                      'corrected')
        self.assertEqual(0, rc)
        self.assertRegex(out, r'\n4 runs in [0-9.]+ s\. The seed fixes the '
                              r'start delays')
        self.assertIn('counts vary from one run of this\ncommand to the '
                      'next, with the same seed too.', out)

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

    run_main = test_race.RaceCommandTestCase.run_main

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

    def test_resize_confirm_table(self):
        rc, out, _err = self.run_main('race', '--backend', 'double',
                                      '--scenario', 'resize-confirm')
        self.assertEqual(0, rc, out)
        rows = {tuple(line.split()[:2]): line.split()[2:]
                for line in out.splitlines()
                if line.startswith(('corrected', 'pre-'))}
        self.assertEqual({('corrected', '-'), ('corrected', 'confirm-fails'),
                          ('pre-1879878', '-'),
                          ('pre-1821594', 'confirm-fails')}, set(rows))
        for fault in ('-', 'confirm-fails'):
            runs, ok = rows[('corrected', fault)][:2]
            self.assertEqual(runs, ok)
        self.assertIn('First counterexample: pre-1879878, no fault: usage '
                      'untracked', out)
        self.assertIn('First counterexample: pre-1821594, fault '
                      'confirm-fails: migration allocations leaked', out)
        self.assertIn('save migration -> status=confirmed', out)

    def test_move_variants_belong_to_their_scenarios(self):
        rc, _out, err = self.run_main('race', '--backend', 'double',
                                      '--scenario', 'evacuate',
                                      '--variant', 'pre-1821594')
        self.assertEqual(2, rc)
        self.assertIn('--variant pre-1821594 is not a variant of --scenario '
                      'evacuate (it has: corrected, nova-evacuate)', err)
        self.assertEqual(1, len(err.splitlines()), err)

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
        # Over a thousand runs: their debug logs would make a detail larger
        # than a subunit packet may be.
        self.useFixture(fixtures.FakeLogger(level=logging.WARNING))
        rc, out, _err = self.run_main('race', '--backend', 'double',
                                      '--scenario', 'all', '--json',
                                      '--variant', 'corrected')
        self.assertEqual(0, rc)
        data = json.loads(out)
        self.assertTrue(data['corrected_is_clean'])
        # The library's scenarios (the nova target's own are skipped).
        self.assertEqual(['offload-unshelve', 'unshelve-periodic',
                          'lifecycle', 'resize-confirm', 'resize-revert',
                          'evacuate', 'resize-delete', 'resize-migrate',
                          'live-migrate', 'live-migrate-abort', 'build',
                          'build-delete',
                          'service-disable', 'ironic-rebalance',
                          'cross-cell-revert', 'cross-cell-confirm'],
                         [s['scenario'] for s in data['scenarios']])
        # The concurrent delete's cells too: every run ok.
        delete, = [s for s in data['scenarios']
                   if s['scenario'] == 'resize-delete']
        self.assertEqual([('corrected', None), ('corrected', 'confirm-fails')],
                         [(c['variant'], c['fault']) for c in delete['cells']])
        for cell in delete['cells']:
            self.assertEqual(['ok'], list(cell['outcomes']), cell)
        # And the second move's corrected cells.
        second, = [s for s in data['scenarios']
                   if s['scenario'] == 'resize-migrate']
        self.assertEqual([('corrected', None), ('corrected', 'confirm-fails')],
                         [(c['variant'], c['fault']) for c in second['cells']])
        for cell in second['cells']:
            self.assertEqual(['ok'], list(cell['outcomes']), cell)
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
