"""Tests for shelvefix.backends.loadbalancer: both balancers' fail-over.

The database proxy's nodes are plain TCP servers on 127.0.0.1 that answer
each line with their own name, so that a client can tell which node it
reached; the spreading transport's servers are a mock.
"""

import socket
import socketserver
import threading
from unittest import mock

import requests
import testtools
import urllib3

from shelvefix.backends import loadbalancer
from shelvefix.tests import base

#: Every wait of these tests is bounded by this many seconds.
WAIT = 5.0


class _Named(socketserver.ThreadingTCPServer):
    daemon_threads = True
    allow_reuse_address = True

    def __init__(self, name):
        self.name = name.encode()

        class Handler(socketserver.StreamRequestHandler):
            def handle(handler):
                for _line in handler.rfile:
                    handler.wfile.write(self.name + b'\n')
        super().__init__(('127.0.0.1', 0), Handler)
        self.port = self.server_address[1]


class DatabaseProxyTestCase(base.TestCase):

    def setUp(self):
        super().setUp()
        self.healthy = {'a': True, 'b': True}
        self.nodes = []
        for name in ('a', 'b'):
            node = _Named(name)
            threading.Thread(target=node.serve_forever, daemon=True).start()
            self.addCleanup(node.server_close)
            self.addCleanup(node.shutdown)
            self.nodes.append(node)
        self.proxy = self.useFixture(loadbalancer.DatabaseProxy(
            [(node.port, self.check(node.name.decode()))
             for node in self.nodes], check_interval=0.05))

    def check(self, name):
        def check():
            if self.healthy[name] is None:
                raise OSError('no answer')
            return self.healthy[name]
        return check

    def connect(self):
        sock = socket.create_connection(('127.0.0.1', self.proxy.port),
                                        WAIT)
        sock.settimeout(WAIT)
        self.addCleanup(sock.close)
        return sock

    def ask(self, sock):
        sock.sendall(b'which\n')
        return sock.recv(100)

    def wait_for(self, condition):
        event = threading.Event()
        for _i in range(int(WAIT / 0.02)):
            if condition():
                return
            event.wait(0.02)
        self.fail('condition not met within %s s' % WAIT)

    def test_connections_go_to_the_first_healthy_node(self):
        self.assertEqual(b'a\n', self.ask(self.connect()))

    def test_a_node_marked_down_has_its_sessions_shut(self):
        sock = self.connect()
        self.assertEqual(b'a\n', self.ask(sock))
        self.healthy['a'] = False
        self.wait_for(lambda: self.proxy.up == {1})
        # The session with the node marked down is closed: its client
        # sees the end of the stream, and reconnects elsewhere.
        self.assertEqual(b'', sock.recv(100))
        self.assertEqual(b'b\n', self.ask(self.connect()))
        self.assertEqual(1, self.proxy.marked_down)
        self.assertEqual(1, self.proxy.sessions_shut)

    def test_a_check_that_raises_marks_the_node_down(self):
        self.healthy['a'] = None
        self.wait_for(lambda: self.proxy.up == {1})
        self.assertEqual(b'b\n', self.ask(self.connect()))

    def test_a_node_back_takes_new_connections_again(self):
        self.healthy['a'] = False
        self.wait_for(lambda: self.proxy.up == {1})
        on_b = self.connect()
        self.assertEqual(b'b\n', self.ask(on_b))
        self.healthy['a'] = True
        self.wait_for(lambda: self.proxy.up == {0, 1})
        self.assertEqual(b'a\n', self.ask(self.connect()))
        # A healthy node's sessions are left alone.
        self.assertEqual(b'b\n', self.ask(on_b))

    def test_a_refused_connection_goes_to_the_next_node(self):
        # The check has not run yet since node a stopped listening.
        self.nodes[0].shutdown()
        self.nodes[0].server_close()
        self.assertEqual(b'b\n', self.ask(self.connect()))

    def test_no_node_up_closes_the_connection(self):
        self.healthy.update(a=False, b=False)
        self.wait_for(lambda: self.proxy.up == set())
        self.assertEqual(b'', self.connect().recv(100))


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
        spread = loadbalancer.SpreadTransport(URLS)
        self.assertEqual(URLS * 2, self.send(spread, {}, 6))

    def test_single_writer_sends_all_to_the_first(self):
        spread = loadbalancer.SpreadTransport(URLS, loadbalancer.SINGLE)
        self.assertEqual([URLS[0]] * 3, self.send(spread, {}, 3))

    def test_a_failing_server_is_left_out_for_a_while(self):
        spread = loadbalancer.SpreadTransport(URLS)
        sent = self.send(spread, {URLS[2]: 500}, 6)
        # The 500 is not sent again; the next requests avoid the server.
        self.assertEqual(URLS + [URLS[1], URLS[0], URLS[1]], sent)
        self.assertEqual({URLS[2]: 1}, spread.failures)
        # Once the interval is over it is tried again.
        spread.down[URLS[2]] = 0
        self.assertIn(URLS[2], self.send(spread, {}, 3))

    def test_the_single_writer_fails_over(self):
        spread = loadbalancer.SpreadTransport(URLS, loadbalancer.SINGLE)
        sent = self.send(spread, {URLS[0]: requests.ConnectionError()}, 3)
        # The first read is sent again to the next server at once.
        self.assertEqual([URLS[0], URLS[1], URLS[1], URLS[1]], sent)
        self.assertEqual({URLS[0]: 1}, spread.failures)

    def test_every_server_down_still_tries(self):
        spread = loadbalancer.SpreadTransport(URLS)
        now = loadbalancer.time.monotonic()
        spread.down = {url: now + 60 for url in URLS}
        self.assertEqual(1, len(self.send(spread, {}, 1)))


