"""The shelve-offload / unshelve race as a program the explorer can run.

Two actors run the library's real code:

``compute``
    ``ComputeManager.shelve_offload_instance`` (which runs
    ``_shelve_offload_instance``), in the corrected order or in the legacy
    order of :mod:`shelvefix.explorer.legacy`.
``scheduler``
    the API client and the scheduler, one after the other as in nova: wait
    until the server shows ``SHELVED_OFFLOADED``, set ``task_state =
    UNSHELVING``, then ``scheduler.utils.claim_resources`` →
    ``SchedulerReportClient.claim_resources``.

Each actor pauses before every access to shared state: each placement HTTP
request (a transport wrapped around the backend's) and each read, wait or
save of the instance (the instance store's interceptor). After each run the
outcome is read from placement itself.

The matrix is ordering (corrected, legacy) × the way compute frees
allocations (GET + PUT empty with the consumer generation, as on the bug's
Rocky branch; DELETE, as nova does since Ussuri).
"""

import collections
import random
import threading
import time
import urllib.parse

import requests.adapters

from shelvefix.compute import manager
from shelvefix.compute import vm_states
from shelvefix import context
from shelvefix import exception
from shelvefix.explorer import controller as controller_mod
from shelvefix.explorer import legacy
from shelvefix import scenario

CORRECTED = 'corrected'
LEGACY = 'legacy'
ORDERINGS = (CORRECTED, LEGACY)
GET_PUT = 'get-put'
DELETE = 'delete'
FREE_METHODS = (GET_PUT, DELETE)
MANAGERS = {CORRECTED: manager.ComputeManager,
            LEGACY: legacy.LegacyComputeManager}

OK = 'ok'
SCHEDULER_409 = 'scheduler 409'
COMPUTE_409 = 'compute 409'
CLAIM_WIPED = 'claim wiped'
LEAKED = 'allocations leaked'
CONSUMER_LEFT = 'consumer left behind'
BAD_OUTCOMES = (SCHEDULER_409, COMPUTE_409, CLAIM_WIPED, LEAKED,
                CONSUMER_LEFT)

Cell = collections.namedtuple('Cell', ['ordering', 'free'])


def all_cells():
    """The 2 × 2 matrix, corrected order first."""
    return [Cell(o, f) for o in ORDERINGS for f in FREE_METHODS]


def _generation_conflict(error):
    return (isinstance(error, (exception.AllocationUpdateFailed,
                               exception.AllocationDeleteFailed)) and
            'consumer generation conflict' in str(error))


def _short_detail(resp):
    """The specific part of a placement error, on one line."""
    try:
        detail = resp.json()['errors'][0]['detail']
    except (ValueError, KeyError, IndexError, TypeError):
        return resp.text[:80]
    # Placement's details repeat a generic sentence before a blank line.
    return ' '.join(detail.split('\n\n', 1)[-1].split())


class Names(object):
    """Replaces the run's uuids by short names in labels."""

    def __init__(self, scn):
        self._names = [(scn.instance.uuid, '{instance}'),
                       (scn.src, '{compute-1}'), (scn.dst, '{compute-2}')]

    def __call__(self, text):
        for value, name in self._names:
            text = text.replace(value, name)
        return text


