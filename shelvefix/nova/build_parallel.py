"""Two servers asking for PCI devices, scheduled at once by two workers.

With the ``pci-parallel-builds`` fault the ``build`` scenario builds two
servers (:class:`ParallelBuildRun`): the run's, whose flavor asks for one
PCI device, and a second one, whose flavor asks for two, one through each
of two aliases (:data:`~.build_pci.ALIASES`). Each host passes two devices
through. Each boot is scheduled by a conductor and scheduler worker of its
own (``conductor`` and ``conductor-2``), as deployments run several: each
scheduler's view of the hosts comes from the compute node records, which
tell neither about the other's choice, so both pick compute-1, where two
devices are free for each. compute-1's service builds both (the builds
claim one after the other, under its tracker's lock): the second to claim
finds one device left for its two requests. nova's claim test sees it and
the build is rescheduled to compute-2; before bug 1986838's fix it was
not, and the server booted without its devices.

This module imports nova (see :mod:`shelvefix.nova`).
"""

from oslo_utils import uuidutils

from shelvefix.nova import build
from shelvefix.nova import build_pci
from shelvefix.nova import doubles

#: The second conductor worker's service (its own process and locks).
CONDUCTOR_2 = build.CONDUCTOR_2
#: How many devices each host passes through.
DEVICES = 2


class ParallelBuildRun(build.BuildRun):
    """One run: two boots the API accepted, two conductor workers.

    :ivar second: the second server's uuid
    :ivar conductor_2: the second conductor worker, with its own scheduler
    """

    def _more_servers(self):
        self.second = uuidutils.generate_uuid()
        self._accept(self.second, build_pci.requests(
            self.second, aliases=build_pci.ALIASES))
        self.scheduler_2 = self._build_scheduler()
        self.conductor_2 = self._build_conductor()
        self.conductor_2.query_client = doubles.SchedulerRPC(
            self.events, self.scheduler_2)

    def _prepare_host(self, host):
        super(ParallelBuildRun, self)._prepare_host(host)
        self.computes[host].driver.pci_devices = build_pci.devices_json(
            host, DEVICES)

    def servers(self):
        """Both servers' uuids."""
        return [self.uuid, self.second]

    def conduct_second(self):
        """The second worker's ``schedule_and_build_instances``."""
        self.schedule_and_build(self.second, self.conductor_2)
        return True

    def end_state(self):
        """:meth:`~.build.BuildRun.end_state`, and the second server's."""
        state = super(ParallelBuildRun, self).end_state()
        row = self.saved(self.second)
        host_of = {rp: host for host, rp in self.providers.items()}
        state['second'] = (
            (row['vm_state'], row['task_state'], row['host'])
            if row else None,
            sorted(host_of[rp] for rp in self.held(self.second)))
        return state
