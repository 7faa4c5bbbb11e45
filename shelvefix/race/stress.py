"""Stress: K servers × M shelve-offload / unshelve cycles, real threads.

Each server has its own thread acting as the API client: it shelves the
server, starts the compute host's shelve-offload in a second thread, polls
the saved state every ``poll_interval`` seconds like a client polling the
server's status, and unshelves as soon as it reads ``SHELVED_OFFLOADED``:
task_state UNSHELVING, the scheduler's claim on the other host, then that
host's compute manager unshelves it (its claim on the node, the spawn,
ACTIVE on the new host). Servers run concurrently, so placement also
sees provider generation races between them. Nothing is paused or ordered:
this is the race as a gate run would meet it.

Each cycle is classified from placement itself (scheduler 409, compute 409,
claim wiped, allocations leaked); at the end every provider's usage is
compared with what the servers' final states say it should be.
"""

import collections
import random
import threading
import time

from oslo_utils import uuidutils

from shelvefix.compute import resource_tracker
from shelvefix.compute import task_states
from shelvefix.compute import vm_states
from shelvefix import context
from shelvefix.objects import instance as instance_obj
from shelvefix import race
from shelvefix.race import client
from shelvefix.race import outcomes
from shelvefix.race import scenario
from shelvefix.race import variants
from shelvefix.scheduler import request_spec
from shelvefix.scheduler import utils as scheduler_utils

FLAVOR = scenario.FLAVOR
PROJECT = scenario.PROJECT
USER = scenario.USER
COMPUTE_REQUEST_PREFIX = 'req-compute-'

StressResult = collections.namedtuple(
    'StressResult', ['ordering', 'free', 'servers', 'cycles', 'elapsed',
                     'counts', 'usage_expected', 'usage_actual'])


class _ComputeLatencyTransport(object):
    """Delays compute's requests by ``latency`` seconds before sending them.

    The optional, documented knob that widens the race window, as a compute
    host far from placement would: in the legacy order the free reaches
    placement later after the offloaded state is visible. Slowing every
    request alike would not widen it, since the scheduler's read would be
    slowed as much. The code under test is not touched, and both orderings
    get the same delay.
    """

    def __init__(self, inner, latency):
        self.inner = inner
        self.latency = latency

    def send(self, request, **kwargs):
        request_id = request.headers.get('X-OpenStack-Request-ID') or ''
        if request_id.startswith(COMPUTE_REQUEST_PREFIX):
            time.sleep(self.latency)
        return self.inner.send(request, **kwargs)

    def close(self):
        pass


