"""The stress run's report: the outcome table, figures and JSON.

:func:`figures` measures one ordering's run (its requests, the database's
conflict counters and the ghost consumers it left, what a fault cost);
:func:`write` prints the table that ``shelvefix stress`` shows,
:func:`as_json` one result as its ``--json`` entry.
"""

import collections
import json
import re

from shelvefix import race
from shelvefix.race import outcomes
from shelvefix.race import stress

_UUID = re.compile('[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-'
                   '[0-9a-f]{12}')


def failed_requests(calls):
    """``{'DELETE /allocations/{uuid} 500': n}``: what placement failed.

    Every call answered 5xx or not at all (its status is then the
    exception's name), by method, path (uuids as ``{uuid}``, no query)
    and status: the code paths where placement did not absorb a
    database error.
    """
    counted = collections.Counter()
    for call in calls:
        if isinstance(call.status, int) and call.status < 500:
            continue
        path = _UUID.sub('{uuid}', call.path.split('?', 1)[0])
        counted['%s %s %s' % (call.method, path, call.status)] += 1
    return dict(counted)


def figures(result, placement, requests, database, before, fault=None):
    """Requests per second and, on a server, the database's conflicts.

    ``requests`` and ``before`` are the call count and the counters read
    before the run; every request of the run (set-up and clean-up too) is
    counted, and those that failed (:func:`failed_requests`).
    """
    figures = {'requests': len(placement.calls) - requests}
    figures['requests_per_second'] = round(
        figures['requests'] / result.elapsed, 1)
    figures['failed_requests'] = failed_requests(placement.calls[requests:])
    redispatched = getattr(placement.transport, 'redispatched', None)
    if redispatched:
        figures['redispatched'] = dict(redispatched)
        redispatched.clear()
    if fault is not None:
        fault.cancel.set()
        fault.join(fault.timeout)
        figures['fault'] = fault.describe()
        figures['failed_over'] = dict(getattr(placement.transport,
                                              'failures', {}))
    if database is not None:
        after = database.counters()
        figures['database'] = database.database
        figures['database_counters'] = {
            name: after[name] - before.get(name, 0) for name in after}
        unread = getattr(getattr(database, 'cluster', None), 'unread', None)
        if unread:
            figures['database_unread'] = list(unread)
    return figures


def write_figures(results, figures, out):
    """The lines under the table: each run's :func:`figures`."""
    for r, f in zip(results, figures):
        line = '%s/%s: %d requests, %.1f requests/s' % (
            r.ordering, r.free, f['requests'], f['requests_per_second'])
        if 'database' in f:
            line += '; %s: %s' % (f['database'], ', '.join(
                '%s %d' % item for item in sorted(
                    f['database_counters'].items())) or 'no counters')
        out.write(line + '\n')
        out.write('  ghost consumers healed: %d, left by the run: %s, by '
                  'the clean-up: %s; cycle judgements cross-checked: %d, '
                  'disagreed: %d\n' % (
                      r.ghosts_healed, _count(r.ghosts_left),
                      _count(r.ghosts_left_by_cleanup), r.checked,
                      r.disagreed))
        if f.get('failed_requests'):
            out.write('  placement failed: %s\n' % ', '.join(
                '%s x%d' % item for item in sorted(
                    f['failed_requests'].items())))
        if 'fault' in f:
            out.write('  fault: %s; requests failed per server: %s\n' % (
                f['fault'], ', '.join('%s %d' % item for item in sorted(
                    f['failed_over'].items())) or 'none'))
        if f.get('redispatched'):
            out.write('  refused and sent to another server: %s\n' % ', '.join(
                '%s %d' % item for item in sorted(f['redispatched'].items())))
        for what in f.get('noticed', ()):
            out.write('  noticed: %s\n' % what)
        for what in f.get('database_unread', ()):
            out.write('  counters not read: %s\n' % what)


def _count(value):
    return 'not counted' if value is None else str(value)


def as_json(r):
    """A :class:`~shelvefix.race.stress.StressResult` as ``--json`` has it."""
    return {'ordering': r.ordering, 'free': r.free, 'cycles': r.cycles,
            'elapsed_s': round(r.elapsed, 3),
            'cycles_per_second': round(r.cycles / r.elapsed, 2),
            'outcomes': r.counts,
            'scheduler_409': r.counts.get(outcomes.SCHEDULER_409, 0),
            'compute_409': r.counts.get(outcomes.COMPUTE_409, 0),
            'claims_wiped': r.counts.get(outcomes.CLAIM_WIPED, 0),
            'allocations_leaked': r.counts.get(outcomes.LEAKED, 0),
            'placement_failed': r.counts.get(outcomes.PLACEMENT_FAILED, 0),
            'usage_expected': r.usage_expected,
            'usage_actual': r.usage_actual,
            'usage_ok': r.usage_expected == r.usage_actual,
            'cycles_lost': r.lost,
            'cycles_completed': stress.completed(r),
            'complete': not stress.shortfall(r),
            'ghost_consumers_healed': r.ghosts_healed,
            'ghost_consumers_left': r.ghosts_left,
            'ghost_consumers_left_by_cleanup': r.ghosts_left_by_cleanup,
            'judgements_cross_checked': r.checked,
            'judgements_disagreed': r.disagreed,
            'bad': sorted(stress.bad(r))}


