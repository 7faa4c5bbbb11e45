"""The hosts the scheduler can choose from, and their order of preference.

nova's host manager loads compute node records from the cell databases and
keeps each node's free resources as its resource tracker last reported
them. Here the compute node records are given (:class:`ComputeNode`), and
a node's free resources are read from placement's provider summaries: the
same numbers once the trackers have reported.
"""

import collections

from oslo_log import log as logging

LOG = logging.getLogger(__name__)

ComputeNode = collections.namedtuple('ComputeNode',
                                     ['uuid', 'host', 'hypervisor_hostname'])
ComputeNode.__doc__ = """A compute node record: its provider uuid, the
service host and the node name."""


class HostState(object):
    """What the scheduler knows about one compute node while it chooses.

    :ivar allocation_candidates: the allocation requests placement offered
        on this node, best first
    """

    def __init__(self, compute_node):
        self.uuid = compute_node.uuid
        self.host = compute_node.host
        self.nodename = compute_node.hypervisor_hostname
        self.free_ram_mb = 0
        self.free_disk_gb = 0
        self.vcpus_free = 0
        self.allocation_candidates = []
        self.limits = {}

    def update_from_provider_summary(self, summary):
        """Free resources from a provider summary of placement's.

        Free is capacity minus used (capacity already net of reserved and
        scaled by the allocation ratio).
        """
        free = {rc: res['capacity'] - res['used']
                for rc, res in summary.get('resources', {}).items()}
        self.free_ram_mb = free.get('MEMORY_MB', 0)
        self.free_disk_gb = free.get('DISK_GB', 0)
        self.vcpus_free = free.get('VCPU', 0)

    def __repr__(self):
        return '(%s, %s) ram: %dMB disk: %dGB vcpus: %d' % (
            self.host, self.nodename, self.free_ram_mb, self.free_disk_gb,
            self.vcpus_free)


class HostManager(object):
    """The compute nodes of the deployment, by provider uuid.

    :param compute_nodes: :class:`ComputeNode` records
    """

    def __init__(self, compute_nodes=()):
        self.compute_nodes = {cn.uuid: cn for cn in compute_nodes}

    def get_host_states_by_uuids(self, context, compute_uuids, spec_obj,
                                 provider_summaries=None):
        """Host states of the known nodes among ``compute_uuids``.

        A provider placement offered that is no compute node of ours
        (another cell's, a stale one) is left out, as nova does.

        :param provider_summaries: placement's summaries, to read free
            resources from
        """
        states = []
        for uuid in compute_uuids:
            node = self.compute_nodes.get(uuid)
            if node is None:
                continue
            state = HostState(node)
            if provider_summaries and uuid in provider_summaries:
                state.update_from_provider_summary(provider_summaries[uuid])
            states.append(state)
        return states

    def get_filtered_hosts(self, hosts, spec_obj):
        """The hosts the request may go to.

        Only the request's ``ignore_hosts`` are left out here (nova's
        filters run on records this host manager does not keep; what they
        test is in placement's answer already).
        """
        ignored = set(getattr(spec_obj, 'ignore_hosts', None) or ())
        if not ignored:
            return list(hosts)
        kept = [host for host in hosts if host.host not in ignored]
        LOG.debug('Host filter ignoring hosts: %s',
                  ', '.join(sorted(ignored)))
        return kept

    def get_weighed_hosts(self, hosts, spec_obj):
        """The hosts, most preferred first.

        nova's default weighers spread instances: most free RAM first,
        then most free disk, then most free vCPUs; the host name breaks
        ties so that the choice is reproducible.
        """
        return sorted(hosts, key=lambda h: (-h.free_ram_mb, -h.free_disk_gb,
                                            -h.vcpus_free, h.host,
                                            h.nodename))
