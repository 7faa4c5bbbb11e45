"""The stress run's cloud: two compute hosts and K servers cycling.

:class:`Harness` makes both hosts' providers, compute managers and
resource trackers and K servers with their allocations, and removes it
all again, however far the run got (every server and provider is tried,
a failed request again). Each :class:`_Server` runs one shelve-offload /
unshelve cycle at a time (see :mod:`shelvefix.race.stress`), giving up
its waits once the run is stopped.
"""

import collections
import functools
import threading
import time

from oslo_utils import uuidutils

from shelvefix.backends import observe
from shelvefix.compute import resource_tracker
from shelvefix.compute import task_states
from shelvefix.compute import vm_states
from shelvefix import context
from shelvefix import exception
from shelvefix.objects import instance as instance_obj
from shelvefix import race
from shelvefix.race import client
from shelvefix.race import outcomes
from shelvefix.race import retry
from shelvefix.race import scenario
from shelvefix.race import variants
from shelvefix.scheduler import request_spec
from shelvefix.scheduler import utils as scheduler_utils
from shelvefix import utils

FLAVOR = scenario.FLAVOR
PROJECT = scenario.PROJECT
USER = scenario.USER
COMPUTE_REQUEST_PREFIX = 'req-compute-'
#: How often a cycle looks at the stop event while it waits for its
#: compute host's offload.
STOP_POLL_INTERVAL = 0.05
#: Tries of each clean-up request: a lost reply, a timeout or a 5xx is
#: tried again.
CLEANUP_ATTEMPTS = 3
#: Seconds between two tries of a clean-up request.
CLEANUP_RETRY_DELAY = 0.5
#: No clean-up request is tried again once the clean-up has run this many
#: seconds (every server and provider is still tried once).
CLEANUP_RETRY_WINDOW = 30.0
#: The uuids a clean-up failure names at most, of each kind.
LEFT_SHOWN = 5


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

    def claim(self):
        """The server's allocations on its host, as its boot made them."""
        h = self.harness
        h.client.claim_resources(
            h.scheduler_ctx, self.uuid, h.alloc_request(self.host), PROJECT,
            USER, scenario.CLAIM_VERSION)

    def cycle(self, poll_interval, rng, stop=None):
        """One shelve-offload / unshelve cycle; returns outcome labels.

        :param stop: an Event; once set, the cycle's waits give up, and no
            destination unshelve nor classification follows (what placement
            holds then is the clean-up's to remove)
        :returns: the labels, or None for a cycle cut short by ``stop``
        """
        h = self.harness
        stop = stop or threading.Event()
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
            compute_thread = threading.Thread(target=offload, daemon=True)
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
                give_up=lambda: compute_failed.is_set() or stop.is_set())
        except client.GaveUp:
            # The offload failed before the state changed (compute's error
            # says why), or the run is stopping: nothing to unshelve this
            # cycle.
            pass
        except Exception as e:
            claim_error = e
        if compute_thread is not None:
            _join(compute_thread, stop)
        if stop.is_set():
            return None
        if claimed:
            # The destination host's side of the unshelve: its claim on
            # the node, the spawn, ACTIVE.
            h.managers[dst].unshelve_instance(
                h.compute_ctx,
                instance_obj.Instance.get_by_uuid(h.store, self.uuid),
                None, {}, dst)
        if stop.is_set():
            return None
        return self._classify(compute_error[0], claim_error, claimed, dst)

    def _classify(self, compute_error, claim_error, claimed, dst):
        h = self.harness
        # The observer's read, on a path of its own (not the transport
        # the code under test uses: a node that has not applied the write
        # yet, or a request that failed while its write committed, would
        # misjudge the cycle); tried again, as the clean-up's requests
        # are, so that a database failing for a moment does not end the
        # run. Then compared with another read (another node, or
        # placement's API).
        held, index = _observed(functools.partial(
            h.observer.allocations, self.uuid))
        h.observer.cross_check(self.uuid, held, index, api=self._api_read)
        # After a cycle the server is spawned on dst (claimed), offloaded
        # (it must then hold nothing), or still shelved on its host after
        # a failed offload (it then keeps what it holds there).
        offloaded = (h.store.peek(self.uuid)['vm_state'] ==
                     vm_states.SHELVED_OFFLOADED)
        labels = outcomes.outcome_labels(
            compute_error, claim_error, claimed, held, h.providers[dst],
            must_hold_nothing=offloaded)
        return outcomes.as_outcome(labels)

    def _api_read(self, consumer):
        h = self.harness
        current = h.client.get_allocs_for_consumer(h.compute_ctx, consumer)
        return {rp: dict(a['resources'])
                for rp, a in current['allocations'].items()}


