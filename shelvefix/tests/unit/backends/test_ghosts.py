"""The ghost consumers' database code, on placement's schema in sqlite.

The schema is created from openstack-placement's models; the rows are
written as placement writes them (a consumer row, then its allocation
rows, timestamps in naive UTC). What changes once a heal's transaction
has begun is written from another connection, as another placement
worker would.
"""

import datetime
import os
from unittest import mock
import uuid

import fixtures
import sqlalchemy

from shelvefix.backends import ghosts
from shelvefix.tests import base


def _utcnow():
    return datetime.datetime.now(datetime.timezone.utc).replace(tzinfo=None)


class PlacementDatabase(fixtures.Fixture):
    """A sqlite file with placement's tables, and ways to fill them."""

    def _setUp(self):
        from placement.db.sqlalchemy import models
        self.models = models
        directory = self.useFixture(fixtures.TempDir()).path
        self.path = os.path.join(directory, 'placement.db')
        self.url = 'sqlite:///%s' % self.path
        self.engine = sqlalchemy.create_engine(self.url)
        self.addCleanup(self.engine.dispose)
        models.BASE.metadata.create_all(self.engine)
        self.tables = models.BASE.metadata.tables
        with self.engine.begin() as conn:
            conn.execute(self.tables['projects'].insert(),
                         {'id': 1, 'external_id': 'project-a'})
            conn.execute(self.tables['users'].insert(),
                         {'id': 1, 'external_id': 'user-a'})
            conn.execute(self.tables['resource_providers'].insert(),
                         {'id': 1, 'uuid': str(uuid.uuid4()), 'name': 'rp',
                          'generation': 1, 'root_provider_id': 1})

    def consumer(self, allocations=0, age=3600, generation=1):
        """A consumer last written ``age`` seconds ago; returns its uuid."""
        consumer_uuid = str(uuid.uuid4())
        written = _utcnow() - datetime.timedelta(seconds=age)
        with self.engine.begin() as conn:
            conn.execute(self.tables['consumers'].insert(), {
                'uuid': consumer_uuid, 'project_id': 1, 'user_id': 1,
                'generation': generation, 'created_at': written,
                'updated_at': written})
        for _i in range(allocations):
            self.allocate(consumer_uuid)
        return consumer_uuid

    def allocate(self, consumer_uuid):
        with self.engine.begin() as conn:
            conn.execute(self.tables['allocations'].insert(), {
                'resource_provider_id': 1, 'consumer_id': consumer_uuid,
                'resource_class_id': 0, 'used': 1})

    def bump(self, consumer_uuid):
        """Write the consumer as placement does: a new generation."""
        consumers = self.tables['consumers']
        with self.engine.begin() as conn:
            conn.execute(consumers.update().where(
                consumers.c.uuid == consumer_uuid).values(
                generation=consumers.c.generation + 1))

    def count(self, table):
        with self.engine.connect() as conn:
            return conn.execute(sqlalchemy.select(sqlalchemy.func.count())
                                .select_from(self.tables[table])).scalar()

    def consumers(self):
        with self.engine.connect() as conn:
            return {row[0] for row in conn.execute(
                sqlalchemy.select(self.tables['consumers'].c.uuid))}


class HealInsideTheTransactionTestCase(base.TestCase):
    """What changes once the heal's transaction has begun is respected."""

    def setUp(self):
        super().setUp()
        self.db = self.useFixture(PlacementDatabase())
        self.engine = ghosts.connect(self.db.url)
        self.addCleanup(self.engine.dispose)

    def on_begin(self, action):
        # Once: the first transaction is the heal's only batch.
        sqlalchemy.event.listen(self.engine, 'begin',
                                lambda conn: action(), once=True)

    def test_allocations_written_as_the_transaction_begins(self):
        ghost, other = self.db.consumer(), self.db.consumer()
        found = ghosts.find(self.engine)
        self.assertEqual([ghost, other], [g.uuid for g in found])
        self.on_begin(lambda: self.db.allocate(ghost))
        healed = ghosts.heal(self.engine, found)
        self.assertEqual(ghosts.Healed([other], [ghost], [], [], []), healed)
        self.assertEqual({ghost}, self.db.consumers())

    def test_a_consumer_written_meanwhile_is_kept(self):
        # Written (a new generation) and emptied again: not the consumer
        # listed any more; a later run decides.
        ghost = self.db.consumer()
        found = ghosts.find(self.engine)
        self.on_begin(lambda: self.db.bump(ghost))
        healed = ghosts.heal(self.engine, found)
        self.assertEqual([ghost], healed.changed)
        self.assertEqual({ghost}, self.db.consumers())

    def test_gone_meanwhile(self):
        ghost = self.db.consumer()
        found = ghosts.find(self.engine)
        with self.db.engine.begin() as conn:
            conn.execute(sqlalchemy.text('DELETE FROM consumers'))
        self.assertEqual([ghost], ghosts.heal(self.engine, found).gone)

    def test_no_timestamps_is_old(self):
        ghost = self.db.consumer()
        with self.db.engine.begin() as conn:
            conn.execute(sqlalchemy.text(
                'UPDATE consumers SET created_at = NULL, updated_at = NULL'))
        found = ghosts.find(self.engine)
        self.assertIsNone(found[0].created_at)
        self.assertEqual([ghost], ghosts.heal(self.engine, found).removed)

    def test_a_failed_batch_is_named(self):
        self.db.consumer()
        found = ghosts.find(self.engine)
        error = sqlalchemy.exc.OperationalError(
            'DELETE', {}, Exception('disk I/O error'))
        with mock.patch.object(ghosts, '_heal_batch', side_effect=error):
            e = self.assertRaises(ghosts.GhostsError, ghosts.heal,
                                  self.engine, found)
        self.assertIn('healing stopped, the batch of 1 consumer(s) from %s '
                      'was rolled back (0 removed before it): disk I/O error'
                      % found[0].uuid, str(e))

    def test_a_conflict_is_tried_again(self):
        ghost = self.db.consumer()
        found = ghosts.find(self.engine)
        orig = Exception(1213, 'Deadlock found when trying to get lock')
        error = sqlalchemy.exc.OperationalError('DELETE', {}, orig)
        with mock.patch.object(ghosts, '_heal_batch',
                               side_effect=[error, {'removed': [ghost]}]):
            healed = ghosts.heal(self.engine, found)
        self.assertEqual([ghost], healed.removed)
