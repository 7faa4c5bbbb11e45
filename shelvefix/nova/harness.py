"""nova's own shelve-offload, run against a shelvefix placement backend.

:class:`NovaShelveScenario` is the nova counterpart of
:class:`shelvefix.race.scenario.ShelveScenario`: a shelved server on
``compute-1``, a second host to unshelve to, and one ordered timeline of
placement requests and instance saves. What runs is nova's code:

* ``ComputeManager.shelve_offload_instance`` and the
  ``_shelve_offload_instance`` it calls, unchanged;
* on the allocation path, nova's ``ResourceTracker``, its
  ``SchedulerReportClient`` (bound to the placement fixture's keystoneauth1
  adapter) and keystoneauth1, down to the placement backend;
* on the scheduler side, ``nova.scheduler.utils.claim_resources`` with
  another ``SchedulerReportClient``, as the scheduler process has its own.

Stubbed is what needs a database, a hypervisor, RPC or another service:
``Instance.save`` writes to an
:class:`~shelvefix.objects.instance.InstanceStore` (which enforces
``expected_task_state``), mapping lookups find none, events and
notifications are recorded, the virt driver, network API and scheduler
query client are recording doubles. ``ComputeManager.__init__`` is not
run: the attributes the shelve-offload path reads are set instead.

This module imports nova (see :mod:`shelvefix.nova`).
"""

import inspect

import fixtures
from nova.compute import manager as nova_manager
from nova.compute import power_state
from nova.compute import resource_tracker
from nova.compute import task_states
from nova.compute import vm_states
import nova.conf
from nova import context as nova_context
from nova import exception as nova_exception
from nova.network import model as network_model
from nova import objects
from nova.scheduler.client import report
from nova.scheduler import utils as scheduler_utils
from nova.virt import hardware
from oslo_config import fixture as config_fixture
from oslo_utils import uuidutils

from shelvefix import backends
from shelvefix import exception as shelvefix_exception
from shelvefix.nova import doubles
from shelvefix.objects import instance as instance_obj
from shelvefix.race import client
from shelvefix.race import timeline as timeline_mod

objects.register_all()

HOST = 'compute-1'
INVENTORY = {'VCPU': 8, 'MEMORY_MB': 8192, 'DISK_GB': 100}
RESOURCES = {'VCPU': 1, 'MEMORY_MB': 512, 'DISK_GB': 10}
PROJECT = 'project-a'
USER = 'user-a'
CLAIM_VERSION = '1.28'
POLL_TIMEOUT = 10


class NovaConfig(config_fixture.Config):
    """nova's CONF, with overrides undone after each test."""

    def __init__(self):
        super(NovaConfig, self).__init__(nova.conf.CONF)


def context(actor, is_admin=False):
    """A nova ``RequestContext`` whose requests name ``actor``.

    nova sends ``context.global_id`` as ``X-OpenStack-Request-ID``; the
    ``req-<actor>-`` prefix lets the call log and the sequencer tell the
    compute service's requests from the scheduler's.
    """
    # is_admin given: left None, nova would load its policy files.
    return nova_context.RequestContext(
        user_id=USER, project_id=PROJECT, is_admin=is_admin,
        request_id='req-%s-%s' % (actor, uuidutils.generate_uuid()))


class RecordingDriver(object):
    """A virt driver that records what it is asked; the guest is gone."""

    def __init__(self, events):
        self.events = events

    def power_off(self, instance, timeout=0, retry_interval=0):
        self.events.append(('driver.power_off', timeout, retry_interval))

    def get_info(self, instance, use_cache=True):
        return hardware.InstanceInfo(state=power_state.SHUTDOWN)

    def destroy(self, context, instance, network_info, block_device_info=None,
                destroy_disks=True, destroy_secrets=True):
        self.events.append(('driver.destroy',
                            [vif['id'] for vif in network_info]))

    def get_volume_connector(self, instance):
        return {'host': HOST}

    def node_is_available(self, nodename):
        return nodename == HOST


class RecordingNetworkAPI(object):
    """One port, unbound on request."""

    def __init__(self, events, port_id):
        self.events = events
        self.port_id = port_id

    def get_instance_nw_info(self, context, instance, **kwargs):
        return network_model.NetworkInfo([network_model.VIF(
            id=self.port_id)])

    def unbind_ports(self, context, ports, detach=True):
        self.events.append(('network.unbind_ports', list(ports), detach))


