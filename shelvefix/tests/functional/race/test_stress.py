"""Stress runs: real threads, no ordering imposed."""

import io
import json
import logging
import os
from unittest import mock

import fixtures

from shelvefix import backends
from shelvefix.backends import server
from shelvefix.cmd import main
from shelvefix import race
from shelvefix.race import outcomes
from shelvefix.race import stress
from shelvefix.race import stress_harness
from shelvefix.tests import base


class StressTestCase(base.TestCase):

    def setUp(self):
        super(StressTestCase, self).setUp()
        self.placement = self.useFixture(backends.make_backend('double'))

    def test_corrected_order_is_clean_under_concurrency(self):
        for free in race.FREE_METHODS:
            result = stress.run(self.placement, race.CORRECTED, free,
                                servers=4, cycles=5, poll_interval=0.001,
                                latency=0.002)
            self.assertEqual({outcomes.OK: 20}, result.counts)
            self.assertEqual(set(), stress.bad(result))
            self.assertEqual(result.usage_expected, result.usage_actual)
            # Every server ends ACTIVE somewhere: 4 servers' worth in use.
            self.assertEqual(4, sum(u.get('VCPU', 0) for u in
                                    result.usage_actual.values()))
        # Runs clean up after themselves.
        self.assertEqual({}, self.placement.state.consumers)
        self.assertEqual({}, self.placement.state.providers)

    def test_legacy_order_races_when_compute_is_slow(self):
        # Compute's requests take 50 ms while the client polls every 1 ms:
        # in the legacy order the client reads SHELVED_OFFLOADED and the
        # scheduler claims while compute's free is still on its way, every
        # cycle.
        result = stress.run(self.placement, race.LEGACY, race.DELETE,
                            servers=2, cycles=5, poll_interval=0.001,
                            latency=0.05)
        self.assertEqual(10, sum(n for label, n in result.counts.items()
                                 if label in (outcomes.OK,
                                              outcomes.SCHEDULER_409,
                                              outcomes.CLAIM_WIPED)))
        self.assertTrue(stress.bad(result) & {outcomes.SCHEDULER_409,
                                              outcomes.CLAIM_WIPED})

    def test_placement_failures_are_reported_not_judged(self):
        # Placement fails three of compute's frees: each of those offloads
        # stops (the server stays shelved on its host), the client stops
        # waiting for it, and the next cycle offloads it again.
        self.placement.inject_fault(method='DELETE', status=500, times=3)
        result = stress.run(self.placement, race.CORRECTED, race.DELETE,
                            servers=2, cycles=4, poll_interval=0.001)
        self.assertEqual(3, result.counts[outcomes.PLACEMENT_FAILED])
        self.assertEqual(5, result.counts[outcomes.OK])
        self.assertEqual(set(), stress.bad(result))
        self.assertEqual(result.usage_expected, result.usage_actual)
        self.assertEqual({}, self.placement.state.consumers)

    def test_a_cycle_that_raises_is_counted_lost(self):
        # One server's second cycle raises: that cycle is lost, counted by
        # cause, and the server goes on with its next one.
        real_cycle = stress_harness._Server.cycle
        calls = {}

        def cycle(server, *args, **kwargs):
            calls[server.uuid] = calls.get(server.uuid, 0) + 1
            if (calls[server.uuid] == 2 and
                    server is server.harness.servers[0]):
                raise RuntimeError('placement went away')
            return real_cycle(server, *args, **kwargs)
        self.useFixture(fixtures.FakeLogger(level=logging.WARNING))
        with mock.patch.object(stress_harness._Server, 'cycle', cycle):
            result = stress.run(self.placement, race.CORRECTED, race.DELETE,
                                servers=2, cycles=4, poll_interval=0.001)
        self.assertEqual({'RuntimeError': 1}, result.lost)
        self.assertEqual({outcomes.OK: 7}, result.counts)
        self.assertEqual([4, 4], sorted(calls.values()))
        self.assertEqual(result.usage_expected, result.usage_actual)

    def test_unshelve_failing_at_its_allocation_read_loses_nothing(self):
        # Placement answers 500 to the destination compute's read of the
        # allocations (a database node going away under it): that cycle
        # raises; the scheduler's claim goes back, and the next cycle
        # unshelves the offloaded server again. One server: its first
        # cycle goes to the second host and its retry to the first, where
        # a claim kept on the second would be doubled up.
        real_read = type(self.placement.client).get_allocations_for_consumer
        failed = []

        def read(client, context, consumer_uuid):
            if not failed:
                failed.append(consumer_uuid)
                self.placement.inject_fault(
                    method='GET', path='/allocations/' + consumer_uuid,
                    status=500)
            return real_read(client, context, consumer_uuid)
        self.useFixture(fixtures.FakeLogger(level=logging.WARNING))
        with mock.patch.object(type(self.placement.client),
                               'get_allocations_for_consumer', read):
            result = stress.run(self.placement, race.CORRECTED, race.DELETE,
                                servers=1, cycles=3, poll_interval=0.001)
        self.assertEqual(1, len(failed))
        self.assertEqual({'ConsumerAllocationRetrievalFailed': 1},
                         result.lost)
        self.assertEqual({outcomes.OK: 2}, result.counts)
        self.assertEqual(set(), stress.bad(result))
        self.assertEqual(result.usage_expected, result.usage_actual)
        self.assertEqual(1, sum(u.get('VCPU', 0) for u in
                                result.usage_actual.values()))

    def test_ghost_consumers_healed_are_counted(self):
        # Placement fails the consumer clean-up of two frees: each leaves a
        # ghost, and the next claim for that server heals it.
        self.placement.fail_consumer_cleanup(times=2)
        self.useFixture(fixtures.FakeLogger(level=logging.WARNING))
        result = stress.run(self.placement, race.CORRECTED, race.DELETE,
                            servers=2, cycles=3, poll_interval=0.001)
        self.assertEqual(2, result.ghosts_healed)
        self.assertEqual(set(), stress.bad(result))
        self.assertEqual(result.usage_expected, result.usage_actual)

    def test_usage_mismatch_is_reported(self):
        result = stress.StressResult('corrected', 'delete', 1, 1, 1.0,
                                     {outcomes.OK: 1}, {'a': {'VCPU': 1}},
                                     {'a': {}})
        self.assertEqual({'usage mismatch'}, stress.bad(result))


