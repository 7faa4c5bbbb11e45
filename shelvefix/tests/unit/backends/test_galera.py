"""Tests for shelvefix.backends.galera that start no node."""

from unittest import mock

import fixtures
import testtools

from shelvefix.backends import galera


def _running():
    return mock.Mock(poll=mock.Mock(return_value=None), pid=4242,
                     returncode=None)


class _Node(object):
    """A node's counters, as ``MariaDBServer.status`` gives them."""

    def __init__(self, counted):
        self.counted = counted
        self.process = _running()
        self.port = 3306

    @property
    def pid(self):
        return self.process.pid if self.process is not None else None

    def status(self, names):
        return {name: self.counted[name] for name in names
                if name in self.counted}

    def kill(self):
        self.process = None


class CountersTestCase(testtools.TestCase):
    """A node restarts its counters from 0; the cluster's only grow."""

    def cluster(self, *counted):
        cluster = galera.GaleraCluster(nodes=len(counted))
        cluster.nodes = [_Node(dict(c)) for c in counted]
        return cluster

    def test_a_killed_node_carries_its_counters_over(self):
        cluster = self.cluster({'Innodb_deadlocks': 2},
                               {'Innodb_deadlocks': 5})
        names = ['Innodb_deadlocks']
        self.assertEqual([{'Innodb_deadlocks': 2}, {'Innodb_deadlocks': 5}],
                         cluster.status(names))
        cluster.kill(1)
        # Down: what it had counted still counts.
        self.assertEqual([{'Innodb_deadlocks': 2}, {'Innodb_deadlocks': 5}],
                         cluster.status(names))
        # Started again from 0, it counts one more.
        node = cluster.nodes[1]
        node.process, node.counted = _running(), {'Innodb_deadlocks': 1}
        self.assertEqual([{'Innodb_deadlocks': 2}, {'Innodb_deadlocks': 6}],
                         cluster.status(names))

    def test_a_node_dead_from_outside_is_skipped_and_named(self):
        cluster = self.cluster({'Innodb_deadlocks': 2},
                               {'Innodb_deadlocks': 5})
        cluster.nodes[1].port = 40123
        # SIGKILLed by someone else: the run did not take it away.
        cluster.nodes[1].process.poll.return_value = -9
        cluster.nodes[1].status = mock.Mock(side_effect=OSError('refused'))
        self.assertEqual([{'Innodb_deadlocks': 2}, {}],
                         cluster.status(['Innodb_deadlocks']))
        self.assertEqual(['node 2 (127.0.0.1:40123, pid 4242): it died '
                          '(exit status -9)'], cluster.unread)
        cluster.nodes[1].status.assert_not_called()

    def test_a_node_that_does_not_answer_is_named(self):
        cluster = self.cluster({'Innodb_deadlocks': 2})
        cluster.nodes[0].port = 40123
        cluster.nodes[0].status = mock.Mock(
            side_effect=OSError("Can't connect to MySQL server"))
        self.assertEqual([{}], cluster.status(['Innodb_deadlocks']))
        self.assertEqual(["node 1 (127.0.0.1:40123, pid 4242): Can't "
                          "connect to MySQL server"], cluster.unread)

    def test_counters_unreadable_before_the_kill_are_said(self):
        cluster = self.cluster({'Innodb_deadlocks': 2})
        cluster.nodes[0].status = mock.Mock(side_effect=OSError('hung'))
        with mock.patch.object(galera.LOG, 'warning') as warning:
            cluster.kill(0)
        self.assertIsNone(cluster.nodes[0].process)
        self.assertIn('not read before the kill', warning.call_args[0][0])


