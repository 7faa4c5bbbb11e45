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

    def observer(self, url):
        observer = observe.Observer([url])
        self.addCleanup(observer.close)
        return observer

    def test_consumers_without_allocations(self):
        url = self.placement(['a', 'b', 'c'], ['a', 'a'])
        self.assertEqual({'b', 'c'}, self.observer(url).ghosts())

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
            self.assertEqual({'a'}, self.observer(url).ghosts(interval=0))
        self.assertEqual(3, len(calls))

    def test_the_retries_are_bounded(self):
        lost = sqlalchemy.exc.OperationalError(
            'SELECT', {}, Exception('Lost connection to MySQL server'))
        with mock.patch.object(sqlalchemy.engine.Engine, 'connect',
                               side_effect=lost) as connect:
            self.assertRaises(observe.ObserverError,
                              self.observer('sqlite://').ghosts,
                              timeout=1.0, interval=0.01)
        self.assertGreater(connect.call_count, 1)


_SCHEMA = (
    'CREATE TABLE resource_providers (id INTEGER, uuid TEXT)',
    'CREATE TABLE resource_classes (id INTEGER, name TEXT)',
    'CREATE TABLE consumers (uuid TEXT)',
    'CREATE TABLE allocations (resource_provider_id INTEGER, '
    'consumer_id TEXT, resource_class_id INTEGER, used INTEGER)',
    "INSERT INTO resource_providers VALUES (1, 'rp-a'), (2, 'rp-b')",
    "INSERT INTO resource_classes VALUES (0, 'VCPU'), (1, 'MEMORY_MB')",
)


class ObserverTestCase(testtools.TestCase):
    """Placement's tables read directly, node by node."""

    def node(self, *statements):
        directory = self.useFixture(fixtures.TempDir()).path
        url = 'sqlite:///%s' % os.path.join(directory, 'placement.db')
        engine = sqlalchemy.create_engine(url)
        self.addCleanup(engine.dispose)
        with engine.begin() as conn:
            for statement in _SCHEMA + statements:
                conn.execute(sqlalchemy.text(statement))
        return url

    def observer(self, *urls, **kwargs):
        observer = observe.Observer(urls, **kwargs)
        self.addCleanup(observer.close)
        return observer

    def test_allocations_usages_and_ghosts(self):
        url = self.node(
            "INSERT INTO consumers VALUES ('c1'), ('c2'), ('ghost')",
            "INSERT INTO allocations VALUES (1, 'c1', 0, 2), "
            "(1, 'c1', 1, 512), (2, 'c2', 0, 1), (1, 'c2', 0, 0)")
        observer = self.observer(url)
        self.assertEqual(({'rp-a': {'VCPU': 2, 'MEMORY_MB': 512}}, 0),
                         observer.allocations('c1'))
        self.assertEqual(({}, 0), observer.allocations('nobody'))
        self.assertEqual({'rp-a': {'VCPU': 2, 'MEMORY_MB': 512},
                          'rp-b': {'VCPU': 1}},
                         observer.usages(['rp-a', 'rp-b']))
        self.assertEqual({'ghost'}, observer.ghosts())

    def test_a_node_that_does_not_answer_is_passed_over(self):
        good = self.node("INSERT INTO allocations VALUES (1, 'c', 0, 1)")
        observer = self.observer('sqlite:////nonexistent/dir/placement.db',
                                 good, names=['node 1', 'node 2'])
        self.assertEqual(({'rp-a': {'VCPU': 1}}, 1),
                         observer.allocations('c'))
        # Passed over now: node 2 is asked first.
        self.assertEqual([1, 0], observer._order())

    def test_no_node_answering_names_each(self):
        observer = self.observer('sqlite:////nonexistent/a/placement.db',
                                 'sqlite:////nonexistent/b/placement.db',
                                 names=['node 1 (port 1)', 'node 2 (port 2)'])
        error = self.assertRaises(observe.ObserverError,
                                  observer.allocations, 'c')
        self.assertIn('node 1 (port 1): OperationalError', str(error))
        self.assertIn('node 2 (port 2): OperationalError', str(error))

    def test_a_stale_node_is_a_disagreement(self):
        written = self.node("INSERT INTO allocations VALUES (2, 'c', 0, 1)")
        stale = self.node()
        observer = self.observer(written, stale,
                                 names=['node 1', 'node 2'])
        held, index = observer.allocations('c')
        self.assertEqual(['node 2'], observer.cross_check('c', held, index))
        self.assertEqual((1, 1), (observer.checked, observer.disagreed))
        # Agreeing: checked, not disagreed.
        observer.cross_check('nobody', {}, 0)
        self.assertEqual((2, 1), (observer.checked, observer.disagreed))

    def test_one_node_is_compared_with_the_api(self):
        url = self.node("INSERT INTO allocations VALUES (2, 'c', 0, 1)")
        observer = self.observer(url)
        held, index = observer.allocations('c')
        self.assertEqual([], observer.cross_check(
            'c', held, index, api=lambda c: {'rp-b': {'VCPU': 1}}))
        self.assertEqual(["placement's API"], observer.cross_check(
            'c', held, index, api=lambda c: {}))
        self.assertEqual((2, 1), (observer.checked, observer.disagreed))

    def test_nothing_to_compare_with_is_not_a_check(self):
        url = self.node()
        observer = self.observer(url)
        self.assertEqual([], observer.cross_check('c', {}, 0))
        self.assertEqual((0, 0), (observer.checked, observer.disagreed))

    def test_causal_reads_on_galera(self):
        engine = mock.Mock()
        with mock.patch('sqlalchemy.create_engine',
                        return_value=engine) as create, \
                mock.patch('sqlalchemy.event.listen') as listen:
            observe._engine('mysql+pymysql://u:p@127.0.0.1:1/placement',
                            sync_wait=True)
        self.assertEqual(observe.READ_TIMEOUT,
                         create.call_args[1]['connect_args']['read_timeout'])
        (target, name, causal), _kwargs = listen.call_args
        self.assertEqual((engine, 'connect'), (target, name))
        connection = mock.Mock()
        causal(connection, None)
        connection.cursor.return_value.execute.assert_called_once_with(
            'SET SESSION wsrep_sync_wait = 1')


class ClientObserverTestCase(testtools.TestCase):

    def test_reads_through_the_client(self):
        client = mock.Mock()
        client.get_allocs_for_consumer.return_value = {
            'allocations': {'rp-a': {'resources': {'VCPU': 1}}}}
        client.get_provider_usages.return_value = {'VCPU': 1, 'DISK_GB': 0}
        observer = observe.ClientObserver(client, 'ctx')
        self.assertEqual(({'rp-a': {'VCPU': 1}}, 0),
                         observer.allocations('c'))
        self.assertEqual({'rp-a': {'VCPU': 1}}, observer.usages(['rp-a']))
        self.assertIsNone(observer.ghosts())
        self.assertEqual([], observer.cross_check('c', {'rp-a': {'VCPU': 1}},
                                                  0))
        self.assertEqual((1, 0), (observer.checked, observer.disagreed))
