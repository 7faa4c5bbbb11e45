"""``shelvefix stress`` on each database placement can run on, side by side.

The same run (K servers x M cycles, both orderings or the one named,
DELETE to free) on
placement under gunicorn over sqlite, PostgreSQL, MariaDB and a
three-node MariaDB Galera cluster (multi- and single-writer), one after
the other in this process, so that the figures compare on a shared
machine: cycles and requests per second, the outcomes, the database's own
conflict counters over the run (deadlocks; MariaDB's row lock waits;
Galera's certification failures) and
the ghost consumers left (consumer records without allocations, read from
placement's tables). A database that cannot be had (not root, no
apt-get) is reported and left out.

Usage: ``python benchmarks/bench_databases.py [--database NAME ...]
[--ordering corrected|legacy] [--servers K] [--cycles M] [--json]``; with
the defaults, ten minutes on 2 cores, twice that on a busy machine (half
with one ordering).
"""

import argparse
import contextlib
import io
import json
import logging
import signal
import sys

from shelvefix.cmd import main as shelvefix_main
from shelvefix.race import outcomes

#: The set-ups, and the ``shelvefix stress`` options of each.
SETUPS = {
    'sqlite': ['--database', 'sqlite'],
    'postgresql': ['--database', 'postgresql'],
    'mariadb': ['--database', 'mariadb'],
    'galera': ['--database', 'galera'],
    'galera-1w': ['--database', 'galera', '--galera-writer', 'single'],
}
DATABASES = tuple(SETUPS)
#: The exit statuses of a command stopped by SIGINT or SIGTERM.
INTERRUPTED = (128 + signal.SIGINT, 128 + signal.SIGTERM)


def run(database, servers, cycles, ordering=None):
    """One stress run on ``database``; its JSON report, or its error.

    :param ordering: ``'corrected'`` or ``'legacy'``; both if None
    """
    out, err = io.StringIO(), io.StringIO()
    options = ['--ordering', ordering] if ordering else []
    with contextlib.redirect_stderr(err):
        rc = shelvefix_main.main(
            ['stress'] + SETUPS[database] + options + [
                '--servers', str(servers), '--cycles', str(cycles),
                '--json'], out=out)
    if rc in INTERRUPTED:
        # Stopped by a signal: the command cleaned up; so does the rest.
        sys.stderr.write(err.getvalue())
        sys.exit(rc)
    if rc not in (0, 1):
        return {'database': database, 'error': err.getvalue().strip()}
    return dict(json.loads(out.getvalue()), database=database, rc=rc)


def rows(report):
    for r in report['results']:
        counters = r.get('database_counters', {})
        bad = sum(count for label, count in r['outcomes'].items()
                  if outcomes.is_ordering_failure(label))
        yield (report['database'], r['ordering'], r['cycles'],
               r['cycles_per_second'], r['requests_per_second'],
               r['outcomes'].get('ok', 0), bad, r['placement_failed'],
               counters.get('deadlocks', '-'),
               counters.get('certification failures', '-'),
               counters.get('lock waits', '-'),
               r.get('ghost_consumers_left', '-'),
               'yes' if r['usage_ok'] else 'NO')


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument('--database', action='append', choices=DATABASES)
    parser.add_argument('--ordering', choices=('corrected', 'legacy'),
                        help='run this ordering only (default: both)')
    parser.add_argument('--servers', type=int, default=8)
    parser.add_argument('--cycles', type=int, default=20)
    parser.add_argument('--json', action='store_true')
    args = parser.parse_args(argv)
    logging.getLogger().addHandler(logging.NullHandler())
    reports = [run(database, args.servers, args.cycles, args.ordering)
               for database in args.database or DATABASES]
    if args.json:
        json.dump(reports, sys.stdout, indent=2, sort_keys=True)
        sys.stdout.write('\n')
        return 0
    header = ('database', 'ordering', 'cycles', 'cycles/s', 'requests/s',
              'ok', 'bad', 'failed', 'deadlocks', 'cert fail', 'lock waits',
              'ghosts', 'usages ok')
    fmt = '%-10s %-9s %6s %8s %10s %5s %4s %6s %9s %9s %10s %6s %9s'
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
    print('bad: cycles with an outcome of the ordering (the legacy order '
          'races; the corrected order must show none); failed: cycles where '
          'placement itself failed (reported, not judged); deadlocks, lock '
          'waits: '
          "the database's own counters over the run (cert fail: Galera's "
          'certification failures); ghosts: consumers left without '
          'allocations; galera: three nodes, each request to the next '
          "node's placement; galera-1w: all to the first")
    return 0


if __name__ == '__main__':
    sys.exit(main())
