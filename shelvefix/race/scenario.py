"""A shelved server on one host, a second host to unshelve it to.

:class:`ShelveScenario` wires the real library (compute manager, resource
tracker, report client, scheduler claim) to a placement backend and keeps
one ordered :class:`~shelvefix.race.timeline.Timeline` of placement calls
and instance saves. The constants here (the flavor, the project and user,
the hosts' inventory) are the ones every part of the race lab uses.
"""

import functools

import fixtures
from oslo_utils import uuidutils

from shelvefix.backends import fixture as placement_fixture
from shelvefix.compute import manager
from shelvefix.compute import resource_tracker
from shelvefix.compute import task_states
from shelvefix.compute import vm_states
from shelvefix import context
from shelvefix.objects import instance as instance_obj
from shelvefix import race
from shelvefix.race import client
from shelvefix.race import retry
from shelvefix.race import timeline as timeline_mod
from shelvefix.scheduler import request_spec
from shelvefix.scheduler import utils as scheduler_utils

INVENTORY = {'VCPU': 8, 'MEMORY_MB': 8192, 'DISK_GB': 100}
FLAVOR = instance_obj.Flavor(name='m1.small', vcpus=1, memory_mb=512,
                             root_gb=10)
PROJECT = 'project-a'
USER = 'user-a'
CLAIM_VERSION = '1.28'
#: Tries of each request that removes a shared scenario's server and
#: providers from placement, and the seconds between two.
CLEANUP_ATTEMPTS = 10
CLEANUP_RETRY_DELAY = 0.5


def alloc_request(rp_uuid, flavor=FLAVOR):
    """The allocation request of one instance of ``flavor`` on a provider."""
    return {'allocations': {rp_uuid: {'resources': dict(flavor.resources)}}}


def create_providers(placement, names=('compute-1', 'compute-2'),
                     inventory=INVENTORY):
    """Compute node providers, uniquely named; returns their uuids.

    Unique names because providers may outlive one scenario on a shared
    (or remote) placement.
    """
    suffix = uuidutils.generate_uuid()[:8]
    return tuple(placement.create_provider('%s-%s' % (name, suffix),
                                           inventory=inventory)
                 for name in names)


class ShelveScenario(fixtures.Fixture):
    """Set up placement, an instance with allocations and a compute host.

    :param free: how compute frees allocations, ``race.DELETE`` or
        ``race.GET_PUT``
    :param manager_cls: the compute manager class to run
    :param placement: the placement fixture to use (default: a new
        :class:`~shelvefix.backends.fixture.PlacementFixture`, the double)
    :param shared: True if ``placement`` is already set up and outlives the
        scenario (the explorer runs many scenarios on one placement, and a
        remote placement cannot be reset): the scenario then removes its
        allocations and providers when it is cleaned up.
    :param providers: ``(src, dst)`` providers to reuse (they are then
        neither created nor deleted by the scenario)
    """

    def __init__(self, free=race.DELETE, manager_cls=manager.ComputeManager,
                 placement=None, shared=False, providers=None):
        super().__init__()
        if free not in race.FREE_METHODS:
            raise ValueError('free must be one of %s, not %r'
                             % (', '.join(race.FREE_METHODS), free))
        self.free = free
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
        self._timeline = timeline_mod.Timeline(self.placement, self.store)
        self.instance = instance_obj.Instance.create(
            self.store, uuidutils.generate_uuid(),
            vm_state=vm_states.SHELVED,
            task_state=task_states.SHELVING_OFFLOADING, host='compute-1',
            node='compute-1', project_id=PROJECT, user_id=USER,
            flavor=FLAVOR)
        self.client.claim_resources(
            self.scheduler_ctx, self.instance.uuid, alloc_request(self.src),
            PROJECT, USER, CLAIM_VERSION)
        self.rt = resource_tracker.ResourceTracker(
            'compute-1', reportclient=self.client,
            force_delete_allocations=self.free == race.DELETE,
            store=self.store)
        self.rt.update_available_resource(self.compute_ctx, 'compute-1')
        self.compute = self.manager_cls(host='compute-1',
                                        reportclient=self.client, rt=self.rt)
        self.placement.reset_calls()
        self._timeline.reset()

    def _remove_from_placement(self):
        # Each request tried again: on a Galera cluster written through
        # every node, the provider's delete can reach a node that has not
        # yet applied the allocations' delete, and be refused (409, the
        # provider "has allocations").
        ctx = context.get_admin_context()
        calls = []
        if getattr(self, 'instance', None) is not None:
            calls.append(functools.partial(
                self.client.delete_allocation_for_instance, ctx,
                self.instance.uuid, force=True))
        if not self._providers:
            calls.extend(functools.partial(
                self.client.delete_resource_provider, ctx, rp)
                for rp in (self.src, self.dst))
        for call in calls:
            retry.tried(call, CLEANUP_ATTEMPTS, CLEANUP_RETRY_DELAY)

    def remove_ghost(self):
        """Remove a consumer record placement kept without allocations.

        No request removes a ghost consumer outright (``DELETE`` answers
        404 for a consumer without allocations, an empty ``PUT`` changes
        nothing): claim it back with its generation, as the scheduler does
        (see ``SchedulerReportClient._claim_ghost``), then free it.
        """
        ctx = context.get_admin_context()
        self.client.claim_resources(ctx, self.instance.uuid,
                                    alloc_request(self.src), PROJECT, USER,
                                    CLAIM_VERSION)
        self.client.delete_allocation_for_instance(ctx, self.instance.uuid,
                                                   force=True)

    def shelve_offload(self):
        """Run the compute manager's shelve-offload."""
        self.compute.shelve_offload_instance(self.compute_ctx, self.instance,
                                             clean_shutdown=True)

    def unshelve_claim(self, saved=None):
        """The scheduler claims the second host's resources.

        :param saved: the instance as the API loaded it (read from the
            store when None)
        """
        saved = saved or instance_obj.Instance.get_by_uuid(
            self.store, self.instance.uuid)
        return scheduler_utils.claim_resources(
            self.scheduler_ctx, self.client,
            request_spec.RequestSpec.from_instance(saved),
            self.instance.uuid, alloc_request(self.dst),
            allocation_request_version=CLAIM_VERSION)

    def api_unshelve(self, timeout=60.0, poll_interval=0.001):
        """The API client's side: wait for SHELVED_OFFLOADED, unshelve.

        See :func:`shelvefix.race.client.unshelve`.

        :returns: True when the claim succeeded
        :raises AllocationUpdateFailed: the scheduler's claim failed
        """
        return client.unshelve(
            self.store, self.instance.uuid,
            lambda row: instance_obj.Instance.get_by_uuid(self.store,
                                                          row['uuid']),
            self.unshelve_claim, timeout=timeout,
            poll_interval=poll_interval)

    def allocations(self):
        """What placement says the instance holds now."""
        return self.client.get_allocs_for_consumer(self.compute_ctx,
                                                   self.instance.uuid)

    def held(self):
        """``{rp_uuid: resources}`` placement holds for the instance."""
        return {rp: alloc['resources'] for rp, alloc in
                self.allocations()['allocations'].items()}

    def saved(self):
        return self.store.get(self.instance.uuid)

    def timeline(self):
        """See :meth:`shelvefix.race.timeline.Timeline.events`."""
        return self._timeline.events()
