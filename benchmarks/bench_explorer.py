"""The race lab's explorations: runs, outcomes, time, and what a run costs.

For each scenario and backend, in one process so the figures compare on a
shared machine:

* interleavings explored with the reduction (one run per Mazurkiewicz
  trace) and without it. The lifecycle has far too many interleavings to
  run them all, and the real service is slow: for them the unreduced
  figure is *counted*: the number of
  interleavings equivalent to each run explored, summed (the orderings of
  its steps that keep every pair of dependent steps in order;
  ``explorer.count_interleavings``). Where both are known the benchmark
  checks they agree;
* the bad outcomes found (each pre-fix variant's symptom, nothing in the
  corrected code) and the wall time;
* the speed-up of ``workers=2`` over ``workers=1`` on the same search (on
  the double: workers are forked, which the real service's connections do
  not survive), the best times of three alternations, beside what two
  processes gain on this machine for plain CPU work (the bound: shared
  virtual machines often give less than two full cores);
* what one explored run costs against the time its own placement requests
  take through the client stack (keystoneauth1 session to response, minus
  the time the request's actor waited to be scheduled): the rest is
  set-up, the actors' hand-offs and the checks.

With ``--cluster local:N`` or ``--cluster tcp://HOST:PORT`` (the
``cluster`` extra), the same cells are also explored on that Dask cluster,
all at once as ``shelvefix race --cluster`` does, on every backend: the
benchmark checks them against the search in this process run for run and
prints the cluster's wall time and its speed-up over one process
(``benchmarks/bench_cluster.py`` has the cluster's own figures).

Usage: ``python benchmarks/bench_explorer.py [--backend NAME ...]
[--scenario NAME ...] [--cluster WHERE] [--json]``. Without
``--scenario`` it measures the shelve lifecycle's scenarios (what ``tox
-e bench`` runs; CI runs the two smaller ones); the move scenarios
(``--scenario resize-confirm --scenario resize-revert --scenario
evacuate``) take about 12 minutes on two cores, nearly all of it the real
service's evacuation.
"""

import argparse
import contextlib
import json
import logging
import multiprocessing
import sys
import threading
import time

from keystoneauth1 import session as ks_session

from shelvefix import backends
from shelvefix.backends import real
from shelvefix import cluster
from shelvefix import explorer
from shelvefix.explorer import controller as controller_mod
from shelvefix import race
from shelvefix.race import digest
from shelvefix.race import outcomes
from shelvefix.race import scenarios
from shelvefix.race import targets

# A sibling of this script: its directory is first on sys.path.
import figures

#: The scenarios whose unreduced search runs (on the double: the count
#: is the same on every backend, as the program is deterministic).
#: The scenarios the library has (this benchmark explores the library).
LIBRARY_SCENARIOS = tuple(
    name for name in race.SCENARIOS
    if race.LIBRARY in scenarios.get_scenario(name).targets)

UNREDUCED_RUNS = {race.OFFLOAD_UNSHELVE: True,
                  race.UNSHELVE_PERIODIC: True,
                  race.LIFECYCLE: False,
                  race.RESIZE_CONFIRM: True,
                  race.RESIZE_REVERT: False,
                  race.EVACUATE: False,
                  race.RESIZE_DELETE: False,
                  race.RESIZE_MIGRATE: False,
                  race.LIVE_MIGRATE: False,
                  race.LIVE_MIGRATE_ABORT: False,
                  race.BUILD: False,
                  race.BUILD_DELETE: False,
                  race.SERVICE_DISABLE: True,
                  race.IRONIC_REBALANCE: False,
                  race.CROSS_CELL_REVERT: False,
                  race.CROSS_CELL_CONFIRM: False}


#: What runs without ``--scenario``: the shelve lifecycle's scenarios.
DEFAULT_SCENARIOS = (race.OFFLOAD_UNSHELVE, race.UNSHELVE_PERIODIC,
                     race.LIFECYCLE)

#: Alternations of one and two processes whose best times are compared.
REPEAT = 3


def machine_speedup(loops=2000000):
    """What two processes gain over one on this machine, for plain CPU work.

    The same pure-Python loop twice in this process, then once in each of
    two forked processes; the best of three. A search cannot beat it.
    """
    def work():
        total = 0
        for i in range(loops):
            total += i * i
        return total

    def timed(run):
        start = time.perf_counter()
        run()
        return time.perf_counter() - start

    def two_processes():
        context = multiprocessing.get_context('fork')
        procs = [context.Process(target=work) for _ in range(2)]
        for proc in procs:
            proc.start()
        for proc in procs:
            proc.join()

    serial = min(timed(lambda: (work(), work())) for _ in range(3))
    parallel = min(timed(two_processes) for _ in range(3))
    return figures.ratio(serial, parallel, 'two processes / one')