class StepTransport(requests.adapters.BaseAdapter):
    """Pauses the calling actor before each placement request.

    Wraps the transport the backend mounted (in-process or HTTP), so the
    request itself is unchanged; the trace entry gets the status, and for
    errors placement's detail.
    """

    def __init__(self, inner, controller, names):
        super().__init__()
        self.inner = inner
        self.controller = controller
        self.names = names

    def send(self, request, **kwargs):
        method = request.method.upper()
        path = urllib.parse.urlsplit(request.url).path
        prefix = getattr(self.inner, 'script_name', '')
        if prefix and path.startswith(prefix):
            path = path[len(prefix):]
        label = self.names('%s %s' % (method, path))
        body = request.body
        if method == 'PUT' and body:
            text = body.decode() if isinstance(body, bytes) else body
            if '"allocations": {}' in text:
                label += ' (empty)'
            if '"consumer_generation": null' in text:
                label += ' gen=null'
            elif '"consumer_generation": ' in text:
                gen = text.split('"consumer_generation": ')[1].split(',')[0]
                label += ' gen=%s' % gen.strip('}')
        handle = self.controller.step(
            'placement', 'placement',
            access='read' if method == 'GET' else 'write', label=label)
        try:
            resp = self.inner.send(request, **kwargs)
        except Exception as e:
            handle.done(type(e).__name__)
            raise
        result = str(resp.status_code)
        if resp.status_code >= 400:
            result += ' ' + self.names(_short_detail(resp))
        elif method == 'GET' and '/allocations/' in path:
            gen = resp.json().get('consumer_generation')
            result += ' gen=%s' % ('none' if gen is None else gen)
        handle.done(result)
        return resp

    def close(self):
        pass


class StoreStepper(object):
    """The instance store's interceptor: one explorer step per access."""

    def __init__(self, controller, names):
        self.controller = controller
        self.names = names

    def __call__(self, op, uuid, guard=None):
        labels = {'get': 'read instance', 'update': 'save instance',
                  'wait': 'wait for SHELVED_OFFLOADED'}
        return self.controller.step(
            'instance', 'instance',
            access='write' if op == 'update' else 'read',
            label=labels[op], guard=guard)


def outcome_labels(compute_error, scheduler_error, claimed, held, dst,
                   must_hold_nothing):
    """Outcome labels from the actors' errors and what placement holds.

    :param compute_error: what the offload raised, or None
    :param scheduler_error: what the unshelve (wait + claim) raised, or None
    :param claimed: True if the scheduler's claim reported success
    :param held: ``{rp_uuid: resources}`` placement holds for the instance
    :param dst: the provider the claim was for
    :param must_hold_nothing: for an unclaimed instance, whether holding
        anything is a leak (it is once the instance is offloaded)
    :returns: a list of labels, empty when nothing went wrong
    """
    labels = []
    if _generation_conflict(scheduler_error):
        labels.append(SCHEDULER_409)
    if _generation_conflict(compute_error):
        labels.append(COMPUTE_409)
    for name, error in (('compute', compute_error),
                        ('scheduler', scheduler_error)):
        if error is not None and not _generation_conflict(error):
            labels.append('%s error: %s' % (name, type(error).__name__))
    if claimed:
        if dst not in held:
            labels.append(CLAIM_WIPED)
        if set(held) - {dst}:
            labels.append(LEAKED)
    elif must_hold_nothing and held:
        labels.append(LEAKED)
    return labels


def classify(scn, results):
    """Outcome labels of one run, read from placement and the store.

    :param scn: the run's :class:`~shelvefix.scenario.ShelveScenario`
    :param results: actor name → result with ``value``/``error``/``stuck``
    :returns: a tuple of labels, ``('ok',)`` when nothing went wrong
    """
    compute, sched = results['compute'], results['scheduler']
    held = {rp: alloc['resources'] for rp, alloc in
            scn.allocations()['allocations'].items()}
    claimed = sched.error is None and not sched.stuck and bool(sched.value)
    saved = scn.store.peek(scn.instance.uuid)
    labels = outcome_labels(
        compute.error, sched.error, claimed, held, scn.dst,
        must_hold_nothing=saved['vm_state'] == vm_states.SHELVED_OFFLOADED)
    state = getattr(scn.placement, 'state', None)
    if (not held and state is not None and
            scn.instance.uuid in state.consumers):
        labels.append(CONSUMER_LEFT)
    return tuple(labels) or (OK,)


def _actors(scn):
    def compute():
        scn.shelve_offload()
        return True

    def scheduler():
        return scn.api_unshelve()
    return [('compute', compute), ('scheduler', scheduler)]


