"""The conductor service's RPC API, as a compute host casts to it.

``ComputeTaskAPI`` mirrors the name and signature of nova's
``nova.conductor.api.ComputeTaskAPI.build_instances``, the one message a
compute host sends the conductor: a build it could not finish, to be
rescheduled to an alternate host. The message travels over a
:class:`shelvefix.rpc.Transport` to the conductor's
:class:`shelvefix.rpc.Server` (topic :data:`TOPIC`, server
:data:`SERVER`).
"""

TOPIC = 'conductor'
#: The conductor service's server name on the transport.
SERVER = 'conductor'


class ComputeTaskAPI(object):
    """Client side of the conductor's compute tasks.

    :param transport: the :class:`~shelvefix.rpc.Transport` shared with
        the conductor service
    """

    def __init__(self, transport):
        self.transport = transport

    def build_instances(self, context, instances, image, filter_properties,
                        admin_password, injected_files, requested_networks,
                        security_groups, block_device_mapping, legacy_bdm=True,
                        request_spec=None, host_lists=None):
        """Cast ``build_instances`` to the conductor; returns at once."""
        self.transport.cast(
            TOPIC, SERVER, 'build_instances', context, instances=instances,
            image=image, filter_properties=filter_properties,
            admin_password=admin_password, injected_files=injected_files,
            requested_networks=requested_networks,
            security_groups=security_groups,
            block_device_mapping=block_device_mapping,
            legacy_bdm=legacy_bdm, request_spec=request_spec,
            host_lists=host_lists)
