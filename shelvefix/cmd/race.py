"""``shelvefix race``: every interleaving of the race, on real code.

For each cell of ordering (corrected, legacy) × the way compute frees
allocations (GET + PUT empty, DELETE), the explorer runs the library's
compute manager and the scheduler's claim through every interleaving of
their shared-state steps against a placement backend and counts outcomes.
The exit status is 0 only if the corrected order shows no bad outcome, so
the command can gate CI.
"""

import json

from shelvefix import backends
from shelvefix.cmd import common
from shelvefix import race

HELP = ('explore every interleaving of shelve-offload and unshelve on the '
        'real code and count the outcomes (the main job)')


def add_arguments(parser):
    """Add the command's options to its subparser."""
    parser.add_argument(
        '--backend', choices=backends.NAMES, default=backends.REAL,
        help='placement to run against (default: real, the embedded '
             'openstack-placement; remote needs --config-file)')
    common.add_config_file_argument(parser)
    parser.add_argument(
        '--ordering', choices=race.ORDERINGS, action='append',
        help='only this ordering (repeatable; default: both)')
    common.add_free_argument(parser, 'both')
    parser.add_argument(
        '--ghost', action='store_true',
        help='also explore freeing with a DELETE that placement commits '
             'only partly: the allocations go, the consumer record stays '
             '(a ghost consumer) and placement answers 500; not with '
             '--backend remote')
    parser.add_argument(
        '--no-reduce', action='store_true',
        help='explore every interleaving, also those the sleep-set '
             'reduction proves equivalent to one already explored')
    parser.add_argument(
        '--random', type=int, metavar='N',
        help='instead of exploring, make N uncontrolled runs per cell with '
             'real threads and real timing')
    parser.add_argument('--seed', type=int, default=0,
                        help='seed for --random (default 0)')
    parser.add_argument(
        '--diagram', metavar='FILE.md',
        help='write the first counterexample of each bad outcome as a '
             'Mermaid sequence diagram to this Markdown file')
    common.add_json_argument(parser)
    parser.add_argument(
        '--progress', action='store_true',
        help='redraw a progress bar even when stderr is not a terminal '
             '(elsewhere a plain progress line is written every 10 s)')


def _cells(args):
    from shelvefix.race import program
    orderings = args.ordering or race.ORDERINGS
    frees = args.free or race.FREE_METHODS
    return [cell for cell in program.all_cells(ghost=args.ghost)
            if cell.ordering in orderings and cell.free in frees]


def _label(cell):
    return '/'.join(part for part in cell if part)


def run(args, out, err):
    """Run the command; returns the exit status.

    :raises CommandError: for what the user can fix
    """
    if args.random is not None and args.random < 1:
        raise common.CommandError('--random needs a positive number of runs')
    if args.diagram:
        common.check_writable(args.diagram)
    if args.ghost and args.backend == backends.REMOTE:
        raise common.CommandError('--ghost needs a placement this process '
                                  'can fail inside: the double or real')
    placement = common.make_backend(args.backend, args.config_file)
    with placement:
        if args.random:
            return _run_random(args, placement, out, err)
        return _run_explore(args, placement, out, err)


def _run_explore(args, placement, out, err):
    from shelvefix.race import program
    from shelvefix.race import report
    results = []
    for cell in _cells(args):
        progress = common.Progress(err, _label(cell), force=args.progress)
        exploration = program.explore_cell(placement, cell,
                                           reduce=not args.no_reduce,
                                           progress=progress)
        progress.finish()
        results.append(report.summarise(cell, exploration))
    if args.diagram:
        with open(args.diagram, 'w') as f:
            f.write(report.diagrams(results))
    if args.json:
        json.dump({'backend': args.backend, 'reduced': not args.no_reduce,
                   'cells': report.to_json(results),
                   'corrected_is_clean': report.corrected_is_clean(results)},
                  out, indent=2, sort_keys=True)
        out.write('\n')
    else:
        _print_exploration(args, results, out)
    return 0 if report.corrected_is_clean(results) else 1


def _print_exploration(args, results, out):
    from shelvefix.race import report
    out.write('shelvefix race: shelve-offload (compute) against unshelve '
              '(API + scheduler)\non %s\n\n'
              % backends.DESCRIPTIONS[args.backend])
    out.write(report.table(results) + '\n\n')
    pruned = sum(r.pruned for r in results)
    seconds = sum(r.elapsed for r in results)
    runs = sum(r.runs for r in results)
    if args.no_reduce:
        out.write('Every interleaving explored: %d runs in %.2f s.\n\n'
                  % (runs, seconds))
    else:
        out.write('%d runs in %.2f s; sleep sets skipped %d orderings '
                  'equivalent to explored ones (--no-reduce explores them '
                  'all).\n\n' % (runs, seconds, pruned))
    for result in results:
        for labels, run in report.first_counterexamples(result):
            out.write('First counterexample: %s order, free with %s: %s\n'
                      % (result.cell.ordering, report.free_text(result.cell),
                         ', '.join(labels)))
            out.write(report.timeline(run) + '\n\n')
    clean = report.corrected_is_clean(results)
    out.write('Corrected order: %s\n' % (
        'no bad outcome in any interleaving' if clean
        else 'BAD OUTCOMES FOUND'))
    if args.diagram:
        out.write('Diagrams written to %s\n' % args.diagram)


def _run_random(args, placement, out, err):
    from shelvefix.race import outcomes
    from shelvefix.race import program
    from shelvefix.race import report
    results = []
    for index, cell in enumerate(_cells(args)):
        progress = common.Progress(err, _label(cell), total=args.random,
                                   force=args.progress, unit='runs')
        results.append(program.run_random(placement, cell, args.random,
                                          seed=args.seed + index,
                                          progress=progress))
        progress.finish()
    if args.json:
        json.dump({'backend': args.backend, 'random': args.random,
                   'seed': args.seed,
                   'cells': [{'ordering': r.cell.ordering,
                              'free': r.cell.free, 'fault': r.cell.fault,
                              'runs': r.runs,
                              'outcomes': r.counts,
                              'elapsed_s': round(r.elapsed, 3)}
                             for r in results]},
                  out, indent=2, sort_keys=True)
        out.write('\n')
    else:
        summaries = [report.CellResult(r.cell, r.runs, r.counts, {},
                                       r.elapsed, 0, True) for r in results]
        out.write('shelvefix race --random %d --seed %d: uncontrolled runs '
                  'with real threads\non %s\n\n'
                  % (args.random, args.seed,
                     backends.DESCRIPTIONS[args.backend]))
        out.write(report.table(summaries, first_column='runs') + '\n\n')
        out.write('%d runs in %.1f s. The seed fixes the start delays of the '
                  'actors in each run; the\noperating system schedules the '
                  'threads, so counts vary from one run of this\ncommand to '
                  'the next, with the same seed too.\n'
                  % (sum(r.runs for r in results),
                     sum(r.elapsed for r in results)))
    bad = any(set(r.counts) - {outcomes.OK} for r in results
              if r.cell.ordering == race.CORRECTED)
    return 1 if bad else 0
