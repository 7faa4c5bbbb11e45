"""A small cloud for a server's build on the library's code.

:class:`BuildCloud` wires the library's services as
:class:`~shelvefix.race.cloud.TwoHosts` does (both hosts enabled), plus
what a build needs: the API database (build requests, instance mappings),
the conductor's RPC server (a reschedule's ``build_instances`` is cast to
it), and the API (:class:`~shelvefix.compute.build_api.API`). It starts
where the API leaves a boot it accepted (:data:`BUILD_REQUESTED`): a
build request (``BUILDING``, ``SCHEDULING``, no host) and an instance
mapping with no cell; nothing in the cell, nothing in placement; both
nodes audited.

The actors' work (see :mod:`shelvefix.race.build_program` for who runs
what):

* :meth:`BuildCloud.conduct`: the conductor's
  ``schedule_and_build_instances`` (the scheduler claims compute-1 and
  keeps compute-2 as the alternate: both have the same room, the host
  name breaks the tie), then, as the conductor service, the
  ``build_instances`` a reschedule casts back;
* :meth:`~.cloud.TwoHosts.serve`: a host's service running the build cast
  to it (:mod:`shelvefix.compute.build`);
* :meth:`BuildCloud.restart`: compute-1 takes the build's cast, and its
  service stops before it runs it and starts again (a new tracker and
  manager, ``init_host``);
* :meth:`BuildCloud.delete`: the user's delete of the server
  (:meth:`~shelvefix.compute.build_api.API.get`, then ``delete``).
"""

from oslo_utils import uuidutils

from shelvefix.compute import build_api
from shelvefix.compute import collaborators
from shelvefix.compute import manager as manager_mod
from shelvefix.compute import resource_tracker
from shelvefix.compute import rpcapi
from shelvefix.conductor import manager as conductor_mod
from shelvefix.conductor import rpcapi as conductor_rpcapi
from shelvefix import context
from shelvefix import exception
from shelvefix.objects import build_request as build_request_obj
from shelvefix.objects import instance as instance_obj
from shelvefix.objects import migration as migration_obj
from shelvefix.race import cloud as cloud_mod
from shelvefix.race import scenario
from shelvefix.race import scenarios
from shelvefix import rpc
from shelvefix.scheduler.client import report
from shelvefix.scheduler import request_spec

SOURCE = cloud_mod.SOURCE
DESTINATION = cloud_mod.DESTINATION
HOSTS = cloud_mod.HOSTS
BUILD_REQUESTED = scenarios.BUILD_REQUESTED


def create_providers(placement):
    """Both hosts' providers, both enabled, with the same room."""
    return scenario.create_providers(placement, names=HOSTS)


