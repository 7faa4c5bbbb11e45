"""Start-up time of the command line, per subcommand.

Each subcommand imports what it runs only when it runs, so ``shelvefix
--help`` and ``shelvefix check`` do not load the explorer, the race lab,
the fault matrix or placement. This prints, as medians of several runs in
one go (so they compare on a shared machine):

* ``shelvefix --help``;
* ``shelvefix check`` on a compute manager: nova's own when nova is
  installed here (12,000 lines in recent releases), else shelvefix's, or
  the file given with ``--manager``;
* what a command paid before imports were per subcommand: importing the
  command line with the race lab, the fault matrix, stress and the
  placement backends (the check's own work on top of that is what its line
  above minus ``--help`` shows);

and the ratios.

Usage: ``python benchmarks/bench_startup.py [--runs N] [--manager PATH]``.
"""

import argparse
import importlib.util
import os
import statistics
import subprocess
import sys
import time

EAGER_IMPORTS = ('import shelvefix.cmd.main, shelvefix.race.program, '
                 'shelvefix.race.fault_matrix, shelvefix.race.stress, '
                 'shelvefix.race.report, shelvefix.backends.real, '
                 'shelvefix.backends.server, shelvefix.novacheck.check')


def _default_manager():
    spec = importlib.util.find_spec('nova')
    if spec is not None and spec.submodule_search_locations:
        path = os.path.join(list(spec.submodule_search_locations)[0],
                            'compute', 'manager.py')
        if os.path.exists(path):
            return path
    import shelvefix.compute.manager as ours
    return ours.__file__


def _median_seconds(argv, runs):
    times = []
    for _ in range(runs):
        start = time.perf_counter()
        subprocess.run(argv, stdout=subprocess.DEVNULL,
                       stderr=subprocess.DEVNULL, check=False)
        times.append(time.perf_counter() - start)
    return statistics.median(times)


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.split('\n')[0])
    parser.add_argument('--runs', type=int, default=7)
    parser.add_argument('--manager', help='the manager.py to check')
    args = parser.parse_args(argv)
    manager = args.manager or _default_manager()
    with open(manager) as f:
        lines = len(f.readlines())
    python = sys.executable
    rows = [
        ('shelvefix --help', [python, '-m', 'shelvefix', '--help']),
        ('shelvefix check (%d lines)' % lines,
         [python, '-m', 'shelvefix', 'check', manager]),
        ('import the whole lab (before)', [python, '-c', EAGER_IMPORTS]),
        ('python itself', [python, '-c', 'pass']),
    ]
    results = [(label, _median_seconds(cmd, args.runs))
               for label, cmd in rows]
    print('%-34s %10s' % ('median of %d runs' % args.runs, 'seconds'))
    for label, seconds in results:
        print('%-34s %10.3f' % (label, seconds))
    by = dict(results)
    lab = by['import the whole lab (before)']
    help_time = by['shelvefix --help']
    check = by['shelvefix check (%d lines)' % lines]
    print('checked: %s' % manager)
    print('--help / importing the lab: %.2f' % (help_time / lab))
    print('check / (check work + importing the lab): %.2f'
          % (check / (check - help_time + lab)))
    return 0


if __name__ == '__main__':
    sys.exit(main())
