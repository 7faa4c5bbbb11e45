"""Tests for the base of the nova tests: an exploration must have run.

These need no nova, and run with the rest of ``tox -e nova``.
"""

import testtools

from shelvefix import explorer
from shelvefix.explorer import search
from shelvefix.tests.nova import base


def _exploration(*outcomes):
    exploration = search.Exploration(True)
    exploration.complete = True
    exploration.runs = [explorer.RunRecord(index, (), [], {}, outcome)
                        for index, outcome in enumerate(outcomes)]
    return exploration


class ExploredTestCase(testtools.TestCase):
    """:meth:`NovaTestCase.assertExplored`: no run, no pass."""

    def assertExploredFails(self, exploration, why):
        # The nova test cases' own assertion, on this test case.
        e = self.assertRaises(self.failureException,
                              base.NovaTestCase.assertExplored, self,
                              exploration)
        self.assertEqual(why, str(e))

    def test_no_run_fails(self):
        self.assertExploredFails(_exploration(), 'the exploration made no run')

    def test_a_run_without_outcome_fails(self):
        self.assertExploredFails(_exploration(('ok',), ()),
                                 'run 1 of the exploration has no outcome')

    def test_runs_with_outcomes_pass(self):
        base.NovaTestCase.assertExplored(self, _exploration(('ok',)))
