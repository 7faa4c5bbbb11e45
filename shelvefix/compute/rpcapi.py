"""The compute service's RPC API, as the conductor calls it.

``ComputeAPI`` mirrors the names and signatures of
``nova.compute.rpcapi.ComputeAPI`` for what the unshelve path casts; the
messages travel over a :class:`shelvefix.rpc.Transport` to the compute
host's :class:`shelvefix.rpc.Server`.
"""

TOPIC = 'compute'


class ComputeAPI(object):
    """Client side of the compute service.

    :param transport: the :class:`~shelvefix.rpc.Transport` shared with the
        compute services
    """

    def __init__(self, transport):
        self.transport = transport

    def unshelve_instance(self, ctxt, instance, host, request_spec,
                          image=None, filter_properties=None, node=None,
                          accel_uuids=None):
        """Cast ``unshelve_instance`` to ``host``; returns at once."""
        self.transport.cast(
            TOPIC, host, 'unshelve_instance', ctxt, instance=instance,
            image=image, filter_properties=filter_properties, node=node,
            request_spec=request_spec, accel_uuids=accel_uuids)

    def start_instance(self, ctxt, instance):
        """Cast ``start_instance`` to the instance's host."""
        self.transport.cast(TOPIC, instance.host, 'start_instance', ctxt,
                            instance=instance)
