"""Report client calls that keep a compute service's provider tree.

What a compute service reports of its nodes (inventory, traits, the
``COMPUTE_STATUS_DISABLED`` trait among them) goes through its report
client's cache of their providers (a
:class:`~shelvefix.compute.provider_tree.ProviderTree`), as in nova:
:meth:`ProviderTreeCalls.get_provider_tree_and_ensure_root` hands the
tracker a copy to change, and
:meth:`ProviderTreeCalls.update_from_provider_tree` writes what differs
from the cache, with the cached generation.

Unlike nova, which reads the provider again only every
``resource_provider_association_refresh`` seconds, the root is read from
placement each time a tracker asks for it (its generation, inventory and
traits): an audit never writes with a generation another writer has since
moved past, such as a server's claim (bug 1886418's stale generation), and
finds a provider deleted under it and makes it again.

Each service has its own client (and cache); :class:`ProviderTreeCalls` is
mixed into :class:`~shelvefix.scheduler.client.report.SchedulerReportClient`.
"""

import collections

from oslo_log import log as logging

from shelvefix.compute import provider_tree
from shelvefix import exception
from shelvefix.scheduler.client import errors
from shelvefix import utils

LOG = logging.getLogger(__name__)

#: The microversion of the provider and trait calls (traits since 1.6,
#: the create's answer since 1.20, error codes, which tell a generation
#: conflict, since 1.23).
PROVIDER_TREE_VERSION = '1.23'

#: A provider's traits and the generation they were read at.
TraitInfo = collections.namedtuple('TraitInfo', ['traits', 'generation'])


