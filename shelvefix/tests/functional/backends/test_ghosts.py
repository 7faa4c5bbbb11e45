"""``shelvefix ghosts`` on the databases deployments run placement on.

PostgreSQL, MariaDB and a three-node MariaDB Galera cluster, each behind
a real placement server (gunicorn). The ghost is made by placement's own
code: ``DELETE /allocations/{uuid}`` deletes the allocations in one
transaction, then blocks on the consumer's row (a test session holds it
with ``SELECT ... FOR UPDATE``) in its second one, and that connection
is killed as a database administrator (or a failover) would: placement
answers 500 and leaves the consumer without allocations, as the fault
matrix's "DELETE partly committed" case does in-process.

The tests skip, saying why, when the database cannot be had;
``SHELVEFIX_REQUIRE_PLACEMENT_SERVER=1`` turns the skips into failures.
Every wait is bounded.
"""

import io
import threading
import time
import uuid

import sqlalchemy
import testscenarios

from shelvefix.backends import galera
from shelvefix.backends import ghosts
from shelvefix.backends import remote
from shelvefix.backends import server
from shelvefix.cmd import main
from shelvefix import conf as shelvefix_conf
from shelvefix.tests import base
from shelvefix.tests.functional.backends import test_galera
from shelvefix.tests.functional.backends import test_server

load_tests = testscenarios.load_tests_apply_scenarios

#: Seconds any wait of these tests may take.
WAIT = 30.0
INVENTORY = {'VCPU': 8, 'MEMORY_MB': 4096}
RESOURCES = {'VCPU': 1, 'MEMORY_MB': 256}
_DELETE = 'DELETE FROM consumers'


def _wait_for(predicate, what, timeout=WAIT, interval=0.05):
    deadline = time.monotonic() + timeout
    while True:
        value = predicate()
        if value:
            return value
        if time.monotonic() >= deadline:
            raise AssertionError('%s: not within %.0f s' % (what, timeout))
        time.sleep(interval)


class _Call(threading.Thread):
    """``function()`` in a thread; ``join`` bounded, its result or error."""

    def __init__(self, function):
        super().__init__(daemon=True)
        self.function = function
        self.result = self.error = None

    def run(self):
        try:
            self.result = self.function()
        except Exception as e:
            self.error = e

    def outcome(self, timeout=WAIT):
        self.join(timeout)
        if self.is_alive():
            raise AssertionError('still running after %.0f s' % timeout)
        if self.error is not None:
            raise self.error
        return self.result