class RequestClock(object):
    """Time spent in placement requests, and in waiting to be scheduled."""

    def __init__(self):
        self.requests = 0
        self.request_seconds = 0.0
        self.waiting_seconds = 0.0
        self._lock = threading.Lock()

    def install(self):
        clock = self
        request = ks_session.Session.request
        step = controller_mod.Controller.step

        def timed_request(session, *args, **kwargs):
            start = time.perf_counter()
            try:
                return request(session, *args, **kwargs)
            finally:
                with clock._lock:
                    clock.requests += 1
                    clock.request_seconds += time.perf_counter() - start

        def timed_step(controller, kind, *args, **kwargs):
            start = time.perf_counter()
            try:
                return step(controller, kind, *args, **kwargs)
            finally:
                if kind == 'placement':
                    with clock._lock:
                        clock.waiting_seconds += time.perf_counter() - start

        ks_session.Session.request = timed_request
        controller_mod.Controller.step = timed_step

        def uninstall():
            ks_session.Session.request = request
            controller_mod.Controller.step = step
        return uninstall

    @property
    def own_seconds(self):
        return self.request_seconds - self.waiting_seconds


def explore_scenario(placement, name, reduce=True, workers=1):
    """Explore every cell; returns (cells, seconds)."""
    cells = []
    start = time.perf_counter()
    for cell in scenarios.get_scenario(name).cells():
        cells.append((cell, targets.explore_cell(
            placement, cell, reduce=reduce, scenario_name=name,
            workers=workers)))
    return cells, time.perf_counter() - start


def bad_by_cell(cells):
    return {'/'.join(p for p in cell if p): sorted(
        {label for run in exploration.runs for label in run.outcome
         if outcomes.is_bad(label)})
        for cell, exploration in cells}


def on_cluster(cluster_engine, backend, name, cells):
    """The scenario's cells explored on a Dask cluster, all at once.

    :param cells: ``[(cell, exploration)]`` of the search in this process,
        which every cell's runs must equal
    :returns: ``(seconds, same)``: the wall time, and whether every cell
        made the same runs with the same outcomes, in the same order
    """
    from shelvefix.cluster import lab as cluster_lab
    scenario = scenarios.get_scenario(name)
    with cluster_lab.ClusterLab(cluster_engine, race.LIBRARY,
                                backend) as lab:
        start = time.perf_counter()
        results = lab.explore_many([cluster_lab.Request(scenario, cell)
                                    for cell, _exploration in cells])
        seconds = time.perf_counter() - start
    here = [(cell, digest.digest(exploration))
            for cell, exploration in cells]
    return seconds, here == [(r.cell, r.digest) for r in results]


