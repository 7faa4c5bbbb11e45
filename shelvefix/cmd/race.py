"""``shelvefix race``: every interleaving of the race, on real code.

For each cell of ordering (corrected, legacy) × the way compute frees
allocations (GET + PUT empty, DELETE), the explorer runs the library's
compute manager and the scheduler's claim through every interleaving of
their shared-state steps against a placement backend and counts outcomes.
The exit status is 0 only if the corrected order shows no bad outcome, so
the command can gate CI.
"""

import json
import sys
import time

from oslo_config import cfg

from shelvefix import conf as shelvefix_conf
from shelvefix.explorer import report
from shelvefix.explorer import shelve
from shelvefix.placement import backends
from shelvefix.placement import real
from shelvefix.placement import remote

BACKEND_NAMES = ('real', 'double', 'remote')
BACKEND_TEXT = {
    'real': 'the real placement service (openstack-placement, in-process, '
            'in-memory sqlite)',
    'double': 'the placement double (in-memory)',
    'remote': 'the remote placement configured in [placement]',
}


def add_arguments(parser):
    parser.add_argument(
        '--backend', choices=BACKEND_NAMES, default='real',
        help='placement to run against (default: real, the embedded '
             'openstack-placement; remote needs --config-file)')
    parser.add_argument(
        '--config-file', action='append', default=[], metavar='FILE',
        help='oslo.config file(s) with a [placement] section (keystoneauth '
             'auth, session and adapter options, as in nova.conf); used by '
             '--backend remote')
    parser.add_argument(
        '--ordering', choices=shelve.ORDERINGS, action='append',
        help='only this ordering (repeatable; default: both)')
    parser.add_argument(
        '--free', choices=shelve.FREE_METHODS, action='append',
        help='only this way of freeing allocations (repeatable; default: '
             'both)')
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
    parser.add_argument('--json', action='store_true',
                        help='print the results as JSON')
    parser.add_argument(
        '--progress', action='store_true',
        help='show a progress bar even when stderr is not a terminal')


class Progress(object):
    """A progress line on stderr once a cell has run for a second."""

    def __init__(self, stream, label, total=None, force=False):
        self.stream = stream
        self.label = label
        self.total = total
        self.enabled = force or getattr(stream, 'isatty', lambda: False)()
        self.start = time.monotonic()
        self.shown = False

    def __call__(self, done):
        elapsed = time.monotonic() - self.start
        if not self.enabled or elapsed < 1.0:
            return
        if self.total:
            filled = int(30 * done / self.total)
            bar = '[%s%s] %d/%d' % ('#' * filled, '.' * (30 - filled), done,
                                    self.total)
        else:
            bar = '%d interleavings' % done
        self.stream.write('\r%s: %s (%.0f/s)' % (self.label, bar,
                                                 done / elapsed))
        self.stream.flush()
        self.shown = True

    def finish(self):
        if self.shown:
            self.stream.write('\n')
            self.stream.flush()


def _load_conf(config_files):
    conf = cfg.ConfigOpts()
    shelvefix_conf.placement.register_opts(conf)
    conf([], project='shelvefix', default_config_files=config_files)
    # oslo.config converts values when they are read: read them all now so
    # that a bad value is reported before anything runs.
    for opt in shelvefix_conf.placement.placement_opts:
        getattr(conf.placement, opt.dest)
    return conf


def make_backend(name, config_files):
    """A placement fixture (not set up yet) for ``--backend``.

    :raises SystemExit: with a message, when the backend cannot be used
    """
    if name == 'real' and not real.available():
        raise SystemExit('shelvefix race: %s' % real.INSTALL_HINT)
    if name == 'remote':
        if not config_files:
            raise SystemExit('shelvefix race: --backend remote needs '
                             '--config-file with a [placement] section')
        return remote.RemotePlacementFixture(_load_conf(config_files))
    return backends.get(name)()


def _cells(args):
    orderings = args.ordering or shelve.ORDERINGS
    frees = args.free or shelve.FREE_METHODS
    return [shelve.Cell(o, f) for o in shelve.ORDERINGS if o in orderings
            for f in shelve.FREE_METHODS if f in frees]


def run(args, out, err=None):
    """Run the command; returns the exit status."""
    err = err or sys.stderr
    if args.random is not None and args.random < 1:
        err.write('shelvefix race: --random needs a positive number of '
                  'runs\n')
        return 2
    try:
        placement = make_backend(args.backend, args.config_file)
        with placement:
            if args.random:
                return _run_random(args, placement, out, err)
            return _run_explore(args, placement, out, err)
    except SystemExit as e:
        err.write('%s\n' % e)
        return 2
    except cfg.Error as e:
        err.write('shelvefix race: bad configuration: %s\n' % e)
        return 2
    except ValueError as e:
        err.write('shelvefix race: %s\n' % e)
        return 2


def _run_explore(args, placement, out, err):
    results = []
    for cell in _cells(args):
        progress = Progress(err, '%s/%s' % cell, force=args.progress)
        exploration = shelve.explore_cell(placement, cell,
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
    out.write('shelvefix race: shelve-offload (compute) against unshelve '
              '(API + scheduler)\non %s\n\n' % BACKEND_TEXT[args.backend])
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
        for label, run in report.first_counterexamples(result):
            out.write('First counterexample: %s order, free with %s: %s\n'
                      % (result.cell.ordering, result.cell.free, label))
            out.write(report.timeline(run) + '\n\n')
    clean = report.corrected_is_clean(results)
    out.write('Corrected order: %s\n' % (
        'no bad outcome in any interleaving' if clean
        else 'BAD OUTCOMES FOUND'))
    if args.diagram:
        out.write('Diagrams written to %s\n' % args.diagram)


def _run_random(args, placement, out, err):
    results = []
    for index, cell in enumerate(_cells(args)):
        progress = Progress(err, '%s/%s' % cell, total=args.random,
                            force=args.progress)
        results.append(shelve.run_random(placement, cell, args.random,
                                         seed=args.seed + index,
                                         progress=progress))
        progress.finish()
    if args.json:
        json.dump({'backend': args.backend, 'random': args.random,
                   'seed': args.seed,
                   'cells': [{'ordering': r.cell.ordering,
                              'free': r.cell.free, 'runs': r.runs,
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
                  % (args.random, args.seed, BACKEND_TEXT[args.backend]))
        out.write(report.table(summaries, first_column='runs') + '\n')
    bad = any(set(r.counts) - {shelve.OK} for r in results
              if r.cell.ordering == shelve.CORRECTED)
    return 1 if bad else 0
