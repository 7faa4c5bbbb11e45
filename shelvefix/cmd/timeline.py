"""``shelvefix timeline``: one offload and unshelve, in order.

Shelve-offloads a server with the library's compute manager against an
embedded placement, unshelves it through the scheduler's claim, and prints
the ordered timeline of placement requests and instance saves. The exit
status is 0 only if the allocations were freed before SHELVED_OFFLOADED
became visible and the unshelve claimed a new consumer.
"""

import json

from shelvefix import backends
from shelvefix.cmd import common
from shelvefix import race

HELP = ('offload and unshelve one server on the embedded placement and '
        'print the ordered placement requests and saves')
DESCRIPTION = (
    'Shelve-offloads one server with the library\'s compute manager on an '
    'embedded placement, unshelves it through the scheduler\'s claim, and '
    'prints the ordered placement requests and instance saves, once for '
    'each way of freeing allocations.',
    'Verdict: 0 if the allocations were freed before SHELVED_OFFLOADED '
    'became visible and the unshelve claimed a new consumer, 1 if not, or '
    'if the timeline lacks compute\'s requests, its saves or the '
    'scheduler\'s claim (said in a line).',
)
FREE_TEXT = {race.DELETE: 'DELETE', race.GET_PUT: 'GET + PUT empty'}


def add_arguments(parser):
    """Add the command's options to its subparser."""
    parser.add_argument('--free', choices=race.FREE_METHODS,
                        help='how compute frees allocations (default: '
                             'both, one after the other)')
    parser.add_argument('--backend', choices=(backends.REAL, backends.DOUBLE),
                        default=backends.REAL,
                        help='placement to run against: the real service '
                             'in-process (default) or the in-memory double')
    common.add_json_argument(parser)


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


def run_timeline(free, placement, backend):
    """Offload, then the unshelve claim; returns a JSON-able result.

    :param free: ``race.DELETE`` or ``race.GET_PUT``
    :param placement: a placement fixture, not set up yet
    :param backend: its name, for the result
    """
    from shelvefix.race import scenario
    from shelvefix.race import timeline
    with scenario.ShelveScenario(free=free, placement=placement) as scn:
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
        held = scn.held()
        expected = {scn.dst: dict(scenario.FLAVOR.resources)}
        violations = timeline.order_violations(scn.timeline(),
                                               scn.instance.uuid)
        return {
            'backend': backend,
            'free_with': FREE_TEXT[free],
            'instance': scn.instance.uuid,
            'events': events,
            'order_violations': violations,
            'claim_error': claim_error,
            'allocations_held': held,
            'allocations_expected': expected,
            'ok': not violations and claim_error is None and held == expected,
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


def run(args, out, err):
    """Run the command; returns the exit status.

    :raises CommandError: the real backend without openstack-placement
    """
    frees = [args.free] if args.free else sorted(race.FREE_METHODS)
    results = [run_timeline(free, common.make_backend(args.backend, []),
                            args.backend)
               for free in frees]
    why = _unearned(results)
    if args.json:
        json.dump(results, out, indent=2, sort_keys=True)
        out.write('\n')
        if why:
            err.write('shelvefix timeline: no verdict: %s\n' % why)
    else:
        for result in results:
            _print_result(result, out)
        if why:
            out.write('No verdict, the run does not show it: %s\n' % why)
    return 0 if all(r['ok'] for r in results) and not why else 1


def _unearned(results):
    """Why these timelines cannot back exit 0, or None.

    The one place ``shelvefix timeline`` decides that it ran enough to say
    clean: a timeline for each way of freeing asked for, each with
    compute's placement requests, the save that made SHELVED_OFFLOADED
    visible and the scheduler's claim recorded in it.
    """
    if not results:
        return 'no timeline was recorded'
    for result in results:
        events = result['events']
        where = 'free with %s' % result['free_with']
        for actor, event, what in (
                ('compute', 'placement', 'placement request by compute'),
                ('compute', 'save', 'save by compute'),
                ('scheduler', 'placement', 'claim by the scheduler')):
            if not any(e['actor'] == actor and e['event'] == event
                       for e in events):
                return '%s: no %s in the timeline' % (where, what)
    return None
