"""nova's own services around one server being evacuated.

:class:`EvacuationRun` is a :class:`~.moves.MoveRun` that starts where
nova's ``API.evacuate`` leaves a server whose host is down: ``ACTIVE`` on
compute-1 with task ``REBUILDING``, an evacuation migration ``accepted``
(source compute-1, no destination yet), placement holding the server's
allocations on compute-1, and compute-1's guest still on its hypervisor
(unless the cloud's ``guest_lost``: the host was redeployed meanwhile).
What runs is nova's code:

* the conductor's ``ComputeTaskManager.rebuild_instance``: the scheduler's
  ``select_destinations`` (compute-1 ignored, ``claim_resources`` adding
  compute-2 to the server's allocations on compute-1), then the
  ``rebuild_instance`` cast through nova's compute RPC API;
* compute-2's ``ComputeManager.rebuild_instance``: the tracker's
  ``rebuild_claim`` (the migration ``pre-migrating``, the server's
  migration context), the rebuild (the driver has no ``rebuild``, so
  nova's default: ``spawn``), and ``finish_evacuation`` (host and node
  saved, the migration ``done``); on a failure its clean-up, which removes
  compute-2 from the server's allocations;
* compute-1's service starting again: the part of ``init_host`` that
  cleans up after evacuations, ``_destroy_evacuated_instances`` (the
  guest destroyed, its disk too if the other host says it is not on
  shared storage: an RPC call, which times out if it goes to compute-1,
  not serving calls before its start-up is over; compute-1 removed from
  the server's allocations with
  ``remove_provider_tree_from_instance_allocation``, the migration
  ``completed``), and the recovery (``_init_instance``) of each of the
  host's instances it did not report evacuated (a server still
  rebuilding there is set to ``ERROR``); the rest of ``init_host`` (the
  driver's start-up, the check of interrupted builds) has nothing to do
  with the server;
* compute-2's periodic audit.

Or it starts (:data:`SCHEDULED`) once the conductor has run, not
explored: compute-2 claimed, and its service holding the cast
(:meth:`EvacuationRun.rebuild` runs it).

This module imports nova (see :mod:`shelvefix.nova`).
"""

from nova.compute import power_state
from nova.compute import task_states
from nova.compute import vm_states
from nova import exception as nova_exception
from nova import objects
from oslo_utils import uuidutils

from shelvefix.nova import bus
from shelvefix.nova import doubles
from shelvefix.nova import harness
from shelvefix.nova import lifecycle
from shelvefix.nova import moves
from shelvefix.objects import migration as migration_obj
from shelvefix.race import move_outcomes
from shelvefix.race import outcomes

SOURCE = moves.SOURCE
DESTINATION = moves.DESTINATION
EVACUATING = 'evacuating'
#: Evacuating, and the conductor has run: compute-2 is claimed and the
#: ``rebuild_instance`` cast waits for it.
SCHEDULED = 'scheduled'


class ImageAPI(object):
    """glance, as far as a rebuild from the server's own image reads it."""

    def generate_image_url(self, image_ref, context):
        return 'http://glance.example/images/%s' % image_ref


def _refused_claim(*args, **kwargs):
    """A rebuild claim the destination's tracker refuses."""
    raise nova_exception.ComputeResourcesUnavailable(
        reason='the claim is refused (an injected fault)')


