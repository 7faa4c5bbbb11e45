"""Serve a WSGI application over real HTTP on 127.0.0.1, for tests."""

import socketserver
import threading
import wsgiref.simple_server

import fixtures


class _QuietHandler(wsgiref.simple_server.WSGIRequestHandler):
    def log_message(self, *args):
        pass


class _ThreadingServer(socketserver.ThreadingMixIn,
                       wsgiref.simple_server.WSGIServer):
    """One thread per connection, as a placement with many workers.

    A single-threaded server serves one connection at a time: a stress
    run's concurrent clients would queue behind each other, and one client
    that connects and never sends its request (a process interrupted
    between its connect and its send) would stall every other request
    until their timeouts. The applications served here are thread-safe
    (the placement double guards its state with a lock).
    """

    # A connection still open when the server closes (a client that went
    # away without closing it) must not keep the test waiting: its thread
    # is a daemon, and server_close does not join it.
    daemon_threads = True
    block_on_close = False
    # socketserver listens with a backlog of 5: a burst of concurrent
    # clients (a stress run's servers) would have connections dropped and
    # retried until they time out.
    request_queue_size = 128


class WSGIServerFixture(fixtures.Fixture):
    """``app`` on a free loopback port; ``url`` is its endpoint.

    Requests are served concurrently, each connection in a thread of its
    own, so ``app`` must be thread-safe.
    """

    def __init__(self, app):
        super().__init__()
        self.app = app

    def _setUp(self):
        self.server = wsgiref.simple_server.make_server(
            '127.0.0.1', 0, self.app, server_class=_ThreadingServer,
            handler_class=_QuietHandler)
        self.addCleanup(self.server.server_close)
        thread = threading.Thread(target=self.server.serve_forever,
                                  daemon=True)
        thread.start()
        self.addCleanup(thread.join, 5)
        self.addCleanup(self.server.shutdown)
        self.url = 'http://127.0.0.1:%d' % self.server.server_port
