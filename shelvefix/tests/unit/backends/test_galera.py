"""Tests for shelvefix.backends.galera that start no node."""

import threading
from unittest import mock

import requests
import testtools

from shelvefix.backends import galera

URLS = ['http://127.0.0.1:1', 'http://127.0.0.1:2', 'http://127.0.0.1:3']


def response(status):
    resp = requests.Response()
    resp.status_code = status
    return resp


class SpreadTransportTestCase(testtools.TestCase):

    def send(self, spread, answers, count):
        """``count`` requests; returns where each went."""
        sent = []

        def forward(self_, request, data, options):
            sent.append(request.url)
            answer = answers.get(request.url.rsplit('/', 1)[0], 200)
            if isinstance(answer, Exception):
                raise answer
            return response(answer)
        with mock.patch('shelvefix.backends.transport.HTTPTransport.'
                        '_forward', forward):
            for _i in range(count):
                request = requests.Request(
                    'GET', URLS[0] + '/resource_providers').prepare()
                try:
                    spread._forward(request, None, {})
                except requests.ConnectionError:
                    pass
        return [url.rsplit('/', 1)[0] for url in sent]

    def test_multi_writers_take_turns(self):
        spread = galera.SpreadTransport(URLS)
        self.assertEqual(URLS * 2, self.send(spread, {}, 6))

    def test_single_writer_sends_all_to_the_first(self):
        spread = galera.SpreadTransport(URLS, galera.SINGLE)
        self.assertEqual([URLS[0]] * 3, self.send(spread, {}, 3))

    def test_a_failing_server_is_left_out_for_a_while(self):
        spread = galera.SpreadTransport(URLS)
        sent = self.send(spread, {URLS[2]: 500}, 6)
        # The 500 is not sent again; the next requests avoid the server.
        self.assertEqual(URLS + [URLS[1], URLS[0], URLS[1]], sent)
        self.assertEqual({URLS[2]: 1}, spread.failures)
        # Once the interval is over it is tried again.
        spread.down[URLS[2]] = 0
        self.assertIn(URLS[2], self.send(spread, {}, 3))

    def test_the_single_writer_fails_over(self):
        spread = galera.SpreadTransport(URLS, galera.SINGLE)
        sent = self.send(spread, {URLS[0]: requests.ConnectionError()}, 3)
        self.assertEqual([URLS[0], URLS[1], URLS[1]], sent)
        self.assertEqual({URLS[0]: 1}, spread.failures)

    def test_every_server_down_still_tries(self):
        spread = galera.SpreadTransport(URLS)
        now = galera.time.monotonic()
        spread.down = {url: now + 60 for url in URLS}
        self.assertEqual(1, len(self.send(spread, {}, 1)))


class NodeCrashTestCase(testtools.TestCase):

    def test_killed_then_started_again(self):
        cluster = mock.Mock()
        crash = galera.NodeCrash(cluster, 2, after=0.01, down_for=0.01)
        crash.start()
        crash.join(5)
        cluster.kill.assert_called_once_with(2)
        cluster.restart.assert_called_once_with(2)
        self.assertIn('node 3 killed (SIGKILL) at 0.0 s, started again '
                      '0.0 s later, Synced at', crash.describe())

    def test_cancelled_before_the_kill(self):
        cluster = mock.Mock()
        crash = galera.NodeCrash(cluster, 0, after=30, down_for=1)
        crash.start()
        crash.cancel.set()
        crash.join(5)
        self.assertFalse(crash.is_alive())
        cluster.kill.assert_not_called()
        self.assertEqual('node 1 not killed: the run ended first',
                         crash.describe())

    def test_a_node_that_does_not_come_back_is_said(self):
        cluster = mock.Mock()
        cluster.restart.side_effect = RuntimeError('SST failed')
        crash = galera.NodeCrash(cluster, 1, after=0, down_for=0)
        crash.run()
        self.assertEqual('node 2 killed at 0.0 s, did not come back: '
                         'RuntimeError: SST failed', crash.describe())

    def test_its_wait_is_bounded(self):
        crash = galera.NodeCrash(mock.Mock(), 0, after=2, down_for=5)
        self.assertEqual(7 + galera.mariadb.START_TIMEOUT +
                         galera.mariadb.STOP_TIMEOUT, crash.timeout)
        self.assertIsInstance(crash.cancel, threading.Event)
