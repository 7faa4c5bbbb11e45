"""Tests for shelvefix.backends.observe: placement's retries, its ghosts."""

import os
from unittest import mock

import fixtures
import sqlalchemy
import testtools

from shelvefix.backends import observe


class RetriesTestCase(testtools.TestCase):

    def test_counted_in_the_log(self):
        directory = self.useFixture(fixtures.TempDir()).path
        path = os.path.join(directory, 'server.log')
        with open(path, 'w') as f:
            f.write(
                '2026-12-02 DEBUG oslo_db.api [-] Performing DB retry for '
                'function placement.objects.allocation._set_allocations\n'
                '2026-12-02 INFO placement.requestlog [-] "PUT ..." 204\n'
                '2026-12-02 DEBUG oslo_db.api [-] Performing DB retry for '
                'function placement.objects.allocation._set_allocations\n'
                '2026-12-02 ERROR oslo_db.api [-] DB exceeded retry limit.\n')
        self.assertEqual({'placement retries': 2, 'placement gave up': 1},
                         observe.retries(path))

    def test_no_log_counts_nothing(self):
        self.assertEqual({'placement retries': 0, 'placement gave up': 0},
                         observe.retries('/nonexistent/server.log'))


class GhostsTestCase(testtools.TestCase):

    def placement(self, consumers, allocations):
        """A sqlite file with placement's two tables; its URL."""
        directory = self.useFixture(fixtures.TempDir()).path
        url = 'sqlite:///%s' % os.path.join(directory, 'placement.db')
        engine = sqlalchemy.create_engine(url)
        self.addCleanup(engine.dispose)
        with engine.begin() as conn:
            conn.execute(sqlalchemy.text(
                'CREATE TABLE consumers (uuid TEXT)'))
            conn.execute(sqlalchemy.text(
                'CREATE TABLE allocations (consumer_id TEXT)'))
            for table, rows in (('consumers', consumers),
                                ('allocations', allocations)):
                for row in rows:
                    conn.execute(sqlalchemy.text(
                        'INSERT INTO %s VALUES (:v)' % table), {'v': row})
        return url

    def test_consumers_without_allocations(self):
        url = self.placement(['a', 'b', 'c'], ['a', 'a'])
        self.assertEqual(2, observe.ghosts(url))

    def test_a_refused_read_is_tried_again(self):
        # The first two connections fail, as through a load balancer that
        # has every node marked down for a moment; the third reads.
        url = self.placement(['a'], [])
        real_connect = sqlalchemy.engine.Engine.connect
        lost = sqlalchemy.exc.OperationalError(
            'SELECT', {}, Exception('Lost connection to MySQL server'))
        calls = []

        def connect(engine):
            calls.append(engine)
            if len(calls) < 3:
                raise lost
            return real_connect(engine)
        with mock.patch.object(sqlalchemy.engine.Engine, 'connect', connect):
            self.assertEqual(1, observe.ghosts(url, interval=0))
        self.assertEqual(3, len(calls))

    def test_the_retries_are_bounded(self):
        lost = sqlalchemy.exc.OperationalError(
            'SELECT', {}, Exception('Lost connection to MySQL server'))
        with mock.patch.object(sqlalchemy.engine.Engine, 'connect',
                               side_effect=lost) as connect:
            self.assertRaises(sqlalchemy.exc.OperationalError, observe.ghosts,
                              'sqlite://', timeout=0.05, interval=0.01)
        self.assertGreater(connect.call_count, 1)