class _Server(object):
    """One server cycling between two hosts."""

    def __init__(self, harness, index):
        self.harness = harness
        self.uuid = uuidutils.generate_uuid()
        self.host = harness.hosts[index % 2]
        self.inst = instance_obj.Instance.create(
            harness.store, self.uuid, vm_state=vm_states.ACTIVE,
            host=self.host, node=self.host, project_id=PROJECT,
            user_id=USER, flavor=FLAVOR)
        harness.client.claim_resources(
            harness.scheduler_ctx, self.uuid, harness.alloc_request(
                self.host), PROJECT, USER, scenario.CLAIM_VERSION)

    def cycle(self, poll_interval, rng):
        """One shelve-offload / unshelve cycle; returns outcome labels."""
        h = self.harness
        row = h.store.peek(self.uuid)
        compute_error = [None]
        compute_failed = threading.Event()
        compute_thread = None
        src = None
        # ACTIVE, or SHELVED after an offload that failed: the API's
        # shelve-offload request (shelved_offload_time = 0), or the
        # operator's retry of it.
        if row['vm_state'] in (vm_states.ACTIVE, vm_states.SHELVED):
            src = row['host']
            inst = instance_obj.Instance.get_by_uuid(h.store, self.uuid)
            inst.vm_state = vm_states.SHELVED
            inst.task_state = task_states.SHELVING_OFFLOADING
            inst.save(expected_task_state=[None])

            def offload():
                try:
                    h.managers[src].shelve_offload_instance(
                        h.compute_ctx, inst, clean_shutdown=True)
                except Exception as e:
                    compute_error[0] = e
                    compute_failed.set()
            compute_thread = threading.Thread(target=offload)
            time.sleep(rng.uniform(0, poll_interval))
            compute_thread.start()
        dst = h.hosts[1] if src == h.hosts[0] else h.hosts[0]
        claim_error = None
        claimed = False

        def claim(api):
            return scheduler_utils.claim_resources(
                h.scheduler_ctx, h.client,
                request_spec.RequestSpec.from_instance(api), self.uuid,
                h.alloc_request(dst),
                allocation_request_version=scenario.CLAIM_VERSION)
        try:
            claimed = client.unshelve(
                h.store, self.uuid,
                lambda row: instance_obj.Instance.get_by_uuid(h.store,
                                                              self.uuid),
                claim, timeout=30.0, poll_interval=poll_interval,
                give_up=compute_failed.is_set)
        except client.GaveUp:
            # The offload failed before the state changed: nothing to
            # unshelve this cycle (compute's error says why).
            pass
        except Exception as e:
            claim_error = e
        if compute_thread is not None:
            compute_thread.join()
        if claimed:
            # The destination host's side of the unshelve: its claim on
            # the node, the spawn, ACTIVE.
            h.managers[dst].unshelve_instance(
                h.compute_ctx,
                instance_obj.Instance.get_by_uuid(h.store, self.uuid),
                None, {}, dst)
        return self._classify(compute_error[0], claim_error, claimed, dst)

    def _classify(self, compute_error, claim_error, claimed, dst):
        h = self.harness
        current = h.client.get_allocs_for_consumer(h.compute_ctx, self.uuid)
        held = {rp: a['resources']
                for rp, a in current['allocations'].items()}
        # After a cycle the server is spawned on dst (claimed), offloaded
        # (it must then hold nothing), or still shelved on its host after
        # a failed offload (it then keeps what it holds there).
        offloaded = (h.store.peek(self.uuid)['vm_state'] ==
                     vm_states.SHELVED_OFFLOADED)
        labels = outcomes.outcome_labels(
            compute_error, claim_error, claimed, held, h.providers[dst],
            must_hold_nothing=offloaded)
        return outcomes.as_outcome(labels)


class Harness(object):
    """Two compute hosts, K servers, one placement.

    Nothing is created until :meth:`set_up`; :meth:`clean_up` removes
    whatever was, however far :meth:`set_up` or the run got.
    """

    def __init__(self, placement, ordering, free):
        self.placement = placement
        self.client = placement.client
        self.ordering = ordering
        self.free = free
        self.store = instance_obj.InstanceStore()
        self.compute_ctx = context.RequestContext(
            request_id=COMPUTE_REQUEST_PREFIX + uuidutils.generate_uuid())
        self.scheduler_ctx = context.RequestContext(
            user_id=USER, project_id=PROJECT,
            request_id='req-scheduler-%s' % uuidutils.generate_uuid())
        suffix = uuidutils.generate_uuid()[:8]
        self.hosts = ['stress-a-' + suffix, 'stress-b-' + suffix]
        self.providers = {}
        self.managers = {}
        self.servers = []

    def set_up(self, servers, progress=None):
        """Both hosts' providers, then ``servers`` servers on them.

        :param progress: called with the number of servers made so far
        """
        capacity = {rc: amount * servers * 2
                    for rc, amount in FLAVOR.resources.items()}
        for host in self.hosts:
            self.providers[host] = self.placement.create_provider(
                host, inventory=capacity)
        self.managers = {
            host: variants.compute_manager(self.ordering)(
                host=host, reportclient=self.client,
                rt=resource_tracker.ResourceTracker(
                    host, reportclient=self.client,
                    force_delete_allocations=self.free == race.DELETE,
                    store=self.store))
            for host in self.hosts}
        for index in range(servers):
            self.servers.append(_Server(self, index))
            if progress:
                progress(index + 1)
        for host, manager in self.managers.items():
            manager.rt.update_available_resource(self.compute_ctx, host)

    def alloc_request(self, host):
        return scenario.alloc_request(self.providers[host])

    def expected_usage(self):
        usage = {host: collections.Counter() for host in self.hosts}
        for server in self.servers:
            row = self.store.peek(server.uuid)
            # Running, or shelved on its host after a failed offload.
            if row['vm_state'] in (vm_states.ACTIVE, vm_states.SHELVED):
                usage[row['host']].update(FLAVOR.resources)
        return {host: dict(c) for host, c in usage.items()}

    def actual_usage(self):
        return {host: {rc: used for rc, used in
                       self.client.get_provider_usages(
                           self.compute_ctx, rp).items() if used}
                for host, rp in self.providers.items()}

    def clean_up(self):
        """Free every server's allocations, then delete the providers.

        The providers go with whatever still holds them: after an
        interrupt a cycle may have been cut short between a claim and the
        server's record of it.
        """
        for server in self.servers:
            self.client.delete_allocation_for_instance(
                self.compute_ctx, server.uuid, force=True)
        for rp in self.providers.values():
            self.placement.delete_provider(rp)


