"""Two writers on one sqlite file wait for each other instead of failing.

Engines are made as placement makes them (oslo.db's ``create_engine``,
which begins every transaction with its own ``BEGIN``); each test plays
two workers as two threads with engines of their own.
"""

import os
import threading

import fixtures
from oslo_db.sqlalchemy import engines
import sqlalchemy
import testtools

from shelvefix.backends import sqlite


class SerialisedWritersTestCase(testtools.TestCase):

    def setUp(self):
        super().setUp()
        path = os.path.join(self.useFixture(fixtures.TempDir()).path,
                            'placement.db')
        self.url = 'sqlite:///%s' % path
        setup = engines.create_engine(self.url)
        with setup.begin() as conn:
            conn.exec_driver_sql('CREATE TABLE t (id INTEGER, n INTEGER)')
            conn.exec_driver_sql('INSERT INTO t VALUES (1, 0)')
        setup.dispose()

    def read_then_write(self, engine, read, other_read):
        """Read, wait a while for the other to read, then write.

        What deadlocks two deferred sqlite transactions.
        """
        with engine.begin() as conn:
            conn.exec_driver_sql('SELECT n FROM t').fetchall()
            read.set()
            other_read.wait(0.5)
            conn.exec_driver_sql('UPDATE t SET n = n + 1')

    def two_workers(self):
        first, second = (engines.create_engine(self.url) for _ in range(2))
        self.addCleanup(first.dispose)
        self.addCleanup(second.dispose)
        read = [threading.Event(), threading.Event()]
        errors = []

        def worker(engine, mine, theirs):
            try:
                self.read_then_write(engine, mine, theirs)
            except sqlalchemy.exc.DBAPIError as e:
                errors.append(e)
        threads = [threading.Thread(target=worker, args=args)
                   for args in ((first, read[0], read[1]),
                                (second, read[1], read[0]))]
        for thread in threads:
            thread.start()
        for thread in threads:
            thread.join(20)
        with first.connect() as conn:
            count = conn.exec_driver_sql('SELECT n FROM t').scalar()
        return errors, count

    def test_deferred_transactions_fail(self):
        # What placement's workers met: one of the two writes fails.
        errors, count = self.two_workers()
        self.assertEqual(1, len(errors))
        self.assertIn('database is locked', str(errors[0]))
        self.assertEqual(1, count)

    def test_serialised_writers_both_succeed(self):
        sqlite.serialise_writers()
        self.addCleanup(sqlite.restore)
        errors, count = self.two_workers()
        self.assertEqual([], errors)
        self.assertEqual(2, count)

    def test_independent_read_inside_a_write_does_not_wait(self):
        # Placement reads provider generations in an independent
        # transaction while its allocation write holds the lock.
        sqlite.serialise_writers()
        self.addCleanup(sqlite.restore)
        engine = engines.create_engine(self.url)
        self.addCleanup(engine.dispose)
        with engine.begin() as outer:
            outer.exec_driver_sql('UPDATE t SET n = 5')
            with engine.begin() as inner:
                self.assertEqual(
                    0, inner.exec_driver_sql('SELECT n FROM t').scalar())
        with engine.connect() as conn:
            self.assertEqual(5, conn.exec_driver_sql(
                'SELECT n FROM t').scalar())
        with engine.connect() as conn:
            self.assertEqual('wal', conn.exec_driver_sql(
                'PRAGMA journal_mode').scalar())
