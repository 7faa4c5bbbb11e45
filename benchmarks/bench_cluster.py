"""Exploring on a Dask cluster: what 1, 2, 4 and 8 workers give.

For each number of workers, a Dask cluster of that many worker processes
on 127.0.0.1 (``--cluster local:N``, one thread each) explores each
workload, as ``shelvefix race --cluster`` and ``shelvefix corpus
--cluster`` do: every exploration a task, and the subtrees far ahead of
each search tasks too (:mod:`shelvefix.cluster`). Per workload and
cluster it prints:

* runs made (the explorations' runs: the same on every cluster, checked
  against the first cluster's run for run) and runs discarded (made by a
  subtree task, never taken by the search);
* tasks: explorations + subtree tasks;
* the scheduler's overhead per task: a no-op task's round trip on the idle
  cluster, and, per exploration task, the time outside the task that was
  not spent waiting for a free worker (dispatch and the way back);
* the idle fraction of the workers (from Dask's task stream: 1 - the
  tasks' compute time / (workers x wall time)) and the wall time.

Then, for each workload, what bounds the speed-up on a larger cluster:
the total work (every run's execution time) against the critical path
(the longest chain of runs each waiting for the run whose race put it in
a wakeup tree, :func:`shelvefix.explorer.count.critical_path`; the
explorations are independent, so the workload's is its longest
exploration's). On two cores, wall time stops improving after two
workers; the critical path says how far a larger cluster could go.

Workloads: ``lifecycle`` and ``evacuate`` (the library's code on the
placement double; ``--target nova`` for nova's, ``--backend real``),
``corpus`` (the corpus's self-test on the installed nova: run it with the
Python of ``tox -e corpus`` or ``tox -e nova``; skipped, and said so,
without nova). Usage: ``python benchmarks/bench_cluster.py [--workers
1,2,4,8] [--workload NAME ...] [--target T] [--backend B] [--cluster
tcp://HOST:PORT]`` (an existing scheduler instead of local clusters).
"""

import argparse
import importlib.util
import logging
import sys
import time

from shelvefix import cluster
from shelvefix.cluster import engine
from shelvefix.cluster import lab as cluster_lab
from shelvefix import race
from shelvefix.race import scenarios

import figures

WORKLOADS = ('lifecycle', 'evacuate', 'corpus')

#: No-op tasks timed one after another to measure a round trip.
NOOPS = 50


def worker_counts(text):
    try:
        counts = [int(part) for part in text.split(',')]
    except ValueError:
        raise argparse.ArgumentTypeError('%r: numbers separated by commas'
                                         % text)
    if not counts or min(counts) < 1:
        raise argparse.ArgumentTypeError('%r: each at least 1' % text)
    return counts


def _noop():
    return None


def round_trip(client):
    """Seconds a no-op task takes from submission to result, on average."""
    started = time.monotonic()
    for _ in range(NOOPS):
        client.submit(_noop, pure=False).result()
    return (time.monotonic() - started) / NOOPS


def explore(lab, workload, target):
    """Explore a workload on ``lab``; its ``CellResult`` list."""
    if workload == 'corpus':
        from shelvefix import corpus
        from shelvefix.corpus import runs
        _description, results = runs.self_test(corpus.load(), lab=lab)
        if not runs.proven(results):
            raise figures.NoFigure('the corpus self-test did not pass')
        found = []
        for result in results:
            found.extend(r for r in (result.patched, result.explored)
                         if r is not None)
        # A whole exploration is shared by the rows of its group.
        return list({id(r): r for r in found}.values())
    scenario = scenarios.get_scenario(workload)
    return lab.explore_many([cluster_lab.Request(scenario, cell)
                             for cell in lab.cells(scenario)])


