"""The ``shelvefix`` command line: one subcommand per module of this package.

``race``
    explore every interleaving of shelve-offload and unshelve on the
    library's real code (the main job; :mod:`shelvefix.cmd.race`);
``corpus``
    nova's historical allocation races on a nova tree, and the corpus's
    self-test (:mod:`shelvefix.cmd.corpus`);
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
    (:mod:`shelvefix.cmd.stress`);
``cleanup``
    list and remove what dead runs left (:mod:`shelvefix.cmd.cleanup`);
``ghosts``
    list, and heal, the consumers without allocations in a placement
    database (:mod:`shelvefix.cmd.ghosts`).

Each module offers ``HELP`` (one line), ``DESCRIPTION`` (plain-text
paragraphs for ``--help``), ``add_arguments(parser)`` and ``run(args, out,
err)``, and imports what its run needs only when it runs.

Exit statuses mean one thing each, for every command (:data:`EXIT_TEXT`):
0 and 1 are the command's verdict, 2 says it could not run (a problem the
user can fix is raised as :class:`~shelvefix.cmd.common.CommandError`;
anything else is reported the same way, as one line, the traceback shown
only with ``--debug``), 130, 143 and 129 an interrupt (SIGINT, SIGTERM,
SIGHUP: the run cleans up first, see :mod:`shelvefix.cmd.interrupt`), 141
a reader that went away (``| head``), as for other Unix tools.
"""

import argparse
import importlib
import logging
import os
import signal
import sys
import textwrap
import traceback

from shelvefix.backends import reap
from shelvefix.backends import runs
from shelvefix.cmd import common
from shelvefix.cmd import interrupt
from shelvefix.cmd import output

COMMANDS = ('race', 'corpus', 'timeline', 'contract', 'check', 'faults',
            'stress', 'cleanup', 'ghosts')
DEBUG_HELP = ('log what the library does (DEBUG and up) to stderr, and '
              'show the traceback of an unexpected error; by default logs '
              'are off, the races produce expected warnings')
#: What 141 means: the status a shell reports for a process that SIGPIPE
#: ended, as ``yes | head -1`` does.
EXIT_BROKEN_PIPE = 128 + signal.SIGPIPE
EXIT_TEXT = ('Exit status: 0 and 1 are the verdict given above; 2 means '
             'the command could not run (bad input, an unreadable file, a '
             'service that cannot be reached or does not answer in time); '
             '130, 143 and 129 mean it was interrupted (SIGINT, SIGTERM, '
             'SIGHUP) and cleaned up; 141 that its output was closed.')


def _description(module):
    """``--help``'s text: the command's paragraphs and the exit statuses.

    A paragraph is a string, or ``(heading, [(term, text), ...])``: a list
    printed a term a line, its text wrapped beside it, or a function
    returning one.
    """
    paragraphs = list(module.DESCRIPTION) + [EXIT_TEXT]
    return '\n\n'.join(_paragraph(p) for p in paragraphs)


def _paragraph(paragraph):
    if callable(paragraph):
        # Made when the help is shown (it may import what start-up does
        # not need).
        paragraph = paragraph()
    if isinstance(paragraph, str):
        return textwrap.fill(' '.join(paragraph.split()), 79,
                             break_on_hyphens=False)
    heading, items = paragraph
    width = max(len(term) for term, _text in items) + 4
    lines = [textwrap.fill(heading, 79)]
    for term, text in items:
        lines.append(textwrap.fill(
            ' '.join(text.split()), 79, initial_indent=(
                '  %s' % term).ljust(width),
            subsequent_indent=' ' * width, break_on_hyphens=False))
    return '\n'.join(lines)


class _Formatter(argparse.RawDescriptionHelpFormatter):
    """Options' help wrapped between words.

    Never inside a hyphenated name (a scenario, an option).
    """

    def _split_lines(self, text, width):
        return textwrap.wrap(' '.join(text.split()), width,
                             break_on_hyphens=False)


class _Parser(argparse.ArgumentParser):
    """An argument parser that reports a usage error in one line.

    The line names the command whose option was wrong (an option unknown
    to the command is reported by the command, not the top level) and
    where its usage is.
    """

    commands = {}
    #: The command module whose ``DESCRIPTION`` the help shows, made only
    #: when the help is (a command that runs never formats it).
    described = None

    def format_help(self):
        if self.described is not None:
            self.description = _description(self.described)
        return super().format_help()

    def error(self, message):
        self.exit(2, '%s: error: %s (see %s --help)\n'
                  % (self.prog, message, self.prog))

    def parse_args(self, args=None, namespace=None):
        args, extras = self.parse_known_args(args, namespace)
        if extras:
            # An option the command does not know: say so with the
            # command's usage, not the top level's.
            command = self.commands.get(getattr(args, 'command', None),
                                        self)
            command.error('unrecognized arguments: %s' % ' '.join(extras))
        return args