class GhostsOnDatabasesTestCase(testscenarios.WithScenarios, base.TestCase):

    scenarios = [('postgresql', {'database': 'postgresql'}),
                 ('mariadb', {'database': 'mariadb'}),
                 ('galera', {'database': 'galera'})]

    def setUp(self):
        super().setUp()
        if self.database == 'galera':
            test_galera.require_galera(self)
            cluster = self.useFixture(galera.GaleraPlacement(workers=1))
            # Its first server: through its proxy, the first node, where
            # the test's own sessions go too.
            placement_server = cluster.servers[0]
        else:
            test_server._require(self, self.database)
            placement_server = self.useFixture(server.PlacementServer(
                database=self.database, workers=1))
        self.db_url = placement_server.db_url
        self.placement = self.useFixture(remote.RemotePlacementFixture(
            shelvefix_conf.load_config_files(
                [placement_server.shelvefix_config])))
        self.engine = sqlalchemy.create_engine(
            self.db_url, poolclass=sqlalchemy.pool.NullPool)
        self.addCleanup(self.engine.dispose)
        self.rp = self.placement.create_provider(
            'host-%s' % uuid.uuid4().hex[:8], inventory=INVENTORY)

    # -- placement, over HTTP ----------------------------------------------

    def claim(self, consumer, generation=None):
        return self.placement.adapter.put(
            '/allocations/%s' % consumer, microversion='1.28',
            raise_exc=False,
            json={'allocations': {self.rp: {'resources': RESOURCES}},
                  'consumer_generation': generation,
                  'project_id': 'project-a', 'user_id': 'user-a'})

    def allocations(self, consumer):
        resp = self.placement.adapter.get('/allocations/%s' % consumer,
                                          microversion='1.28')
        return resp.json()

    def consumer_with_allocations(self):
        consumer = str(uuid.uuid4())
        resp = self.claim(consumer)
        self.assertEqual(204, resp.status_code, resp.text)
        return consumer

    # -- the database, as its administrator ------------------------------

    def sql(self, statement, **params):
        with self.engine.begin() as conn:
            result = conn.execute(sqlalchemy.text(statement), params)
            return result.all() if result.returns_rows else None

    def counts(self):
        return {table: self.sql('SELECT COUNT(*) FROM %s' % table)[0][0]
                for table in ('consumers', 'allocations')}

    def consumer_row(self, consumer):
        return self.sql('SELECT id, generation FROM consumers WHERE uuid = '
                        ':uuid', uuid=consumer)

    def waiting(self, text):
        """The session waiting on a statement that holds ``text``."""
        if self.database == 'postgresql':
            rows = self.sql(
                "SELECT pid FROM pg_stat_activity WHERE datname = "
                "current_database() AND wait_event_type = 'Lock' AND query "
                "LIKE :like", like='%' + text + '%')
        else:
            rows = self.sql(
                'SELECT id FROM information_schema.processlist WHERE db = '
                'DATABASE() AND info LIKE :like AND id <> CONNECTION_ID()',
                like='%' + text + '%')
        return rows[0][0] if rows else None

    def waiting_on(self, text, call):
        """The session of ``call``'s statement, once it waits on a lock."""
        if not call.is_alive():
            raise AssertionError('it did not wait: %r %r'
                                 % (call.result, call.error))
        return self.waiting(text)

    def kill(self, session):
        if self.database == 'postgresql':
            self.sql('SELECT pg_terminate_backend(:pid)', pid=session)
        else:
            self.sql('KILL CONNECTION %d' % int(session))

    def make_ghost(self, consumer):
        """Placement's DELETE, its consumer clean-up's connection killed."""
        with self.engine.connect() as locker:
            with locker.begin():
                locker.execute(sqlalchemy.text(
                    'SELECT id FROM consumers WHERE uuid = :uuid FOR UPDATE'),
                    {'uuid': consumer})
                delete = _Call(lambda: self.placement.adapter.delete(
                    '/allocations/%s' % consumer, raise_exc=False,
                    microversion='1.28'))
                delete.start()
                # Placement's second transaction, blocked on the row.
                session = _wait_for(lambda: self.waiting_on(_DELETE, delete),
                                    "placement's DELETE FROM consumers")
                self.kill(session)
        resp = delete.outcome()
        self.assertEqual(500, resp.status_code, resp.text)
        self.assertEqual({}, self.allocations(consumer)['allocations'])
        self.assertEqual(1, len(self.consumer_row(consumer)))

    def ghosts(self, *argv):
        out, err = io.StringIO(), io.StringIO()
        rc = main.main(['ghosts', '--db-url', self.db_url] + list(argv),
                       out=out, err=err)
        self.assertNotIn('shelvefix ghosts:', err.getvalue())
        self.assertNotIn(':placement@', out.getvalue() + err.getvalue())
        return rc, out.getvalue()

    # -- the tests ---------------------------------------------------------

    def test_finds_and_heals_the_ghost_placement_left(self):
        kept = self.consumer_with_allocations()
        ghost = self.consumer_with_allocations()
        self.make_ghost(ghost)
        before = self.counts()
        kept_row = self.consumer_row(kept)

        rc, out = self.ghosts()
        self.assertEqual(1, rc, out)
        lines = out.splitlines()
        self.assertEqual(2, len(lines), out)
        self.assertTrue(lines[0].startswith(
            '%s  project project-a  user user-a  generation 1  ' % ghost),
            out)
        self.assertTrue(lines[1].startswith('1 ghost consumer '), out)
        # Listing changed nothing; the young ghost is kept by default.
        self.assertEqual(before, self.counts())
        rc, out = self.ghosts('--heal')
        self.assertEqual(1, rc, out)
        self.assertIn('kept %s: written less than 300 s ago' % ghost, out)
        self.assertEqual(before, self.counts())

        rc, out = self.ghosts('--heal', '--min-age', '0')
        self.assertEqual(0, rc, out)
        self.assertIn('Removed 1 of 1; kept 0 that gained allocations', out)
        self.assertEqual({'consumers': before['consumers'] - 1,
                          'allocations': before['allocations']},
                         self.counts())
        self.assertEqual([], self.consumer_row(ghost))
        self.assertEqual(kept_row, self.consumer_row(kept))
        self.assertEqual(RESOURCES, self.allocations(kept)['allocations'][
            self.rp]['resources'])
        rc, out = self.ghosts()
        self.assertEqual(0, rc, out)
        self.assertTrue(out.startswith('No ghost consumer'), out)
        # Healed for placement's clients too: a claim as for a new
        # consumer succeeds.
        self.assertEqual(204, self.claim(ghost).status_code)

    def test_a_claim_in_flight_is_never_removed(self):
        # A ghost listed; then a claim's transaction writes allocations
        # and bumps the generation, and holds the row while the heal's
        # DELETE runs: the DELETE waits, and once the claim commits keeps
        # the consumer.
        other = self.consumer_with_allocations()
        ghost = self.consumer_with_allocations()
        provider, resource_class = self.sql(
            'SELECT resource_provider_id, resource_class_id FROM allocations '
            'WHERE consumer_id = :uuid', uuid=other)[0]
        self.sql('DELETE FROM allocations WHERE consumer_id = :uuid',
                 uuid=ghost)
        heal_engine = ghosts.connect(self.db_url)
        self.addCleanup(heal_engine.dispose)
        found = ghosts.find(heal_engine)
        self.assertEqual([ghost], [g.uuid for g in found])
        before = self.counts()
        with self.engine.connect() as writer:
            with writer.begin():
                writer.execute(sqlalchemy.text(
                    'INSERT INTO allocations (resource_provider_id, '
                    'consumer_id, resource_class_id, used) VALUES (:rp, '
                    ':uuid, :rc, 1)'),
                    {'rp': provider, 'uuid': ghost, 'rc': resource_class})
                writer.execute(sqlalchemy.text(
                    'UPDATE consumers SET generation = generation + 1 WHERE '
                    'uuid = :uuid'), {'uuid': ghost})
                heal = _Call(lambda: ghosts.heal(heal_engine, found,
                                                 min_age=0))
                heal.start()
                _wait_for(lambda: self.waiting_on(_DELETE, heal),
                          "the heal's DELETE")
            # The claim commits here.
        healed = heal.outcome()
        self.assertEqual(ghosts.Healed([], [ghost], [], [], []), healed)
        self.assertEqual({'consumers': before['consumers'],
                          'allocations': before['allocations'] + 1},
                         self.counts())
        self.assertEqual(2, self.consumer_row(ghost)[0][1])
