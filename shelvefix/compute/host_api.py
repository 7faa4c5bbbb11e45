"""The API's side of a compute service being enabled or disabled.

nova's ``PUT /os-services/{id}`` (microversion 2.53) ends in
``HostAPI.service_update``: the service record saved with its new
``disabled``, then, if that changed, the compute service called
(``set_host_enabled``) to add or remove the ``COMPUTE_STATUS_DISABLED``
trait on its nodes' providers, which the scheduler's placement query
leaves out (:mod:`shelvefix.compute.node_manager`). An error of that call
is logged, not raised: the compute's next audit syncs the trait with the
record (:mod:`shelvefix.compute.nodes`).
"""

from oslo_log import log as logging

from shelvefix.objects import compute_node as node_obj

LOG = logging.getLogger(__name__)


class HostAPI(object):
    """The API's service calls (nova's ``HostAPI``, the part used here).

    :param rpcapi: a :class:`~shelvefix.compute.rpcapi.ComputeAPI`
    :param service_store: the
        :class:`~shelvefix.objects.compute_node.ServiceStore`
    """

    def __init__(self, rpcapi, service_store):
        self.rpcapi = rpcapi
        self.service_store = service_store

    def service_get_by_compute_host(self, context, host_name):
        """The service record of ``host_name``.

        :raises ComputeHostNotFound: no such service
        """
        return node_obj.Service.get_by_compute_host(self.service_store,
                                                    host_name)

    def service_update(self, context, service):
        """Save ``service``'s changes; sync the trait if ``disabled`` did.

        :returns: the service, as saved
        """
        update_placement = 'disabled' in service.obj_what_changed()
        service.save()
        if update_placement:
            self._update_compute_provider_status(context, service)
        return service

    def _update_compute_provider_status(self, context, service):
        """Call the service to set its nodes' status trait; errors logged."""
        try:
            self.rpcapi.set_host_enabled(context, service.host,
                                         not service.disabled)
        except Exception:
            LOG.exception('Setting the status trait of the nodes of %s '
                          'failed; its next audit will', service.host)

    def update_service_status(self, context, host_name, disabled,
                              disabled_reason=None):
        """The REST API's update of a service's status, then as above.

        :returns: the service, as saved
        """
        service = self.service_get_by_compute_host(context, host_name)
        service.disabled = disabled
        service.disabled_reason = disabled_reason if disabled else None
        return self.service_update(context, service)
