"""``shelvefix stress`` on each database placement can run on, side by side.

The same run (K servers x M cycles, both orderings, DELETE to free) on
placement under gunicorn over sqlite, PostgreSQL and MariaDB, one after
the other in this process, so that the figures compare on a shared
machine: cycles and requests per second, the outcomes, the database's own
conflict counters over the run (deadlocks; MariaDB's row lock waits) and
the ghost consumers left (consumer records without allocations, read from
placement's tables). A database that cannot be had (not root, no
apt-get) is reported and left out.

Usage: ``python benchmarks/bench_databases.py [--database NAME ...]
[--servers K] [--cycles M] [--json]``; about two minutes with the
defaults.
"""

import argparse
import contextlib
import io
import json
import logging
import sys

from shelvefix.cmd import main as shelvefix_main

DATABASES = ('sqlite', 'postgresql', 'mariadb')


def run(database, servers, cycles):
    """One stress run on ``database``; its JSON report, or its error."""
    out, err = io.StringIO(), io.StringIO()
    with contextlib.redirect_stderr(err):
        rc = shelvefix_main.main(
            ['stress', '--database', database, '--servers', str(servers),
             '--cycles', str(cycles), '--json'], out=out)
    if rc not in (0, 1):
        return {'database': database, 'error': err.getvalue().strip()}
    return dict(json.loads(out.getvalue()), database=database, rc=rc)


def rows(report):
    for r in report['results']:
        counters = r.get('database_counters', {})
        bad = sum(count for label, count in r['outcomes'].items()
                  if label != 'ok')
        yield (report['database'], r['ordering'], r['cycles'],
               r['cycles_per_second'], r['requests_per_second'],
               r['outcomes'].get('ok', 0), bad,
               counters.get('deadlocks', '-'),
               counters.get('lock waits', '-'),
               r.get('ghost_consumers_left', '-'),
               'yes' if r['usage_ok'] else 'NO')


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument('--database', action='append', choices=DATABASES)
    parser.add_argument('--servers', type=int, default=8)
    parser.add_argument('--cycles', type=int, default=20)
    parser.add_argument('--json', action='store_true')
    args = parser.parse_args(argv)
    logging.getLogger().addHandler(logging.NullHandler())
    reports = [run(database, args.servers, args.cycles)
               for database in args.database or DATABASES]
    if args.json:
        json.dump(reports, sys.stdout, indent=2, sort_keys=True)
        sys.stdout.write('\n')
        return 0
    header = ('database', 'ordering', 'cycles', 'cycles/s', 'requests/s',
              'ok', 'bad', 'deadlocks', 'lock waits', 'ghosts', 'usages ok')
    fmt = '%-10s %-9s %6s %8s %10s %5s %4s %9s %10s %6s %9s'
    print('shelvefix stress, %d servers x %d cycles per ordering, placement '
          'under gunicorn (2 workers)' % (args.servers, args.cycles))
    print(fmt % header)
    for report in reports:
        if 'error' in report:
            print('%-10s not run: %s' % (report['database'],
                                         report['error']))
            continue
        for row in rows(report):
            print(fmt % row)
    print('bad: cycles with any outcome but ok (the legacy order races; '
          'the corrected order must show none); deadlocks, lock waits: '
          "the database's own counters over the run; ghosts: consumers "
          'left without allocations')
    return 0


if __name__ == '__main__':
    sys.exit(main())
