"""The compute manager: shelve-offload, unshelve and the moves.

``_shelve_offload_instance`` frees the instance's placement allocations
*before* it saves ``vm_state = SHELVED_OFFLOADED``. An API client that
unshelves as soon as it sees that state therefore always finds the consumer
gone, and the scheduler claims with ``consumer_generation: null``
(bug 1798688). It differs from nova's in two ways. The failure policy
is stricter: if the allocations cannot be freed, the offload stops before
the state change, so no instance is ever reported offloaded while it still
holds allocations. And it saves once: ``SHELVED_OFFLOADED`` becomes visible
together with host and node cleared, where nova clears them in a second
save that can undo an unshelve's claim of another host.

``_unshelve_instance`` is the destination's side of an unshelve, as in
nova: ``task_state = SPAWNING``, then inside one ``try`` the resource
tracker's claim (which makes the instance the node's), the network set-up
on this host and the spawn. Any failure there gives the scheduler's
allocations on this host back to placement (bug 1862633 was a port binding
failure raised before the ``try``, which leaked them).
"""

from oslo_log import log as logging

from shelvefix.compute import build
from shelvefix.compute import collaborators
from shelvefix.compute import cross_cell
from shelvefix.compute import decorators
from shelvefix.compute import delete
from shelvefix.compute import evacuate
from shelvefix.compute import live_migration
from shelvefix.compute import live_migration_abort
from shelvefix.compute import node_manager
from shelvefix.compute import resize
from shelvefix.compute import resource_tracker
from shelvefix.compute import task_states
from shelvefix.compute import vm_states
from shelvefix import exception
from shelvefix.scheduler.client import report
from shelvefix import utils

LOG = logging.getLogger(__name__)

# The task states an instance may be in when shelve-offload starts: SHELVING
# when offloading straight after a shelve (shelved_offload_time = 0),
# SHELVING_OFFLOADING for an explicit shelve-offload.
OFFLOADABLE_TASK_STATES = [task_states.SHELVING,
                           task_states.SHELVING_OFFLOADING]


#: See :func:`shelvefix.compute.decorators.reverts_task_state`.
reverts_task_state = decorators.reverts_task_state


