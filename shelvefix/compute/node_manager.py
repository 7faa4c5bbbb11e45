"""The compute manager's side of its nodes: the audit, and its status trait.

:class:`NodesMixin` is mixed into
:class:`~shelvefix.compute.manager.ComputeManager`, for a manager whose
tracker keeps its nodes' records (a
:class:`~shelvefix.compute.nodes.NodeResourceTracker`):

``update_available_resource``
    nova's periodic audit of every node the driver reports: the host's
    node records listed, the tracker's cache cleaned of nodes no longer
    the host's, each orphan (a record of this host the driver no longer
    reports, as when an ironic node moved to another service) destroyed
    only if its record is still this host's, and only then its provider
    deleted (bug 1853009's fix: the record's host is the destroy's
    constraint), then each node's own audit, whose error is logged, as
    nova does, for the next audit to heal;
``set_host_enabled``
    the call the API makes once it has saved a service's ``disabled``:
    the ``COMPUTE_STATUS_DISABLED`` trait added to (or removed from) each
    node's provider, read fresh from placement and written with the
    generation just read (bug 1886418's fix), under the tracker's lock,
    so that it never interleaves with an audit's report.

The orphan's clean-up has nova's guard of 947bb5f641 (keep an orphan the
driver says is not deleted) as an option of the driver's
(``is_node_deleted``): a driver without it has every orphan deleted, as
the fix of bug 1853009 left nova.
"""

import os_traits
from oslo_log import log as logging

from shelvefix.compute import resource_tracker
from shelvefix import exception
from shelvefix.objects import compute_node as node_obj

LOG = logging.getLogger(__name__)

#: What placement refusing or failing a node's report raises: logged by
#: the audit (the next one reads the provider again), as nova does.
REPORT_ERRORS = (exception.ResourceProviderUpdateFailed,
                 exception.ResourceProviderRetrievalFailed,
                 exception.ResourceProviderCreationFailed,
                 exception.ResourceProviderTraitRetrievalFailed)


class ComputeVirtAPI(object):
    """What the virt layer may ask of its compute manager (nova's name).

    :param compute: the :class:`~shelvefix.compute.manager.ComputeManager`
    """

    def __init__(self, compute):
        self._compute = compute

    @property
    def reportclient(self):
        """The manager's report client."""
        return self._compute.reportclient

    def update_compute_provider_status(self, context, rp_uuid, enabled):
        """Add (``enabled`` False) or remove the status trait.

        The provider's traits are read from placement, and written back
        with the generation read, only if the trait has to change.

        :raises ResourceProviderTraitRetrievalFailed: reading them failed
        :raises ResourceProviderUpdateConflict: the generation moved on
        :raises ResourceProviderUpdateFailed: writing them failed
        """
        trait = os_traits.COMPUTE_STATUS_DISABLED
        current = self.reportclient.get_provider_traits(context, rp_uuid)
        if enabled and trait in current.traits:
            new_traits = current.traits - {trait}
        elif not enabled and trait not in current.traits:
            new_traits = current.traits | {trait}
        else:
            return
        self.reportclient.set_traits_for_provider(
            context, rp_uuid, new_traits, generation=current.generation)


