"""Serve a WSGI application over real HTTP on 127.0.0.1, for tests."""

import threading
import wsgiref.simple_server

import fixtures


class _QuietHandler(wsgiref.simple_server.WSGIRequestHandler):
    def log_message(self, *args):
        pass


class _ThreadingServer(wsgiref.simple_server.WSGIServer):
    daemon_threads = True
    # socketserver listens with a backlog of 5: a burst of concurrent
    # clients (a stress run's servers) would have connections dropped and
    # retried until they time out.
    request_queue_size = 128


class WSGIServerFixture(fixtures.Fixture):
    """``app`` on a free loopback port; ``url`` is its endpoint."""

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
