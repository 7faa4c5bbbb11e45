"""The shelve-offload / unshelve race as a program the explorer can run.

Two actors run the library's real code:

``compute``
    ``ComputeManager.shelve_offload_instance`` (which runs
    ``_shelve_offload_instance``), in the corrected order or in the legacy
    order derived from it (:mod:`shelvefix.race.variants`).
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

from shelvefix import context
from shelvefix import explorer
from shelvefix import race
from shelvefix.race import outcomes
from shelvefix.race import scenario
from shelvefix.race import variants

Cell = collections.namedtuple('Cell', ['ordering', 'free', 'fault'],
                              defaults=(None,))
Cell.__doc__ = """One cell of the matrix: ordering, way of freeing, fault.

``fault`` is None, or :data:`GHOST`: placement's DELETE commits only its
first step (the allocations go, the consumer record stays) and answers
500, in every run of the cell.
"""

GHOST = 'ghost'


def all_cells(ghost=False):
    """The 2 × 2 matrix, corrected order first.

    :param ghost: also the cells freeing with a DELETE that leaves a ghost
    """
    cells = [Cell(o, f) for o in race.ORDERINGS for f in race.FREE_METHODS]
    if ghost:
        cells += [Cell(o, race.DELETE, GHOST) for o in race.ORDERINGS]
    return cells


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
            free=self.cell.free,
            manager_cls=variants.compute_manager(self.cell.ordering),
            placement=self.placement, shared=True,
            providers=self.providers)
        scn.setUp()
        if self.cell.fault == GHOST:
            self.placement.fail_consumer_cleanup()
        return scn

    def _finish(self, scn, results):
        """The run's outcome; then its fault disarmed and state removed."""
        try:
            self.placement.clear_faults()
            return outcomes.classify(scn, results)
        finally:
            if self.cell.fault == GHOST:
                scn.remove_ghost()
            scn.cleanUp()

    def __call__(self, controller):
        scn = self._scenario()
        names = Names(scn)
        session = self.placement.session.session
        session.mount(self.placement.endpoint,
                      StepTransport(self.placement.transport, controller,
                                    names))
        scn.store.interceptor = StoreStepper(controller, names)

        def check(results):
            session.mount(self.placement.endpoint, self.placement.transport)
            scn.store.interceptor = None
            return self._finish(scn, results)
        return explorer.RunSpec(actors=_actors(scn), check=check)

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
        run outcomes are label tuples (see
        :func:`shelvefix.race.outcomes.classify`)
    """
    program = ShelveRaceProgram(placement, cell)
    try:
        return explorer.explore(program, reduce=reduce, progress=progress)
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
            results[name] = explorer.ActorResult(value, error, False)

        funcs = dict(_actors(scn))
        funcs['scheduler'] = lambda: scn.api_unshelve(
            timeout=10.0, poll_interval=poll_interval)
        threads = [threading.Thread(target=target, args=(name, func))
                   for name, func in funcs.items()]
        for thread in threads:
            thread.start()
        for thread in threads:
            thread.join()
        for label in program._finish(scn, results):
            counts[label] += 1
        if progress:
            progress(index + 1)
