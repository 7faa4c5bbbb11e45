"""Let concurrent actors' placement requests through in a scripted order.

Each actor runs in its own thread with its own request id prefix
(``req-compute-``, ``req-scheduler-``). The sequencer wraps the placement
transport: a request from a scripted actor waits until the script's next
step is that actor's method, then goes through. Requests of actors not in
the script, and every request once the script is played out, pass freely.
A step that never comes fails the test instead of hanging it.
"""

import threading

WAIT_SECONDS = 10


class ScriptTimeout(AssertionError):
    pass


class Sequencer(object):
    """Orders requests by ``script``, a list of ``(actor, method)``."""

    def __init__(self, transport, script):
        self.transport = transport
        self.script = list(script)
        self.actors = {actor for actor, _ in script}
        self.position = 0
        self._cond = threading.Condition()
        self._send = transport.send

    def _actor(self, request):
        request_id = request.headers.get('X-OpenStack-Request-ID') or ''
        for actor in self.actors:
            if request_id.startswith('req-%s-' % actor):
                return actor
        return None

    def send(self, request, **kwargs):
        actor = self._actor(request)
        if actor is None or self.finished:
            return self._send(request, **kwargs)
        step = (actor, request.method.upper())
        with self._cond:
            ready = self._cond.wait_for(
                lambda: (self.position < len(self.script) and
                         self.script[self.position] == step),
                timeout=WAIT_SECONDS)
            if not ready:
                raise ScriptTimeout(
                    '%s %s never got its turn; script position %d of %r'
                    % (actor, request.method, self.position, self.script))
        try:
            return self._send(request, **kwargs)
        finally:
            with self._cond:
                self.position += 1
                self._cond.notify_all()

    def install(self, test):
        """Wrap the transport for the duration of ``test``."""
        self.transport.send = self.send
        test.addCleanup(setattr, self.transport, 'send', self._send)

    @property
    def finished(self):
        return self.position == len(self.script)


class Actor(threading.Thread):
    """Run ``func`` in a thread; keep its result or exception."""

    def __init__(self, name, func):
        super(Actor, self).__init__(name=name, daemon=True)
        self.func = func
        self.result = None
        self.error = None

    def run(self):
        try:
            self.result = self.func()
        except BaseException as e:
            self.error = e

    def finish(self, test):
        self.join(WAIT_SECONDS * 2)
        test.assertFalse(self.is_alive(), '%s did not finish' % self.name)
        return self.error