#: Seconds an interrupted run waits for the cycles under way to end (each
#: cycle's waits are bounded by its 30 s unshelve timeout).
INTERRUPT_JOIN_TIMEOUT = 60.0


def _stop(threads, stop):
    """Start no more cycles and wait (bounded) for those under way."""
    stop.set()
    deadline = time.monotonic() + INTERRUPT_JOIN_TIMEOUT
    for thread in threads:
        if thread.ident is not None:
            thread.join(max(0.0, deadline - time.monotonic()))


def run(placement, ordering, free, servers, cycles, poll_interval=0.005,
        latency=0.0, seed=0, progress=None, setup_progress=None):
    """Run K × M cycles of one ordering; returns a :class:`StressResult`.

    An interrupt (``KeyboardInterrupt``) lets the cycles under way finish,
    starts no more, and removes everything the run made before it is
    raised on.

    :param placement: a set-up placement fixture (any backend)
    :param poll_interval: seconds between the API client's status polls
    :param latency: extra seconds before each of compute's placement
        requests (the optional knob; 0 by default)
    :param progress: called with the number of cycles done
    :param setup_progress: called with the number of servers made
    """
    session = placement.session.session
    if latency:
        session.mount(placement.endpoint,
                      _ComputeLatencyTransport(placement.transport, latency))
    harness = Harness(placement, ordering, free)
    counts = collections.Counter()
    lock = threading.Lock()
    stop = threading.Event()
    done = [0]

    def worker(server, rng):
        for _ in range(cycles):
            if stop.is_set():
                return
            labels = server.cycle(poll_interval, rng)
            with lock:
                counts.update(labels)
                done[0] += 1
                if progress:
                    progress(done[0])

    threads = []
    try:
        harness.set_up(servers, progress=setup_progress)
        threads.extend(threading.Thread(
            target=worker, args=(s, random.Random(seed * 1000 + i)))
            for i, s in enumerate(harness.servers))
        start = time.monotonic()
        for thread in threads:
            thread.start()
        for thread in threads:
            thread.join()
        elapsed = time.monotonic() - start
        expected = harness.expected_usage()
        actual = harness.actual_usage()
    except KeyboardInterrupt:
        _stop(threads, stop)
        raise
    finally:
        if latency:
            session.mount(placement.endpoint, placement.transport)
        harness.clean_up()
    return StressResult(ordering, free, servers, servers * cycles, elapsed,
                        dict(counts), expected, actual)


def bad(result):
    """What the gate judges: outcomes of the ordering, and lost usage.

    Placement failing (a 5xx, a database error) is reported, not judged;
    what it leaves behind still shows as a usage mismatch.
    """
    labels = set(label for label in result.counts
                 if outcomes.is_ordering_failure(label))
    if result.usage_expected != result.usage_actual:
        labels.add('usage mismatch')
    return labels