class EvacuationRun(moves.MoveRun):
    """One run: the services, and a server whose host is down."""

    #: compute-1's service started once the evacuation was ``done``.
    started_after_done = False

    def _create_instance(self, start):
        if start not in (EVACUATING, SCHEDULED):
            return super(EvacuationRun, self)._create_instance(start)
        cloud = self.cloud
        self.migrations = migration_obj.MigrationStore()
        cloud.move_database.migrations = self.migrations
        cloud.move_database.extra = {}
        cloud.move_database.next_uuid = uuidutils.generate_uuid()
        for host in moves.HOSTS:
            self.computes[host].image_api = ImageAPI()
        self.computes[DESTINATION].driver.failing = cloud.failing
        for host in moves.HOSTS:
            self.computes[host].driver.checks_shared_storage = True
        # compute-2 serves calls; compute-1, down, does not consume until
        # its start-up is over (source_starts).
        cloud.router.timed_out = []
        cloud.router.endpoints[SOURCE] = bus.NOT_CONSUMING
        cloud.router.endpoints[DESTINATION] = self._endpoint(DESTINATION)
        uuid = uuidutils.generate_uuid()
        self.migration_uuid = uuidutils.generate_uuid()
        self.cloud.database.static = lifecycle.static_fields(uuid)
        flavor = lifecycle.flavor()
        self.store.create({
            'id': 1, 'uuid': uuid, 'project_id': harness.PROJECT,
            'user_id': harness.USER, 'availability_zone': 'nova',
            'vm_state': vm_states.ACTIVE,
            'task_state': task_states.REBUILDING,
            'power_state': power_state.RUNNING,
            'host': SOURCE, 'node': SOURCE, 'launched_on': SOURCE,
            'compute_id': 1, 'flavor': flavor, 'instance_type_id': flavor.id,
            'old_flavor': None, 'new_flavor': None,
            'trusted_certs': None, 'pci_requests': objects.InstancePCIRequests(
                requests=[], instance_uuid=uuid),
        })
        self.migrations.create({
            'uuid': self.migration_uuid, 'instance_uuid': uuid,
            'source_compute': SOURCE, 'source_node': SOURCE,
            'dest_compute': None, 'dest_node': None,
            'migration_type': migration_obj.EVACUATION,
            'status': migration_obj.ACCEPTED,
            'old_flavor': moves.library_flavor(flavor),
            'new_flavor': moves.library_flavor(flavor),
        })
        harness.NovaShelveScenario.assert_claimed(
            self.scheduler_client.claim_resources(
                self.admin, uuid, {'allocations': {
                    self.providers[SOURCE]: {
                        'resources': moves.resources(flavor)}}},
                harness.PROJECT, harness.USER, harness.CLAIM_VERSION))
        if not cloud.guest_lost:
            self.computes[SOURCE].driver.running.add(uuid)
        if cloud.claim_fails:
            self.rts[DESTINATION].rebuild_claim = _refused_claim
        self.holdings = {uuid: {self.providers[SOURCE]}}
        for host in moves.HOSTS:
            # compute-1 audited its node before it went down.
            self.rts[host].update_available_resource(self.admin, host)
        if start == SCHEDULED:
            # The conductor's report client and casts are the run's.
            self.uuid = uuid
            cloud.run, cloud.router.transport = self, self.transport
            self.schedule_evacuation()
            self.holdings[uuid].add(self.providers[DESTINATION])
            # compute-2 took the cast off the bus before the run.
            self.scheduled = self.transport.receive(
                doubles.COMPUTE_TOPIC, DESTINATION, timeout=0)
        return uuid

    # -- the actors ---------------------------------------------------------

    def schedule_evacuation(self):
        """The conductor: the scheduler claims compute-2, then the cast."""
        context = harness.context(lifecycle.CONDUCTOR, is_admin=True)
        instance = self.cloud.database.load(context, self.store.get(self.uuid))
        self.conductor.rebuild_instance(
            context, instance, orig_image_ref=None, image_ref=None,
            injected_files=None, new_pass=None, orig_sys_metadata=None,
            bdms=None, recreate=True, on_shared_storage=None, host=None,
            request_spec=self.request_spec())
        return True

    def rebuild(self):
        """compute-2 runs the ``rebuild_instance`` it was cast."""
        message = self.scheduled
        getattr(self.computes[DESTINATION], message.method)(
            message.context, **message.kwargs)
        return True

    def source_starts(self):
        """compute-1's service starts: it cleans up after evacuations.

        A new process, with a new resource tracker
        (:meth:`_fresh_tracker`). In ``init_host``'s order: its nodes are
        read (``_get_nodes``), the host's instances are listed, the
        evacuations away from it are cleaned up, then each listed instance
        that clean-up did not report evacuated is recovered. Only then
        does compute-1's RPC server consume: a call nova makes to compute-1
        meanwhile times out. nova logs such a timeout and goes on: the
        shared-storage check of a guest to destroy then takes the disk for
        shared, and keeps it (:meth:`end_labels` judges that).
        """
        compute = self.computes[SOURCE]
        self._fresh_tracker()
        context = harness.context(SOURCE, is_admin=True)
        router = self.cloud.router
        calls = len(router.timed_out)
        try:
            # init_host's nodes: the driver's, read from the database.
            nodes = compute._get_nodes(context)
            instances = objects.InstanceList.get_by_host_and_node(
                context, SOURCE, SOURCE)
            # Only compute-1's clean-up moves a done evacuation on: done
            # once the start-up has begun, the clean-up reads it done and
            # must clean up (end_labels).
            self.started_after_done = (
                self.saved_migration()['status'] == migration_obj.DONE)
            evacuated = compute._destroy_evacuated_instances(context, nodes)
            for instance in instances:
                if instance.uuid not in evacuated:
                    compute._init_instance(context, instance)
        finally:
            router.endpoints[SOURCE] = self._endpoint(SOURCE)
        for host, method, error in router.timed_out[calls:]:
            self.events.append(('%s rpc.call timed out' % SOURCE, method,
                                host))
        return True

    def _fresh_tracker(self):
        """compute-1's service is a new process: a new resource tracker.

        It knows no compute node before the first audit, which nova's
        service runs only once ``init_host`` is over (``pre_start_hook``).
        """
        compute, old = self.computes[SOURCE], self.rts[SOURCE]
        rt = self.cloud.tracker_cls(SOURCE, compute.driver,
                                    reportclient=compute.reportclient)
        rt.set_service_ref(self.cloud.database.services[SOURCE])
        rt.provider_tree = old.provider_tree
        compute.rt = self.rts[SOURCE] = rt

    def end_labels(self):
        """What only the run's own records say, as outcome labels.

        * compute-1's storage is its own (the driver's shared-storage check
          says so): a guest it destroyed with ``destroy_disks=False`` left
          its disk behind, for good (:data:`~shelvefix.race.move_outcomes.
          SOURCE_DISK_KEPT`);
        * compute-1's service started once the evacuation was ``done``, and
          the server, not deleted, still holds compute-1's allocations: the
          start-up that removes them has been and gone, nothing else will
          (``allocations leaked``; the move lab's judge allows them to a
          done evacuation, not knowing whether the source has started
          since).
        """
        labels = []
        if any(event[0] == '%s driver.destroy' % SOURCE and
               event[1:] == (False,) for event in self.events):
            labels.append(move_outcomes.SOURCE_DISK_KEPT)
        if (self.started_after_done and
                not self.store.is_deleted(self.uuid) and
                self.providers[SOURCE] in self.held()):
            labels.append(outcomes.LEAKED)
        return labels