class BuildCloud(cloud_mod.TwoHosts):
    """Two hosts, the conductor, the scheduler and the API around a boot.

    :param placement: a set-up placement fixture
    :param providers: ``(compute-1, compute-2)`` from
        :func:`create_providers`
    :param manager_cls: the compute manager class of both hosts
    :param tracker_cls: the resource tracker class of both hosts
    :param failing: ``{host: driver method names that fail}``
    :param sleep: what the report client waits between retries with
    """

    def __init__(self, placement, providers,
                 manager_cls=manager_mod.ComputeManager,
                 tracker_cls=resource_tracker.ResourceTracker,
                 failing=None, sleep=None):
        failing = failing or {}
        self.manager_cls, self.tracker_cls = manager_cls, tracker_cls
        # No move here: the audits (and a restart's init_host) list none.
        self.migrations = migration_obj.MigrationStore()
        self.drivers = {host: collaborators.RecordingDriver(
            failing=failing.get(host, ())) for host in HOSTS}
        self._wire(
            placement, providers, report.SchedulerReportClient(
                adapter=placement.adapter, conf=placement.conf, sleep=sleep),
            manager_cls, tracker_cls, self._per_host)
        self.build_requests = build_request_obj.BuildRequestStore()
        self.mappings = build_request_obj.InstanceMappingStore()
        self.cells = {build_request_obj.CELL1: self.store,
                      build_request_obj.CELL0: instance_obj.InstanceStore()}
        self.conductor = conductor_mod.ComputeTaskManager(
            self.scheduler, self.compute_rpcapi, report_client=self.client)
        self.conductor.build_requests = self.build_requests
        self.conductor.instance_mappings = self.mappings
        self.conductor.cells = self.cells
        self.compute_task_api = conductor_rpcapi.ComputeTaskAPI(
            self.transport)
        for host in HOSTS:
            self.computes[host].compute_task_api = self.compute_task_api
        self.api = build_api.API(self.compute_rpcapi, self.client,
                                 self.build_requests, self.mappings,
                                 self.cells)
        #: compute-1's service took the build's cast and then restarted.
        self.restarted = False
        self.uuid = self._accept()
        for host in HOSTS:
            self.periodic(host)

    def _per_host(self, host):
        return ({'migration_store': self.migrations,
                 'compute_nodes': {host: self.providers[host]}},
                {'driver': self.drivers[host],
                 'compute_rpcapi': self.compute_rpcapi})

    def _accept(self):
        """The API accepts the boot: a build request and a mapping."""
        uuid = uuidutils.generate_uuid()
        build_request_obj.BuildRequest.create(
            self.build_requests, uuid, scenario.PROJECT, scenario.USER,
            scenario.FLAVOR)
        build_request_obj.InstanceMapping.create(self.mappings, uuid)
        return uuid

    def request_spec(self):
        """The request spec the API saved with the boot."""
        return request_spec.RequestSpec(self.uuid, scenario.PROJECT,
                                        scenario.USER, scenario.FLAVOR)

    # -- the actors ---------------------------------------------------------

    def schedule_and_build(self):
        """The conductor's ``schedule_and_build_instances`` of the boot.

        The build request is the one the API handed over in its message
        (not read again here).
        """
        build_request = build_request_obj.BuildRequest(
            self.build_requests, self.uuid,
            self.build_requests.peek(self.uuid)['instance'])
        self.conductor.schedule_and_build_instances(
            self.ctx, build_requests=[build_request],
            request_specs=[self.request_spec()], image={},
            admin_password=None, injected_files=[], requested_networks=[],
            block_device_mapping=[], tags=None)
        return True

    def serve_conductor(self, timeout=60.0, give_up=None):
        """The conductor service runs the next message cast to it."""
        rpc.Server(self.transport, conductor_rpcapi.TOPIC,
                   conductor_rpcapi.SERVER, self.conductor).handle_one(
                       timeout=timeout, give_up=give_up)
        return True

    def conduct(self, timeout=60.0, give_up=None):
        """The conductor: the build, then a reschedule if one comes."""
        self.schedule_and_build()
        try:
            self.serve_conductor(timeout=timeout, give_up=give_up)
        except rpc.NothingToReceive:
            pass
        return True

    def restart(self, timeout=60.0, give_up=None):
        """compute-1 takes the build's cast, then its service restarts.

        The message is lost with the old process, before the build got to
        its claim; the new process has a new tracker (counting nothing
        before its first audit) and runs ``init_host``.
        """
        self.transport.receive(rpcapi.TOPIC, SOURCE, timeout=timeout,
                               give_up=give_up)
        self.restarted = True
        old = self.computes[SOURCE]
        tracker_kwargs, manager_kwargs = self._per_host(SOURCE)
        self.rts[SOURCE] = self.tracker_cls(
            SOURCE, reportclient=self.client, store=self.store,
            locks=self.locks[SOURCE], **tracker_kwargs)
        self.computes[SOURCE] = self.manager_cls(
            host=SOURCE, reportclient=self.client, rt=self.rts[SOURCE],
            locks=self.locks[SOURCE], **manager_kwargs)
        self.computes[SOURCE].compute_task_api = old.compute_task_api
        self.computes[SOURCE].init_host()
        return True

    def delete(self):
        """The user's delete of the server, through the API.

        :returns: True, or False if the API found no server (a 404)
        """
        try:
            instance = self.api.get(self.ctx, self.uuid)
        except exception.InstanceNotFound:
            return False
        self.api.delete(self.ctx, instance)
        return True

    def finish_casts(self, rounds=3):
        """Serve what is still cast to either host, unexplored.

        :returns: ``{host: exception}`` of the casts that failed
        """
        errors = {}
        for _round in range(rounds):
            served = False
            for host in HOSTS:
                while self.transport.waiting(rpcapi.TOPIC, host):
                    served = True
                    try:
                        self.serve(host, timeout=0)
                    except Exception as exc:
                        errors[host] = exc
            if not served:
                break
        return errors

    # -- what happened --------------------------------------------------------

    def saved(self):
        """The server's row in the cell, or None if never created."""
        if self.uuid not in set(self.store.uuids()):
            return None
        return self.store.peek(self.uuid)

    def deleted(self):
        """True if the server's record was created and destroyed."""
        return (self.uuid in set(self.store.uuids()) and
                self.store.is_deleted(self.uuid))

    def held(self, consumer=None):
        """``{rp_uuid: resources}`` placement holds for the server."""
        return super(BuildCloud, self).held(consumer or self.uuid)

    def usage(self):
        """``{host: usage}`` each host's tracker counts on its node."""
        return {host: self.rts[host].usage(host) for host in HOSTS}

    def end_state(self):
        """What the run ended with: the records, and what placement holds.

        :returns: ``{'instance': (vm_state, task_state, host) or None,
            'deleted': bool, 'held': hosts, 'build request': kept}``
        """
        host_of = {rp: host for host, rp in self.providers.items()}
        row = self.saved()
        return {
            'instance': (row['vm_state'], row['task_state'], row['host'])
            if row else None,
            'deleted': self.deleted(),
            'held': sorted(host_of[rp] for rp in self.held()),
            'build request': not self.build_requests.is_deleted(self.uuid),
        }

    def remove_from_placement(self):
        """Free what the run left in placement (the providers stay)."""
        self.client.delete_allocation_for_instance(
            context.get_admin_context(), self.uuid, force=True)