class ComputeManager(build.BuildMixin, resize.ResizeMixin,
                     evacuate.EvacuateMixin,
                     live_migration.LiveMigrationMixin,
                     live_migration_abort.LiveMigrationQueueMixin,
                     cross_cell.CrossCellMixin, node_manager.NodesMixin,
                     delete.DeleteMixin):
    """Manages instances on one compute host (the shelve path only).

    Every collaborator is injected. The defaults record what they are asked
    and touch nothing (see :mod:`shelvefix.compute.collaborators`), except
    the report client, which talks to the placement service configured in
    ``[placement]``.

    :param host: this compute host's name
    :param driver: virt driver (``power_off``, ``get_info``, ``destroy``,
        ``get_volume_connector``)
    :param network_api: ``get_instance_nw_info``, ``unbind_ports``
    :param volume_api: ``get_bdms``, ``terminate_connection``
    :param notifier: ``info(context, event_type, payload)``
    :param reportclient: a ``SchedulerReportClient``
    :param query_client: the scheduler's ``delete_instance_info``
    :param rt: a ``ResourceTracker`` (default: one for this host using
        ``reportclient``, freeing allocations with DELETE)
    :param locks: this host's :class:`~shelvefix.utils.Locks` (default: the
        resource tracker's): per-instance operations are serialised on it
    :param compute_rpcapi: a
        :class:`~shelvefix.compute.rpcapi.ComputeAPI`, for the casts of a
        move to the other host (a manager that only shelves needs none)
    """

    def __init__(self, host='compute-1', driver=None, network_api=None,
                 volume_api=None, notifier=None, reportclient=None,
                 query_client=None, rt=None, locks=None,
                 compute_rpcapi=None):
        self.host = host
        self.compute_rpcapi = compute_rpcapi
        self.driver = driver or collaborators.RecordingDriver()
        self.network_api = network_api or collaborators.RecordingNetworkAPI()
        self.volume_api = volume_api or collaborators.RecordingVolumeAPI()
        self.notifier = notifier or collaborators.LoggingNotifier()
        self.reportclient = (reportclient or
                             (rt and rt.reportclient) or
                             report.SchedulerReportClient())
        self.query_client = (query_client or
                             collaborators.SchedulerQueryClient())
        self.rt = rt or resource_tracker.ResourceTracker(
            host, self.driver, reportclient=self.reportclient, locks=locks)
        self.locks = locks or getattr(self.rt, 'locks', None) or utils.Locks()
        #: ``{instance uuid: (migration, future)}`` of the live migrations
        #: cast here whose job has not started moving the guest yet.
        self._waiting_live_migrations = {}

    # -- small steps, named as in nova so subclasses can reorder them

    def _instance_update(self, context, instance, **kwargs):
        for field, value in kwargs.items():
            setattr(instance, field, value)
        instance.save()

    def _notify_about_instance_usage(self, context, instance, event_suffix):
        self.notifier.info(context, 'compute.instance.%s' % event_suffix,
                           {'instance_id': instance.uuid, 'host': self.host,
                            'state': instance.vm_state,
                            'task_state': instance.task_state})

    def _get_power_off_values(self, instance, clean_shutdown):
        # nova reads the image's os_shutdown_timeout; 60 s is its default.
        if clean_shutdown:
            return 60, 10
        return 0, 0

    def _power_off_instance(self, context, instance, clean_shutdown=True):
        timeout, retry_interval = self._get_power_off_values(
            instance, clean_shutdown)
        self.driver.power_off(instance, timeout, retry_interval)

    def _get_power_state(self, instance):
        return self.driver.get_info(instance).state

    def _get_instance_block_device_info(self, context, instance, bdms):
        return {'block_device_mapping': list(bdms)}

    def _terminate_volume_connections(self, context, instance, bdms):
        connector = None
        for bdm in bdms:
            if not bdm.get('volume_id'):
                continue
            if connector is None:
                connector = self.driver.get_volume_connector(instance)
            self.volume_api.terminate_connection(context, bdm['volume_id'],
                                                 connector)

    def _update_resource_tracker(self, context, instance, host, node):
        """Let this host's tracker recount an instance it had on ``node``."""
        if host == self.host:
            self.rt.update_usage(context, instance, node)

    def _nil_out_instance_obj_host_and_node(self, instance):
        instance.host = None
        instance.node = None

    def _delete_scheduler_instance_info(self, context, instance_uuid):
        try:
            self.query_client.delete_instance_info(context, self.host,
                                                   instance_uuid)
        except Exception:
            # The scheduler's view heals at its next periodic sync; a
            # failure here must not undo a completed offload.
            LOG.exception('Failed to delete scheduler instance info for '
                          '%s', instance_uuid)

    def _check_offloadable(self, instance):
        """Refuse before touching anything if the task state is wrong.

        The authoritative check is the first save; checking the saved row
        up front means a wrong request changes nothing, neither on the
        hypervisor nor in placement.
        """
        saved = instance.saved()
        if saved['task_state'] not in OFFLOADABLE_TASK_STATES:
            raise exception.UnexpectedTaskStateError(
                instance_uuid=instance.uuid,
                expected={'task_state': OFFLOADABLE_TASK_STATES},
                actual={'task_state': saved['task_state']})

    def _free_allocations(self, context, instance):
        """Free the allocations, or stop the offload with an ERROR log."""
        try:
            self.rt.delete_allocation_for_shelve_offloaded_instance(
                context, instance)
        except Exception as e:
            LOG.error('Shelve offload of instance %(uuid)s stopped: its '
                      'allocations (consumer %(uuid)s) could not be freed '
                      'in placement, so it stays %(vm_state)s. %(error)s',
                      {'uuid': instance.uuid, 'vm_state': instance.vm_state,
                       'error': e})
            raise

    # -- the operation

    @reverts_task_state
    def shelve_offload_instance(self, context, instance, clean_shutdown,
                                accel_uuids=None):
        """Remove a shelved instance from its host.

        Serialised per instance on this host. On failure the task state is
        cleared and the exception re-raised; the vm_state is whatever was
        last saved (never SHELVED_OFFLOADED with allocations left).

        :param context: request context
        :param instance: an :class:`~shelvefix.objects.instance.Instance`
        :param clean_shutdown: give the guest a chance to stop
        :param accel_uuids: accepted for nova's signature; unused
        """
        @self.locks.synchronized(instance.uuid)
        def do_shelve_offload_instance():
            self._shelve_offload_instance(context, instance, clean_shutdown)
        do_shelve_offload_instance()

    def _shelve_offload_instance(self, context, instance, clean_shutdown,
                                 bdms=None):
        LOG.info('Shelve offloading instance %s', instance.uuid)
        self._check_offloadable(instance)
        if bdms is None:
            bdms = self.volume_api.get_bdms(context, instance.uuid)
        self._notify_about_instance_usage(context, instance,
                                          'shelve_offload.start')

        self._power_off_instance(context, instance, clean_shutdown)
        current_power_state = self._get_power_state(instance)
        network_info = self.network_api.get_instance_nw_info(context,
                                                             instance)
        ports_id = [vif['id'] for vif in network_info]
        self.network_api.unbind_ports(context, ports_id, detach=False)

        block_device_info = self._get_instance_block_device_info(
            context, instance, bdms=bdms)
        self.driver.destroy(context, instance, network_info,
                            block_device_info)
        self._terminate_volume_connections(context, instance, bdms)

        # The allocations (and with them placement's consumer record) go
        # first: once SHELVED_OFFLOADED is saved, an API client may unshelve
        # and the scheduler must then find no consumer to conflict with.
        self._free_allocations(context, instance)

        instance.power_state = current_power_state
        instance.vm_state = vm_states.SHELVED_OFFLOADED
        instance.task_state = None
        # Host and node are cleared in the very save that makes the state
        # visible. Once it is visible an unshelve may claim the instance on
        # another host and save that host; a later save of ours would undo
        # it (nova saves twice, and its second save, host = None, can land
        # after the destination's claim: the lifecycle scenario of
        # shelvefix race finds that run).
        host, node = instance.host, instance.node
        self._nil_out_instance_obj_host_and_node(instance)
        instance.save(expected_task_state=OFFLOADABLE_TASK_STATES)

        # The saved state allows removal now (vm_states.
        # allow_resource_removal): the tracker stops counting it.
        self._update_resource_tracker(context, instance, host, node)

        self._delete_scheduler_instance_info(context, instance.uuid)
        self._notify_about_instance_usage(context, instance,
                                          'shelve_offload.end')

    # -- unshelve

    @reverts_task_state
    def start_instance(self, context, instance):
        """Power on an instance (unshelving a SHELVED one ends here)."""
        self._notify_about_instance_usage(context, instance,
                                          'power_on.start')
        network_info = self.network_api.get_instance_nw_info(context,
                                                             instance)
        self.driver.power_on(context, instance, network_info)
        instance.power_state = self._get_power_state(instance)
        instance.vm_state = vm_states.ACTIVE
        instance.task_state = None
        instance.save(expected_task_state=task_states.POWERING_ON)
        self._notify_about_instance_usage(context, instance, 'power_on.end')

    def _update_instance_after_spawn(self, instance,
                                     vm_state=vm_states.ACTIVE):
        instance.power_state = self._get_power_state(instance)
        instance.vm_state = vm_state
        instance.task_state = None

    def _update_scheduler_instance_info(self, context, instance):
        try:
            self.query_client.update_instance_info(context, self.host,
                                                   instance)
        except Exception:
            LOG.exception('Failed to update scheduler instance info for %s',
                          instance.uuid)

    @reverts_task_state
    def unshelve_instance(self, context, instance, image, filter_properties,
                          node, request_spec=None, accel_uuids=None):
        """Spawn an offloaded instance on this host (the RPC entry point).

        Serialised per instance on this host. On failure the task state is
        cleared (with the host and node the failure path nulled out) and
        the exception re-raised.

        :param image: the shelved image (None: volume-backed)
        :param filter_properties: the scheduler's (``limits``)
        :param node: the node the scheduler chose
        :param request_spec: the scheduler's request spec (nova's
            signature; not read)
        :param accel_uuids: accepted for nova's signature; unused
        """
        if filter_properties is None:
            filter_properties = {}

        @self.locks.synchronized(instance.uuid)
        def do_unshelve_instance():
            self._unshelve_instance(context, instance, image,
                                    filter_properties, node, request_spec,
                                    accel_uuids)
        do_unshelve_instance()

    def _unshelve_instance(self, context, instance, image, filter_properties,
                           node, request_spec, accel_uuids):
        LOG.info('Unshelving instance %s', instance.uuid)
        bdms = self.volume_api.get_bdms(context, instance.uuid)
        self._notify_about_instance_usage(context, instance, 'unshelve.start')

        instance.task_state = task_states.SPAWNING
        instance.save()

        block_device_info = self._get_instance_block_device_info(
            context, instance, bdms=bdms)
        if node is None:
            node = self.host
        limits = filter_properties.get('limits', {})

        try:
            # Inside the try, unlike nova's: a placement failure at this
            # read must give the scheduler's claim back too, or an
            # offloaded instance keeps it (and the next unshelve's claim
            # doubles it up).
            allocations = self.reportclient.get_allocations_for_consumer(
                context, instance.uuid)
            with self.rt.instance_claim(context, instance, node, allocations,
                                        limits):
                self.network_api.setup_instance_network_on_host(
                    context, instance, self.host)
                network_info = self.network_api.get_instance_nw_info(
                    context, instance)
                self.driver.spawn(context, instance, image,
                                  injected_files=[], admin_password=None,
                                  allocations=allocations,
                                  network_info=network_info,
                                  block_device_info=block_device_info)
        except Exception:
            LOG.exception('Instance %s failed to spawn', instance.uuid)
            # The scheduler's allocations on this host go back whether the
            # allocation read, the claim, the network set-up or the spawn
            # failed: aborting the claim only stops the node counting the
            # instance.
            self.reportclient.delete_allocation_for_instance(
                context, instance.uuid, force=True)
            self._terminate_volume_connections(context, instance, bdms)
            # Saved by reverts_task_state together with task_state = None.
            self._nil_out_instance_obj_host_and_node(instance)
            raise

        self._update_instance_after_spawn(instance)
        instance.save(expected_task_state=task_states.SPAWNING)
        self._update_scheduler_instance_info(context, instance)
        self._notify_about_instance_usage(context, instance, 'unshelve.end')