class RecoveredPositionTestCase(testtools.TestCase):

    def node(self, log_text, error=None):
        directory = self.useFixture(fixtures.TempDir()).path
        # What the machine has installed plays no part.
        self.useFixture(fixtures.MockPatch(
            'shelvefix.backends.mariadb._tool',
            return_value='/usr/sbin/mariadbd'))
        node = mock.Mock(directory=directory, defaults_file='my.cnf')

        def run(cmd, what):
            if error is not None:
                raise error
            log = [a for a in cmd if a.startswith('--log-error=')][0]
            with open(log.split('=', 1)[1], 'w') as f:
                f.write(log_text)
        node._run.side_effect = run
        return node

    def test_the_position_the_engine_recovered(self):
        node = self.node('[Note] InnoDB: ...\n[Note] WSREP: Recovered '
                         'position: 692f2779-edf0-11f1-8e84-b6c3df0b11f6:57\n')
        self.assertEqual('692f2779-edf0-11f1-8e84-b6c3df0b11f6:57',
                         galera.recovered_position(node))
        cmd = node._run.call_args[0][0]
        self.assertEqual(['--defaults-file=my.cnf', '--wsrep-recover'],
                         cmd[1:3])

    def test_no_position_means_a_full_transfer(self):
        for text in ('nothing recovered\n',
                     'WSREP: Recovered position: '
                     '00000000-0000-0000-0000-000000000000:-1\n'):
            self.assertIsNone(galera.recovered_position(self.node(text)))

    def test_a_recovery_that_fails_means_a_full_transfer(self):
        node = self.node('', error=galera.backends.ServerStartError('boom'))
        with mock.patch.object(galera.LOG, 'warning') as warning:
            self.assertIsNone(galera.recovered_position(node))
        self.assertIn('full state transfer', warning.call_args[0][0])

    def test_restart_gives_the_position_to_the_start(self):
        cluster = galera.GaleraCluster(nodes=1)
        cluster.nodes = [mock.Mock()]
        cluster.wait_whole = mock.Mock()
        with mock.patch.object(galera, 'recovered_position',
                               return_value='u:7'):
            cluster.restart(0)
        cluster.nodes[0].start.assert_called_once_with(
            args=['--wsrep-start-position=u:7'])
        with mock.patch.object(galera, 'recovered_position',
                               return_value=None):
            cluster.restart(0)
        cluster.nodes[0].start.assert_called_with(args=[])
        cluster.wait_whole.assert_called_with('node 1 was started again')


def _status(state='Synced', status='Primary', size='3'):
    return [('wsrep_local_state_comment', state),
            ('wsrep_cluster_status', status), ('wsrep_cluster_size', size)]


class WholeTestCase(testtools.TestCase):
    """After a fault, a node's own Synced is not enough."""

    def cluster(self, *statuses):
        """Three nodes, each answering its statuses in turn."""
        cluster = galera.GaleraCluster()
        cluster.nodes = [mock.Mock(_execute=mock.Mock(side_effect=answers))
                         for answers in statuses]
        return cluster

    def test_every_node_synced_primary_and_seeing_all(self):
        self.assertTrue(self.cluster([_status()], [_status()],
                                     [_status()]).whole())
        for other in (_status(state='Donor/Desynced'),
                      _status(status='non-Primary'),
                      _status(size='2')):
            self.assertFalse(self.cluster([_status()], [_status()],
                                          [other]).whole())
        cluster = self.cluster([_status()], [_status()], [_status()])
        cluster.nodes[1].process = None
        self.assertFalse(cluster.whole())

    def test_waits_through_a_lost_primary_component(self):
        # As seen after a SIGCONT: the resumed node Synced on its own
        # view, then every node non-Primary for a while, then whole. One
        # row per poll, the nodes' answers then.
        lost = _status(state='Initialized', status='non-Primary', size='1')
        rows = [[_status(size='2'), _status(size='2'), _status()],
                [lost, lost, lost],
                [_status(), lost, lost],
                [_status(), _status(), _status()],
                [_status(), _status(), _status()]]
        polls = []
        cluster = galera.GaleraCluster()
        cluster.nodes = [
            mock.Mock(_execute=mock.Mock(
                side_effect=lambda *a, i=i, **k: rows[len(polls)][i]))
            for i in range(3)]
        with mock.patch.object(galera.time, 'sleep',
                               side_effect=polls.append):
            cluster.wait_whole('node 3 was resumed', timeout=5, interval=0)
        # Whole at the fourth poll, and still at the fifth.
        self.assertEqual(4, len(polls))

    def test_a_node_not_answering_is_not_whole(self):
        cluster = self.cluster([OSError('down'), _status(), _status()],
                               [_status(), _status()],
                               [_status(), _status()])
        cluster.wait_whole('x', timeout=5, interval=0)
        self.assertEqual(3, cluster.nodes[0]._execute.call_count)

    def test_bounded(self):
        cluster = galera.GaleraCluster()
        cluster.nodes = [mock.Mock(_execute=mock.Mock(
            return_value=_status(size='2'))) for _i in range(3)]
        e = self.assertRaises(galera.backends.ServerStartError,
                              cluster.wait_whole, 'node 3 was resumed',
                              timeout=0.05, interval=0.01)
        self.assertEqual('the cluster was not whole (every node Synced, in '
                         'one primary component) 0 s after node 3 was '
                         'resumed', str(e))

    def test_resume_waits_for_the_whole_cluster(self):
        cluster = galera.GaleraCluster()
        cluster.nodes = [mock.Mock() for _i in range(3)]
        cluster.wait_whole = mock.Mock()
        cluster.resume(2)
        cluster.nodes[2].process.send_signal.assert_called_once_with(
            galera.signal.SIGCONT)
        cluster.wait_whole.assert_called_once_with('node 3 was resumed')
