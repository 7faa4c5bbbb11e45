"""Tests for shelvefix.backends.galera that start no node."""

from unittest import mock

import fixtures
import testtools

from shelvefix.backends import galera


class _Node(object):
    """A node's counters, as ``MariaDBServer.status`` gives them."""

    def __init__(self, counted):
        self.counted = counted
        self.process = object()

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
        node.process, node.counted = object(), {'Innodb_deadlocks': 1}
        self.assertEqual([{'Innodb_deadlocks': 2}, {'Innodb_deadlocks': 6}],
                         cluster.status(names))

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
        with mock.patch.object(galera, 'recovered_position',
                               return_value='u:7'):
            cluster.restart(0)
        cluster.nodes[0].start.assert_called_once_with(
            args=['--wsrep-start-position=u:7'])
        with mock.patch.object(galera, 'recovered_position',
                               return_value=None):
            cluster.restart(0)
        cluster.nodes[0].start.assert_called_with(args=[])
