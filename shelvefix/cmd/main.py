"""The ``shelvefix`` command line.

``shelvefix race`` explores every interleaving of the shelve-offload /
unshelve race on the library's real code (see :mod:`shelvefix.cmd.race`).

``shelvefix contract`` runs the contract scenarios against the placement
double and the real placement service and reports where they disagree.

``shelvefix timeline`` shelve-offloads a server with the library's compute
manager against an embedded placement, unshelves it through the scheduler's
claim, and prints the ordered timeline of placement requests and instance
saves. It exits 0 only if the allocations were freed before
SHELVED_OFFLOADED became visible and the unshelve claimed a new consumer.
"""

import argparse
import json
import logging
import sys

from shelvefix.cmd import check as check_cmd
from shelvefix.cmd import faults as faults_cmd
from shelvefix.cmd import race as race_cmd
from shelvefix.cmd import stress as stress_cmd
from shelvefix.placement import backends
from shelvefix.placement import real
from shelvefix import scenario

STRATEGIES = {'delete': True, 'get-put': False}


def _actor(call):
    request_id = call.request_id or ''
    for actor in ('compute', 'scheduler'):
        if request_id.startswith('req-%s-' % actor):
            return actor
    return 'other'


def _describe_call(call):
    text = '%s %s' % (call.method, call.path)
    if isinstance(call.body, dict) and 'consumer_generation' in call.body:
        text += ' consumer_generation=%s' % json.dumps(
            call.body['consumer_generation'])
    return '%s -> %s' % (text, call.status)


def run_timeline(force_delete, backend='double'):
    """Run offload then unshelve claim; return a JSON-able result dict."""
    with scenario.ShelveScenario(
            force_delete=force_delete,
            placement=backends.get(backend)()) as scn:
        scn.shelve_offload()
        claim_error = None
        try:
            scn.unshelve_claim()
        except Exception as e:
            claim_error = str(e)
        events = []
        for kind, item in scn.timeline():
            if kind == 'save':
                events.append({
                    'actor': 'compute', 'event': 'save',
                    'text': 'save vm_state=%s task_state=%s host=%s' % (
                        item['vm_state'], item['task_state'], item['host'])})
            else:
                events.append({'actor': _actor(item), 'event': 'placement',
                               'method': item.method, 'path': item.path,
                               'status': item.status, 'body': item.body,
                               'text': _describe_call(item)})
        held = scn.allocations()['allocations']
        expected = {scn.dst: dict(scenario.FLAVOR.resources)}
        violations = scenario.order_violations(scn.timeline(),
                                               scn.instance.uuid)
        return {
            'backend': backend,
            'free_with': 'DELETE' if force_delete else 'GET + PUT empty',
            'instance': scn.instance.uuid,
            'events': events,
            'order_violations': violations,
            'claim_error': claim_error,
            'allocations_held': {rp: a['resources']
                                 for rp, a in held.items()},
            'allocations_expected': expected,
            'ok': (not violations and claim_error is None and
                   {rp: a['resources'] for rp, a in held.items()} ==
                   expected),
        }


def _print_result(result, out):
    out.write('shelve-offload then unshelve of %s (free with %s, %s '
              'placement)\n' % (result['instance'], result['free_with'],
                                result['backend']))
    for n, event in enumerate(result['events'], 1):
        out.write('  %2d  %-9s  %s\n' % (n, event['actor'], event['text']))
    out.write('  order: %s\n' % (
        'allocations freed before SHELVED_OFFLOADED was visible'
        if not result['order_violations']
        else '; '.join(result['order_violations'])))
    out.write('  unshelve claim: %s\n' % (result['claim_error'] or 'ok'))
    out.write('  result: %s\n\n' % ('OK' if result['ok'] else 'FAILED'))


def cmd_timeline(args, out):
    names = [args.free] if args.free else sorted(STRATEGIES)
    if args.backend == 'real' and not real.available():
        sys.stderr.write('shelvefix: %s\n' % real.INSTALL_HINT)
        return 2
    results = [run_timeline(STRATEGIES[name], args.backend)
               for name in names]
    if args.json:
        json.dump(results, out, indent=2, sort_keys=True)
        out.write('\n')
    else:
        for result in results:
            _print_result(result, out)
    return 0 if all(r['ok'] for r in results) else 1


def build_parser():
    parser = argparse.ArgumentParser(
        prog='shelvefix',
        description='Nova bug 1798688: the shelve-offload / unshelve '
                    'allocation race, reproduced and checked.')
    parser.add_argument(
        '--debug', action='store_true',
        help='log what the library does (DEBUG and up) to stderr; by '
             'default logs are off, the races produce expected warnings')
    sub = parser.add_subparsers(dest='command', metavar='COMMAND')
    sub.required = True
    timeline = sub.add_parser(
        'timeline',
        help='offload and unshelve one server on the embedded placement '
             'and print the ordered placement requests and saves')
    timeline.add_argument('--free', choices=sorted(STRATEGIES),
                          help='how compute frees allocations (default: '
                               'both, one after the other)')
    timeline.add_argument('--backend', choices=sorted(backends.BACKENDS),
                          default='double',
                          help='placement to run against: the in-memory '
                               'double (default) or the real service '
                               'in-process (needs the placement extra)')
    timeline.add_argument('--json', action='store_true',
                          help='print the results as JSON')
    timeline.set_defaults(func=cmd_timeline)
    race = sub.add_parser(
        'race',
        help='explore every interleaving of shelve-offload and unshelve on '
             'the real code and count the outcomes (the main job)',
        description=race_cmd.__doc__.split('\n\n')[1].replace('\n', ' '))
    race_cmd.add_arguments(race)
    race.set_defaults(func=race_cmd.run)
    check = sub.add_parser(
        'check',
        help='does a nova tree have the fix? reads nova\'s '
             '_shelve_offload_instance statically and cites file:line '
             '(exit 0 fixed, 1 legacy order, 2 cannot tell)',
        description=check_cmd.__doc__.split('\n\n')[1].replace('\n', ' '))
    check_cmd.add_arguments(check)
    check.set_defaults(func=check_cmd.run)
    faults = sub.add_parser(
        'faults',
        help='inject every kind of fault at every placement request of '
             'shelve-offload and unshelve and check nothing is lost')
    faults_cmd.add_arguments(faults)
    faults.set_defaults(func=faults_cmd.run)
    stress = sub.add_parser(
        'stress',
        help='K servers x M shelve-offload/unshelve cycles with real '
             'threads against placement over real HTTP')
    stress_cmd.add_arguments(stress)
    stress.set_defaults(func=stress_cmd.run)
    sub.add_parser(
        'contract', add_help=False,
        help='run every contract scenario against the placement double and '
             'the real placement service and compare them (needs the '
             'placement extra; "shelvefix contract --help" for options)')
    # main() hands "contract ..." to shelvefix.contract.cli before parsing.
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


def main(argv=None, out=None):
    """Console script entry point; returns the exit status."""
    argv = list(sys.argv[1:] if argv is None else argv)
    commands = [a for a in argv if not a.startswith('-')]
    if commands and commands[0] == 'contract':
        # The contract command parses its own options; argparse's REMAINDER
        # would not pass on those that start with '--'.
        index = argv.index('contract')
        setup_logging('--debug' in argv[:index])
        from shelvefix.contract import cli as contract_cli
        return contract_cli.main(argv[index + 1:], out=out or sys.stdout)
    args = build_parser().parse_args(argv)
    setup_logging(args.debug)
    return args.func(args, out or sys.stdout)


if __name__ == '__main__':
    sys.exit(main())
