"""Interleavings per second and total exploration time, per backend.

Explores the whole 2 × 2 matrix (ordering × way of freeing allocations)
once with the sleep-set reduction and once without, on the placement double
and on the real placement service (openstack-placement in-process over
in-memory sqlite), in one run so the figures compare on a shared machine.
Each interleaving is a full run from scratch: two providers, an instance
with allocations, both actors, the invariant checks and the clean-up.

Usage: ``python benchmarks/bench_explorer.py [--backend NAME ...]``.
"""

import argparse
import json
import logging
import sys
import time

from shelvefix import backends
from shelvefix.backends import real
from shelvefix.race import program


def bench(backend, reduce):
    """Explore every cell; return (interleavings, seconds)."""
    runs = 0
    start = time.perf_counter()
    with backends.make_backend(backend) as placement:
        for cell in program.all_cells():
            runs += len(program.explore_cell(placement, cell,
                                             reduce=reduce).runs)
    return runs, time.perf_counter() - start


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.split('\n')[0])
    parser.add_argument('--backend', action='append',
                        choices=(backends.DOUBLE, backends.REAL))
    parser.add_argument('--json', action='store_true')
    args = parser.parse_args(argv)
    logging.getLogger().addHandler(logging.NullHandler())
    names = args.backend or ['double', 'real']
    if 'real' in names and not real.available():
        parser.error(real.INSTALL_HINT)
    rows = []
    for name in names:
        for reduce in (True, False):
            runs, seconds = bench(name, reduce)
            rows.append({'backend': name, 'reduced': reduce,
                         'interleavings': runs, 'seconds': seconds,
                         'per_second': runs / seconds})
    if args.json:
        print(json.dumps(rows, indent=2))
        return 0
    print('%-8s %-8s %13s %9s %11s' % ('backend', 'reduced', 'interleavings',
                                       'total s', 'per second'))
    for r in rows:
        print('%-8s %-8s %13d %9.2f %11.1f' % (
            r['backend'], 'yes' if r['reduced'] else 'no',
            r['interleavings'], r['seconds'], r['per_second']))
    by = {(r['backend'], r['reduced']): r for r in rows}
    if ('double', False) in by and ('real', False) in by:
        print('real / double time per interleaving: %.1fx' % (
            by[('double', False)]['per_second'] /
            by[('real', False)]['per_second']))
    return 0


if __name__ == '__main__':
    sys.exit(main())