class _VersionAction(argparse.Action):
    """``--version``: pbr's version of the installed shelvefix, whole.

    The release's (``0.1.0``), or a development version with its
    ``.devN`` (pbr's ``version_string()`` would drop it). Looked up only
    when asked (it reads the package's metadata).
    """

    def __call__(self, parser, namespace, values, option_string=None):
        import pbr.version
        # On stdout, as --help (parser.exit would write it on stderr).
        sys.stdout.write('shelvefix %s\n' % pbr.version.VersionInfo(
            'shelvefix').release_string())
        parser.exit(0)


def build_parser():
    """The argument parser, with a subparser per command."""
    parser = _Parser(
        prog='shelvefix',
        description='Nova bug 1798688: the shelve-offload / unshelve '
                    'allocation race, reproduced and checked. ' + EXIT_TEXT)
    parser.add_argument('--debug', action='store_true', help=DEBUG_HELP)
    parser.add_argument('--version', action=_VersionAction, nargs=0,
                        help="print shelvefix's version and exit")
    # --debug after the command too; SUPPRESS keeps the subparser from
    # resetting what was given before it.
    common_options = argparse.ArgumentParser(add_help=False)
    common_options.add_argument('--debug', action='store_true',
                                default=argparse.SUPPRESS, help=DEBUG_HELP)
    sub = parser.add_subparsers(dest='command', metavar='COMMAND')
    sub.required = True
    parser.commands = {}
    for name in COMMANDS:
        module = importlib.import_module('shelvefix.cmd.%s' % name)
        command = sub.add_parser(
            name, help=module.HELP,
            formatter_class=_Formatter,
            parents=[common_options])
        command.described = module
        module.add_arguments(command)
        command.set_defaults(func=module.run)
        parser.commands[name] = command
    return parser


def setup_logging(debug):
    """Send the library's logs to stderr with --debug, else nowhere."""
    root = logging.getLogger()
    if debug:
        logging.basicConfig(level=logging.DEBUG, stream=sys.stderr,
                            format='%(levelname)s %(name)s %(message)s')
        for handler in root.handlers:
            if not isinstance(handler.formatter, _MaskingFormatter):
                handler.setFormatter(_MaskingFormatter(handler.formatter))
    elif not root.handlers:
        # Without a handler Python prints WARNING and up to stderr.
        root.addHandler(logging.NullHandler())


class _MaskingFormatter(logging.Formatter):
    """A log line with no database password (see :func:`.database.scrub`).

    :param formatter: the handler's formatter, which formats first
    """

    def __init__(self, formatter):
        super().__init__()
        self._formatter = formatter or logging.Formatter()

    def format(self, record):
        return _scrub(self._formatter.format(record))


def _scrub(text):
    # Imported when used: the module brings fixtures, which a command that
    # neither fails nor logs does not need.
    from shelvefix.backends import database
    return database.scrub(text)


def _quiet_stdout():
    # Keep Python from complaining when it flushes a closed stdout on exit.
    try:
        os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
    except (OSError, ValueError):
        pass


def main(argv=None, out=None, err=None):
    """Console script entry point; returns the exit status."""
    argv = list(sys.argv[1:] if argv is None else argv)
    stdout = out or sys.stdout
    err = err or sys.stderr
    output.prepare(stdout)
    # A write that fails (a full disk) is reported in one line.
    out = output.Output(stdout)
    args = build_parser().parse_args(argv)
    setup_logging(args.debug)
    prefix = 'shelvefix %s: ' % args.command
    try:
        with interrupt.handled(), runs.registered(argv):
            if args.command != 'cleanup':
                # What an earlier run left when it was killed goes first.
                reap.reap_dead(err)
            status = args.func(args, out, err)
            # What is still buffered fails here, not at exit.
            out.flush()
            return status
    except interrupt.Interrupted as e:
        if getattr(e, 'cleanup_failure', None) is not None:
            # The command has said what it could not remove.
            err.write('%sinterrupted by %s; what the run had started is '
                      'stopped\n' % (prefix, e.name))
        else:
            err.write('%sinterrupted by %s; what the run had started is '
                      'stopped and what it created in placement deleted\n'
                      % (prefix, e.name))
        return e.exit_status
    except BrokenPipeError:
        # The reader went away (``| head``): stop quietly.
        if stdout is sys.stdout:
            _quiet_stdout()
        return EXIT_BROKEN_PIPE
    except Exception as e:
        if isinstance(e, output.OutputError) and stdout is sys.stdout:
            # What could not be written would fail again at exit.
            _quiet_stdout()
        text = common.problem(e)
        if text is None:
            if args.debug:
                err.write(_scrub(traceback.format_exc()))
            e = common.cause(e)
            text = ('unexpected error, a bug in shelvefix: %s: %s (run '
                    'with --debug for the traceback)'
                    % (type(e).__name__, e))
        # No database password is shown, whoever wrote the text.
        err.write(prefix + _scrub(common.one_line(text)) + '\n')
        return 2


if __name__ == '__main__':
    sys.exit(main())