class ShelveRaceProgram(object):
    """One cell of the matrix as an explorer program.

    :param placement: a set-up placement fixture, shared by all runs
    :param cell: the :class:`Cell` (ordering, way of freeing)
    """

    def __init__(self, placement, cell):
        self.placement = placement
        self.cell = cell
        self.providers = None

    def _scenario(self):
        # The providers are made once per program and reused by every run
        # (each run's consumer is removed at its end, so they start empty).
        if self.providers is None:
            self.providers = scenario.create_providers(self.placement)
        scn = scenario.ShelveScenario(
            force_delete=self.cell.free == DELETE,
            manager_cls=MANAGERS[self.cell.ordering],
            placement=self.placement, shared=True,
            providers=self.providers)
        scn.setUp()
        return scn

    def __call__(self, controller):
        scn = self._scenario()
        names = Names(scn)
        session = self.placement.session.session
        session.mount(self.placement.endpoint,
                      StepTransport(self.placement.transport, controller,
                                    names))
        scn.store.interceptor = StoreStepper(controller, names)

        def check(results):
            try:
                session.mount(self.placement.endpoint,
                              self.placement.transport)
                scn.store.interceptor = None
                return classify(scn, results)
            finally:
                scn.cleanUp()
        return controller_mod.RunSpec(actors=_actors(scn), check=check)

    def close(self):
        """Delete the providers the runs shared."""
        if self.providers:
            ctx = context.get_admin_context()
            for rp in self.providers:
                self.placement.client.delete_resource_provider(ctx, rp)
            self.providers = None


def explore_cell(placement, cell, reduce=True, progress=None):
    """Explore every interleaving of one cell.

    :returns: a :class:`~shelvefix.explorer.controller.Exploration` whose
        run outcomes are label tuples (see :func:`classify`)
    """
    program = ShelveRaceProgram(placement, cell)
    try:
        return controller_mod.explore(program, reduce=reduce,
                                      progress=progress)
    finally:
        program.close()


RandomResult = collections.namedtuple('RandomResult',
                                      ['cell', 'runs', 'counts', 'elapsed'])


def run_random(placement, cell, runs, seed, poll_interval=0.0005,
               max_start_delay=0.002, progress=None):
    """Run the race ``runs`` times with real threads and real timing.

    Nothing is paused: compute and the API client start after small random
    delays (seeded) and the client polls the saved state every
    ``poll_interval`` seconds, as a client polling the API would. This is
    what an ordinary test run sees.

    :returns: a :class:`RandomResult` with per-label counts
    """
    rng = random.Random(seed)
    program = ShelveRaceProgram(placement, cell)
    counts = collections.Counter()
    start = time.monotonic()
    try:
        _random_runs(program, runs, rng, poll_interval, max_start_delay,
                     counts, progress)
    finally:
        program.close()
    return RandomResult(cell, runs, dict(counts), time.monotonic() - start)


def _random_runs(program, runs, rng, poll_interval, max_start_delay, counts,
                 progress):
    for index in range(runs):
        scn = program._scenario()
        results = {}
        delays = {name: rng.uniform(0, max_start_delay)
                  for name in ('compute', 'scheduler')}

        def target(name, func):
            time.sleep(delays[name])
            value = error = None
            try:
                value = func()
            except Exception as e:
                error = e
            results[name] = controller_mod.ActorResult(value, error, False)

        funcs = dict(_actors(scn))
        funcs['scheduler'] = lambda: scn.api_unshelve(
            timeout=10.0, poll_interval=poll_interval)
        threads = [threading.Thread(target=target, args=(name, func))
                   for name, func in funcs.items()]
        for thread in threads:
            thread.start()
        for thread in threads:
            thread.join()
        try:
            for label in classify(scn, results):
                counts[label] += 1
        finally:
            scn.cleanUp()
        if progress:
            progress(index + 1)