def _refused(url):
    return requests.ConnectionError(urllib3.exceptions.MaxRetryError(
        None, url, urllib3.exceptions.NewConnectionError(
            None, 'Connection refused')))


class RedispatchTestCase(testtools.TestCase):
    """A server that refuses a connection has nothing of the request."""

    def test_a_refused_request_goes_to_another_server(self):
        spread = loadbalancer.SpreadTransport(URLS, loadbalancer.SINGLE)
        request = requests.Request('GET', URLS[0] + '/x').prepare()
        sent = []

        def forward(self_, request, data, options):
            sent.append(request.url)
            if request.url.startswith(URLS[0]):
                raise _refused(request.url)
            return response(200)
        with mock.patch('shelvefix.backends.transport.HTTPTransport.'
                        '_forward', forward):
            self.assertEqual(200, spread._forward(request, None, {})
                             .status_code)
        self.assertEqual([URLS[0] + '/x', URLS[1] + '/x'], sent)
        self.assertEqual({URLS[0]: 1}, spread.redispatched)
        self.assertEqual({URLS[0]: 1}, spread.failures)

    def test_every_server_refusing_names_the_last(self):
        spread = loadbalancer.SpreadTransport(URLS)
        spread.names = {URLS[2]: 'placement server 3 (pid 7)'}
        sent = SpreadTransportTestCase.send(
            self, spread, {url: _refused(url) for url in URLS}, 1)
        # One request, tried on each server once.
        self.assertEqual(sorted(URLS), sorted(sent))
        request = requests.Request('GET', URLS[0] + '/x').prepare()
        spread.down = {}

        def refuse(self_, request, data, options):
            raise _refused(request.url)
        with mock.patch('shelvefix.backends.transport.HTTPTransport.'
                        '_forward', refuse):
            error = self.assertRaises(requests.ConnectionError,
                                      spread._forward, request, None, {})
        self.assertIn('placement server', str(error))

    def test_a_request_lost_after_it_was_sent_is_not_sent_again(self):
        spread = loadbalancer.SpreadTransport(URLS, loadbalancer.SINGLE)
        spread.names = {URLS[0]: 'placement server 1 (pid 5)'}
        lost = requests.ConnectionError(urllib3.exceptions.ProtocolError(
            'Connection aborted.', ConnectionResetError()))
        request = requests.Request('PUT', URLS[0] + '/x').prepare()
        with mock.patch('shelvefix.backends.transport.HTTPTransport.'
                        '_forward', side_effect=lost) as forward:
            error = self.assertRaises(requests.ConnectionError,
                                      spread._forward, request, None, {})
        self.assertEqual(1, forward.call_count)
        self.assertTrue(str(error).startswith('placement server 1 (pid 5): '))
        self.assertEqual({}, spread.redispatched)

    def test_a_read_lost_after_it_was_sent_is_sent_again(self):
        spread = loadbalancer.SpreadTransport(URLS, loadbalancer.SINGLE)
        lost = requests.ConnectionError(urllib3.exceptions.ProtocolError(
            'Connection aborted.', ConnectionResetError()))
        request = requests.Request('GET', URLS[0] + '/x').prepare()
        with mock.patch('shelvefix.backends.transport.HTTPTransport.'
                        '_forward', side_effect=[lost, response(200)]):
            self.assertEqual(200, spread._forward(request, None, {})
                             .status_code)
        self.assertEqual(URLS[1] + '/x', request.url)
        self.assertEqual({URLS[0]: 1}, spread.redispatched)


class NeverSentTestCase(testtools.TestCase):
    """What ``requests`` raises for real, told apart."""

    def test_a_refused_connection_was_never_sent(self):
        sock = socket.socket()
        sock.bind(('127.0.0.1', 0))
        port = sock.getsockname()[1]
        sock.close()
        error = self.assertRaises(requests.ConnectionError, requests.get,
                                  'http://127.0.0.1:%d/' % port, timeout=5)
        self.assertTrue(loadbalancer.never_sent(error))

    def test_a_connection_closed_after_the_request_was_sent(self):
        listener = socket.socket()
        listener.bind(('127.0.0.1', 0))
        listener.listen(1)
        self.addCleanup(listener.close)

        def serve():
            conn, _address = listener.accept()
            conn.recv(1024)
            conn.close()
        thread = threading.Thread(target=serve, daemon=True)
        thread.start()
        error = self.assertRaises(
            requests.ConnectionError, requests.put,
            'http://127.0.0.1:%d/' % listener.getsockname()[1], data=b'x',
            timeout=5)
        thread.join(5)
        self.assertFalse(loadbalancer.never_sent(error))