class StressCommandTestCase(base.TestCase):

    def run_main(self, *argv):
        out, err = io.StringIO(), io.StringIO()
        with mock.patch('sys.stderr', err):
            rc = main.main(list(argv), out=out)
        return rc, out.getvalue(), err.getvalue()

    def test_json(self):
        rc, out, _err = self.run_main('stress', '--backend', 'double',
                                      '--servers', '2', '--cycles', '3',
                                      '--json')
        self.assertEqual(0, rc)
        data = json.loads(out)
        self.assertTrue(data['corrected_is_clean'])
        self.assertEqual(['corrected', 'legacy'],
                         [r['ordering'] for r in data['results']])
        for r in data['results']:
            self.assertEqual(6, r['cycles'])
            self.assertGreater(r['cycles_per_second'], 0)

    def test_text(self):
        rc, out, _err = self.run_main('stress', '--backend', 'double',
                                      '--servers', '2', '--cycles', '2',
                                      '--ordering', 'corrected', '--free',
                                      'get-put', '--compute-latency', '1')
        self.assertEqual(0, rc)
        self.assertIn('+1 ms per compute placement request', out)
        self.assertIn('corrected  get-put', out)
        self.assertIn('Corrected order: no bad outcome', out)

    def test_corrected_failure_exits_non_zero(self):
        bad = stress.StressResult('corrected', 'delete', 1, 1, 1.0,
                                  {outcomes.SCHEDULER_409: 1}, {}, {})
        with mock.patch.object(stress, 'run', return_value=bad):
            rc, out, _err = self.run_main('stress', '--backend', 'double',
                                          '--ordering', 'corrected')
        self.assertEqual(1, rc)
        self.assertIn('BAD OUTCOMES FOUND', out)

    def test_bad_input(self):
        for argv, message in (
                (['--servers', '0'], '--servers must be at least 1'),
                (['--poll-interval', '0'], '--poll-interval must be'),
                (['--compute-latency', '-1'], 'cannot be negative'),
                (['--backend', 'remote'], 'needs --config-file')):
            rc, _out, err = self.run_main('stress', '--backend', 'double',
                                          *argv)
            self.assertEqual(2, rc)
            self.assertIn(message, err)

    def test_db_url(self):
        for url, message in (
                ('bogus', "--db-url 'bogus' is not a SQLAlchemy URL"),
                ('oracle://a/b', 'placement runs on postgresql, mysql or '
                                 'sqlite, not oracle'),
                ('sqlite:////nonexistent-dir/x.db',
                 'placement-manage db sync failed')):
            rc, out, err = self.run_main('stress', '--db-url', url,
                                         '--cycles', '1')
            self.assertEqual((2, ''), (rc, out), err)
            self.assertIn(message, err)
            self.assertEqual(1, len(err.splitlines()), err)

    def test_existing_sqlite_database(self):
        if server.missing_dependencies('sqlite'):
            self.skipTest('needs %s' % server.missing_dependencies('sqlite'))
        path = os.path.join(self.useFixture(fixtures.TempDir()).path,
                            'mine.db')
        rc, out, err = self.run_main(
            'stress', '--db-url', 'sqlite:///%s' % path, '--servers', '1',
            '--cycles', '2', '--ordering', 'corrected',
            '--server-workers', '1')
        self.assertEqual(0, rc, err)
        self.assertIn('on http://127.0.0.1:', out)
        self.assertIn(', sqlite\n', out)
        # Migrated and left in place.
        self.assertTrue(os.path.exists(path))

    def test_mariadb(self):
        # A short run on a private MariaDB server: the corrected order
        # clean, the database's figures reported, and the server gone when
        # the command returns.
        from shelvefix.tests.functional.backends import test_server
        test_server._require(self, 'mariadb')
        rc, out, err = self.run_main(
            'stress', '--database', 'mariadb', '--servers', '2', '--cycles',
            '3', '--json')
        self.assertEqual(0, rc, err)
        data = json.loads(out)
        self.assertTrue(data['corrected_is_clean'])
        self.assertIn(', mariadb', data['placement'])
        for r in data['results']:
            self.assertEqual('mariadb', r['database'])
            self.assertEqual({'deadlocks', 'lock waits', 'placement retries',
                              'placement gave up'},
                             set(r['database_counters']))
            self.assertEqual(0, r['ghost_consumers_left'])
            self.assertGreater(r['requests'], 6 * 4)
            self.assertGreater(r['requests_per_second'], 0)
        self.assertEqual([], mariadb_servers())


def mariadb_servers():
    """The pids of the mariadbd processes this process started, alive.

    Its children only: another test worker may run a cluster of its own
    meanwhile.
    """
    pids = []
    for entry in os.listdir('/proc'):
        if not entry.isdigit():
            continue
        try:
            with open('/proc/%s/cmdline' % entry, 'rb') as f:
                cmdline = f.read()
            with open('/proc/%s/stat' % entry) as f:
                parent = int(f.read().rsplit(')', 1)[1].split()[1])
        except (OSError, ValueError, IndexError):
            continue
        if (parent == os.getpid() and b'mariadbd' in cmdline and
                b'shelvefix-mariadb-' in cmdline):
            pids.append(int(entry))
    return pids
