"""HAProxy's two places in a Galera deployment, on 127.0.0.1.

:class:`SpreadTransport` is the balancer in front of the placement API
servers, on the client's side; :class:`DatabaseProxy` the one in front of
the database nodes, for one placement server.

Deployments do not connect placement to one Galera node: each API server
reaches the cluster through HAProxy, which health-checks the nodes (a
``clustercheck`` that asks whether the node is ``Synced``), sends every
new connection to the first healthy one of its list, and shuts the
sessions of a node it marks down (``on-marked-down shutdown-sessions``)
so that their clients reconnect elsewhere. :class:`DatabaseProxy` does
the same on 127.0.0.1, for one placement server: its own node first, the
others as backups.

Every wait is bounded: the health check runs every
:data:`CHECK_INTERVAL` seconds with the check's own timeout, a connection
to a node times out after :data:`CONNECT_TIMEOUT` seconds, and cleanup
closes every session and joins its threads.
"""

import itertools
import socket
import threading
import time

import fixtures
from oslo_log import log as logging
import requests
import urllib3

from shelvefix.backends import transport

LOG = logging.getLogger(__name__)

#: Seconds between two health checks of every node.
CHECK_INTERVAL = 0.5
#: Seconds a connection to a node may take.
CONNECT_TIMEOUT = 2.0
#: Seconds cleanup waits for each thread.
JOIN_TIMEOUT = 5.0
_CHUNK = 65536

MULTI = 'multi'
SINGLE = 'single'
WRITERS = (MULTI, SINGLE)
#: Seconds a server that failed a request is left out of the rotation.
HEALTH_INTERVAL = 2.0
#: Methods a request of which is sent again after its connection was lost
#: (HAProxy's ``retry-on`` retries these only): nothing it did is lost.
IDEMPOTENT = ('GET', 'HEAD', 'OPTIONS')


class SpreadTransport(transport.HTTPTransport):
    """Real HTTP to several placement servers, one request after another.

    Mounted at the first server's endpoint, it sends each request to the
    next server in turn (``multi``: every node is written through, the
    worst case for Galera's certification), or every one to the first
    (``single``, as operators who fear it configure HAProxy, the others
    standing by). Like a load balancer's health check, a server that
    failed a request (no answer, or a 5xx) is left out for
    :data:`HEALTH_INTERVAL` seconds: requests fail over to the others. A
    request whose connection a server refused (it died: nothing was sent)
    goes to the next server at once, as HAProxy's ``option redispatch``
    does, and so does a read (:data:`IDEMPOTENT`) whose connection was
    lost; a write that failed after it was sent is not sent again (it
    may have been applied), and its error names the server. The call log is
    one, in order, as for one server.

    :param urls: the servers' endpoints; the first is the one mounted
    """

    def __init__(self, urls, writers=MULTI):
        super(SpreadTransport, self).__init__()
        self.urls = [url.rstrip('/') for url in urls]
        self.writers = writers
        self._next = itertools.count()
        self._lock = threading.Lock()
        #: ``{url: time}`` until which a failed server is left out.
        self.down = {}
        #: ``{url: count}`` of the requests that failed there.
        self.failures = {}
        #: ``{url: count}`` of the requests it refused, sent on elsewhere.
        self.redispatched = {}
        #: ``{url: name}`` for messages (see :meth:`describe`).
        self.names = {}

    def _forward(self, request, data, options):
        rest = request.url[len(self.urls[0]):]
        tried = []
        while True:
            target = self._choose(exclude=tried)
            request.url = target + rest
            try:
                response = super(SpreadTransport, self)._forward(
                    request, data, options)
            except requests.exceptions.ConnectionError as e:
                self._failed(target)
                tried.append(target)
                if ((never_sent(e) or request.method in IDEMPOTENT) and
                        len(tried) < len(self.urls)):
                    # As HAProxy's "option redispatch" and its layer 7
                    # retries: a connection the server refused carried
                    # nothing, and a read may be made again; another
                    # server takes the request.
                    with self._lock:
                        self.redispatched[target] = (
                            self.redispatched.get(target, 0) + 1)
                    continue
                raise type(e)('%s: %s' % (self.describe(target), e),
                              request=request) from e
            except Exception:
                self._failed(target)
                raise
            if response.status_code >= 500:
                self._failed(target)
            return response

    def describe(self, url):
        """What the report calls the server at ``url``."""
        return self.names.get(url) or 'placement server %s' % url

    def _choose(self, clock=time.monotonic, exclude=()):
        # As a load balancer's health check: a server that failed is left
        # out for HEALTH_INTERVAL seconds, and one that refused this
        # request's connection is not tried again for it.
        with self._lock:
            now = clock()
            candidates = [url for url in self.urls if url not in exclude]
            healthy = [url for url in candidates
                       if self.down.get(url, 0) <= now] or candidates
            if self.writers == SINGLE:
                # The first healthy one: the others are the standbys.
                return healthy[0]
            return healthy[next(self._next) % len(healthy)]

    def _failed(self, url, clock=time.monotonic):
        with self._lock:
            self.down[url] = clock() + HEALTH_INTERVAL
            self.failures[url] = self.failures.get(url, 0) + 1


