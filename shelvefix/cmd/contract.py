"""``shelvefix contract``: is the placement double still faithful?

Plays every contract scenario against the in-memory double and against
openstack-placement itself (in-process, sqlite), compares the answers and
prints::

    59 contract scenarios, 59 agree
    double: 1.05 s  real: 15.5 s  (real/double 14.8x)
    requests only: double 0.99 s  real 9.95 s  (real/double 10.1x)

followed, when some disagree, by each disagreeing scenario and its
differences. ``--json`` prints the same as one JSON document. The exit
status is 0 when every scenario agrees (each played on both backends,
each making requests), 1 when one does not, 2 for a usage error or
without openstack-placement.
"""

import contextlib
import json
import logging

from shelvefix import backends
from shelvefix.cmd import common

HELP = ('run every contract scenario against the placement double and the '
        'real placement service and compare them (needs the placement '
        'extra)')
DESCRIPTION = (
    'Plays every contract scenario (sequences of placement requests) '
    'against the in-memory placement double and against openstack-placement '
    'itself (in-process, sqlite), compares the answers request by request, '
    'and prints how many scenarios agree, each disagreement, and the time '
    'each backend took. Needs the placement extra; takes a minute or two. '
    'Progress goes to stderr.',
    'Verdict: 0 if every scenario agrees, 1 if one does not, or if one '
    'was not played on both backends or made no request there (said in a '
    'line).',
)
BACKENDS = (backends.DOUBLE, backends.REAL)


def add_arguments(parser):
    """Add the command's options to its subparser."""
    parser.add_argument('--scenario', action='append', metavar='NAME',
                        dest='names',
                        help='run only this scenario (repeatable)')
    common.add_json_argument(parser)
    parser.add_argument('--list', action='store_true',
                        help='list the scenarios and exit')
    common.add_progress_argument(parser)


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


def run(args, out, err):
    """Run the contract suite and report; returns the exit status.

    :returns: 0 if every scenario agrees, 1 if one does not or one did
        not run on both backends (:func:`shelvefix.contract.runner.unearned`)
    :raises CommandError: an unknown scenario, or no openstack-placement
    """
    from shelvefix.backends import real
    from shelvefix.contract import runner
    from shelvefix.contract import scenarios
    if args.list:
        for name in scenarios.names():
            out.write('%-45s %s\n' % (name, scenarios.get(name).description))
        return 0
    try:
        for name in args.names or ():
            scenarios.get(name)
    except scenarios.UnknownScenario as exc:
        raise common.CommandError(str(exc)) from exc
    if not real.available():
        raise common.CommandError(real.INSTALL_HINT)
    # A scenario named twice runs once.
    names = list(dict.fromkeys(args.names)) if args.names else None
    progress = common.Progress(
        err, 'contract', total=len(names or scenarios.names()),
        force=args.progress, unit='scenarios')
    with _placement_logs_silenced():
        result = runner.run_all(BACKENDS, names, progress=progress)
    progress.finish()
    why = runner.unearned(result, names or scenarios.names())
    if args.json:
        document = _as_json(result)
        document['unearned'] = why
        json.dump(document, out, indent=2, sort_keys=True)
        out.write('\n')
        if why:
            err.write('shelvefix contract: no verdict: %s\n' % why)
    else:
        _print_text(result, out)
        if why:
            out.write('No verdict, the scenarios did not all run: %s\n'
                      % why)
    return 0 if not result.disagreeing and not why else 1
