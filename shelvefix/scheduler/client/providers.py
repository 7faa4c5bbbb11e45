"""Report client calls for resource providers and their usages.

Setting up and checking scenarios needs providers with inventory, and
usages to compare with what instances hold. These calls are kept apart
from the allocation calls of :mod:`~shelvefix.scheduler.client.report`,
which :class:`ProviderCalls` is mixed into.
"""

from shelvefix import exception
from shelvefix.scheduler.client import errors
from shelvefix import utils

POST_RPS_RETURNS_PAYLOAD_API_VERSION = '1.20'
NESTED_PROVIDER_API_VERSION = '1.14'


class ProviderCalls(object):
    """Provider and usage calls of ``SchedulerReportClient``.

    Expects the client's ``_request(method, url, data, version,
    global_request_id)``.
    """

    def _json_or_raise(self, context, method, path, exc, data=None,
                       version=None, **exc_kwargs):
        """One request whose 200 body is returned; ``exc`` on any failure."""
        try:
            resp = self._request(method, path, data=data, version=version,
                                 global_request_id=context.global_id)
        except errors.TRANSPORT_ERRORS as e:
            raise exc(error=errors.describe_transport_error(e),
                      **exc_kwargs) from e
        if resp.status_code != 200:
            raise exc(error=errors.describe(errors.error_from_response(resp)),
                      **exc_kwargs)
        return resp.json()

    def create_resource_provider(self, context, uuid, name):
        """POST /resource_providers; returns placement's provider document.

        :raises ResourceProviderCreationFailed: on any failure
        """
        utils.validate_uuid(uuid)
        return self._json_or_raise(
            context, 'POST', '/resource_providers',
            exception.ResourceProviderCreationFailed,
            data={'uuid': uuid, 'name': name},
            version=POST_RPS_RETURNS_PAYLOAD_API_VERSION, name=name)

    def get_resource_provider(self, context, uuid):
        """GET /resource_providers/{uuid}; returns the provider document.

        :raises ResourceProviderRetrievalFailed: on any failure, 404 included
        """
        utils.validate_uuid(uuid)
        return self._json_or_raise(
            context, 'GET', '/resource_providers/%s' % uuid,
            exception.ResourceProviderRetrievalFailed,
            version=NESTED_PROVIDER_API_VERSION, uuid=uuid)

    def set_inventory_for_provider(self, context, rp_uuid, inv_data):
        """Replace a provider's inventory.

        :param inv_data: ``{resource_class: {'total': N, ...}}``
        :returns: the provider's new generation
        :raises ResourceProviderUpdateFailed: on any failure, a provider
            generation conflict included (the caller decides to retry)
        """
        provider = self.get_resource_provider(context, rp_uuid)
        url = '/resource_providers/%s/inventories' % rp_uuid
        payload = {'resource_provider_generation': provider['generation'],
                   'inventories': inv_data}
        body = self._json_or_raise(
            context, 'PUT', url, exception.ResourceProviderUpdateFailed,
            data=payload, url=url)
        return body['resource_provider_generation']

    def get_provider_usages(self, context, rp_uuid):
        """GET /resource_providers/{uuid}/usages; returns ``{rc: used}``.

        :raises ResourceProviderRetrievalFailed: on any failure
        """
        utils.validate_uuid(rp_uuid)
        return self._json_or_raise(
            context, 'GET', '/resource_providers/%s/usages' % rp_uuid,
            exception.ResourceProviderRetrievalFailed, uuid=rp_uuid)['usages']

    def get_allocations_for_resource_provider(self, context, rp_uuid):
        """GET /resource_providers/{uuid}/allocations.

        :returns: ``{consumer uuid: {'resources': {rc: amount}}}`` of
            every consumer holding something on the provider (nova returns
            them in a ``ProviderAllocInfo``'s ``allocations``)
        :raises ResourceProviderAllocationRetrievalFailed: on any failure
        """
        utils.validate_uuid(rp_uuid)
        return self._json_or_raise(
            context, 'GET', '/resource_providers/%s/allocations' % rp_uuid,
            exception.ResourceProviderAllocationRetrievalFailed,
            rp_uuid=rp_uuid)['allocations']

    def delete_resource_provider(self, context, rp_uuid):
        """DELETE /resource_providers/{uuid}.

        :returns: True if deleted, False if placement did not know it
        :raises ResourceProviderUpdateFailed: on any other failure (a 409
            if it still has allocations)
        """
        utils.validate_uuid(rp_uuid)
        url = '/resource_providers/%s' % rp_uuid
        try:
            resp = self.delete(url, global_request_id=context.global_id)
        except errors.TRANSPORT_ERRORS as e:
            raise exception.ResourceProviderUpdateFailed(
                url=url, error=errors.describe_transport_error(e)) from e
        if resp.status_code in (204, 404):
            return resp.status_code == 204
        raise exception.ResourceProviderUpdateFailed(
            url=url, error=errors.describe(errors.error_from_response(resp)))
