"""``shelvefix contract``: is the placement double still faithful?

Plays every contract scenario against the in-memory double and against
openstack-placement itself (in-process, sqlite), compares the answers and
prints::

    59 contract scenarios, 59 agree
    double: 1.05 s  real: 15.5 s  (real/double 14.8x)
    requests only: double 0.99 s  real 9.95 s  (real/double 10.1x)

followed, when some disagree, by each disagreeing scenario and its
differences. ``--json`` prints the same as one JSON document. The exit
status is 0 when every scenario agrees, 1 when one does not, 2 for a
usage error or without openstack-placement.
"""

import argparse
import contextlib
import json
import logging
import sys

from shelvefix.contract import runner
from shelvefix.contract import scenarios
from shelvefix.placement import real

PROG = 'shelvefix contract'
BACKENDS = ('double', 'real')


def build_parser():
    """The argument parser of the command (help included)."""
    parser = argparse.ArgumentParser(
        prog=PROG, add_help=False,
        description='Run the contract scenarios against the placement '
                    'double and the real placement service (in-process) '
                    'and compare their answers.')
    parser.add_argument('-h', '--help', action='store_true',
                        help='show this help and exit')
    parser.add_argument('--scenario', action='append', metavar='NAME',
                        dest='names',
                        help='run only this scenario (repeatable)')
    parser.add_argument('--json', action='store_true',
                        help='print the results as JSON')
    parser.add_argument('--list', action='store_true',
                        help='list the scenarios and exit')
    return parser


def _seconds(value):
    return ('%.2f s' if value < 10 else '%.1f s') % value


def _ratio(times):
    double, real_time = times.get('double'), times.get('real')
    if not double or real_time is None:
        return None
    return real_time / double


def _timing_line(label, times, separator):
    text = label + '  '.join(
        '%s%s%s' % (backend, separator, _seconds(value))
        for backend, value in times.items())
    ratio = _ratio(times)
    if ratio is not None:
        text += '  (real/double %.1fx)' % ratio
    return text + '\n'


def _print_text(result, out):
    total = len(result.scenarios)
    out.write('%d contract scenarios, %d agree\n'
              % (total, len(result.agreeing)))
    for item in result.disagreeing:
        out.write('\nDISAGREE %s: %s\n' % (item.name, item.description))
        for difference in item.differences:
            out.write('  %s\n' % (difference,))
    if result.disagreeing:
        out.write('\n')
    out.write(_timing_line('', result.wall_time, ': '))
    out.write(_timing_line('requests only: ', result.request_time, ' '))


def _as_json(result):
    return {
        'scenarios': len(result.scenarios),
        'agree': len(result.agreeing),
        'disagreeing': [
            {'name': item.name, 'description': item.description,
             'differences': [d.as_dict() for d in item.differences]}
            for item in result.disagreeing],
        'wall_time': dict(result.wall_time),
        'request_time': dict(result.request_time),
        'ratio': _ratio(result.wall_time),
        'results': [
            {'name': item.name, 'agrees': not item.differences,
             'requests': {backend: len(t.observations)
                          for backend, t in item.transcripts.items()},
             'wall_time': {backend: t.wall_time
                           for backend, t in item.transcripts.items()}}
            for item in result.scenarios],
    }


@contextlib.contextmanager
def _placement_logs_silenced():
    # Registering placement's options makes oslo.log hang a stderr handler
    # on the root logger, and placement then warns for every fixture after
    # the first that its database engine is already configured, and about
    # each capacity refusal a scenario provokes on purpose. Keep that noise
    # off the user's terminal while the suite runs.
    logger = logging.getLogger('placement')
    # The NullHandler keeps Python's last-resort handler quiet too.
    sink = logging.NullHandler()
    saved = logger.propagate
    logger.propagate = False
    logger.addHandler(sink)
    try:
        yield
    finally:
        logger.removeHandler(sink)
        logger.propagate = saved


def main(argv=None, out=None):
    """Run the contract suite and report; returns the exit status.

    :param argv: the arguments after ``contract`` (default:
        ``sys.argv[1:]``).
    :param out: where to print (default: ``sys.stdout``); errors go to
        ``sys.stderr``.
    :returns: 0 if every scenario agrees, 1 if one does not, 2 for a usage
        error, an unknown scenario, or without openstack-placement.
    """
    out = out or sys.stdout
    parser = build_parser()
    try:
        args = parser.parse_args(sys.argv[1:] if argv is None else argv)
    except SystemExit as exc:
        # argparse has printed the usage error; report, do not exit.
        return exc.code
    if args.help:
        out.write(parser.format_help())
        return 0
    if args.list:
        for name in scenarios.names():
            out.write('%-45s %s\n' % (name, scenarios.get(name).description))
        return 0
    try:
        for name in args.names or ():
            scenarios.get(name)
    except scenarios.UnknownScenario as exc:
        sys.stderr.write('%s: %s\n' % (PROG, exc))
        return 2
    if not real.available():
        sys.stderr.write('%s: %s\n' % (PROG, real.INSTALL_HINT))
        return 2
    # A scenario named twice runs once.
    names = list(dict.fromkeys(args.names)) if args.names else None
    with _placement_logs_silenced():
        result = runner.run_all(BACKENDS, names)
    if args.json:
        json.dump(_as_json(result), out, indent=2, sort_keys=True)
        out.write('\n')
    else:
        _print_text(result, out)
    return 0 if not result.disagreeing else 1


if __name__ == '__main__':
    sys.exit(main())