def verdict_line(results, verdict=None):
    """The report's last word, on one line: the verdict, and why.

    What :func:`~shelvefix.race.stress.verdict` decided (``verdict``, or
    worked out here): ``Corrected order: no bad outcome`` only with exit
    status 0; a run that did not complete every cycle says ``NOT SHOWN
    CLEAN`` and names each run's lost cycles by cause.
    """
    verdict = verdict or stress.verdict(results)
    ran_corrected = any(r.ordering == race.CORRECTED for r in results)
    bad = any(stress.bad(r) for r in results
              if r.ordering == race.CORRECTED)
    why = '; '.join(verdict.reasons)
    if results and not ran_corrected:
        line = ('Corrected order: not run (only --ordering %s), so no '
                'verdict on it' % ', '.join(sorted(
                    set(r.ordering for r in results))))
        if verdict.status:
            line += ('; NOT A CLEAN RUN (every cycle must complete): %s'
                     % why)
        return line
    if not verdict.status:
        return 'Corrected order: no bad outcome'
    if verdict.status == 2:
        return ('Corrected order: NOT SHOWN CLEAN, the run stopped '
                '(what it measured is above): %s' % why)
    if bad:
        return 'Corrected order: BAD OUTCOMES FOUND: %s' % why
    return ('Corrected order: NOT SHOWN CLEAN (every cycle of every ordering '
            'must complete, and a corrected one end ok): %s' % why)


def write(args, where, results, out, figures=(), verdict=None):
    """The report ``shelvefix stress`` prints: table, figures, verdict."""
    out.write('shelvefix stress: %d servers x %d cycles, real threads, the '
              'client polling every %g s%s\non %s\n\n' % (
                  args.servers, args.cycles, args.poll_interval,
                  (", +%g ms per compute placement request"
                   % args.compute_latency if args.compute_latency else ''),
                  where))
    # The ordering's outcomes (what the gate judges), then placement's own
    # failures (reported only), then whether any usage was lost.
    header = ('ordering', 'free', 'cycles', 'cycles/s', 'ok', 'sched 409',
              'compute 409', 'wiped', 'leaked', 'placement failed', 'usages')
    out.write('%-10s %-8s %6s %8s %5s %9s %11s %6s %6s %16s  %s\n' % header)
    for r in results:
        c = r.counts
        others = sorted(set(c) - {outcomes.OK, outcomes.SCHEDULER_409,
                                  outcomes.COMPUTE_409, outcomes.CLAIM_WIPED,
                                  outcomes.LEAKED, outcomes.PLACEMENT_FAILED})
        out.write('%-10s %-8s %6d %8.1f %5d %9d %11d %6d %6d %16d  %s%s\n' % (
            r.ordering, r.free, r.cycles, r.cycles / r.elapsed,
            c.get(outcomes.OK, 0), c.get(outcomes.SCHEDULER_409, 0),
            c.get(outcomes.COMPUTE_409, 0), c.get(outcomes.CLAIM_WIPED, 0),
            c.get(outcomes.LEAKED, 0), c.get(outcomes.PLACEMENT_FAILED, 0),
            'as expected' if r.usage_expected == r.usage_actual else
            'MISMATCH', (' (also: %s)' % ', '.join(
                '%s %d' % (k, c[k]) for k in others)) if others else ''))
    for r in results:
        if r.lost:
            out.write('\n%s/%s: %d cycles lost (%s): each raised, and its '
                      "server's next cycle started from the state it left" % (
                          r.ordering, r.free, sum(r.lost.values()),
                          ', '.join('%s %d' % item
                                    for item in sorted(r.lost.items()))))
    for r in results:
        if r.usage_expected != r.usage_actual:
            out.write('\n%s/%s provider usages: expected %s, placement has '
                      '%s' % (r.ordering, r.free, r.usage_expected,
                              r.usage_actual))
    out.write('\n')
    if figures:
        write_figures(results, figures, out)
        out.write('\n')
    out.write(verdict_line(results, verdict) + '\n')
    corrected = [r for r in results if r.ordering == race.CORRECTED]
    if corrected:
        failed = sum(r.counts.get(outcomes.PLACEMENT_FAILED, 0)
                     for r in corrected)
        if failed:
            out.write('(placement itself failed in %d corrected cycles: '
                      'reported, not judged; nothing was lost unless the '
                      'usages say MISMATCH)\n' % failed)


def emit(args, where, results, figures, verdict, out):
    """The report, or with ``--json`` the JSON, of what was measured."""
    if args.json:
        json.dump({'placement': where, 'servers': args.servers,
                   'cycles_per_server': args.cycles,
                   'poll_interval': args.poll_interval,
                   'compute_latency_ms': args.compute_latency,
                   'results': [dict(as_json(r), **f)
                               for r, f in zip(results, figures)],
                   'corrected_is_clean': verdict.corrected_is_clean,
                   'verdict': verdict_line(results, verdict),
                   'verdict_reasons': verdict.reasons},
                  out, indent=2, sort_keys=True)
        out.write('\n')
    else:
        write(args, where, results, out, figures, verdict)
