"""Tests for ``shelvefix timeline``: no clean verdict on a partial record.

Its report on the double is tested in ``test_main``.
"""

import io
from unittest import mock

from shelvefix.cmd import main
from shelvefix.race import scenario
from shelvefix.tests import base


class EvidenceTestCase(base.TestCase):
    """Exit 0 needs compute's requests, its saves and the claim recorded."""

    def test_a_timeline_without_the_claim_is_no_verdict(self):
        # The recorder lost the scheduler's requests: the order and the
        # end state still look right, but the claim was not seen.
        recorded = scenario.ShelveScenario.timeline

        def compute_only(scn):
            return [(kind, item) for kind, item in recorded(scn)
                    if kind == 'save' or
                    'scheduler' not in (item.request_id or '')]
        out = io.StringIO()
        with mock.patch.object(scenario.ShelveScenario, 'timeline',
                               compute_only):
            rc = main.main(['timeline', '--backend', 'double', '--free',
                            'delete'], out=out)
        self.assertEqual(1, rc)
        self.assertEqual('No verdict, the run does not show it: free with '
                         'DELETE: no claim by the scheduler in the '
                         'timeline', out.getvalue().splitlines()[-1])