class NodesMixin(object):
    """The node audit and ``set_host_enabled`` of the compute manager.

    Expects ``host``, ``driver``, ``reportclient``, ``rt`` (a
    :class:`~shelvefix.compute.nodes.NodeResourceTracker`) and ``locks``.
    """

    @property
    def virtapi(self):
        """This manager's :class:`ComputeVirtAPI` (made on first use)."""
        virtapi = self.__dict__.get('_virtapi')
        if virtapi is None:
            virtapi = self.__dict__['_virtapi'] = ComputeVirtAPI(self)
        return virtapi

    # -- the periodic audit --------------------------------------------------

    def update_available_resource(self, context, startup=False):
        """Audit every node the driver reports; clean up the orphans."""
        nodenames = set(self.driver.get_available_nodes())
        compute_nodes_in_db = self._get_compute_nodes_in_db(
            context, nodenames, startup=startup)
        self.rt.clean_compute_node_cache(compute_nodes_in_db)
        for node in compute_nodes_in_db:
            if node.hypervisor_hostname not in nodenames:
                self._delete_orphan(context, node, nodenames)
        for nodename in sorted(nodenames):
            self._update_available_resource_for_node(context, nodename,
                                                     startup=startup)

    def _get_compute_nodes_in_db(self, context, nodenames, use_slave=False,
                                 startup=False):
        """This host's live node records (none is no error)."""
        try:
            return node_obj.ComputeNodeList.get_all_by_host(
                self.rt.node_store, self.host)
        except exception.ComputeHostNotFound:
            if nodenames:
                LOG.warning('No compute node record for host %s yet',
                            self.host)
            return []

    def _delete_orphan(self, context, node, nodenames):
        """Destroy an orphan's record if still this host's, then its provider.

        A record taken over since it was listed is not destroyed (the
        destroy's constraint): it is only forgotten here.
        """
        is_node_deleted = getattr(self.driver, 'is_node_deleted', None)
        if is_node_deleted is not None and not is_node_deleted(
                node.hypervisor_hostname):
            LOG.warning('Keeping orphan compute node %s: the driver says it '
                        'was not deleted', node.hypervisor_hostname)
            return
        LOG.info('Deleting orphan compute node %(node)s (the driver reports '
                 '%(nodes)s)', {'node': node.hypervisor_hostname,
                                'nodes': sorted(nodenames)})
        try:
            node.destroy()
        except exception.ObjectActionError as e:
            LOG.info('Not deleting compute node %(node)s: %(error)s (a '
                     'rebalance took it over)',
                     {'node': node.hypervisor_hostname, 'error': e})
            self.rt.remove_node(node.hypervisor_hostname)
            self.reportclient.invalidate_resource_provider(node.uuid)
            return
        self.rt.remove_node(node.hypervisor_hostname)
        try:
            self.reportclient.delete_resource_provider(context, node,
                                                       cascade=True)
        except REPORT_ERRORS + (exception.AllocationDeleteFailed,) as e:
            LOG.error('Could not delete the provider of orphan compute node '
                      '%(node)s: %(error)s',
                      {'node': node.hypervisor_hostname, 'error': e})

    def _update_available_resource_for_node(self, context, nodename,
                                            startup=False):
        """One node's audit; a placement error is logged, not raised."""
        try:
            self.rt.update_available_resource(context, nodename,
                                              startup=startup)
        except exception.ComputeHostNotFound:
            LOG.warning('Compute node %s not found in the audit', nodename)
        except REPORT_ERRORS as e:
            LOG.error('Error reporting node %(node)s to placement: %(error)s'
                      ' (the next audit reads its provider again)',
                      {'node': nodename, 'error': e})

    # -- the service's status ------------------------------------------------

    def set_host_enabled(self, context, enabled):
        """Set the status trait of this host's nodes' providers.

        :returns: ``'enabled'`` or ``'disabled'``
        """
        try:
            self._update_compute_provider_status(context, enabled)
        except exception.ComputeHostNotFound:
            LOG.warning('No compute node on host %s: the status trait is '
                        "left to the audit", self.host)
        try:
            return self.driver.set_host_enabled(enabled)
        except NotImplementedError:
            return 'enabled' if enabled else 'disabled'

    def _update_compute_provider_status(self, context, enabled):
        """The trait of each node's provider, under the tracker's lock.

        :raises ComputeHostNotFound: the tracker has no node
        """
        with self.locks.lock(resource_tracker.COMPUTE_RESOURCE_SEMAPHORE):
            nodes = list(self.rt.compute_nodes.values())
            if not nodes:
                raise exception.ComputeHostNotFound(host=self.host)
            for node in nodes:
                try:
                    self.virtapi.update_compute_provider_status(
                        context, node.uuid, enabled)
                except (exception.ResourceProviderTraitRetrievalFailed,
                        exception.ResourceProviderUpdateFailed) as e:
                    LOG.warning('Could not set the status trait of node '
                                '%(node)s: %(error)s; the audit will',
                                {'node': node.hypervisor_hostname,
                                 'error': e})
