"""The corpus's rows: the shipped file, and what a malformed one says."""

import os
import re

import fixtures
import testtools

from shelvefix import corpus
from shelvefix import race


class ShippedCorpusTestCase(testtools.TestCase):

    def setUp(self):
        super().setUp()
        self.rows = corpus.load()

    def test_rows_and_patches(self):
        modelled = [row for row in self.rows if row.modelled]
        self.assertGreater(len(modelled), 3)
        for row in modelled:
            self.assertIn(row.scenario, race.SCENARIOS)
            self.assertTrue(row.symptoms, row.bug)
            with open(row.patch_path) as f:
                text = f.read()
            header = text.split('\n--- a/', 1)[0]
            # The patch says which bug it puts back and whose effect it
            # undoes.
            self.assertIn('bug %s' % row.bug, header)
            self.assertTrue(any(sha[:10] in header for sha in row.fixes),
                            '%s does not cite %s' % (row.patch, row.fixes))
            self.assertRegex(text, re.compile(r'^\+\+\+ b/nova/', re.M))

    def test_every_patch_belongs_to_a_row(self):
        patches = {row.patch for row in self.rows if row.patch}
        # The folder is a package only to be shipped as its data.
        self.assertEqual(sorted(patches), sorted(
            set(os.listdir(corpus.PATCHES)) - {'__init__.py', '__pycache__'}))

    def test_rows_apart_say_why(self):
        for row in self.rows:
            if not row.modelled:
                self.assertTrue(row.needs or row.removed_by, row.bug)
            if row.removed_by:
                # Its code is gone from nova: nothing to patch.
                self.assertIsNone(row.patch, row.bug)

    def test_select(self):
        shelve = corpus.select(self.rows, families=['shelve'])
        self.assertTrue(shelve)
        self.assertEqual({'shelve'}, {row.family for row in shelve})
        self.assertEqual(['1798688'], [r.bug for r in corpus.select(
            self.rows, bugs=['1798688'])])
        failure = corpus.select(self.rows, kinds=[corpus.FAILURE])
        self.assertEqual({corpus.FAILURE}, {row.kind for row in failure})
        confirm = corpus.select(self.rows, scenarios=['offload-unshelve'])
        self.assertEqual(['1798688'], [r.bug for r in confirm])
        e = self.assertRaises(corpus.CorpusError, corpus.select, self.rows,
                              bugs=['1798688', '42'])
        self.assertIn('no row for bug 42', str(e))


class MalformedCorpusTestCase(testtools.TestCase):

    GOOD = ('- bug: 1\n  fixes: [abc]\n  family: shelve\n'
            '  operation: unshelve\n  kind: concurrency\n'
            '  mechanism: m\n')

    def load(self, text):
        path = os.path.join(self.useFixture(fixtures.TempDir()).path,
                            'rows.yaml')
        with open(path, 'w') as f:
            f.write(text)
        return corpus.load(path)

    def assertRefused(self, text, message):
        e = self.assertRaises(corpus.CorpusError, self.load, text)
        self.assertIn(message, str(e))

    def test_refusals(self):
        self.assertRefused('{}', 'is not a list of rows')
        self.assertRefused('- [1]\n', 'row 1 of')
        self.assertRefused('- [', 'cannot read the corpus')
        self.assertRefused(self.GOOD + '  colour: red\n',
                           'unknown field(s): colour')
        self.assertRefused('- bug: 1\n  fixes: [abc]\n', 'lacks family')
        self.assertRefused(self.GOOD, 'says neither what removed its code')
        self.assertRefused(self.GOOD.replace('concurrency', 'race'),
                           "kind 'race' is not one of")
        self.assertRefused(self.GOOD.replace('shelve', 'cooking'),
                           "family 'cooking' is not one of")
        modelled = self.GOOD + '  symptoms: [x]\n  patch: 1798688.patch\n'
        self.assertRefused(modelled + '  scenario: nothing\n',
                           "no scenario 'nothing'")
        self.assertRefused(modelled + '  scenario: resize-confirm\n'
                           '  fault: fire\n', "no fault 'fire'")
        self.assertRefused(modelled + '  scenario: resize-confirm\n'
                           '  without: [periodic-9]\n',
                           'resize-confirm has no actor periodic-9 (it has: '
                           'compute-1, periodic-1)')
        self.assertRefused(self.GOOD + '  scenario: resize-confirm\n'
                           '  patch: 1798688.patch\n', 'names no symptom')
        self.assertRefused(self.GOOD + '  scenario: resize-confirm\n'
                           '  symptoms: [x]\n  patch: none.patch\n',
                           'none.patch is missing')
        self.assertRefused(self.GOOD + '  scenario: resize-confirm\n'
                           '  symptoms: [x]\n', 'has no patch')
        self.assertRefused(modelled + '  scenario: resize-confirm\n'
                           '  symptoms: [periodic error: X]\n',
                           'a symptom is not a string')
        apart = self.GOOD + '  needs: an actor\n'
        self.assertRefused(apart + apart, 'lists bug(s) twice: 1')

    def test_a_row_apart(self):
        row, = self.load(self.GOOD + '  removed_by: 0123456789\n')
        self.assertFalse(row.modelled)
        self.assertEqual(('abc',), row.fixes)
        self.assertEqual('1', row.bug)