def never_sent(error):
    """Whether a ``requests`` connection error failed before sending.

    True for a refused or timed-out connect (the server never saw the
    request), False for a connection lost after the request went out.
    """
    if isinstance(error, requests.exceptions.ConnectTimeout):
        return True
    reason = error.args[0] if error.args else None
    reason = getattr(reason, 'reason', reason)
    return isinstance(reason, urllib3.exceptions.ConnectTimeoutError)


class _Session(object):
    """One client connection and its node's, pumped both ways."""

    def __init__(self, client, upstream, backend):
        self.client = client
        self.upstream = upstream
        self.backend = backend
        self.threads = [
            threading.Thread(target=self._pump, args=(client, upstream),
                             daemon=True, name='loadbalancer-up'),
            threading.Thread(target=self._pump, args=(upstream, client),
                             daemon=True, name='loadbalancer-down')]

    def start(self):
        for thread in self.threads:
            thread.start()

    def _pump(self, source, sink):
        try:
            while True:
                data = source.recv(_CHUNK)
                if not data:
                    break
                sink.sendall(data)
        except OSError:
            pass
        finally:
            self.close()

    def close(self):
        for sock in (self.client, self.upstream):
            try:
                sock.shutdown(socket.SHUT_RDWR)
            except OSError:
                pass
            sock.close()

    def alive(self):
        return any(thread.is_alive() for thread in self.threads)


class DatabaseProxy(fixtures.Fixture):
    """Listen on 127.0.0.1; forward each connection to a healthy node.

    :param nodes: ``(port, check)`` of each node, in order of preference:
        a new connection goes to the first node whose last health check
        passed; ``check()`` returns True when the node may take clients,
        and may raise (a failed check)
    :param check_interval: seconds between health checks

    After setUp: ``port``; ``up`` the indexes of the nodes that passed the
    last check; ``marked_down`` how many times a node was marked down,
    ``sessions_shut`` how many sessions that shut.
    """

    def __init__(self, nodes, check_interval=CHECK_INTERVAL):
        super().__init__()
        self.nodes = list(nodes)
        self.check_interval = check_interval
        self.up = set(range(len(self.nodes)))
        self.marked_down = 0
        self.sessions_shut = 0
        self._sessions = []
        self._lock = threading.Lock()
        self._stopping = threading.Event()

    def _setUp(self):
        self._listener = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
        self._listener.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        self._listener.bind(('127.0.0.1', 0))
        self._listener.listen(128)
        self._listener.settimeout(self.check_interval)
        self.port = self._listener.getsockname()[1]
        self._check_all()
        self._threads = [
            threading.Thread(target=self._accept, daemon=True,
                             name='loadbalancer-accept'),
            threading.Thread(target=self._health, daemon=True,
                             name='loadbalancer-health')]
        for thread in self._threads:
            thread.start()
        self.addCleanup(self._stop)

    def _stop(self):
        self._stopping.set()
        for thread in self._threads:
            thread.join(JOIN_TIMEOUT)
        self._listener.close()
        with self._lock:
            sessions, self._sessions = self._sessions, []
        for session in sessions:
            session.close()
        for session in sessions:
            for thread in session.threads:
                thread.join(JOIN_TIMEOUT)

    def _check(self, index):
        try:
            return bool(self.nodes[index][1]())
        except Exception:
            return False

    def _check_all(self):
        up = {i for i in range(len(self.nodes)) if self._check(i)}
        with self._lock:
            down = self.up - up
            self.up = up
            shut = [s for s in self._sessions if s.backend in down]
            self._sessions = [s for s in self._sessions
                              if s.backend not in down and s.alive()]
            self.marked_down += len(down)
            self.sessions_shut += len(shut)
        for index in sorted(down):
            LOG.warning('Database node on port %d marked down: its %d '
                        'sessions are shut', self.nodes[index][0],
                        len([s for s in shut if s.backend == index]))
        for session in shut:
            session.close()

    def _health(self):
        while not self._stopping.wait(self.check_interval):
            self._check_all()

    def _accept(self):
        while not self._stopping.is_set():
            try:
                client, _address = self._listener.accept()
            except socket.timeout:
                continue
            except OSError:
                return
            self._forward(client)

    def _forward(self, client):
        with self._lock:
            order = sorted(self.up)
        for index in order:
            try:
                upstream = socket.create_connection(
                    ('127.0.0.1', self.nodes[index][0]), CONNECT_TIMEOUT)
            except OSError:
                continue
            upstream.settimeout(None)
            session = _Session(client, upstream, index)
            with self._lock:
                self._sessions.append(session)
            session.start()
            return
        # No node takes it: the client sees its connection closed, as
        # HAProxy with every backend down would do.
        client.close()