def measure(spec, workload, target, backend):
    """One workload on one cluster: a dict of figures."""
    import distributed
    with engine.Engine(spec) as cluster_engine:
        client = cluster_engine.client
        width = cluster_engine.width
        noop = round_trip(client)
        with cluster_lab.ClusterLab(cluster_engine, target,
                                    backend) as lab:
            with distributed.get_task_stream(client=client) as stream:
                started = time.monotonic()
                results = explore(lab, workload, target)
                wall = time.monotonic() - started
            explorations = lab.figures
    compute = sum(part['stop'] - part['start'] for task in stream.data
                  for part in task['startstops']
                  if part['action'] == 'compute')
    return dict(
        workers=width, results=results,
        runs=sum(r.runs for r in results),
        discarded=sum(r.discarded for r in results),
        explorations=explorations.tasks,
        subtrees=sum(r.tasks for r in results),
        noop_ms=noop * 1000.0,
        overhead_ms=figures.ratio(explorations.overhead, explorations.tasks,
                                  'overhead per task') * 1000.0,
        idle=max(0.0, 1.0 - figures.ratio(compute, width * wall,
                                          'busy fraction')),
        wall=wall,
        work=sum(r.work for r in results),
        critical=max(r.critical for r in results))


def print_heading(workload):
    print('%s:' % workload)
    print('  %-8s %6s %9s %18s %9s %9s %5s %7s' % (
        'workers', 'runs', 'discarded', 'tasks (expl+subtr)', 'no-op ms',
        'task ms', 'idle', 'wall s'))


def print_row(row):
    """One cluster's figures, as soon as they are measured."""
    print('  %-8d %6d %9d %18s %9.1f %9.1f %4.0f%% %7.1f' % (
        row['workers'], row['runs'], row['discarded'],
        '%d (%d+%d)' % (row['explorations'] + row['subtrees'],
                        row['explorations'], row['subtrees']),
        row['noop_ms'], row['overhead_ms'], 100 * row['idle'],
        row['wall']))
    sys.stdout.flush()


def print_bounds(rows):
    first = rows[0]
    print('  total work %.1f s, critical path %.2f s: no cluster explores '
          'it in less, a speed-up of at most %.0fx (%d explorations)' % (
              first['work'], first['critical'],
              figures.ratio(first['work'], first['critical'],
                            'speed-up bound'), first['explorations']))
    if len(rows) > 1:
        print('  wall time, 1 worker / best: %.2fx' % figures.ratio(
            first['wall'], min(row['wall'] for row in rows),
            'speed-up'))


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.split('\n')[0])
    parser.add_argument('--workers', type=worker_counts,
                        default=[1, 2, 4, 8])
    parser.add_argument('--workload', action='append', choices=WORKLOADS)
    parser.add_argument('--target', choices=race.TARGETS,
                        default=race.LIBRARY)
    parser.add_argument('--backend', default='double',
                        choices=('double', 'real'))
    parser.add_argument('--cluster', metavar='tcp://HOST:PORT')
    args = parser.parse_args(argv)
    logging.getLogger().addHandler(logging.NullHandler())
    if not cluster.available():
        sys.stderr.write(cluster.INSTALL_HINT % 'local:N' + '\n')
        return 2
    specs = ([cluster.parse(args.cluster)] if args.cluster else
             [cluster.parse('local:%d' % n) for n in args.workers])
    for workload in args.workload or WORKLOADS:
        target = race.NOVA if workload == 'corpus' else args.target
        if target == race.NOVA and importlib.util.find_spec('nova') is None:
            print('%s: skipped: nova is not installed (run this with the '
                  'Python of tox -e corpus)' % workload)
            continue
        rows = []
        print_heading(workload)
        for spec in specs:
            row = measure(spec, workload, target, args.backend)
            if rows and ([r.digest for r in row['results']] !=
                         [r.digest for r in rows[0]['results']]):
                raise figures.NoFigure('%s on %s explored other runs than '
                                       'on %s' % (workload, spec.text,
                                                  specs[0].text))
            rows.append(row)
            print_row(row)
        print_bounds(rows)
        sys.stdout.flush()
    return 0


if __name__ == '__main__':
    sys.exit(figures.main(main))
