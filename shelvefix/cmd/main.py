"""The ``shelvefix`` command line: one subcommand per module of this package.

``race``
    explore every interleaving of shelve-offload and unshelve on the
    library's real code (the main job; :mod:`shelvefix.cmd.race`);
``timeline``
    one offload and unshelve, and the ordered placement requests and saves
    (:mod:`shelvefix.cmd.timeline`);
``contract``
    the contract scenarios on the placement double and the real placement
    service, compared (:mod:`shelvefix.cmd.contract`);
``check``
    does a nova tree have the fix? (:mod:`shelvefix.cmd.check`);
``faults``
    a fault at every placement request, nothing lost
    (:mod:`shelvefix.cmd.faults`);
``stress``
    K servers x M cycles under real concurrency
    (:mod:`shelvefix.cmd.stress`).

Each module offers ``HELP``, ``add_arguments(parser)`` and ``run(args, out,
err)``, and imports what its run needs only when it runs. A problem the
user can fix is raised as :class:`~shelvefix.cmd.common.CommandError` and
printed here as one line, with exit status 2.
"""

import argparse
import importlib
import logging
import os
import sys

from shelvefix.cmd import common

COMMANDS = ('race', 'timeline', 'contract', 'check', 'faults', 'stress')
DEBUG_HELP = ('log what the library does (DEBUG and up) to stderr; by '
              'default logs are off, the races produce expected warnings')


def _description(module):
    # The paragraph after the module docstring's title.
    paragraphs = module.__doc__.split('\n\n')
    return ' '.join(paragraphs[1].split()) if len(paragraphs) > 1 else None


def build_parser():
    """The argument parser, with a subparser per command."""
    parser = argparse.ArgumentParser(
        prog='shelvefix',
        description='Nova bug 1798688: the shelve-offload / unshelve '
                    'allocation race, reproduced and checked.')
    parser.add_argument('--debug', action='store_true', help=DEBUG_HELP)
    # --debug after the command too; SUPPRESS keeps the subparser from
    # resetting what was given before it.
    common_options = argparse.ArgumentParser(add_help=False)
    common_options.add_argument('--debug', action='store_true',
                                default=argparse.SUPPRESS, help=DEBUG_HELP)
    sub = parser.add_subparsers(dest='command', metavar='COMMAND')
    sub.required = True
    for name in COMMANDS:
        module = importlib.import_module('shelvefix.cmd.%s' % name)
        command = sub.add_parser(name, help=module.HELP,
                                 description=_description(module),
                                 parents=[common_options])
        module.add_arguments(command)
        command.set_defaults(func=module.run)
    return parser


def setup_logging(debug):
    """Send the library's logs to stderr with --debug, else nowhere."""
    root = logging.getLogger()
    if debug:
        logging.basicConfig(level=logging.DEBUG, stream=sys.stderr,
                            format='%(levelname)s %(name)s %(message)s')
    elif not root.handlers:
        # Without a handler Python prints WARNING and up to stderr.
        root.addHandler(logging.NullHandler())


def main(argv=None, out=None, err=None):
    """Console script entry point; returns the exit status."""
    argv = list(sys.argv[1:] if argv is None else argv)
    out = out or sys.stdout
    err = err or sys.stderr
    args = build_parser().parse_args(argv)
    setup_logging(args.debug)
    try:
        return args.func(args, out, err)
    except BrokenPipeError:
        # The reader went away (``| head``): stop quietly, and keep Python
        # from complaining when it flushes stdout on exit.
        if out is sys.stdout:
            os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
        return 1
    except Exception as e:
        text = common.problem(e)
        if text is None:
            raise
        err.write('shelvefix %s: %s\n' % (args.command, common.one_line(text)))
        return 2


if __name__ == '__main__':
    sys.exit(main())
