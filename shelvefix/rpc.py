"""Casts and calls between services that run in one process.

nova's services talk over a message bus: the conductor *casts*
``unshelve_instance`` to the chosen compute host and does not wait for it.
:class:`Transport` keeps one queue per (topic, server) so that services run
as threads of one process (the race lab, tests) hand work to each other the
same way: a cast returns at once, the receiving service takes messages in
order from its own queue.

Arguments are copied as a message bus copies them: the receiver gets its
own objects (``obj_clone()`` for objects that have it, such as an
instance, whose unsaved changes travel with it as with nova's serialised
objects; a deep copy for anything else).

A *call* (:meth:`Transport.call`) is answered at once, in the caller's
thread: the service registered for the server (:meth:`Transport.serve_calls`)
runs the method on copies of the arguments while the caller waits, and the
caller gets a copy of what it returned, or its exception. A call is not a
step of its own: what the callee touches (its store, its locks, placement)
is.

``interceptor``, when set, is called before each cast and receive as
``interceptor(op, queue, guard=None)`` with op ``'cast'`` or
``'receive'``, ``queue`` the ``(topic, server)`` pair, and for a receive
a guard saying whether a message is waiting; it returns a handle whose
``done(result)`` is called with the method name. The interleaving explorer
uses it to schedule casts and receives as steps.
"""

import collections
import copy
import threading
import time

Message = collections.namedtuple('Message', ['method', 'context', 'kwargs'])


def _copy(value):
    clone = getattr(value, 'obj_clone', None)
    if clone is not None:
        return clone()
    if isinstance(value, list):
        # A list of objects (a reschedule's instances) is copied item by
        # item, each as it travels alone.
        return [_copy(item) for item in value]
    return copy.deepcopy(value)


class NothingToReceive(Exception):
    """The receiver stopped waiting: no message will come."""


class NoReply(Exception):
    """No service answers calls for that server (nova's timeout)."""


class _NoHandle(object):
    def done(self, result=None):
        return result


_NO_HANDLE = _NoHandle()


class Transport(object):
    """In-memory queues, one per (topic, server)."""

    def __init__(self):
        self._queues = collections.defaultdict(collections.deque)
        self._cond = threading.Condition()
        self._endpoints = {}
        self.interceptor = None

    def _intercept(self, op, queue, guard=None):
        if self.interceptor is None:
            return _NO_HANDLE
        return self.interceptor(op, queue, guard=guard)

    def cast(self, topic, server, method, context, **kwargs):
        """Queue a call of ``method`` for ``server``; returns at once."""
        handle = self._intercept('cast', (topic, server))
        with self._cond:
            self._queues[(topic, server)].append(Message(
                method, context,
                {name: _copy(value) for name, value in kwargs.items()}))
            self._cond.notify_all()
        handle.done(method)

    def serve_calls(self, topic, server, endpoint):
        """Let ``endpoint`` (a manager) answer the calls to ``server``."""
        self._endpoints[(topic, server)] = endpoint

    def call(self, topic, server, method, context, **kwargs):
        """Run ``method`` of ``server``'s service now; returns its result.

        :raises NoReply: no service answers calls for ``server``
        :raises: whatever the method raised
        """
        endpoint = self._endpoints.get((topic, server))
        if endpoint is None:
            raise NoReply('no reply to %s from %s.%s'
                          % (method, topic, server))
        result = getattr(endpoint, method)(
            context, **{name: _copy(value) for name, value in kwargs.items()})
        return _copy(result)

    def waiting(self, topic, server):
        """Messages queued for ``server`` (never intercepted)."""
        with self._cond:
            return len(self._queues[(topic, server)])

    def receive(self, topic, server, timeout=60.0, give_up=None,
                clock=time.monotonic, poll_interval=0.01):
        """Take the next message for ``server``, waiting for one.

        :param give_up: None, or a callable: once it returns true (and no
            message is waiting) the wait ends
        :raises NothingToReceive: ``give_up`` said so
        :raises TimeoutError: nothing arrived within ``timeout`` seconds
        """
        queue = (topic, server)
        if self.interceptor is not None:
            handle = self._intercept(
                'receive', queue,
                guard=lambda: self.waiting(topic, server) > 0)
            with self._cond:
                message = self._queues[queue].popleft()
            handle.done(message.method)
            return message
        deadline = clock() + timeout
        with self._cond:
            while not self._queues[queue]:
                if give_up is not None and give_up():
                    raise NothingToReceive('%s.%s gave up waiting'
                                           % (topic, server))
                remaining = deadline - clock()
                if remaining <= 0:
                    raise TimeoutError('no message for %s.%s within %.1f s'
                                       % (topic, server, timeout))
                self._cond.wait(min(remaining, poll_interval))
            return self._queues[queue].popleft()


class Server(object):
    """Dispatches the messages for one server to an endpoint's methods.

    :param transport: the :class:`Transport`
    :param topic: e.g. ``'compute'``
    :param server: the host name
    :param endpoint: the object whose methods are called, e.g. a
        ``ComputeManager``
    """

    def __init__(self, transport, topic, server, endpoint):
        self.transport = transport
        self.topic = topic
        self.server = server
        self.endpoint = endpoint

    def handle_one(self, timeout=60.0, give_up=None):
        """Receive one message and run it; returns what the method returned.

        :param give_up: see :meth:`Transport.receive`
        :raises AttributeError: the endpoint has no such method
        :raises NothingToReceive: ``give_up`` said so
        :raises TimeoutError: nothing arrived in time
        """
        message = self.transport.receive(self.topic, self.server,
                                         timeout=timeout, give_up=give_up)
        method = getattr(self.endpoint, message.method)
        return method(message.context, **message.kwargs)
