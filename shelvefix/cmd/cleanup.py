"""``shelvefix cleanup``: list and remove what dead runs left.

Every command that starts servers lists them in a run file (see
:mod:`shelvefix.backends.runs`); a run that was killed before its
clean-up (SIGKILL, the OOM killer, a third signal) leaves its file and,
if its watchdog was killed too, what it lists. This command shows each
dead run's leftovers and removes them (:mod:`shelvefix.backends.reap`);
runs that are still going are left alone, recognised by their pid and
its start time.
"""

from shelvefix.backends import reap
from shelvefix.backends import runs

HELP = 'list and remove what dead runs of shelvefix left behind'
DESCRIPTION = (
    'Every command that starts servers (gunicorn, mariadbd, Galera nodes, '
    'the PostgreSQL cluster) records them, and its temporary directories, '
    'in a run file, and a watchdog process stops and removes them if the '
    'command dies without its clean-up (SIGKILL). The next run of any '
    'command removes what a dead run left, in case the watchdog died too; '
    'this command does it on its own, listing each dead run (its pid and '
    'command line) and each thing removed: processes (killed with their '
    'whole session), the PostgreSQL cluster the run had started (stopped '
    'unless another process holds a lease on it; one running before the '
    'run, or kept with --keep-database, is not listed) and temporary '
    'directories. Runs that are still going are never touched: a run is '
    'recognised by its pid and the start time of that pid.',
    'Verdict: 0 if nothing was left or all of it was removed (or, with '
    '--dry-run, listed), 1 if something could not be removed (each named, '
    'with the reason).',
)


def add_arguments(parser):
    """Add the command's options to its subparser."""
    parser.add_argument('--dry-run', action='store_true',
                        help='only list what dead runs left; remove '
                             'nothing')


def run(args, out, err):
    """Run the command; returns the exit status."""
    dead_runs = reap.dead_runs()
    if not dead_runs:
        out.write('Nothing left by dead runs (%s).\n' % runs.state_dir())
        return 0
    verb = 'would remove' if args.dry_run else 'removed'
    failed = False
    for dead in dead_runs:
        reap.reap(dead, dry_run=args.dry_run)
        out.write('dead run %s, started %s:\n' % (
            dead.name, dead.content.get('started', 'at an unknown time')))
        for text in dead.done:
            out.write('  %s %s\n' % (verb, text))
        for text in dead.left:
            out.write('  not removed: %s\n' % text)
            failed = True
        if not dead.done and not dead.left:
            out.write('  nothing but its record, %s\n' % verb)
    if failed:
        out.write('Some of what dead runs left could not be removed.\n')
        return 1
    out.write('%s: what %d dead run%s left.\n' % (
        'Listed' if args.dry_run else 'Removed', len(dead_runs),
        's' if len(dead_runs) > 1 else ''))
    return 0