class Harness(object):
    """Two compute hosts, K servers, one placement.

    Nothing is created until :meth:`set_up`; :meth:`clean_up` removes
    whatever was, however far :meth:`set_up` or the run got.

    :param observer: what judges the cycles and reads the usages (an
        :class:`~shelvefix.backends.observe.Observer`); by default
        placement's API, through the client
    """

    def __init__(self, placement, ordering, free, observer=None):
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
        self.observer = observer or observe.ClientObserver(self.client,
                                                           self.compute_ctx)

    def set_up(self, servers, progress=None, stop=None):
        """Both hosts' providers, then ``servers`` servers on them.

        A server is recorded before its claim, so that :meth:`clean_up`
        removes it however the claim ended.

        :param progress: called with the number of servers made so far
        :param stop: an Event; once set, nothing more is made
        """
        stop = stop or threading.Event()
        capacity = {rc: amount * servers * 2
                    for rc, amount in FLAVOR.resources.items()}
        for host in self.hosts:
            if stop.is_set():
                return
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
            if stop.is_set():
                return
            server = _Server(self, index)
            self.servers.append(server)
            server.claim()
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
        """Every provider's usage, as the observer reads it."""
        used = _observed(functools.partial(
            self.observer.usages, list(self.providers.values())))
        return {host: used[rp] for host, rp in self.providers.items()}

    def clean_up(self):
        """Free every server's allocations, then delete the providers.

        The providers go with whatever still holds them: after an
        interrupt a cycle may have been cut short between a claim and the
        server's record of it. Every server and provider is tried, a
        failed request again (:data:`CLEANUP_ATTEMPTS` tries, within
        :data:`CLEANUP_RETRY_WINDOW` seconds). Once the providers are gone
        nothing of the run is left: every allocation it made is against
        them.

        :raises StressCleanupFailed: a provider could not be deleted; it
            names the providers, and the servers whose allocations could
            not be freed
        """
        deadline = time.monotonic() + CLEANUP_RETRY_WINDOW
        consumers = {}
        # Copies: after an interrupt a set-up cut short may still be
        # recording what its last request made.
        for server in list(self.servers):
            error = _retried(functools.partial(
                self.client.delete_allocation_for_instance, self.compute_ctx,
                server.uuid, force=True), deadline)
            if error is not None:
                consumers[server.uuid] = error
        providers = {}
        for rp in list(self.providers.values()):
            error = _retried(functools.partial(
                self.placement.delete_provider, rp), deadline)
            if error is not None:
                providers[rp] = error
        if providers:
            error = next(iter(providers.values()))
            raise exception.StressCleanupFailed(
                left=_describe_left(list(providers), list(consumers)),
                error='%s: %s' % (type(error).__name__, error),
                providers=list(providers), consumers=list(consumers))


def _retried(call, deadline):
    """``call()``, tried again on failure; returns None or the last error.

    :param deadline: no try starts again after this ``time.monotonic()``
    """
    try:
        _observed(call, deadline)
    except Exception as e:
        return e
    return None


def _observed(call, deadline=None):
    """What ``call()`` returns, tried :data:`CLEANUP_ATTEMPTS` times.

    :param deadline: no try starts again after this ``time.monotonic()``
        (None: every try is made)
    :raises: the last try's error
    """
    return retry.tried(call, CLEANUP_ATTEMPTS, CLEANUP_RETRY_DELAY, deadline)


def _some(uuids):
    shown = ', '.join(uuids[:LEFT_SHOWN])
    if len(uuids) > LEFT_SHOWN:
        shown += ' and %d more' % (len(uuids) - LEFT_SHOWN)
    return shown


def _describe_left(providers, consumers):
    """``2 resource providers (a, b) and the allocations of 1 server (c)``."""
    text = '%s (%s)' % (utils.plural(len(providers), 'resource provider'),
                        _some(providers))
    if consumers:
        text += ' and the allocations of %s (%s)' % (
            utils.plural(len(consumers), 'server'), _some(consumers))
    return text


def _join(thread, stop):
    """Wait for ``thread`` until it ends or ``stop`` is set.

    A stopped cycle does not wait for its compute host's offload: that
    only frees allocations, and ends with its request in flight (a daemon
    thread, bounded by the client's timeout).
    """
    while thread.is_alive() and not stop.is_set():
        thread.join(STOP_POLL_INTERVAL)
