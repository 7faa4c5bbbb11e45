"""The stress run's observations on a real placement server's database.

The cycles are judged, the usages read and the ghost consumers counted
by an observer reading PostgreSQL itself (not placement's API); the
ghosts are counted before the clean-up, and what the clean-up's own
requests leave is reported apart: here the clean-up's first ``DELETE
/allocations`` is made to leave a ghost the way a database fault does
(its consumer clean-up's connection killed; see
:mod:`~shelvefix.tests.functional.backends.test_ghosts`).

Skips, saying why, without PostgreSQL; ``SHELVEFIX_REQUIRE_PLACEMENT_
SERVER=1`` turns the skip into a failure.
"""

import io

import fixtures
import sqlalchemy

from shelvefix.backends import remote
from shelvefix.backends import server
from shelvefix import conf as shelvefix_conf
from shelvefix import race
from shelvefix.race import stress
from shelvefix.race import stress_harness
from shelvefix.race import stress_report
from shelvefix.tests import base
from shelvefix.tests.functional.backends import test_ghosts
from shelvefix.tests.functional.backends import test_server


class ObservedStressTestCase(base.TestCase):

    def setUp(self):
        super().setUp()
        test_server._require(self, 'postgresql')
        self.server = self.useFixture(server.PlacementServer(
            database='postgresql', workers=2))
        self.placement = self.useFixture(remote.RemotePlacementFixture(
            shelvefix_conf.load_config_files(
                [self.server.shelvefix_config])))
        self.observer = self.server.observer()
        self.addCleanup(self.observer.close)
        self.engine = sqlalchemy.create_engine(
            self.server.db_url, poolclass=sqlalchemy.pool.NullPool)
        self.addCleanup(self.engine.dispose)
        self.useFixture(fixtures.MockPatchObject(
            stress_harness, 'CLEANUP_RETRY_DELAY', 0.05))

    def ghost_the_first_delete(self):
        """The clean-up's first DELETE leaves its consumer behind."""
        ghosts = test_ghosts.GhostsOnDatabasesTestCase('run')
        ghosts.database = 'postgresql'
        ghosts.engine = self.engine
        ghosts.placement = self.placement
        real = self.placement.client.delete_allocation_for_instance
        real_clean_up = stress_harness.Harness.clean_up
        made, armed = [], []

        def clean_up(harness):
            armed.append(True)
            return real_clean_up(harness)

        def delete(context, consumer, force=False):
            # The offloads' frees go through too: the clean-up's only.
            if made or not armed:
                return real(context, consumer, force=force)
            made.append(consumer)
            with self.engine.connect() as locker:
                with locker.begin():
                    locker.execute(sqlalchemy.text(
                        'SELECT id FROM consumers WHERE uuid = :uuid FOR '
                        'UPDATE'), {'uuid': consumer})
                    call = test_ghosts._Call(
                        lambda: real(context, consumer, force=force))
                    call.start()
                    session = test_ghosts._wait_for(
                        lambda: ghosts.waiting_on(test_ghosts._DELETE,
                                                  call),
                        "placement's DELETE FROM consumers")
                    ghosts.kill(session)
            return call.outcome()
        self.useFixture(fixtures.MockPatchObject(
            self.placement.client, 'delete_allocation_for_instance',
            side_effect=delete))
        self.useFixture(fixtures.MockPatchObject(
            stress_harness.Harness, 'clean_up', clean_up))
        return made

    def test_observed_and_the_clean_ups_ghost_counted_apart(self):
        made = self.ghost_the_first_delete()
        result = stress.run(self.placement, race.CORRECTED, race.DELETE, 3,
                            4, observer=self.observer)
        self.assertEqual(1, len(made))
        # Every cycle judged by the observer, compared with the API.
        self.assertEqual(12, stress.completed(result))
        self.assertEqual((12, 0), (result.checked, result.disagreed))
        self.assertEqual(result.usage_expected, result.usage_actual)
        # None left by the run; the one the clean-up made, apart.
        self.assertEqual((0, 1), (result.ghosts_left,
                                  result.ghosts_left_by_cleanup))
        self.assertEqual({made[0]}, self.observer.ghosts())
        self.assertEqual(0, stress.verdict([result]).status)
        # As the report prints it.
        out = io.StringIO()
        stress_report.write_figures([result], [{
            'requests': 1, 'requests_per_second': 1.0}], out)
        self.assertIn('  ghost consumers healed: 0, left by the run: 0, by '
                      'the clean-up: 1; cycle judgements cross-checked: 12, '
                      'disagreed: 0\n', out.getvalue())

    def test_the_observer_reads_what_the_api_does(self):
        rp = self.placement.create_provider('observed', inventory={
            'VCPU': 4, 'MEMORY_MB': 1024})
        consumer = '2b7a6f0e-0d1c-4bb1-9d43-8c3a4e1f2a55'
        resp = self.placement.adapter.put(
            '/allocations/%s' % consumer, microversion='1.28', json={
                'allocations': {rp: {'resources': {'VCPU': 2,
                                                   'MEMORY_MB': 256}}},
                'consumer_generation': None, 'project_id': 'p',
                'user_id': 'u'})
        self.assertEqual(204, resp.status_code, resp.text)
        self.assertEqual(({rp: {'VCPU': 2, 'MEMORY_MB': 256}}, 0),
                         self.observer.allocations(consumer))
        self.assertEqual({rp: {'VCPU': 2, 'MEMORY_MB': 256}},
                         self.observer.usages([rp]))
        self.assertEqual(set(), self.observer.ghosts())
