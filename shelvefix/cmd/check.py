"""``shelvefix check``: does a nova tree have the fix for bug 1798688?

Reads nova's ComputeManager._shelve_offload_instance statically (nova is
never imported) from a nova source tree, a nova package directory or a
manager.py, or with --installed from the nova package this Python would
import, and reports whether the instance's allocations are freed before
the save that makes SHELVED_OFFLOADED visible, citing file:line for both.
Exit status: 0 fixed, 1 legacy order, 2 cannot tell (the reason is
printed).
"""

import json
import sys

from shelvefix.nova import check


def add_arguments(parser):
    """Add the command's options to an ``argparse`` (sub)parser."""
    parser.add_argument(
        'path', nargs='?', metavar='PATH',
        help='a nova source tree (holding nova/compute/manager.py), a nova '
             'package directory (e.g. .../site-packages/nova) or the '
             'manager.py file itself')
    parser.add_argument(
        '--installed', action='store_true',
        help='check the nova package installed for this Python instead of '
             'PATH (located without importing it)')
    parser.add_argument('--json', action='store_true',
                        help='print the verdict and evidence as JSON')


def run(args, out, err=None):
    """Run the command.

    :param args: parsed arguments (see :func:`add_arguments`)
    :param out: where the verdict goes
    :param err: where usage errors go (default: stderr)
    :returns: the exit status: 0 fixed, 1 legacy order, 2 cannot tell
    """
    err = err or sys.stderr
    if bool(args.path) == bool(args.installed):
        err.write('shelvefix check: give either PATH or --installed\n')
        return check.EXIT_CODES[check.UNKNOWN]
    if args.installed:
        result = check.check_installed()
    else:
        result = check.check_path(args.path)
    if args.json:
        json.dump(result.to_dict(), out, indent=2, sort_keys=True)
        out.write('\n')
    else:
        out.write(result.render())
    return result.exit_code