class ProviderTreeCalls(object):
    """The provider tree calls of ``SchedulerReportClient``.

    Expects the client's ``get``, ``put``, ``post``, ``_request`` and the
    provider calls of :class:`~shelvefix.scheduler.client.providers.
    ProviderCalls` after it in the bases.
    """

    @property
    def _provider_tree(self):
        """This client's cache (made on first use)."""
        tree = self.__dict__.get('_cached_provider_tree')
        if tree is None:
            tree = self.__dict__['_cached_provider_tree'] = (
                provider_tree.ProviderTree())
        return tree

    def _send(self, context, method, path, exc, data=None, **exc_kwargs):
        """One request; the response, or ``exc`` on a transport failure."""
        try:
            return self._request(method, path, data=data,
                                 version=PROVIDER_TREE_VERSION,
                                 global_request_id=context.global_id)
        except errors.TRANSPORT_ERRORS as e:
            raise exc(error=errors.describe_transport_error(e),
                      **exc_kwargs) from e

    def _failed_write(self, url, resp):
        """The exception for a provider write placement refused."""
        err = errors.error_from_response(resp)
        exc_class = exception.ResourceProviderUpdateFailed
        if errors.is_provider_generation_conflict(err):
            exc_class = exception.ResourceProviderUpdateConflict
        return exc_class(url=url, error=errors.describe(err))

    # -- reading -------------------------------------------------------------

    def get_provider_traits(self, context, rp_uuid):
        """The provider's traits and generation, as placement has them now.

        :returns: a :data:`TraitInfo`
        :raises ResourceProviderTraitRetrievalFailed: on any failure
        """
        utils.validate_uuid(rp_uuid)
        resp = self._send(context, 'GET',
                          '/resource_providers/%s/traits' % rp_uuid,
                          exception.ResourceProviderTraitRetrievalFailed,
                          uuid=rp_uuid)
        if resp.status_code != 200:
            raise exception.ResourceProviderTraitRetrievalFailed(
                uuid=rp_uuid,
                error=errors.describe(errors.error_from_response(resp)))
        body = resp.json()
        return TraitInfo(set(body['traits']),
                         body['resource_provider_generation'])

    def _ensure_resource_provider(self, context, uuid, name):
        """Read the provider into the cache; create it if placement has none.

        :raises ResourceProviderRetrievalFailed: reading it failed
        :raises ResourceProviderCreationFailed: creating it failed
        """
        url = '/resource_providers/%s/inventories' % uuid
        resp = self._send(context, 'GET', url,
                          exception.ResourceProviderRetrievalFailed,
                          uuid=uuid)
        tree = self._provider_tree
        if resp.status_code == 404:
            created = self.create_resource_provider(context, uuid, name)
            LOG.info('Created resource provider %(name)s (%(uuid)s)',
                     {'name': name, 'uuid': uuid})
            tree.new_root(name, uuid, created['generation'])
            return
        if resp.status_code != 200:
            raise exception.ResourceProviderRetrievalFailed(
                uuid=uuid,
                error=errors.describe(errors.error_from_response(resp)))
        inventory = resp.json()['inventories']
        traits = self.get_provider_traits(context, uuid)
        tree.new_root(name, uuid, traits.generation)
        tree.update_inventory(uuid, inventory)
        tree.update_traits(uuid, traits.traits)

    def get_provider_tree_and_ensure_root(self, context, rp_uuid, name=None):
        """A copy of the cache, its root ``rp_uuid`` read from placement.

        :param name: the provider's name if it has to be created (default:
            its uuid)
        """
        utils.validate_uuid(rp_uuid)
        self._ensure_resource_provider(context, rp_uuid, name or rp_uuid)
        return self._provider_tree.copy()

    # -- writing -------------------------------------------------------------

    def set_traits_for_provider(self, context, rp_uuid, traits,
                                generation=None):
        """Replace the provider's traits; the cache follows.

        :param generation: the generation to send (default: the cache's)
        :raises ResourceProviderUpdateConflict: placement's generation
            moved on (the provider is then dropped from the cache)
        :raises ResourceProviderUpdateFailed: any other failure
        """
        url = '/resource_providers/%s/traits' % rp_uuid
        tree = self._provider_tree
        if generation is None:
            generation = tree.data(rp_uuid).generation
        resp = self._send(context, 'PUT', url,
                          exception.ResourceProviderUpdateFailed,
                          data={'resource_provider_generation': generation,
                                'traits': sorted(traits)}, url=url)
        if resp.status_code != 200:
            self.invalidate_resource_provider(rp_uuid)
            raise self._failed_write(url, resp)
        new_generation = resp.json()['resource_provider_generation']
        try:
            tree.update_traits(rp_uuid, traits, generation=new_generation)
        except ValueError:
            LOG.debug('Provider %s left the cache: it is read again when '
                      'next reported', rp_uuid)
        return new_generation

    def _set_inventory(self, context, rp_uuid, inventory, generation):
        """Replace the provider's inventory with the cached generation."""
        url = '/resource_providers/%s/inventories' % rp_uuid
        resp = self._send(context, 'PUT', url,
                          exception.ResourceProviderUpdateFailed,
                          data={'resource_provider_generation': generation,
                                'inventories': inventory}, url=url)
        if resp.status_code != 200:
            raise self._failed_write(url, resp)
        self._provider_tree.update_inventory(
            rp_uuid, inventory,
            generation=resp.json()['resource_provider_generation'])

    def update_from_provider_tree(self, context, new_tree):
        """Write to placement what ``new_tree`` changed against the cache.

        Inventory first, then traits, each with the generation the last
        answer left in the cache (a provider the cache no longer has is
        read from placement first). On any failure the cache is emptied, so
        that the next report reads every provider again, and the failure
        is raised.
        """
        tree = self._provider_tree
        try:
            for uuid in new_tree.get_provider_uuids():
                new = new_tree.data(uuid)
                if not tree.exists(uuid):
                    # Dropped from the cache meanwhile: read it again.
                    self._ensure_resource_provider(context, uuid, new.name)
                if tree.has_inventory_changed(uuid, new.inventory):
                    self._set_inventory(context, uuid, new.inventory,
                                        tree.data(uuid).generation)
                if tree.has_traits_changed(uuid, new.traits):
                    self.set_traits_for_provider(context, uuid, new.traits)
        except Exception:
            self.clear_provider_cache()
            raise

    # -- forgetting ----------------------------------------------------------

    def invalidate_resource_provider(self, name_or_uuid):
        """Drop a provider from the cache (read again when next asked)."""
        self._provider_tree.remove(name_or_uuid)

    def clear_provider_cache(self):
        """Drop every provider from the cache."""
        self._provider_tree.clear()

    def delete_resource_provider(self, context, compute_node, cascade=False):
        """Delete a node's provider, and forget it.

        :param compute_node: the node's record (its ``uuid`` is the
            provider's), or the provider's uuid
        :param cascade: delete the allocations held on the provider first
            (each consumer's, all of them), which placement requires
        :returns: True if deleted, False if placement did not know it
        :raises ResourceProviderUpdateFailed: any other failure
        """
        rp_uuid = getattr(compute_node, 'uuid', compute_node)
        if cascade:
            url = '/resource_providers/%s/allocations' % rp_uuid
            resp = self._send(context, 'GET', url,
                              exception.ResourceProviderUpdateFailed,
                              url=url)
            if resp.status_code == 200:
                for consumer in sorted(resp.json()['allocations']):
                    self.delete_allocation_for_instance(context, consumer,
                                                        force=True)
        try:
            return super(ProviderTreeCalls, self).delete_resource_provider(
                context, rp_uuid)
        finally:
            self.invalidate_resource_provider(rp_uuid)
