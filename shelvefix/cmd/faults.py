"""``shelvefix faults``: a fault at every placement request, nothing lost.

Runs :mod:`shelvefix.faults` on one or more placement backends and prints
the faults tried, the failures that surfaced, the invariants held and what
was lost (which must be nothing). Exit 0 only if nothing was lost.
"""

import collections
import json
import sys

from shelvefix.cmd import race as race_cmd
from shelvefix import faults


def add_arguments(parser):
    parser.add_argument(
        '--backend', choices=race_cmd.BACKEND_NAMES, action='append',
        help='placement to inject faults in front of (repeatable; '
             'default: double and real)')
    parser.add_argument('--config-file', action='append', default=[],
                        metavar='FILE',
                        help='config with [placement], for --backend remote')
    parser.add_argument('--free', choices=('delete', 'get-put'),
                        action='append',
                        help='only this way of freeing (default: both)')
    parser.add_argument('--json', action='store_true')
    parser.add_argument('--verbose', action='store_true',
                        help='one line per case')


def _case_json(case):
    return {'free': case.free, 'phase': case.point.phase,
            'method': case.point.method, 'fault': case.kind.name,
            'failed': case.failed,
            'error': None if case.error is None else '%s: %s' % (
                type(case.error).__name__, case.error),
            'violations': case.violations}


def run(args, out, err=None):
    """Run the command; returns the exit status."""
    err = err or sys.stderr
    names = args.backend or ['double', 'real']
    frees = args.free or ('delete', 'get-put')
    results = collections.OrderedDict()
    try:
        for name in names:
            with race_cmd.make_backend(name, args.config_file) as placement:
                results[name] = faults.run_matrix(placement, frees=frees)
    except SystemExit as e:
        err.write('%s\n' % e)
        return 2
    except ValueError as e:
        err.write('shelvefix faults: %s\n' % e)
        return 2
    lost = sum(faults.summary(cases)['lost'] for cases in results.values())
    if args.json:
        json.dump({name: {'summary': faults.summary(cases),
                          'cases': [_case_json(c) for c in cases]}
                   for name, cases in results.items()},
                  out, indent=2, sort_keys=True)
        out.write('\n')
        return 0 if not lost else 1
    kinds = len(faults.KINDS)
    out.write('shelvefix faults: %d kinds of fault at every placement '
              'request of shelve-offload and of the unshelve claim\n\n'
              % kinds)
    out.write('%-8s %12s %18s %9s %16s %5s\n' % (
        'backend', 'faults tried', 'failures surfaced', 'absorbed',
        'invariants held', 'lost'))
    for name, cases in results.items():
        s = faults.summary(cases)
        out.write('%-8s %12d %18d %9d %16d %5d\n' % (
            name, s['faults_tried'], s['failures_surfaced'], s['absorbed'],
            s['invariants_held'], s['lost']))
    for name, cases in results.items():
        for case in cases:
            if args.verbose or case.violations:
                out.write('%s %s %s %s %s: %s\n' % (
                    name, case.free, case.point.phase, case.point.method,
                    case.kind.name,
                    '; '.join(case.violations) or (
                        'failed cleanly, retry completed' if case.failed
                        else 'absorbed')))
    out.write('\nLost: %d (must be 0)\n' % lost)
    return 0 if not lost else 1
