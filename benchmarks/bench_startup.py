"""Start-up time of the command line, per subcommand.

Each subcommand imports what it runs only when it runs, so ``shelvefix
--help`` and ``shelvefix check`` do not load the explorer, the race lab,
the fault matrix or placement. This prints, as medians of several runs in
one go (so they compare on a shared machine):

* ``shelvefix --help``;
* ``shelvefix check`` on a compute manager: nova's own when nova is
  installed here (``tox -e nova`` installs it), the file given with
  ``--manager``, or else shelvefix's own ``shelvefix/compute/manager.py``,
  a few hundred lines: the output says so on its first line, as that
  figure says nothing about checking nova;
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

# A sibling of this script: its directory is first on sys.path.
import figures

EAGER_IMPORTS = ('import shelvefix.cmd.main, shelvefix.race.program, '
                 'shelvefix.race.fault_matrix, shelvefix.race.stress, '
                 'shelvefix.race.report, shelvefix.backends.real, '
                 'shelvefix.backends.server, shelvefix.novacheck.check')


def _default_manager():
    """``(path, whose, why not nova's)``: nova's manager.py, else ours."""
    spec = importlib.util.find_spec('nova')
    if spec is not None and spec.submodule_search_locations:
        path = os.path.join(list(spec.submodule_search_locations)[0],
                            'compute', 'manager.py')
        if os.path.exists(path):
            return path, "nova's", None
        why = 'nova at %s has no compute/manager.py' % os.path.dirname(path)
    else:
        why = 'nova not installed'
    import shelvefix.compute.manager as ours
    return ours.__file__, "shelvefix's", why


def _lines(path):
    with open(path) as f:
        return len(f.readlines())


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
    parser.add_argument('--runs', type=figures.count, default=7)
    parser.add_argument('--manager', help='the manager.py to check')
    args = parser.parse_args(argv)
    if args.manager:
        manager, whose, why = args.manager, '--manager', None
    else:
        manager, whose, why = _default_manager()
    lines = _lines(manager)
    if why:
        print("%s: timing shelvefix's own shelvefix/compute/manager.py "
              "(%d lines) instead; run tox -e nova for nova's" % (why, lines))
    python = sys.executable
    check_label = 'shelvefix check (%s, %d lines)' % (whose, lines)
    rows = [
        ('shelvefix --help', [python, '-m', 'shelvefix', '--help']),
        (check_label, [python, '-m', 'shelvefix', 'check', manager]),
        ('import the whole lab (before)', [python, '-c', EAGER_IMPORTS]),
        ('python itself', [python, '-c', 'pass']),
    ]
    results = [(label, _median_seconds(cmd, args.runs))
               for label, cmd in rows]
    print('%-42s %10s' % ('median of %d runs' % args.runs, 'seconds'))
    for label, seconds in results:
        print('%-42s %10.3f' % (label, seconds))
    by = dict(results)
    lab = by['import the whole lab (before)']
    help_time = by['shelvefix --help']
    check = by[check_label]
    print('checked: %s' % manager)
    print('--help / importing the lab: %.2f'
          % figures.ratio(help_time, lab, '--help / importing the lab'))
    print('check / (check work + importing the lab): %.2f'
          % figures.ratio(check, check - help_time + lab,
                          'check / (check work + importing the lab)'))
    return 0


if __name__ == '__main__':
    sys.exit(figures.main(main))
