"""``shelvefix check``: does a nova tree have the lifecycle's fixes?

Reads nova's compute manager and resource tracker statically (nova is
never imported; see :mod:`shelvefix.novacheck.fixes`) and reports, one
line per fix, whether bug 1798688, bug 2025480, bug 1862633 and host lost
are fixed, citing file:line, then the reason and the path that decided for
each fix asked about with ``--bug``. Exit status, for those: 0 all fixed,
1 one missing, 2 one cannot be told (or the input cannot be read).
"""

import json

from shelvefix.cmd import common

HELP = ("does a nova tree have the fixes? follows every path of nova's "
        'shelve and unshelve code statically and cites file:line (exit 0 '
        'fixed, 1 missing, 2 cannot tell)')
DESCRIPTION = (
    'Reads nova\'s compute manager and resource tracker statically (nova '
    'is never imported) from a nova source tree, a nova package directory, '
    'a manager.py, or a release\'s wheel or sdist as pip download fetches '
    'it, or with --installed from the nova this Python would import, and '
    'reports one line per fix of the shelve/unshelve lifecycle: bug '
    '1798688 (allocations freed before SHELVED_OFFLOADED is saved), bug '
    '2025480 (the resource tracker keeps a SHELVED_OFFLOADED server being '
    'unshelved), bug 1862633 (unshelve frees the destination\'s '
    'allocations when the network set-up fails) and host lost (host and '
    'node cleared in the save that makes SHELVED_OFFLOADED visible, or by '
    'a later save guarded by an expected task state). Each line is FIXED, '
    'MISSING or CANNOT TELL with the file:line it rests on; then, for each '
    'fix asked about, the reason and the path that decided.',
    'A verdict of FIXED is a proof through the constructs the check '
    'models; anything else on a path that decides (an unknown decorator, '
    'a receiver that may not be the resource tracker, a method re-bound '
    'in the class body...) makes it CANNOT TELL, naming the construct.',
    'Verdict: for the fixes asked about with --bug (bug 1798688 alone by '
    'default): 0 every one fixed, 1 one missing; 2 when one cannot be told '
    'or what was given cannot be read. Exit 0 needs evidence: each FIXED '
    'cites the file:line it rests on; one that cites nothing is no verdict '
    '(2, said in a line).',
)
BUG_CHOICES = ('1798688', '2025480', '1862633', 'host-lost', 'all')


def add_arguments(parser):
    """Add the command's options to an ``argparse`` (sub)parser."""
    parser.add_argument(
        'path', nargs='?', metavar='PATH',
        help='a nova source tree (holding nova/compute/manager.py), a nova '
             'package directory (e.g. .../site-packages/nova), the '
             'manager.py file itself, or a nova wheel or sdist')
    parser.add_argument(
        '--installed', action='store_true',
        help='check the nova package installed for this Python instead of '
             'PATH (located without importing it)')
    parser.add_argument(
        '--bug', action='append', choices=BUG_CHOICES, metavar='BUG',
        help='a fix the exit status answers for: 1798688 (the default), '
             '2025480, 1862633, host-lost, or all; repeat for several')
    common.add_json_argument(parser)


def asked_bugs(given):
    """The fixes asked about, in report order, from --bug values."""
    from shelvefix.novacheck import fixes
    if not given:
        return fixes.DEFAULT_BUGS
    if 'all' in given:
        return fixes.BUGS
    return tuple(bug for bug in fixes.BUGS if bug in given)


def run(args, out, err):
    """Run the command.

    :param args: parsed arguments (see :func:`add_arguments`)
    :param out: where the report goes
    :param err: where a path that cannot be read is reported
    :returns: the exit status: 0 fixed, 1 missing, 2 cannot tell
    :raises CommandError: neither or both of PATH and --installed
    """
    if bool(args.path) == bool(args.installed):
        raise common.CommandError('give either PATH or --installed')
    from shelvefix.novacheck import fixes
    asked = asked_bugs(args.bug)
    if args.installed:
        report = fixes.check_installed(asked)
    else:
        report = fixes.check_path(args.path, asked)
    if report.unreadable:
        # Bad input, not a verdict: said on stderr (and with --json in the
        # document too, for scripts that read only that).
        err.write('shelvefix check: %s\n' % report.offload.reason)
    code, why = report.exit_code, _unearned(report)
    if why and code == 0:
        code = 2
    if args.json:
        document = report.to_dict()
        document.update(exit_code=code, unearned=why)
        json.dump(document, out, indent=2, sort_keys=True)
        out.write('\n')
    elif not report.unreadable:
        out.write(report.render())
    if why and not report.unreadable:
        err.write('shelvefix check: no verdict: %s\n' % why)
    return code


def _unearned(report):
    """Why ``report`` cannot back exit 0, or None.

    The one place ``shelvefix check`` decides that it modelled enough to
    say clean: something was read, and every fix asked about that is
    FIXED rests on code it cites (``file:line``), bug 1798688's on a path
    of program states explored. A FIXED with nothing behind it is not a
    proof.
    """
    from shelvefix.novacheck import outcome
    if report.unreadable:
        return report.offload.reason
    for bug in report.asked:
        verdict = report.verdicts[bug]
        if verdict.status != outcome.FIXED:
            continue
        if not verdict.evidence:
            return ('%s: FIXED, but no line of the tree is cited for it, so '
                    'nothing was modelled' % bug)
        if bug == '1798688' and not report.offload.states:
            return ('1798688: FIXED, but no program state of %s was '
                    'explored' % report.offload.display)
    return None
