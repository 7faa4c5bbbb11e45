"""``shelvefix check``: does a nova tree have the fix for bug 1798688?

Reads nova's ComputeManager._shelve_offload_instance statically (nova is
never imported) from a nova source tree, a nova package directory, a
manager.py or a release's wheel or sdist (as pip download fetches it), or
with --installed from the nova package this Python would import, and
reports whether, on every path through the method (the ComputeManager
helpers it calls read inline), the instance's allocations are freed before
any save that makes SHELVED_OFFLOADED visible, citing file:line and the
path that decided. Exit status: 0 fixed on every path, 1 legacy order on
some path, 2 cannot tell (the reason and the path that lacks proof are
printed).
"""

import json

from shelvefix.cmd import common

HELP = ("does a nova tree have the fix? follows every path of nova's "
        '_shelve_offload_instance statically and cites file:line (exit 0 '
        'fixed, 1 legacy order, 2 cannot tell)')
DESCRIPTION = (
    'Reads nova\'s ComputeManager._shelve_offload_instance statically (nova '
    'is never imported) from a nova source tree, a nova package directory, '
    'a manager.py, or a release\'s wheel or sdist as pip download fetches '
    'it, or with --installed from the nova this Python would import. On '
    'every path through the method, with the ComputeManager helpers it '
    'calls read inline, it checks that the instance\'s allocations are '
    'freed before any save that makes SHELVED_OFFLOADED visible, and cites '
    'file:line and the path that decided.',
    'Verdict: 0 fixed on every path, 1 legacy order on some path; 2 when it '
    'cannot tell (the reason and the path that lacks proof are printed) or '
    'cannot read what it was given.',
)


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
    common.add_json_argument(parser)


def run(args, out, err):
    """Run the command.

    :param args: parsed arguments (see :func:`add_arguments`)
    :param out: where the verdict goes
    :param err: where a path that cannot be read is reported
    :returns: the exit status: 0 fixed, 1 legacy order, 2 cannot tell
    :raises CommandError: neither or both of PATH and --installed
    """
    if bool(args.path) == bool(args.installed):
        raise common.CommandError('give either PATH or --installed')
    from shelvefix.novacheck import check
    if args.installed:
        result = check.check_installed()
    else:
        result = check.check_path(args.path)
    if result.unreadable:
        # Bad input, not a verdict: said on stderr (and with --json in the
        # document too, for scripts that read only that).
        err.write('shelvefix check: %s\n' % result.reason)
    if args.json:
        json.dump(result.to_dict(), out, indent=2, sort_keys=True)
        out.write('\n')
    elif not result.unreadable:
        out.write(result.render())
    return result.exit_code
