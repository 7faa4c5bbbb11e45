"""``shelvefix corpus``: nova's historical allocation races, on a nova.

For each row of the corpus (:mod:`shelvefix.corpus`), explores the row's
scenario on nova's own code (the installed nova, or the one ``--nova``
names, as ``shelvefix race --target nova`` takes it) and reports whether
the row's symptom shows, with the first counterexample's timeline. With
``--self-test``, the lab's own proof instead: the nova named (nova 34.0.0,
which the patches are written against) with each row's re-introduction
patch must show the row's symptom, and as it is must not.
"""

import json
import time

from shelvefix import backends
from shelvefix.cmd import common
from shelvefix import race

HELP = ("nova's historical allocation races: which does a nova tree still "
        'have? (--self-test: does each re-introduced bug show?)')
DESCRIPTION = (
    'The corpus lists bugs of nova\'s history: races and leaks of '
    'placement allocations, the resource tracker and instance or migration '
    'state, each with its fix, the race lab scenario and fault that reach '
    'it, the symptom it shows and a patch that puts the defect back into '
    'today\'s nova. --list prints the rows.',
    'On a tree (the default): each scenario and fault the rows use is '
    'explored once, completely, on the nova named; each row says whether '
    'its symptom shows (with the first counterexample\'s timeline) and '
    'whether its patch applies (a static hint that the fixed code is '
    'there). A symptom can have more than one cause: a row that shows '
    'says the tree has this race or another with the same symptom in the '
    'same scenario.',
    '--self-test: for each row, the nova named with the row\'s patch, '
    'explored until the first run showing the symptom; then the nova as it '
    'is, explored completely once per scenario and fault. A row '
    'reproduces when the patched tree shows the symptom and the tree as it '
    'is does not; where the tree as it is shows it too, the row must say '
    'so (its finding). Rows whose operation the lab does not have, or '
    'whose code nova removed, are listed and counted apart.',
    'Verdict: on a tree, 0 if no row\'s symptom shows and every '
    'exploration was complete, 1 if one shows; with --self-test, 0 if '
    'every row explored reproduces (or is a documented finding), 1 if not.',
)


def add_arguments(parser):
    """Add the command's options to its subparser."""
    from shelvefix import corpus
    parser.add_argument(
        '--nova', metavar='PATH',
        help='the nova to explore: a source tree or an unpacked sdist (a '
             'directory holding nova/__init__.py) or a wheel (default: the '
             'installed nova)')
    parser.add_argument(
        '--self-test', action='store_true',
        help='prove the corpus: each row\'s patch on the nova named must '
             'show its symptom, the nova as it is must not')
    parser.add_argument(
        '--bug', action='append', metavar='BUG',
        help='only this row (a bug number as --list shows it); repeatable')
    parser.add_argument(
        '--family', action='append', choices=corpus.FAMILIES,
        metavar='FAMILY',
        help='only the rows of this operation family (%s); repeatable'
             % ', '.join(corpus.FAMILIES))
    parser.add_argument(
        '--kind', action='append', choices=corpus.KINDS,
        help='only the rows of this kind; repeatable')
    parser.add_argument(
        '--scenario', action='append', choices=race.SCENARIOS,
        metavar='SCENARIO',
        help='only the rows the lab explores in this scenario (%s); '
             'repeatable' % ', '.join(race.SCENARIOS))
    parser.add_argument(
        '--backend', choices=(backends.DOUBLE, backends.REAL),
        default=backends.DOUBLE,
        help='placement for nova\'s code: double (the default) or real '
             '(the embedded openstack-placement)')
    parser.add_argument(
        '--workers', type=int, metavar='N', default=1,
        help='processes that explore at once (default 1; more than 1 needs '
             '--backend double)')
    common.add_cluster_argument(parser)
    parser.add_argument(
        '--list', action='store_true',
        help='print the rows chosen and exit, exploring nothing')
    parser.add_argument(
        '--timelines', action='store_true',
        help='with --self-test, also print the first counterexample of '
             'each patched row')
    common.add_json_argument(parser)
    common.add_progress_argument(parser)


def _rows(args):
    from shelvefix import corpus
    try:
        rows = corpus.load()
        return corpus.select(rows, args.bug or (), args.family or (),
                             args.kind or (), args.scenario or ())
    except corpus.CorpusError as e:
        raise common.CommandError(str(e)) from None


def _check(args):
    from shelvefix.backends import real
    common.check_cluster(args)
    common.check_workers(args)
    if args.backend == backends.REAL and not real.available():
        raise common.CommandError(real.INSTALL_HINT)
    if args.timelines and not args.self_test:
        raise common.CommandError('--timelines applies to --self-test; a '
                                  'tree check prints them anyway')


def _on_cluster(args, work, rows, progress):
    """``work`` with every exploration a task of the Dask cluster named."""
    from shelvefix.cluster import engine
    from shelvefix.cluster import lab as cluster_lab
    try:
        with engine.Engine(args.cluster) as cluster:
            with cluster_lab.ClusterLab(cluster, race.NOVA, args.backend,
                                        args.nova) as lab:
                return work(rows, args.nova, args.backend, progress,
                            lab=lab)
    except engine.EngineError as e:
        raise common.CommandError(str(e)) from None


def run(args, out, err):
    """Run the command; returns the exit status."""
    from shelvefix.corpus import report
    from shelvefix.corpus import runs
    from shelvefix import nova
    rows = _rows(args)
    if not rows:
        raise common.CommandError('no row of the corpus matches the '
                                  '--bug, --family, --kind and --scenario '
                                  'given')
    if args.list:
        out.write(report.list_table(rows) + '\n')
        return 0
    _check(args)

    def progress(label):
        return common.Progress(err, label, force=args.progress)
    work = runs.self_test if args.self_test else runs.check_tree
    started = time.monotonic()
    try:
        if args.cluster.engine:
            description, results = _on_cluster(args, work, rows, progress)
        else:
            description, results = work(rows, args.nova, args.backend,
                                        progress, args.workers)
    except nova.NovaUnusable as e:
        raise common.CommandError(str(e)) from None
    elapsed = time.monotonic() - started
    if args.self_test:
        good = runs.proven(results)
        why = None
    else:
        why = runs.unearned(results)
        good = not why and not any(r.status == runs.SHOWS for r in results)
    if args.json:
        json.dump(dict(target=description, backend=args.backend,
                       self_test=args.self_test, rows=report.to_json(results),
                       verdict='clean' if good else 'not clean',
                       unearned=why, elapsed_s=round(elapsed, 1)),
                  out, indent=2, sort_keys=True)
        out.write('\n')
        return 0 if good else 1
    if args.self_test:
        out.write(report.self_test_text(results, description, args.timelines))
    else:
        out.write(report.tree_text(results, description, why))
    out.write('Wall time: %.1f s.\n' % elapsed)
    return 0 if good else 1
