"""The tests' WSGI server serves requests concurrently."""

import socket
import threading
import time

import requests

from shelvefix.tests import base
from shelvefix.tests.functional import wsgi_server

#: Every wait of these tests is bounded by this many seconds.
WAIT = 10.0


class BlockingApp(object):
    """``/block`` waits for ``release``; anything else answers at once."""

    def __init__(self):
        self.blocked = threading.Event()
        self.release = threading.Event()

    def __call__(self, environ, start_response):
        if environ['PATH_INFO'] == '/block':
            self.blocked.set()
            released = self.release.wait(WAIT)
            body = b'released' if released else b'timed out'
        else:
            body = b'ok'
        start_response('200 OK', [('Content-Type', 'text/plain'),
                                  ('Content-Length', str(len(body)))])
        return [body]


class WSGIServerFixtureTestCase(base.TestCase):

    def setUp(self):
        super().setUp()
        self.app = BlockingApp()
        self.fixture = wsgi_server.WSGIServerFixture(self.app)
        self.useFixture(self.fixture)
        self.addCleanup(self.app.release.set)

    def test_a_request_is_served_while_another_is_under_way(self):
        first = []
        thread = threading.Thread(target=lambda: first.append(requests.get(
            self.fixture.url + '/block', timeout=WAIT * 2).text),
            daemon=True)
        thread.start()
        self.assertTrue(self.app.blocked.wait(WAIT))
        # Served while the first request still waits in the application.
        self.assertEqual('ok', requests.get(self.fixture.url + '/',
                                            timeout=WAIT / 2).text)
        self.assertFalse(self.app.release.is_set())
        self.app.release.set()
        thread.join(WAIT)
        self.assertEqual(['released'], first)

    def test_a_silent_connection_does_not_stall_the_others(self):
        # A client that connected and never sent its request (a process
        # interrupted between its connect and its send).
        silent = socket.create_connection(
            ('127.0.0.1', self.fixture.server.server_port))
        self.addCleanup(silent.close)
        time.sleep(0.2)
        self.assertEqual('ok', requests.get(self.fixture.url + '/',
                                            timeout=WAIT / 2).text)

    def test_clean_up_does_not_wait_for_open_connections(self):
        fixture = wsgi_server.WSGIServerFixture(BlockingApp())
        fixture.setUp()
        silent = socket.create_connection(
            ('127.0.0.1', fixture.server.server_port))
        self.addCleanup(silent.close)
        self.assertEqual('ok', requests.get(fixture.url + '/',
                                            timeout=WAIT / 2).text)
        started = time.monotonic()
        fixture.cleanUp()
        self.assertLess(time.monotonic() - started, 5.0)
        self.assertRaises(requests.ConnectionError, requests.get,
                          fixture.url + '/', timeout=WAIT / 2)