def measure(backend, name, cluster_engine=None):
    """The figures of one scenario on one backend (and a cluster)."""
    row = {'backend': backend, 'scenario': name}
    with backends.make_backend(backend) as placement:
        clock = RequestClock()
        uninstall = clock.install()
        try:
            cells, seconds = explore_scenario(placement, name)
        finally:
            uninstall()
        runs = sum(len(e.runs) for _c, e in cells)
        what = '%s on %s' % (name, backend)
        row.update(
            reduced=runs, seconds=seconds,
            blocked=sum(e.blocked for _c, e in cells),
            counted=sum(explorer.count_interleavings(run)
                        for _c, e in cells for run in e.runs),
            bad=bad_by_cell(cells),
            run_ms=1000.0 * figures.ratio(seconds, runs, what + ' s/run'),
            requests_per_run=figures.ratio(clock.requests, runs,
                                           what + ' requests/run'),
            requests_ms=1000.0 * figures.ratio(
                clock.own_seconds, runs, what + ' request s/run'))
        row['cost_ratio'] = figures.ratio(row['run_ms'], row['requests_ms'],
                                          what + ' run ms / reqs ms')
        if backend == backends.DOUBLE:
            # The speed-up compares the same search, neither timed by the
            # clock; workers are forked, which only the double survives.
            # Shared machines are noisy: the best of a few alternations.
            alone, parallel = [], []
            for _ in range(REPEAT):
                alone.append(explore_scenario(placement, name)[1])
                parallel.append(explore_scenario(placement, name,
                                                 workers=2)[1])
            row.update(seconds_1_worker=min(alone),
                       seconds_2_workers=min(parallel),
                       speedup=figures.ratio(min(alone), min(parallel),
                                             what + ' speed-up'))
        else:
            # A run on the real service is ten times longer than the
            # clock's own cost: its timed search stands for the plain one.
            row['seconds_1_worker'] = seconds
        if UNREDUCED_RUNS[name] and backend == backends.DOUBLE:
            full, full_seconds = explore_scenario(placement, name,
                                                  reduce=False)
            row['unreduced'] = sum(len(e.runs) for _c, e in full)
            row['unreduced_seconds'] = full_seconds
        if cluster_engine is not None:
            row['seconds_cluster'], row['cluster_same'] = on_cluster(
                cluster_engine, backend, name, cells)
            row['cluster_speedup'] = figures.ratio(
                row['seconds_1_worker'], row['seconds_cluster'],
                what + ' cluster speed-up')
    return row


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.split('\n')[0])
    parser.add_argument('--backend', action='append',
                        choices=(backends.DOUBLE, backends.REAL))
    parser.add_argument('--scenario', action='append',
                        choices=LIBRARY_SCENARIOS)
    parser.add_argument('--cluster', default='local', metavar='WHERE',
                        help='local (this process and its forks), '
                        'local:N or tcp://HOST:PORT (a Dask cluster too)')
    parser.add_argument('--json', action='store_true')
    args = parser.parse_args(argv)
    logging.getLogger().addHandler(logging.NullHandler())
    names = args.backend or [backends.DOUBLE, backends.REAL]
    if backends.REAL in names and not real.available():
        parser.error(real.INSTALL_HINT)
    try:
        spec = cluster.parse(args.cluster)
    except ValueError as e:
        parser.error(str(e))
    if spec.engine and not cluster.available():
        parser.error(cluster.INSTALL_HINT)
    machine = machine_speedup()
    with contextlib.ExitStack() as stack:
        cluster_engine = None
        if spec.engine:
            from shelvefix.cluster import engine
            cluster_engine = stack.enter_context(engine.Engine(spec))
            width = cluster_engine.width
        rows = [measure(backend, name, cluster_engine) for backend in names
                for name in args.scenario or DEFAULT_SCENARIOS]
    # The cluster made other runs than this process: no figure holds.
    failed = int(not all(r.get('cluster_same', True) for r in rows))
    if args.json:
        print(json.dumps({'machine_speedup': machine, 'rows': rows},
                         indent=2, sort_keys=True))
        return failed
    clustered = cluster_engine is not None
    print('%-7s %-18s %8s %10s %8s %8s %8s %8s %9s %6s%s' % (
        'backend', 'scenario', 'reduced', 'unreduced', '1 wkr s',
        '2 wkrs s', 'speedup', 'run ms', 'reqs ms', 'ratio',
        ' %9s %8s' % ('cluster s', 'speedup') if clustered else ''))
    for r in rows:
        unreduced = ('%d' % r['unreduced'] if 'unreduced' in r
                     else '~%d' % r['counted'])
        if 'speedup' in r:
            parallel = '%8.2f %7.2fx' % (r['seconds_2_workers'],
                                         r['speedup'])
        else:
            parallel = '%8s %8s' % ('-', '-')
        print('%-7s %-18s %8d %10s %8.2f %s %8.1f %9.1f %5.1fx%s'
              % (r['backend'], r['scenario'], r['reduced'], unreduced,
                 r['seconds_1_worker'], parallel,
                 r['run_ms'], r['requests_ms'], r['cost_ratio'],
                 ' %9.2f %7.2fx' % (r['seconds_cluster'],
                                    r['cluster_speedup'])
                 if clustered else ''))
    print()
    print('unreduced: runs of the unreduced search (on the double); ~N: '
          'counted from the reduced runs, not run')
    print('reqs ms: per run, the time its placement requests took through '
          'the client stack')
    print('ratio: run ms / reqs ms (one run against its own requests)')
    print('2 wkrs: the search with two processes (the double only: workers '
          'are forked); best of %d' % REPEAT)
    print('this machine: two processes run plain CPU work %.2fx as fast as '
          'one' % machine)
    if clustered:
        print('cluster: the same cells on --cluster %s (%d workers), all at '
              'once; speedup: 1 wkr s / cluster s' % (spec.text,
                                                      width))
    for r in rows:
        if 'unreduced' in r and r['unreduced'] != r['counted']:
            print('MISMATCH: %s on %s: %d unreduced runs, %d counted'
                  % (r['scenario'], r['backend'], r['unreduced'],
                     r['counted']))
        if r['blocked']:
            print('ABANDONED RUNS: %s on %s: %d' % (
                r['scenario'], r['backend'], r['blocked']))
        if not r.get('cluster_same', True):
            print('MISMATCH: %s on %s: the cluster did not make the same '
                  'runs as this process' % (r['scenario'], r['backend']))
    print()
    for r in rows:
        print('%s on %s: bad outcomes per cell: %s' % (
            r['scenario'], r['backend'], ', '.join(
                '%s: %s' % (cell, ' + '.join(bad) or 'none')
                for cell, bad in sorted(r['bad'].items()))))
    return failed


if __name__ == '__main__':
    sys.exit(figures.main(main))
