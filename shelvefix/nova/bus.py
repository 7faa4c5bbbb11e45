"""nova's compute RPC API, as the lab's compute services reach each other.

:class:`ComputeRouter` stands for the ``ClientRouter`` that
``nova.compute.rpcapi.ComputeAPI`` sends through:

* a cast puts the message on a :class:`shelvefix.rpc.Transport`, where the
  host's service (an actor of the scenario) takes it off;
* a call is answered at once, in the caller's thread: the host's service
  runs the method, under that service's locks, on copies of the
  arguments, while the caller waits (the message bus would hand the
  server copies too);
* a call to a host whose RPC server does not consume (its service is
  down, or still in ``init_host``, which nova runs before the service
  starts consuming) is never answered: the caller waits out
  ``rpc_response_timeout`` and gets ``MessagingTimeout``, which is what
  the call raises here, at once.

This module imports nova (see :mod:`shelvefix.nova`).
"""

from nova import context as nova_context
from nova import objects
import oslo_messaging

COMPUTE_TOPIC = 'compute'
#: The endpoint of a host whose RPC server does not consume: calls time
#: out.
NOT_CONSUMING = 'not consuming'


def received(ctxt):
    """A request context as the receiver of a message gets it."""
    return nova_context.RequestContext.from_dict(ctxt.to_dict())


class _PreparedClient(object):
    def __init__(self, router, server):
        self.router = router
        self.server = server

    def cast(self, ctxt, method, **kwargs):
        self.router.transport.cast(COMPUTE_TOPIC, self.server, method,
                                   received(ctxt), **kwargs)

    def call(self, ctxt, method, **kwargs):
        endpoint = self.router.endpoints.get(self.server)
        if endpoint is None:
            raise AssertionError('nova made an RPC call %s to %s, which the '
                                 'harness does not serve'
                                 % (method, self.server))
        if endpoint == NOT_CONSUMING:
            error = oslo_messaging.MessagingTimeout(
                'no reply to %s: the RPC server of %s does not consume'
                % (method, self.server))
            self.router.timed_out.append((self.server, method, error))
            raise error
        # The caller waits while the server's service runs the method, on
        # copies of the arguments, as the message bus would hand them over.
        run_as, manager = endpoint
        copies = {name: (value.obj_clone()
                         if isinstance(value, objects.base.NovaObject)
                         else value)
                  for name, value in kwargs.items()}
        return run_as(lambda: getattr(manager, method)(
            received(ctxt), **copies))()


class _Client(object):
    def __init__(self, router):
        self.router = router

    def can_send_version(self, version):
        return True

    def prepare(self, server=None, version=None, **kwargs):
        return _PreparedClient(self.router, server)


class ComputeRouter(object):
    """Stands for the ``ClientRouter`` of nova's compute RPC API.

    :param transport: the :class:`shelvefix.rpc.Transport` the compute
        services receive casts from

    :ivar endpoints: ``{host: (run_as, manager)}`` of the services that
        serve calls: ``run_as(func)`` wraps ``func`` to run as the host's
        service (:meth:`~.doubles.ServiceLocks.running`); or
        ``{host: NOT_CONSUMING}``: calls to it time out
    :ivar timed_out: ``(host, method, MessagingTimeout)`` of each call that
        timed out, in order (nova may log and swallow the error)
    """

    def __init__(self, transport):
        self.transport = transport
        self.endpoints = {}
        self.timed_out = []

    def client(self, ctxt):
        return _Client(self)
