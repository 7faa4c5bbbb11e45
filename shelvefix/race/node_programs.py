"""``service-disable`` and ``ironic-rebalance`` on the library's code.

The actors, as on the nova target (:mod:`shelvefix.nova.service_disable`,
:mod:`shelvefix.nova.ironic_rebalance`), on a
:mod:`~shelvefix.race.node_cloud`:

``service-disable``
    ``api`` is the API disabling compute-1's service (enabling it in the
    ``enabled-again`` cell): the record read and saved, then the call of
    compute-1's ``set_host_enabled``, which sets the
    ``COMPUTE_STATUS_DISABLED`` trait of its node's provider (read from
    placement, written with the generation read) under compute-1's
    ``compute_resources`` lock; ``periodic-1`` is compute-1's audit, whose
    report syncs the trait with the service record it reads under that
    lock. The end is judged :data:`OUT_OF_SYNC` if the provider's traits
    and the record disagree, and as the other scenarios judge placement
    and the tracker against the server's record.
``ironic-rebalance``
    ``periodic-1`` is compute-1's audit, which finds the node it no longer
    reports and deletes it as an orphan (its record only if still
    compute-1's, then its provider); ``periodic-2`` is compute-2's, which
    takes the node's record over (deleted or not) and reports its
    provider (made again if gone). After the run each service audits once
    more, unexplored; the end is judged :data:`NODE_LOST`,
    :data:`NOT_TAKEN_OVER` (the record or the trackers do not say
    compute-2's) or :data:`PROVIDER_LOST`.
"""

from oslo_utils import uuidutils

from shelvefix import context
from shelvefix import race
from shelvefix.race import node_cloud
from shelvefix.race import outcomes
from shelvefix.race import program
from shelvefix.race import scenario
from shelvefix.race import steps

SOURCE = node_cloud.SOURCE
DESTINATION = node_cloud.DESTINATION
#: The provider's traits and the service's ``disabled`` disagree at the
#: end (the nova target's label).
OUT_OF_SYNC = 'trait out of sync'
#: The node has no live record at the end.
NODE_LOST = 'node lost'
#: The node's live record, or the trackers, do not say compute-2's.
NOT_TAKEN_OVER = 'node not taken over'
#: The node's provider is gone at the end, or lacks the node's inventory.
PROVIDER_LOST = 'provider lost'


def _no_wait(seconds):
    pass


class ServiceDisableProgram(program.CloudProgram):
    """One cell of ``service-disable`` on the library.

    See :class:`~shelvefix.race.program.CloudProgram` for the parameters.
    """

    def _cloud(self, explored):
        if self.providers is None:
            self.providers = scenario.create_providers(
                self.placement, names=node_cloud.HOSTS)
        return node_cloud.ServiceCloud(
            self.placement, self.providers,
            enabling=self.cell.fault == race.ENABLED_AGAIN,
            sleep=_no_wait if explored else None)

    def _names(self, cloud):
        src, dst = self.providers
        return steps.Names([(cloud.instance.uuid, '{instance}'),
                            (src, '{compute-1}'), (dst, '{compute-2}')] +
                           cloud.names())

    def _holdings(self, cloud):
        return {cloud.instance.uuid: {self.providers[0]}}

    def _actor_hosts(self):
        # The API's call runs compute-1's set_host_enabled, under its locks.
        return [SOURCE for _name in self.actors]

    def _actors(self, cloud, timeout=60.0, poll_interval=None, done=None):
        funcs = {'api': cloud.update_service,
                 'periodic-1': lambda: cloud.audit(SOURCE)}
        return [(name, funcs[name]) for name in self.actors]

    def _finish(self, cloud, results):
        try:
            row = cloud.saved()
            labels = outcomes.actor_labels(results)
            disabled = cloud.service().disabled
            if (node_cloud.TRAIT in cloud.traits(self.providers[0])) != (
                    disabled):
                labels.append(OUT_OF_SYNC)
            labels += outcomes.placement_labels(row, cloud.held(),
                                                cloud.providers)
            labels += outcomes.untracked(row, cloud.tracked())
            return outcomes.as_outcome(labels)
        finally:
            cloud.remove_from_placement()


class RebalanceProgram(program.CloudProgram):
    """One cell of ``ironic-rebalance`` on the library.

    The node's uuid and name are the program's (its name unique in
    placement); its provider is made again at the start of each run.

    :ivar ends: each run's end: ``{'node': (host, deleted) or None,
        'inventory': {class: total} or None, 'tracking': hosts,
        'settle_errors': {host: error name}}``, and ``'unsettled'``: the
        node and inventory as the actors left them, before the audits
        that follow
    """

    def __init__(self, placement, cell, scenario):
        super(RebalanceProgram, self).__init__(placement, cell, scenario)
        self.node = ('node-1-%s' % uuidutils.generate_uuid()[:8],
                     uuidutils.generate_uuid())
        self.ends = []

    def _cloud(self, explored):
        self.providers = (self.node[1], self.node[1])
        return node_cloud.RebalanceCloud(
            self.placement, self.node, sleep=_no_wait if explored else None)

    def _names(self, cloud):
        return steps.Names([(self.node[1], '{node-1}'),
                            (self.node[0], 'node-1')] + cloud.names())

    def _holdings(self, cloud):
        return {}

    def _actors(self, cloud, timeout=60.0, poll_interval=None, done=None):
        funcs = {'periodic-1': lambda: cloud.audit(SOURCE),
                 'periodic-2': lambda: cloud.audit(DESTINATION)}
        return [(name, funcs[name]) for name in self.actors]

    @staticmethod
    def _node_state(node):
        return None if node is None else (node.host, node.deleted)

    def _finish(self, cloud, results):
        unsettled = {'node': self._node_state(cloud.node()),
                     'inventory': cloud.inventory()}
        settle_errors = cloud.settle()
        node = cloud.node()
        end = {'node': self._node_state(node),
               'inventory': cloud.inventory(),
               'tracking': cloud.tracking(),
               'settle_errors': settle_errors, 'unsettled': unsettled}
        self.ends.append(end)
        labels = outcomes.actor_labels(results)
        if node is None or node.deleted:
            labels.append(NODE_LOST)
        elif node.host != DESTINATION or end['tracking'] != [DESTINATION]:
            labels.append(NOT_TAKEN_OVER)
        if end['inventory'] != dict(node_cloud.TOTALS):
            labels.append(PROVIDER_LOST)
        labels += [outcomes.ACTOR_ERROR % ('settle %s' % host, name)
                   for host, name in sorted(settle_errors.items())]
        return outcomes.as_outcome(labels)

    def close(self, interrupted=False):
        """Delete the node's provider, what the last run left."""
        if self.providers:
            self.placement.client.delete_resource_provider(
                context.get_admin_context(), self.node[1], cascade=True)
            self.providers = None
