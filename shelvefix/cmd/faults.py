"""``shelvefix faults``: a fault at every placement request, nothing lost.

Runs :mod:`shelvefix.race.fault_matrix` on one or more placement backends
and prints
the faults tried, the failures that surfaced, the invariants held and what
was lost (which must be nothing). Exit 0 only if nothing was lost and
every case ran (:func:`shelvefix.race.fault_matrix.unearned`).
"""

import collections
import contextlib
import json

from shelvefix import backends
from shelvefix.cmd import common
from shelvefix import race
from shelvefix import utils

HELP = ('inject every kind of fault at every placement request of '
        'shelve-offload and unshelve and check nothing is lost')
DESCRIPTION = (
    'Injects every kind of fault (connection refused; a timeout or a 500 '
    'before or after placement commits; a 503 with a non-JSON body; a 409; '
    'a truncated or non-JSON body; a DELETE placement commits only partly) '
    'at every '
    'placement request of a shelve-offload and of the unshelve claim, on '
    'one or more backends, and checks after each that nothing was lost: no '
    'allocation leaked or wiped, no instance left claiming a state it is '
    'not in. Prints the faults tried, the failures that surfaced, those '
    'absorbed by retries and the invariants held. Takes about a minute on '
    'the real backend; progress goes to stderr.',
    'Verdict: 0 if nothing was lost and every case ran, 1 if something '
    'was lost or a case did not run (said in a line). A fault inside '
    'placement\'s database cannot be injected into a placement in another '
    'process (remote, --database galera): that case is named as not '
    'applicable, excluded, and not counted as a case to run.',
)


GALERA = 'galera'


def add_arguments(parser):
    """Add the command's options to its subparser."""
    parser.add_argument(
        '--backend', choices=backends.NAMES + (GALERA,), action='append',
        help='placement to inject faults in front of (repeatable; '
             'default: real, the embedded openstack-placement, unless '
             '--database is given); galera is the old spelling of '
             '--database galera')
    parser.add_argument(
        '--database', choices=(GALERA,),
        help='galera: also inject in front of placement under gunicorn on '
             'each node of a three-node MariaDB Galera cluster, every '
             'request to the next node (as shelvefix stress --database '
             'galera)')
    common.add_config_file_argument(parser)
    common.add_free_argument(parser, 'both')
    common.add_json_argument(parser)
    parser.add_argument('--verbose', action='store_true',
                        help='one line per case')
    common.add_progress_argument(parser)


@contextlib.contextmanager
def _galera():
    """Placement on a Galera cluster, reached as ``--backend remote``."""
    from shelvefix.backends import galera
    with galera.GaleraPlacement() as cluster:
        with common.make_backend(backends.REMOTE,
                                 [cluster.shelvefix_config]) as placement:
            cluster.spread(placement)
            yield placement


def _case_json(case):
    return {'free': case.free, 'phase': case.point.phase,
            'method': case.point.method, 'fault': case.kind.name,
            'failed': case.failed,
            'error': None if case.error is None else '%s: %s' % (
                type(case.error).__name__, case.error),
            'violations': case.violations,
            'not_injected': case.not_injected}


def backend_names(args, err):
    """The placements to run the matrix on, in order, each once."""
    names = list(args.backend or ())
    if GALERA in names:
        err.write('shelvefix faults: --backend galera is deprecated: use '
                  '--database galera\n')
    if args.database == GALERA:
        names.append(GALERA)
    names = names or [backends.REAL]
    return sorted(set(names), key=names.index)


def run(args, out, err):
    """Run the command; returns the exit status.

    :raises CommandError: for what the user can fix
    """
    from shelvefix.race import fault_matrix
    names = backend_names(args, err)
    frees = args.free or race.FREE_METHODS
    results = collections.OrderedDict()
    if GALERA in names and args.config_file:
        raise common.CommandError(
            '--config-file cannot be given with --database galera, which '
            'writes the configuration of the placement it starts: run '
            'the other backends without it')
    placements = [(name, _galera() if name == GALERA else
                   common.make_backend(name, args.config_file))
                  for name in names]
    total = len(fault_matrix.matrix(frees))
    for name, placement in placements:
        progress = common.Progress(err, 'faults on %s' % name, total=total,
                                   force=args.progress, unit='cases')
        with placement as placement:
            results[name] = fault_matrix.run_matrix(placement, frees=frees,
                                                    progress=progress)
        progress.finish()
    lost = sum(fault_matrix.summary(cases)['lost']
               for cases in results.values())
    why = _unearned(results, frees)
    if args.json:
        json.dump({name: {'summary': fault_matrix.summary(cases),
                          'cases': [_case_json(c) for c in cases],
                          'unearned': fault_matrix.unearned(cases, frees)}
                   for name, cases in results.items()},
                  out, indent=2, sort_keys=True)
        out.write('\n')
        if why:
            err.write('shelvefix faults: no verdict: %s\n' % why)
        return 0 if not lost and not why else 1
    kinds = len(fault_matrix.KINDS)
    out.write('shelvefix faults: %d kinds of fault at every placement '
              'request of shelve-offload and of the unshelve claim\n\n'
              % kinds)
    out.write('%-8s %12s %18s %9s %16s %5s\n' % (
        'backend', 'faults tried', 'failures surfaced', 'absorbed',
        'invariants held', 'lost'))
    for name, cases in results.items():
        s = fault_matrix.summary(cases)
        out.write('%-8s %12d %18d %9d %16d %5d\n' % (
            name, s['faults_tried'], s['failures_surfaced'], s['absorbed'],
            s['invariants_held'], s['lost']))
    for name, cases in results.items():
        skipped = [c for c in cases if fault_matrix.excluded(c)]
        if skipped:
            out.write('%s: %s not applicable, excluded (%s): %s\n'
                      % (name, utils.plural(len(skipped), 'case'),
                         ', '.join(sorted(set(c.kind.name for c in skipped))),
                         skipped[0].not_injected))
        for case in cases:
            if case.not_injected:
                continue
            if args.verbose or case.violations:
                out.write('%s %s %s %s %s: %s\n' % (
                    name, case.free, case.point.phase, case.point.method,
                    case.kind.name,
                    '; '.join(case.violations) or (
                        'failed cleanly, retry completed' if case.failed
                        else 'absorbed')))
    out.write('\nLost: %d (must be 0)\n' % lost)
    if why:
        out.write('No verdict, the cases did not run: %s\n' % why)
    return 0 if not lost and not why else 1


def _unearned(results, frees):
    """Why the backends' cases cannot back exit 0, or None.

    Each backend's cases are judged by
    :func:`shelvefix.race.fault_matrix.unearned`, the one rule.
    """
    from shelvefix.race import fault_matrix
    if not results:
        return 'no backend was run'
    for name, cases in results.items():
        why = fault_matrix.unearned(cases, frees)
        if why:
            return '%s: %s' % (name, why)
    return None
