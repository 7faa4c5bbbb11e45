"""``shelvefix ghosts`` on a sqlite file with placement's own schema.

The database is :class:`~shelvefix.tests.unit.backends.test_ghosts.
PlacementDatabase`; the database code's own tests are there.
"""

import io
import os
from unittest import mock

import fixtures
import sqlalchemy

from shelvefix.backends import ghosts
from shelvefix.cmd import main
from shelvefix.tests import base
from shelvefix.tests.unit.backends import test_ghosts

SECRET = 'S3cr3tPw'


class GhostsCommandTestCase(base.TestCase):

    def setUp(self):
        super().setUp()
        self.db = self.useFixture(test_ghosts.PlacementDatabase())

    def ghosts(self, *argv):
        out, err = io.StringIO(), io.StringIO()
        rc = main.main(['ghosts', '--db-url', self.db.url] + list(argv),
                       out=out, err=err)
        return rc, out.getvalue(), err.getvalue()

    def test_none(self):
        self.db.consumer(allocations=2)
        rc, out, err = self.ghosts()
        self.assertEqual(0, rc, err)
        self.assertEqual('No ghost consumer (a consumer without allocations) '
                         'in %s.\n' % self.db.url, out)

    def test_lists_only_the_ghosts_and_changes_nothing(self):
        kept = self.db.consumer(allocations=1)
        one = self.db.consumer(generation=3)
        two = self.db.consumer()
        before = (self.db.count('consumers'), self.db.count('allocations'))
        rc, out, err = self.ghosts()
        self.assertEqual(1, rc, err)
        lines = out.splitlines()
        self.assertEqual(3, len(lines))
        self.assertTrue(lines[0].startswith(
            '%s  project project-a  user user-a  generation 3  created 20'
            % one), lines[0])
        self.assertIn('  updated 20', lines[0])
        self.assertTrue(lines[1].startswith(two))
        self.assertNotIn(kept, out)
        self.assertEqual('2 ghost consumers (consumers without allocations) '
                         'in %s.' % self.db.url, lines[2])
        self.assertEqual(before, (self.db.count('consumers'),
                                  self.db.count('allocations')))

    def test_heal_removes_only_the_empty_ones(self):
        kept = self.db.consumer(allocations=2)
        ghost = self.db.consumer()
        allocations = self.db.count('allocations')
        rc, out, err = self.ghosts('--heal')
        self.assertEqual(0, rc, err)
        self.assertIn('Removed 1 of 1; kept 0 that gained allocations, 0 '
                      'too young (--min-age 300 s), 0 written meanwhile; 0 '
                      'already gone.', out)
        self.assertEqual({kept}, self.db.consumers())
        self.assertNotIn(ghost, self.db.consumers())
        self.assertEqual(allocations, self.db.count('allocations'))
        rc, out, err = self.ghosts()
        self.assertEqual(0, rc, err)

    def test_a_consumer_that_gains_allocations_after_the_listing_stays(self):
        ghost = self.db.consumer()
        other = self.db.consumer()
        real_find = ghosts.find

        def find(engine):
            found = real_find(engine)
            # A claim lands between the listing and the heal.
            self.db.allocate(ghost)
            self.db.bump(ghost)
            return found

        with mock.patch.object(ghosts, 'find', find):
            rc, out, err = self.ghosts('--heal')
        self.assertEqual(0, rc, err)
        self.assertIn('kept %s: gained allocations' % ghost, out)
        self.assertIn('Removed 1 of 2; kept 1 that gained allocations', out)
        self.assertEqual({ghost}, self.db.consumers())
        self.assertNotIn(other, self.db.consumers())

    def test_min_age(self):
        old = self.db.consumer(age=600)
        young = self.db.consumer(age=5)
        rc, out, err = self.ghosts('--heal')
        self.assertEqual(1, rc, err)
        self.assertIn('kept %s: written less than 300 s ago (--min-age)'
                      % young, out)
        self.assertIn('Removed 1 of 2; kept 0 that gained allocations, 1 '
                      'too young', out)
        self.assertEqual({young}, self.db.consumers())
        self.assertNotIn(old, self.db.consumers())
        rc, out, err = self.ghosts('--heal', '--min-age', '0')
        self.assertEqual(0, rc, err)
        self.assertEqual(set(), self.db.consumers())

    def test_batches(self):
        for _i in range(5):
            self.db.consumer()
        with mock.patch.object(ghosts, '_heal_batch',
                               side_effect=ghosts._heal_batch) as batch:
            rc, out, err = self.ghosts('--heal', '--batch-size', '2')
        self.assertEqual(0, rc, err)
        self.assertEqual([2, 2, 1], [len(c[0][1]) for c in
                                     batch.call_args_list])
        self.assertEqual(0, self.db.count('consumers'))

    def test_bad_option_values(self):
        for argv, text in ((['--min-age', '-1'], "'-1' is negative"),
                           (['--min-age', 'nan'], 'not a finite number'),
                           (['--batch-size', '0'], 'not between 1 and'),
                           (['--batch-size', 'x'], 'not a whole number')):
            err = io.StringIO()
            with mock.patch('sys.stderr', err):
                e = self.assertRaises(SystemExit, self.ghosts, *argv)
            self.assertEqual(2, e.code)
            self.assertIn(text, err.getvalue())


class GhostsBadInputTestCase(base.TestCase):
    """One line on stderr, exit status 2, never the password."""

    def refused(self, url, text):
        out, err = io.StringIO(), io.StringIO()
        rc = main.main(['ghosts', '--db-url', url], out=out, err=err)
        self.assertEqual(2, rc)
        self.assertEqual('', out.getvalue())
        line = err.getvalue()
        self.assertEqual(1, len(line.splitlines()), line)
        self.assertTrue(line.startswith('shelvefix ghosts: '), line)
        self.assertIn(text, line)
        self.assertNotIn(SECRET, line)
        self.assertNotIn('Traceback', line)
        return line

    def test_unparseable(self):
        self.refused('not a url', 'cannot parse the database URL')
        line = self.refused('mysql+pymysql://u:%s@db:port/placement'
                            % SECRET, 'cannot parse the database URL')
        self.assertIn('u:***@', line)

    def test_no_driver(self):
        self.refused('postgresql+nodriver://u:%s@db/placement' % SECRET,
                     'its driver cannot be loaded')

    def test_unreachable(self):
        for url in ('postgresql+psycopg2://placement:%s@127.0.0.1:9/'
                    'placement' % SECRET,
                    'mysql+pymysql://placement:%s@127.0.0.1:9/placement'
                    % SECRET):
            line = self.refused(url, 'cannot read the database at ')
            self.assertIn('placement:***@127.0.0.1:9', line)

    def test_no_such_sqlite_file(self):
        directory = self.useFixture(fixtures.TempDir()).path
        path = os.path.join(directory, 'nothing.db')
        self.refused('sqlite:///%s' % path, 'no such file')
        # sqlite did not create one.
        self.assertFalse(os.path.exists(path))
        self.refused('sqlite://', 'names no sqlite file')

    def test_not_placement(self):
        directory = self.useFixture(fixtures.TempDir()).path
        url = 'sqlite:///%s' % os.path.join(directory, 'other.db')
        engine = sqlalchemy.create_engine(url)
        with engine.begin() as conn:
            conn.execute(sqlalchemy.text('CREATE TABLE consumers (id INT)'))
        engine.dispose()
        self.refused(url, 'is not a placement database: it has no '
                          'allocations, projects, users tables')
