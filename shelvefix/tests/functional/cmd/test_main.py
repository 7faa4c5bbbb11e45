"""The shelvefix command line on the real service, and in new interpreters.

``shelvefix timeline`` without ``--backend`` runs on the real placement
service (openstack-placement in-process); start-up is checked in a fresh
interpreter. The rest of the command line is in the unit tests.
"""

import functools
import subprocess
import sys
from unittest import mock

from shelvefix.backends import real
from shelvefix.race import scenario
from shelvefix.race import variants
from shelvefix.tests import base
from shelvefix.tests.unit.cmd import test_main


class TimelineCommandTestCase(base.TestCase):

    run_main = test_main.TimelineCommandTestCase.run_main

    def test_real_backend(self):
        if not real.available():
            self.skipTest(real.INSTALL_HINT)
        # The real service is every command's default.
        rc, out = self.run_main('timeline')
        self.assertEqual(0, rc)
        self.assertIn('(free with DELETE, real placement)', out)
        self.assertEqual(2, out.count('result: OK'))

    def test_legacy_order_exits_non_zero(self):
        legacy_scenario = functools.partial(
            scenario.ShelveScenario,
            manager_cls=variants.legacy_compute_manager())
        with mock.patch.object(scenario, 'ShelveScenario', legacy_scenario):
            rc, out = self.run_main('timeline', '--free', 'delete')
        self.assertEqual(1, rc)
        self.assertIn('came after the save that made SHELVED_OFFLOADED '
                      'visible', out)
        self.assertIn('result: FAILED', out)

    def test_claim_failure_is_reported(self):
        with mock.patch.object(scenario.ShelveScenario, 'unshelve_claim',
                               side_effect=RuntimeError('no host')):
            rc, out = self.run_main('timeline', '--free', 'delete')
        self.assertEqual(1, rc)
        self.assertIn('unshelve claim: no host', out)


class StartUpTestCase(base.TestCase):
    """A subcommand loads what it runs, and only that.

    Run in a fresh interpreter: this test process has loaded everything.
    (How long start-up takes is for benchmarks/bench_startup.py to say.)
    """

    HEAVY = ('shelvefix.explorer', 'shelvefix.race.program',
             'shelvefix.race.stress', 'shelvefix.race.fault_matrix',
             'shelvefix.placement', 'shelvefix.compute', 'shelvefix.conf',
             'keystoneauth1', 'oslo_config', 'requests', 'placement')

    def loaded_by(self, argv):
        code = ('import contextlib, io, sys\n'
                'from shelvefix.cmd import main\n'
                'with contextlib.redirect_stdout(io.StringIO()):\n'
                '    try:\n'
                '        main.main(%r, out=io.StringIO())\n'
                '    except SystemExit:\n'
                '        pass\n'
                'print("\\n".join(sorted(sys.modules)))\n' % (argv,))
        proc = subprocess.run([sys.executable, '-c', code],
                              capture_output=True, text=True, check=True)
        return set(proc.stdout.split())

    def assertNothingHeavy(self, loaded):
        heavy = sorted(m for m in loaded
                       if any(m == h or m.startswith(h + '.')
                              for h in self.HEAVY))
        self.assertEqual([], heavy)

    def test_help_loads_no_lab(self):
        self.assertNothingHeavy(self.loaded_by(['--help']))

    def test_check_loads_only_the_checker(self):
        import shelvefix.compute.manager as ours
        loaded = self.loaded_by(['check', ours.__file__])
        self.assertIn('shelvefix.novacheck.check', loaded)
        self.assertNothingHeavy(loaded)
