"""The race lab's two targets: each scenario on the library and on nova.

For each scenario, on the placement double, with one and with two
explorer processes (``--workers``), the runs explored and the time taken
by the whole scenario (all its cells) on the library's code and on nova's
(the installed nova), and the ratio nova / library; plus what loading
nova costs: starting the runner process and importing nova in it
(:class:`shelvefix.nova.lab.NovaLab` entered and left), several times,
the best and the median.

The library target and nova cannot share a process (``nova.conf`` and
``shelvefix.conf`` both register options on oslo.config's global
``CONF``), so each measurement is one ``shelvefix race --json`` in a
process of its own: its runs and search time are read from the JSON
document (each cell's ``interleavings`` and ``elapsed_s``), and its wall
time, start-up included (for nova: the runner and nova's import), is timed
here. Exit status 1 of the command only says that bad outcomes were found
(nova has some); status 2, or no JSON, is an error: it is reported and
the benchmark exits 1 after printing what it measured.

A scenario only one target has is measured there, and its row on the
other says ``-``. Where nova's whole search is too long to measure
(:data:`NOVA_WITHOUT`), nova's row leaves out the actors named (``race
--without``) and the ratio is not printed: the searches differ.

Usage (with the Python of ``tox -e nova``, which installs nova):
``.tox/nova/bin/python benchmarks/bench_targets.py [--quick | --new]
[--scenario NAME ...] [--workers 1,2] [--loads N]``. Every scenario takes
about a quarter of an hour with two workers on two cores; ``--quick``
measures the small ones, ``--new`` the operations added by the issue "New
operations" (live migration, builds, cross-cell resize, service disable,
ironic).
"""

import argparse
import importlib.util
import json
import statistics
import subprocess
import sys
import time

from shelvefix import race
from shelvefix.race import scenarios

# A sibling of this script: its directory is first on sys.path.
import figures

#: What ``--quick`` measures (unless ``--scenario`` is given).
QUICK_SCENARIOS = (race.OFFLOAD_UNSHELVE, race.UNSHELVE_PERIODIC,
                   race.RESIZE_CONFIRM)

#: What ``--new`` measures: the scenarios of the new operations.
NEW_SCENARIOS = (race.LIVE_MIGRATE, race.LIVE_MIGRATE_ABORT,
                 race.LIVE_MIGRATE_GROUP, race.BUILD, race.BUILD_DELETE,
                 race.SERVICE_DISABLE, race.IRONIC_REBALANCE,
                 race.CROSS_CELL_REVERT, race.CROSS_CELL_CONFIRM)

#: The actors nova's search leaves out, where its whole search is too long
#: to measure here.
NOVA_WITHOUT = {race.LIVE_MIGRATE_ABORT: ('periodic-1', 'periodic-2')}

#: The targets, in the order they run and print.
TARGETS = (race.LIBRARY, race.NOVA)


class Failed(Exception):
    """A command that did not give its figures; the message says why."""


def worker_counts(text):
    """An argparse ``type=``: comma-separated counts, such as ``1,2``."""
    counts = [figures.count(part.strip()) for part in text.split(',')]
    if len(set(counts)) != len(counts):
        raise argparse.ArgumentTypeError('%r names a count twice' % text)
    return counts


def without(target, scenario):
    """The actors the measurement of ``scenario`` on ``target`` leaves out."""
    return NOVA_WITHOUT.get(scenario, ()) if target == race.NOVA else ()


def race_argv(target, scenario, workers):
    """The command line of one measurement."""
    argv = [sys.executable, '-m', 'shelvefix', 'race', '--target', target,
            '--backend', 'double', '--scenario', scenario,
            '--workers', str(workers), '--json']
    for actor in without(target, scenario):
        argv += ['--without', actor]
    return argv


def _last_line(text):
    lines = [line for line in text.splitlines() if line.strip()]
    return lines[-1].strip() if lines else '(nothing on stderr)'


def read_document(stdout, scenario, workers):
    """``(runs, search seconds, cells)`` from one scenario's JSON document.

    :raises Failed: the document is not one scenario's, as asked
    """
    try:
        document = json.loads(stdout)
    except ValueError:
        raise Failed('no JSON document on stdout')
    if not isinstance(document, dict) or 'cells' not in document:
        raise Failed('the JSON document has no cells')
    if document.get('scenario') != scenario:
        raise Failed('the JSON document is for %r'
                     % document.get('scenario'))
    if document.get('workers') != workers:
        raise Failed('the command ran %r workers' % document.get('workers'))
    cells = document['cells']
    try:
        runs = sum(cell['interleavings'] for cell in cells)
        seconds = sum(cell['elapsed_s'] for cell in cells)
    except (KeyError, TypeError) as e:
        raise Failed('a cell has no runs or time: %r' % e)
    return runs, seconds, len(cells)


def measure(target, scenario, workers):
    """One scenario on one target, in a process of its own.

    :returns: a row: runs, search seconds (the cells' own time), wall
        seconds (the command's, start-up included), cells, status
    :raises Failed: the command failed or gave no figures
    """
    start = time.perf_counter()
    done = subprocess.run(race_argv(target, scenario, workers),
                          stdin=subprocess.DEVNULL, stdout=subprocess.PIPE,
                          stderr=subprocess.PIPE, universal_newlines=True,
                          check=False)
    wall = time.perf_counter() - start
    if done.returncode not in (0, 1):
        raise Failed('exit status %d: %s' % (done.returncode,
                                             _last_line(done.stderr)))
    try:
        runs, seconds, cells = read_document(done.stdout, scenario, workers)
    except Failed as e:
        raise Failed('exit status %d, %s: %s' % (
            done.returncode, e, _last_line(done.stderr)))
    return dict(target=target, scenario=scenario, workers=workers,
                runs=runs, search=seconds, wall=wall, cells=cells,
                status=done.returncode)