class NovaShelveScenario(fixtures.Fixture):
    """A shelved nova instance on compute-1, on a placement backend.

    :param backend: ``'double'`` or ``'real'`` (see
        :mod:`shelvefix.backends`)
    :param manager_cls: nova's ``ComputeManager`` or a subclass (the
        legacy-order copy)

    After setUp:

    :ivar placement: the placement fixture (``calls``, ``transport``...)
    :ivar responses: ``(method, path, status, body text)`` of every
        placement response, in order (the call log keeps no bodies)
    :ivar compute: the nova compute manager
    :ivar compute_client: its ``SchedulerReportClient``
    :ivar scheduler_client: the scheduler's ``SchedulerReportClient``
    :ivar instance: the nova ``Instance`` compute holds
    :ivar store: the saved instance rows (what the API reads)
    :ivar events: driver, network, scheduler and notification calls
    :ivar src: the resource provider of compute-1
    :ivar dst: the resource provider unshelving claims on
    """

    def __init__(self, backend='double',
                 manager_cls=nova_manager.ComputeManager):
        super(NovaShelveScenario, self).__init__()
        self.backend = backend
        self.manager_cls = manager_cls

    def _setUp(self):
        self.events = []
        self.placement = self.useFixture(backends.make_backend(self.backend))
        self._record_responses()
        self.src = self.placement.create_provider(HOST, inventory=INVENTORY)
        self.dst = self.placement.create_provider('compute-2',
                                                  inventory=INVENTORY)
        self.compute_ctx = context('compute', is_admin=True)
        self.scheduler_ctx = context('scheduler', is_admin=True)
        # Each service has its own client, as in a deployment.
        self.compute_client = report.SchedulerReportClient(
            adapter=self.placement.adapter)
        self.scheduler_client = report.SchedulerReportClient(
            adapter=self.placement.adapter)

        self.store = instance_obj.InstanceStore()
        self._timeline = timeline_mod.Timeline(self.placement, self.store)
        self._stub_database_and_notifications()
        self.instance = self._create_instance()
        self.assert_claimed(self.scheduler_client.claim_resources(
            context('setup', is_admin=True), self.instance.uuid,
            self.alloc_request(self.src), PROJECT, USER, CLAIM_VERSION))
        self.compute = self._build_compute_manager()
        self.placement.reset_calls()
        self._timeline.reset()
        del self.responses[:]
        del self.events[:]

    @staticmethod
    def assert_claimed(result):
        if result is not True:
            raise AssertionError('setup claim failed: %r' % (result,))

    def _record_responses(self):
        self.responses = []
        transport = self.placement.transport
        send = transport.send

        def recording_send(request, **kwargs):
            response = send(request, **kwargs)
            self.responses.append((request.method, request.path_url,
                                   response.status_code, response.text))
            return response

        transport.send = recording_send
        self.addCleanup(setattr, transport, 'send', send)

    def _stub_database_and_notifications(self):
        store, events = self.store, self.events

        def save(instance, expected_vm_state=None, expected_task_state=None,
                 admin_state_reset=False):
            changes = {field: getattr(instance, field)
                       for field in instance.obj_what_changed()}
            try:
                store.update(instance.uuid, changes,
                             expected_task_state=expected_task_state,
                             expected_vm_state=expected_vm_state)
            except shelvefix_exception.InstanceUpdateConflict as e:
                # nova's exceptions have the same names, hierarchy and
                # arguments; nova's callers catch nova's.
                raise getattr(nova_exception, type(e).__name__)(
                    **e.kwargs) from e
            instance.obj_reset_changes()

        def lazy_load(instance, attrname):
            raise AssertionError(
                'nova read Instance.%s, which the harness did not set and '
                'would load from the database' % attrname)

        def recorder(name):
            def record(*args, **kwargs):
                events.append((name, kwargs.get('phase') or (
                    args[3] if len(args) > 3 else None)))
            return record

        def no_mappings(list_cls):
            return doubles.class_call(
                lambda context, instance_uuid, *args, **kwargs:
                list_cls(objects=[]))

        patches = [
            ('nova.objects.instance.Instance.save', save),
            ('nova.objects.instance.Instance.obj_load_attr', lazy_load),
            ('nova.objects.block_device.BlockDeviceMappingList.'
             'get_by_instance_uuid',
             no_mappings(objects.BlockDeviceMappingList)),
            ('nova.objects.instance_action.InstanceActionEvent.event_start',
             doubles.class_call(recorder('action_event.start'))),
            ('nova.objects.instance_action.InstanceActionEvent.'
             'event_finish_with_failure',
             doubles.class_call(recorder('action_event.finish'))),
            ('nova.compute.utils.notify_about_instance_usage',
             recorder('notify.usage')),
            ('nova.compute.utils.notify_about_instance_action',
             recorder('notify.action')),
            ('nova.compute.utils.add_instance_fault_from_exc',
             recorder('instance_fault')),
            ('nova.exception_wrapper._emit_legacy_exception_notification',
             recorder('notify.exception')),
            ('nova.exception_wrapper._emit_versioned_exception_notification',
             recorder('notify.exception')),
        ]
        share_mappings = getattr(objects, 'ShareMappingList', None)
        if share_mappings is not None:
            # nova 30 (2024.2) and later look for shares at power off.
            patches.append(('nova.objects.share_mapping.ShareMappingList.'
                            'get_by_instance_uuid',
                            no_mappings(share_mappings)))
        for name, value in patches:
            self.useFixture(fixtures.MonkeyPatch(name, value))

    def _create_instance(self):
        values = {
            'uuid': uuidutils.generate_uuid(),
            'vm_state': vm_states.SHELVED,
            'task_state': task_states.SHELVING_OFFLOADING,
            'power_state': power_state.RUNNING,
            'host': HOST, 'node': HOST, 'launched_on': HOST,
            'availability_zone': 'nova', 'compute_id': 1,
            'project_id': PROJECT, 'user_id': USER,
            'system_metadata': {}, 'root_device_name': '/dev/vda',
        }
        # Fields differ between nova releases; set those this one has.
        values = {k: v for k, v in values.items()
                  if k in objects.Instance.fields}
        instance = objects.Instance(context=self.compute_ctx, **values)
        instance.obj_reset_changes()
        self.store.create({k: v for k, v in values.items()
                           if k != 'system_metadata'})
        return instance

    def _build_compute_manager(self):
        compute = self.manager_cls.__new__(self.manager_cls)
        compute.host = HOST
        compute.driver = RecordingDriver(self.events)
        compute.network_api = RecordingNetworkAPI(
            self.events, uuidutils.generate_uuid())
        compute.volume_api = None
        compute.query_client = doubles.SchedulerRPC(self.events)
        compute.send_instance_updates = True
        compute.notifier = None
        compute.reportclient = self.compute_client
        compute.rt = resource_tracker.ResourceTracker(
            HOST, compute.driver, reportclient=self.compute_client)
        add_share_manager(compute, compute.driver)
        return compute

    def alloc_request(self, rp_uuid):
        return {'allocations': {rp_uuid: {'resources': dict(RESOURCES)}}}

    # -- the actors ---------------------------------------------------------

    def shelve_offload(self):
        """Compute: nova's ``shelve_offload_instance`` RPC entry point."""
        kwargs = {}
        signature = inspect.signature(self.compute.shelve_offload_instance)
        if 'accel_uuids' in signature.parameters:
            kwargs['accel_uuids'] = []
        self.compute.shelve_offload_instance(
            self.compute_ctx, self.instance, True, **kwargs)

    def api_unshelve(self):
        """The API client's side, then the scheduler's claim.

        The very sequence the library's scenarios run
        (:func:`shelvefix.race.client.unshelve`), on a nova ``Instance``.

        :returns: what ``claim_resources`` returned
        :raises AllocationUpdateFailed: the claim hit a consumer
            generation conflict
        """
        def load(row):
            instance = objects.Instance(
                context=self.scheduler_ctx, uuid=row['uuid'],
                vm_state=row['vm_state'], task_state=row['task_state'])
            instance.obj_reset_changes()
            return instance
        return client.unshelve(self.store, self.instance.uuid, load,
                               lambda instance: self.unshelve_claim(),
                               timeout=POLL_TIMEOUT)

    def unshelve_claim(self):
        """The scheduler claims compute-2 with nova's claim_resources."""
        spec = objects.RequestSpec(instance_uuid=self.instance.uuid,
                                   project_id=PROJECT, user_id=USER,
                                   scheduler_hints={})
        return scheduler_utils.claim_resources(
            self.scheduler_ctx, self.scheduler_client, spec,
            self.instance.uuid, self.alloc_request(self.dst),
            allocation_request_version=CLAIM_VERSION)

    # -- what happened --------------------------------------------------------

    def allocations(self):
        """What placement says the instance holds now."""
        return self.scheduler_client.get_allocs_for_consumer(
            self.scheduler_ctx, self.instance.uuid)

    def usages(self, rp_uuid):
        resp = self.placement.adapter.get(
            '/resource_providers/%s/usages' % rp_uuid, microversion='1.9')
        return resp.json()['usages']

    def saved(self):
        return self.store.peek(self.instance.uuid)

    def error_detail(self, method):
        """Placement's last error body for ``method`` on the allocations.

        :returns: the response text, or None if there was no error
        """
        path = '/allocations/%s' % self.instance.uuid
        for r_method, r_path, status, text in reversed(self.responses):
            if (r_method, status >= 400) == (method, True) and \
                    r_path.endswith(path):
                return text
        return None

    def timeline(self):
        """See :meth:`shelvefix.race.timeline.Timeline.events`."""
        return self._timeline.events()


def add_share_manager(compute, driver):
    """Give ``compute`` the share manager its release reads, if it has one.

    Some releases have ``nova.compute.share_management`` (nova 34.0.0
    does); a tree without it has a compute manager that does not look for
    one.
    """
    try:
        from nova.compute import share_management
    except ImportError:
        return
    compute.share_manager = share_management.ShareManager(None, driver)


index_of_offloaded_save = timeline_mod.index_of_offloaded_save
order_violations = timeline_mod.order_violations
