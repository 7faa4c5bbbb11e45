"""A shelved server on compute-1 with a second host to unshelve to.

``ShelveScenario`` wires the real library (compute manager, resource
tracker, report client, scheduler claim) to the placement double and keeps
one ordered timeline of placement calls and instance saves.
"""

import fixtures
from oslo_utils import uuidutils

from shelvefix.compute import manager
from shelvefix.compute import resource_tracker
from shelvefix.compute import task_states
from shelvefix.compute import vm_states
from shelvefix import context
from shelvefix.objects import instance as instance_obj
from shelvefix.placement import fixture as placement_fixture
from shelvefix.scheduler import request_spec
from shelvefix.scheduler import utils as scheduler_utils

INVENTORY = {'VCPU': 8, 'MEMORY_MB': 8192, 'DISK_GB': 100}
FLAVOR = instance_obj.Flavor(name='m1.small', vcpus=1, memory_mb=512,
                             root_gb=10)
PROJECT = 'project-a'
USER = 'user-a'


def create_providers(placement):
    """Two uniquely named compute node providers; returns their uuids.

    Unique names because providers may outlive one scenario on a shared
    (or remote) placement.
    """
    suffix = uuidutils.generate_uuid()[:8]
    return (placement.create_provider('compute-1-' + suffix,
                                      inventory=INVENTORY),
            placement.create_provider('compute-2-' + suffix,
                                      inventory=INVENTORY))


class ShelveScenario(fixtures.Fixture):
    """Set up placement, an instance with allocations and a compute host.

    :param force_delete: how compute frees allocations (True: DELETE,
        False: GET + PUT empty with the consumer generation)
    :param manager_cls: the compute manager class to run
    :param placement: the placement fixture to use (default: a new
        :class:`~shelvefix.placement.fixture.PlacementFixture`, the double)
    :param shared: True if ``placement`` is already set up and outlives the
        scenario (the explorer runs many scenarios on one placement, and a
        remote placement cannot be reset): the scenario then removes its
        allocations and providers when it is cleaned up.
    :param providers: ``(src, dst)`` providers to reuse (they are then
        neither created nor deleted by the scenario)
    """

    def __init__(self, force_delete=True, manager_cls=manager.ComputeManager,
                 placement=None, shared=False, providers=None):
        super().__init__()
        self.force_delete = force_delete
        self.manager_cls = manager_cls
        self._placement = placement
        self._shared = shared
        self._providers = providers

    def _setUp(self):
        if self._shared:
            self.placement = self._placement
        else:
            self.placement = self.useFixture(
                self._placement or placement_fixture.PlacementFixture())
        self.client = self.placement.client
        if self._providers:
            self.src, self.dst = self._providers
        else:
            self.src, self.dst = create_providers(self.placement)
        if self._shared:
            self.addCleanup(self._remove_from_placement)
        self.compute_ctx = context.RequestContext(
            request_id='req-compute-%s' % uuidutils.generate_uuid())
        self.scheduler_ctx = context.RequestContext(
            user_id=USER, project_id=PROJECT,
            request_id='req-scheduler-%s' % uuidutils.generate_uuid())

        self.store = instance_obj.InstanceStore()
        self.save_marks = []
        self.store.observers.append(self._saved)
        self.instance = instance_obj.Instance.create(
            self.store, uuidutils.generate_uuid(),
            vm_state=vm_states.SHELVED,
            task_state=task_states.SHELVING_OFFLOADING, host='compute-1',
            node='compute-1', project_id=PROJECT, user_id=USER,
            flavor=FLAVOR)
        self.client.claim_resources(
            self.scheduler_ctx, self.instance.uuid,
            self.alloc_request(self.src), PROJECT, USER, '1.28')
        self.rt = resource_tracker.ResourceTracker(
            'compute-1', reportclient=self.client,
            force_delete_allocations=self.force_delete)
        self.rt.instance_claim(self.compute_ctx, self.instance, 'compute-1')
        self.compute = self.manager_cls(host='compute-1',
                                        reportclient=self.client, rt=self.rt)
        self.placement.reset_calls()
        del self.save_marks[:]

    def _remove_from_placement(self):
        ctx = context.get_admin_context()
        if getattr(self, 'instance', None) is not None:
            self.client.delete_allocation_for_instance(
                ctx, self.instance.uuid, force=True)
        if not self._providers:
            for rp in (self.src, self.dst):
                self.client.delete_resource_provider(ctx, rp)

    def _saved(self, uuid, row):
        self.save_marks.append((len(self.placement.calls), row))

    @staticmethod
    def alloc_request(rp_uuid):
        return {'allocations': {rp_uuid: {'resources': FLAVOR.resources}}}

    def shelve_offload(self):
        """Run the compute manager's shelve-offload."""
        self.compute.shelve_offload_instance(self.compute_ctx, self.instance,
                                             clean_shutdown=True)

    def unshelve_claim(self, saved=None):
        """The scheduler claims compute-2's resources for the unshelve.

        :param saved: the instance as the API loaded it (read from the
            store when None)
        """
        saved = saved or instance_obj.Instance.get_by_uuid(
            self.store, self.instance.uuid)
        return scheduler_utils.claim_resources(
            self.scheduler_ctx, self.client,
            request_spec.RequestSpec.from_instance(saved),
            self.instance.uuid, self.alloc_request(self.dst),
            allocation_request_version='1.28')

    def api_unshelve(self, timeout=60.0, poll_interval=0.001):
        """The API client's side: wait for SHELVED_OFFLOADED, unshelve.

        Polls the saved state like a client polling the server's status,
        then does what nova's API and conductor do before the scheduler
        claims: task_state = UNSHELVING, saved only if no other task owns
        the instance. If the claim fails the task state is cleared again.

        :returns: True when the claim succeeded
        :raises AllocationUpdateFailed: the scheduler's claim failed
        """
        self.store.wait_for(
            self.instance.uuid,
            lambda row: row['vm_state'] == vm_states.SHELVED_OFFLOADED,
            timeout=timeout, poll_interval=poll_interval)
        inst = instance_obj.Instance.get_by_uuid(self.store,
                                                 self.instance.uuid)
        inst.task_state = task_states.UNSHELVING
        inst.save(expected_task_state=[None])
        try:
            return self.unshelve_claim(inst)
        except Exception:
            inst.task_state = None
            inst.save(expected_task_state=[task_states.UNSHELVING])
            raise

    def allocations(self):
        """What placement says the instance holds now."""
        return self.client.get_allocs_for_consumer(self.compute_ctx,
                                                   self.instance.uuid)

    def saved(self):
        return self.store.get(self.instance.uuid)

    def timeline(self):
        """Placement calls and saves in the order they happened.

        Each entry is ``('placement', Call)`` or ``('save', row)``. A save
        is placed before the first call that completed after it.
        """
        calls = list(self.placement.calls)
        events = []
        marks = list(self.save_marks)
        for index, call in enumerate(calls):
            while marks and marks[0][0] <= index:
                events.append(('save', marks.pop(0)[1]))
            events.append(('placement', call))
        events.extend(('save', row) for _, row in marks)
        return events