def load_times(loads):
    """Seconds to start the runner and load the installed nova, each time.

    :raises Failed: nova cannot be loaded
    """
    from shelvefix import nova
    from shelvefix.nova import lab
    times = []
    for _ in range(loads):
        start = time.perf_counter()
        try:
            with lab.NovaLab(None, 'double'):
                pass
        except nova.NovaUnusable as e:
            raise Failed('loading nova: %s' % e)
        times.append(time.perf_counter() - start)
    return times


def _progress(text):
    if sys.stderr.isatty():
        sys.stderr.write('bench_targets: %s\n' % text)
        sys.stderr.flush()


def print_rows(rows):
    print('%-18s %-7s %4s %5s %7s %9s %8s %8s %6s' % (
        'scenario', 'target', 'wkrs', 'cells', 'runs', 'search s',
        'wall s', 'run ms', 'status'))
    for r in rows:
        if r.get('absent'):
            print('%-18s %-7s %4d %5s %7s %9s %8s %8s %6s' % (
                r['scenario'], r['target'], r['workers'], '-', '-', '-',
                '-', '-', '-'))
            continue
        what = '%s on %s, %d workers' % (r['scenario'], r['target'],
                                         r['workers'])
        r['run_ms'] = 1000.0 * figures.ratio(r['search'], r['runs'],
                                             what + ' s/run')
        print('%-18s %-7s %4d %5d %7d %9.2f %8.2f %8.1f %6d' % (
            r['scenario'], r['target'], r['workers'], r['cells'], r['runs'],
            r['search'], r['wall'], r['run_ms'], r['status']))


def print_ratios(rows, names, counts):
    by_key = {(r['scenario'], r['target'], r['workers']): r for r in rows}
    print('nova / library:')
    print('%-18s %4s %8s %8s %8s' % ('scenario', 'wkrs', 'runs', 'run ms',
                                     'wall'))
    for name in names:
        for workers in counts:
            lib = by_key.get((name, race.LIBRARY, workers))
            nova = by_key.get((name, race.NOVA, workers))
            if lib is None or nova is None:
                print('%-18s %4d %8s %8s %8s' % (name, workers, 'error',
                                                 'error', 'error'))
                continue
            if lib.get('absent') or nova.get('absent') or NOVA_WITHOUT.get(
                    name):
                # One target only, or searches that differ.
                print('%-18s %4d %8s %8s %8s' % (name, workers, '-', '-',
                                                 '-'))
                continue
            what = '%s, %d workers, nova / library' % (name, workers)
            print('%-18s %4d %7.2fx %7.2fx %7.2fx' % (
                name, workers,
                figures.ratio(nova['runs'], lib['runs'], what + ' runs'),
                figures.ratio(nova['run_ms'], lib['run_ms'],
                              what + ' run ms'),
                figures.ratio(nova['wall'], lib['wall'], what + ' wall')))


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.split('\n')[0])
    parser.add_argument('--scenario', action='append',
                        choices=list(scenarios.SCENARIOS))
    which = parser.add_mutually_exclusive_group()
    which.add_argument('--quick', action='store_true',
                       help='without --scenario: only %s'
                            % ', '.join(QUICK_SCENARIOS))
    which.add_argument('--new', action='store_true',
                       help='without --scenario: the new operations\' '
                            'scenarios, %s' % ', '.join(NEW_SCENARIOS))
    parser.add_argument('--workers', type=worker_counts, default=[1, 2],
                        help='explorer processes, comma-separated '
                             '(default 1,2)')
    parser.add_argument('--loads', type=figures.count, default=5,
                        help='times nova is loaded (default 5)')
    args = parser.parse_args(argv)
    if importlib.util.find_spec('nova') is None:
        print('bench_targets: nova is not installed for %s (run it with '
              '.tox/nova/bin/python)' % sys.executable)
        return 2
    names = args.scenario or (QUICK_SCENARIOS if args.quick
                              else NEW_SCENARIOS if args.new
                              else list(scenarios.SCENARIOS))
    errors = []
    _progress('loading nova %d times' % args.loads)
    try:
        loads = load_times(args.loads)
    except Failed as e:
        errors.append(str(e))
        loads = []
    rows = []
    for name in names:
        for workers in args.workers:
            for target in TARGETS:
                if target not in scenarios.get_scenario(name).targets:
                    rows.append(dict(target=target, scenario=name,
                                     workers=workers, absent=True))
                    continue
                _progress('%s on %s, %d workers' % (name, target, workers))
                try:
                    rows.append(measure(target, name, workers))
                except Failed as e:
                    errors.append('%s on %s, %d workers: %s'
                                  % (name, target, workers, e))
    print_rows(rows)
    print()
    print_ratios(rows, names, args.workers)
    print()
    if loads:
        print('loading nova (runner process started, nova imported, '
              'runner stopped): min %.2f s, median %.2f s of %d'
              % (min(loads), statistics.median(loads), len(loads)))
    print('runs: interleavings explored, all cells; search s: the cells\' '
          'own time; wall s: the command\'s, start-up included')
    print('run ms: search s per run; status 1: the command found a bad '
          'outcome in the corrected code (nova as it is), or no verdict')
    print('-: the target does not have the scenario, or (ratios) the '
          'searches differ')
    for name in names:
        if NOVA_WITHOUT.get(name):
            print('%s on nova: without %s' % (name, ', '.join(
                NOVA_WITHOUT[name])))
    for error in errors:
        sys.stderr.write('bench_targets: ERROR: %s\n' % error)
    return 1 if errors else 0


if __name__ == '__main__':
    sys.exit(figures.main(main))
