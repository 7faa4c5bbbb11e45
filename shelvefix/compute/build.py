"""The compute host's side of a server's build, as nova runs it, fixed.

:class:`BuildMixin` is mixed into the compute manager. The conductor
casts ``build_and_run_instance`` (:mod:`shelvefix.conductor.build`);
serialised per instance on this host:

1. the server is saved ``BUILDING`` with no task, if it still is the
   conductor's (``SCHEDULING``); a server deleted meanwhile ends it;
2. the tracker's ``instance_claim`` (under its lock) makes the server this
   node's and counts it; the network, the block devices and the driver's
   ``spawn`` follow, each step saved (``NETWORKING``,
   ``BLOCK_DEVICE_MAPPING``, ``SPAWNING``), then ``ACTIVE``;
3. a failure there aborts the claim (the node stops counting the server,
   which leaves the node) and is a *reschedule*: the server is saved
   ``SCHEDULING``, its allocations here are freed, and ``build_instances``
   is cast to the conductor with the alternate hosts; a build with no
   retry left goes to ``ERROR`` instead, holding nothing (nova keeps its
   allocations until the server is deleted, though no tracker counts it).

When the service starts again (``init_host``), a server that is
``BUILDING`` with allocations on this host but no host saved was cast here
and lost with the old process before its claim: it goes to ``ERROR``, and
its allocations here are freed. nova (since bug 1833581's fix) does the
first only: the allocations stay, counted by no tracker, until the
server's delete (``shelvefix race --scenario build --target nova``,
``compute-restarts``). A server ``BUILDING`` on this host goes to
``ERROR`` as in nova, keeping its allocations here, which its host allows.

The mixin expects the compute manager's collaborators (``driver``,
``network_api``, ``reportclient``, ``rt``, ``locks``, ``host``), its small
steps, and :attr:`compute_task_api`.
"""

from oslo_log import log as logging

from shelvefix.compute import task_states
from shelvefix.compute import vm_states
from shelvefix import context as context_mod
from shelvefix import exception
from shelvefix.objects import instance as instance_obj

LOG = logging.getLogger(__name__)

#: The task states of a server whose build was under way.
BUILD_TASK_STATES = (task_states.SCHEDULING, task_states.NETWORKING,
                     task_states.BLOCK_DEVICE_MAPPING, task_states.SPAWNING)


