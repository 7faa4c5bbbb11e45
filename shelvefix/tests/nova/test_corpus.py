"""The corpus on nova's latest release: its proof, and unlisted defects.

:func:`shelvefix.corpus.runs.self_test` makes a patched copy of the
installed nova per row and explores it in a runner process of its own
(:class:`shelvefix.nova.lab.NovaLab`), so nothing here imports the
patched code into this process.
"""

import os

import testtools

from shelvefix import corpus
from shelvefix.corpus import runs
from shelvefix import race
from shelvefix.race import move_outcomes
from shelvefix.race import outcomes

HERE = os.path.join(os.path.dirname(os.path.abspath(__file__)), 'patches')

#: Defects of our own in operations the corpus covers, listed in no row:
#: the scenarios must find them as they find the rows'.
UNLISTED = [
    ('confirm-keeps-source.patch', race.RESIZE_CONFIRM, None,
     move_outcomes.MIGRATION_LEAKED),
    ('spawning-saved-late.patch', race.UNSHELVE_PERIODIC, None,
     outcomes.USAGE_UNTRACKED),
]


def unlisted_row(patch, scenario, fault, symptom):
    return corpus.Row(bug=patch[:-len('.patch')], fixes=('none',),
                      family='resize', operation='-', kind=corpus.FAILURE,
                      mechanism='-', scenario=scenario, fault=fault,
                      without=(), symptoms=(symptom,),
                      patch=os.path.join(HERE, patch),
                      removed_by=None, finding=None, needs=None)


class UnlistedDefectsTestCase(testtools.TestCase):
    """The scenarios are not tuned to the corpus's rows."""

    def test_found_with_the_patch_and_absent_without(self):
        rows = [unlisted_row(*entry) for entry in UNLISTED]
        for row in rows:
            self.assertNotIn(row.bug, [r.bug for r in corpus.load()])
        _description, results = runs.self_test(rows)
        for result in results:
            self.assertEqual(runs.REPRODUCED, result.status, result.row.bug)
            first = result.first()
            self.assertIn(result.row.symptoms[0], first.outcome)
            # The tree as it is: explored whole, its symptom nowhere.
            self.assertTrue(result.explored.complete)
            self.assertEqual([], runs.shown(result.explored,
                                            result.row.symptoms))


class ShelveRowsTestCase(testtools.TestCase):
    """The shelve family's rows reproduce on nova's latest release."""

    def test_self_test(self):
        rows = corpus.select(corpus.load(), families=['shelve'])
        _description, results = runs.self_test(rows)
        explored = [r for r in results if r.status not in runs.APART]
        self.assertTrue(explored)
        for result in explored:
            self.assertEqual(runs.REPRODUCED, result.status,
                             '%s: %s' % (result.row.bug, result.detail))
            # Stopped at its first counterexample.
            self.assertEqual(result.first().index + 1, result.patched.runs)
        self.assertTrue(runs.proven(results))
