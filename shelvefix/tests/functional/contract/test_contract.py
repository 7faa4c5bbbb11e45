"""The placement double honours the contract of the real placement service.

One test per contract scenario (``test_agrees(<scenario>)``): the scenario
is played against the in-memory double and against openstack-placement
in-process, and the two normalised transcripts must be identical. A
failure lists every difference (request, field, both values) and attaches
both transcripts. Without openstack-placement the tests skip.
"""

import io
import json

import testscenarios
from testtools import content

from shelvefix.backends import real
from shelvefix.cmd import main
from shelvefix.contract import runner
from shelvefix.contract import scenarios as contract_scenarios
from shelvefix.tests import base

load_tests = testscenarios.load_tests_apply_scenarios


def _transcript_content(transcript):
    return content.text_content(json.dumps(
        {'error': transcript.error,
         'observations': [o._asdict() for o in transcript.observations]},
        indent=1))


class ContractTestCase(testscenarios.WithScenarios, base.TestCase):
    """Each contract scenario agrees between the double and placement."""

    scenarios = [(name, {'contract': name})
                 for name in contract_scenarios.names()]

    def setUp(self):
        super(ContractTestCase, self).setUp()
        if not real.available():
            self.skipTest(real.INSTALL_HINT)

    def test_agrees(self):
        # Sequential on purpose: one real placement fixture at a time.
        double = runner.run_scenario(self.contract, 'double')
        placement = runner.run_scenario(self.contract, 'real')
        differences = runner.compare(double, placement)
        if differences:
            self.addDetail('double transcript', _transcript_content(double))
            self.addDetail('real transcript', _transcript_content(placement))
        self.assertEqual(
            [], [str(d) for d in differences],
            'the placement double disagrees with placement on contract '
            'scenario %s (%s)'
            % (self.contract, contract_scenarios.get(self.contract)
               .description))


class ContractCommandTestCase(base.TestCase):
    """``shelvefix contract`` end to end, on two quick scenarios."""

    def setUp(self):
        super(ContractCommandTestCase, self).setUp()
        if not real.available():
            self.skipTest(real.INSTALL_HINT)

    def test_text(self):
        out = io.StringIO()
        rc = main.main(['contract', '--scenario', 'allocations_get_unknown',
                        '--scenario', 'allocations_delete_unknown'], out=out)
        self.assertEqual(0, rc, out.getvalue())
        lines = out.getvalue().splitlines()
        self.assertEqual('2 contract scenarios, 2 agree', lines[0])
        self.assertRegex(lines[1], r'^double: [0-9.]+ s  real: [0-9.]+ s  '
                                   r'\(real/double [0-9.]+x\)$')

    def test_json(self):
        out = io.StringIO()
        rc = main.main(['contract', '--json', '--scenario',
                        'allocations_get_unknown'], out=out)
        self.assertEqual(0, rc)
        report = json.loads(out.getvalue())
        self.assertEqual((1, 1, []), (report['scenarios'], report['agree'],
                                      report['disagreeing']))
        self.assertEqual({'double': 4, 'real': 4},
                         report['results'][0]['requests'])
        self.assertGreater(report['wall_time']['real'], 0)