class BuildMixin(object):
    """``build_and_run_instance``, and ``init_host``'s clean-up of builds.

    :ivar compute_task_api: the conductor's
        :class:`~shelvefix.conductor.rpcapi.ComputeTaskAPI` (a reschedule's
        cast); None: a failed build is not rescheduled
    """

    compute_task_api = None

    def build_and_run_instance(self, context, instance, image, request_spec,
                               filter_properties, admin_password=None,
                               injected_files=None, requested_networks=None,
                               security_groups=None,
                               block_device_mapping=None, node=None,
                               limits=None, host_list=None,
                               accel_uuids=None):
        """Build ``instance`` on this host (the RPC entry point).

        :param filter_properties: the conductor's: ``retry`` (absent: no
            reschedule) and ``limits``
        :param host_list: the alternate hosts (scheduler ``Selection``
            objects, unclaimed) a reschedule may claim
        :returns: ``'active'``, ``'rescheduled'`` or ``'failed'``
        """
        @self.locks.synchronized(instance.uuid)
        def _locked_do_build_and_run_instance():
            return self._do_build_and_run_instance(
                context, instance, image, request_spec,
                filter_properties or {}, admin_password, injected_files,
                requested_networks, security_groups, block_device_mapping,
                node, limits, host_list or [])
        return _locked_do_build_and_run_instance()

    def _do_build_and_run_instance(self, context, instance, image,
                                   request_spec, filter_properties,
                                   admin_password, injected_files,
                                   requested_networks, security_groups,
                                   block_device_mapping, node, limits,
                                   host_list):
        try:
            instance.vm_state = vm_states.BUILDING
            instance.task_state = None
            instance.save(expected_task_state=[task_states.SCHEDULING,
                                               None])
        except exception.InstanceNotFound:
            LOG.debug('Instance %s disappeared before its build',
                      instance.uuid)
            return 'failed'
        except exception.UnexpectedTaskStateError as e:
            LOG.debug('Not building instance %s: %s', instance.uuid, e)
            return 'failed'
        node = node or self.host
        try:
            self._build_and_run_instance(context, instance, image, node,
                                         limits or {})
            return 'active'
        except exception.RescheduledException as e:
            if not filter_properties.get('retry') or (
                    self.compute_task_api is None):
                LOG.debug('Instance %s: no retry, not rescheduling',
                          instance.uuid)
                self._build_failed(context, instance)
                return 'failed'
            LOG.debug('%s', e)
            self._nil_out_instance_obj_host_and_node(instance)
            instance.task_state = task_states.SCHEDULING
            instance.save()
            # This host's claim goes before the conductor claims an
            # alternate for the same consumer.
            self.reportclient.delete_allocation_for_instance(
                context, instance.uuid, force=True)
            self.compute_task_api.build_instances(
                context, [instance], image, filter_properties,
                admin_password, injected_files, requested_networks,
                security_groups, block_device_mapping,
                request_spec=request_spec, host_lists=[host_list])
            return 'rescheduled'
        except exception.InstanceNotFound:
            LOG.debug('Instance %s disappeared during its build',
                      instance.uuid)
            return 'failed'
        except exception.UnexpectedTaskStateError as e:
            if e.kwargs.get('actual', {}).get('task_state') not in (
                    task_states.DELETING, task_states.SOFT_DELETING):
                LOG.exception('Build of instance %s failed, not '
                              'rescheduling', instance.uuid)
                self._build_failed(context, instance)
                return 'failed'
            # The user's delete owns the server now (nova's
            # UnexpectedDeletingTaskStateError): its host deletes it.
            LOG.debug('Instance %s is being deleted during its build',
                      instance.uuid)
            return 'failed'
        except Exception:
            LOG.exception('Build of instance %s failed, not rescheduling',
                          instance.uuid)
            self._build_failed(context, instance)
            return 'failed'

    def _build_failed(self, context, instance):
        """The server goes to ``ERROR`` with no host, holding nothing."""
        self._nil_out_instance_obj_host_and_node(instance)
        self._set_instance_obj_error_state(instance, clean_task_state=True)
        self.reportclient.delete_allocation_for_instance(
            context, instance.uuid, force=True)

    def _build_and_run_instance(self, context, instance, image, node,
                                limits):
        self._notify_about_instance_usage(context, instance, 'create.start')
        allocations = self.reportclient.get_allocations_for_consumer(
            context, instance.uuid)
        try:
            with self.rt.instance_claim(context, instance, node, allocations,
                                        limits):
                network_info = self._build_networks_for_instance(context,
                                                                 instance)
                instance.task_state = task_states.BLOCK_DEVICE_MAPPING
                self._save_building(instance, task_states.NETWORKING)
                instance.task_state = task_states.SPAWNING
                self._save_building(instance,
                                    task_states.BLOCK_DEVICE_MAPPING)
                self.driver.spawn(context, instance, image,
                                  injected_files=[], admin_password=None,
                                  allocations=allocations,
                                  network_info=network_info)
                self._update_instance_after_spawn(instance)
                self._save_building(instance, task_states.SPAWNING)
        except (exception.InstanceNotFound,
                exception.UnexpectedTaskStateError,
                exception.BuildAbortException):
            raise
        except Exception as e:
            LOG.exception('Failed to build instance %s', instance.uuid)
            raise exception.RescheduledException(instance_uuid=instance.uuid,
                                                 reason=str(e))
        self._notify_about_instance_usage(context, instance, 'create.end')

    def _save_building(self, instance, expected):
        """Save a step of the build if the task state is still ``expected``.

        If it is not (the user's delete saved ``DELETING``), the unsaved
        changes are dropped before the claim aborts: its save must not
        write them over the delete's.
        """
        try:
            instance.save(expected_task_state=[expected])
        except exception.UnexpectedTaskStateError:
            instance.refresh()
            raise

    def _build_networks_for_instance(self, context, instance):
        instance.task_state = task_states.NETWORKING
        self._save_building(instance, None)
        self.network_api.setup_instance_network_on_host(context, instance,
                                                        self.host)
        return self.network_api.get_instance_nw_info(context, instance)

    # -- the service starting again

    def init_host(self, service_ref=None):
        """Start-up: what the other mixins clean up, then lost builds.

        A service with no :attr:`compute_task_api` takes no builds (it
        could not reschedule one), so it has none to clean up: it skips
        the look in placement. The race lab's move clouds wire their
        services so, which keeps their searches to the moves (the look,
        a read of the host's provider, doubles the ``evacuate`` search).
        """
        super(BuildMixin, self).init_host(service_ref)
        if self.compute_task_api is None:
            return
        context = context_mod.get_admin_context()
        handled = set()
        for instance in self._instances_on_host():
            handled.add(instance.uuid)
            self._init_building_instance(context, instance)
        self._error_out_instances_whose_build_was_interrupted(
            context, handled, sorted(self.rt.compute_nodes.values()))

    def _instances_on_host(self):
        return [instance for node in sorted(self.rt.compute_nodes)
                for instance in instance_obj.InstanceList.
                get_by_host_and_node(self.rt.store, self.host, node)]

    def _init_building_instance(self, context, instance):
        """A build this host had claimed when it stopped: ``ERROR``."""
        if (instance.vm_state == vm_states.BUILDING or
                instance.task_state in BUILD_TASK_STATES):
            LOG.debug('Instance %s was building on this host when it '
                      'stopped: ERROR', instance.uuid)
            self._set_instance_obj_error_state(instance,
                                               clean_task_state=True)

    def _error_out_instances_whose_build_was_interrupted(
            self, context, already_handled_instances, node_uuids):
        """``ERROR`` and free the builds lost before their claim here.

        A consumer with allocations on this host's providers, not among
        the instances on this host, whose record is ``BUILDING``.
        """
        store = self.rt.store
        for node_uuid in node_uuids:
            try:
                allocations = (self.reportclient.
                               get_allocations_for_resource_provider(
                                   context, node_uuid))
            except exception.ResourceProviderAllocationRetrievalFailed as e:
                LOG.error('Cannot error out the builds interrupted on '
                          'provider %(rp)s: %(error)s',
                          {'rp': node_uuid, 'error': e})
                continue
            for uuid in sorted(set(allocations) -
                               set(already_handled_instances)):
                try:
                    instance = instance_obj.Instance.get_by_uuid(store,
                                                                 uuid)
                except exception.InstanceNotFound:
                    continue
                if instance.vm_state != vm_states.BUILDING:
                    continue
                LOG.debug('The build of instance %s was interrupted before '
                          'its claim: ERROR', uuid)
                self._set_instance_obj_error_state(instance,
                                                   clean_task_state=True)
                self.reportclient.delete_allocation_for_instance(
                    context, uuid, force=True)