def index_of_offloaded_save(timeline):
    """Position of the save that made SHELVED_OFFLOADED visible, or None."""
    for index, (kind, item) in enumerate(timeline):
        if kind == 'save' and item['vm_state'] == vm_states.SHELVED_OFFLOADED:
            return index
    return None


def order_violations(timeline, consumer):
    """What is wrong with the order of a shelve-offload's timeline.

    The allocations must be freed (a successful DELETE
    /allocations/{consumer}, or the GET and then the successful PUT of empty
    allocations) before the save that makes SHELVED_OFFLOADED visible.

    :param timeline: as returned by :meth:`ShelveScenario.timeline`
    :param consumer: the instance uuid
    :returns: a list of problems, empty when the order is right
    """
    url = '/allocations/%s' % consumer
    saved_at = index_of_offloaded_save(timeline)
    if saved_at is None:
        return ['SHELVED_OFFLOADED was never saved']
    freeing = []
    for index, (kind, call) in enumerate(timeline):
        if kind != 'placement' or call.path != url or call.status != 204:
            continue
        if call.method == 'DELETE':
            freeing = [index]
        elif (call.method == 'PUT' and isinstance(call.body, dict) and
              call.body.get('allocations') == {}):
            gets = [i for i, (k, c) in enumerate(timeline[:index])
                    if k == 'placement' and c.method == 'GET' and
                    c.path == url]
            freeing = gets[-1:] + [index]
    if not freeing:
        return ['the allocations of %s were never freed' % consumer]
    return ['%s %s came after the save that made SHELVED_OFFLOADED visible'
            % (timeline[i][1].method, timeline[i][1].path)
            for i in freeing if i > saved_at]
