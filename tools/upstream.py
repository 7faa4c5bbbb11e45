"""Every finding as a patch series, proven in nova's and placement's trees.

``tox -e upstream`` runs this. ``upstream/PROJECT/FINDING/`` holds each
finding's series (:mod:`upstream_series`): a regression test that shows
the bug (0001) and the fix that flips it (0002). Each series is proven
(:mod:`upstream_checks`) on each target (:mod:`upstream_trees`): the
latest release of its project from PyPI, and the git checkouts named with
``--nova-tree`` and ``--placement-tree`` (a clone of master, a stable
branch), in each of the project's test modes (nova: eventlet and
threading). The rows are printed as a table (finding, target, mode,
applies, bug shown N/N, fixed N/N, controls, existing tests); the exit
status is 0 only if every row holds.

``--regenerate`` first writes each series' patches again from its
sources and ``upstream/contributor.ini`` (the bug numbers and the author,
filled in once), on the latest release's tree.

Usage::

    python tools/upstream.py [--workdir DIR] [--finding SLUG ...]
        [--project nova|placement] [--nova-tree PATH] [--placement-tree
        PATH] [--no-release] [--mode eventlet|threading] [--repeat N]
        [--constraints FILE] [--regenerate | --regenerate-only]
"""

import argparse
import os
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

import upstream_checks  # noqa: E402
import upstream_series  # noqa: E402
import upstream_trees  # noqa: E402


def parser():
    p = argparse.ArgumentParser(description=__doc__.split('\n')[0])
    p.add_argument('--workdir', default=os.path.join(os.getcwd(),
                                                     '.upstream'),
                   help='where sdists, trees and test runs go')
    p.add_argument('--upstream', default=upstream_series.UPSTREAM,
                   metavar='DIR', help='where the series are (upstream/)')
    p.add_argument('--finding', action='append', metavar='SLUG',
                   help='only this series (repeatable), e.g. host-lost')
    p.add_argument('--project', action='append',
                   choices=upstream_series.PROJECTS,
                   help="only this project's series (repeatable)")
    p.add_argument('--nova-tree', action='append', default=[],
                   metavar='PATH', help='a nova git checkout to prove the '
                   'nova series on too (repeatable)')
    p.add_argument('--placement-tree', action='append', default=[],
                   metavar='PATH', help='a placement git checkout to prove '
                   'the placement series on too (repeatable)')
    p.add_argument('--no-release', action='store_true',
                   help='only the named checkouts, not the latest releases')
    p.add_argument('--mode', action='append',
                   choices=sorted(upstream_trees.MODES['nova']),
                   help="only this test mode of nova's (repeatable)")
    p.add_argument('--repeat', type=int, default=5, metavar='N',
                   help='runs of each reproducer and fixed test (5)')
    p.add_argument('--constraints', metavar='FILE',
                   help="openstack/requirements' upper-constraints.txt, "
                   "for what a checkout needs that this Python lacks")
    p.add_argument('--regenerate', action='store_true',
                   help='write the patches again from their sources first')
    p.add_argument('--regenerate-only', action='store_true',
                   help='write the patches again, and prove nothing')
    return p


def say(line):
    print(line, flush=True)


def main(argv=None):
    args = parser().parse_args(argv)
    if args.repeat < 1:
        say('upstream: --repeat must be at least 1, not %d' % args.repeat)
        return 2
    workdir = os.path.abspath(args.workdir)
    try:
        values = upstream_series.contributor(
            os.path.join(args.upstream, 'contributor.ini'))
        series = upstream_series.load(args.project or
                                      upstream_series.PROJECTS,
                                      args.finding, root=args.upstream,
                                      values=values)
    except upstream_series.SeriesError as e:
        say('upstream: %s' % e)
        return 2
    if not series:
        say('upstream: no series selected')
        return 2
    named = {'nova': args.nova_tree, 'placement': args.placement_tree}
    rows, failed = [], []
    for project in upstream_series.PROJECTS:
        mine = [s for s in series if s.project == project]
        if not mine:
            continue
        modes = [m for m in sorted(upstream_trees.MODES[project])
                 if project != 'nova' or not args.mode or m in args.mode]
        targets = []
        try:
            if not args.no_release:
                targets.append(upstream_trees.release(project, workdir))
            for path in named[project]:
                targets.append(upstream_trees.checkout(
                    project, path, workdir, args.constraints))
        except (upstream_trees.TargetError,
                upstream_series.SeriesError) as e:
            say('upstream: %s' % e)
            failed.append(project)
            continue
        if not targets:
            say('upstream: no %s tree: name one with --%s-tree or drop '
                '--no-release' % (project, project))
            failed.append(project)
            continue
        if args.regenerate or args.regenerate_only:
            try:
                for one in mine:
                    targets[0].reset()
                    for path in upstream_series.generate(one,
                                                         targets[0].tree):
                        say('upstream: wrote %s' % path)
            except upstream_series.SeriesError as e:
                say('upstream: %s' % e)
                failed.append(project)
                continue
            finally:
                targets[0].reset()
            if args.regenerate_only:
                continue
        for target in targets:
            say('== %s%s' % (target.label, ' (requirements from %s)' %
                             target.overlay if target.overlay else ''))
            for one in mine:
                begun = time.monotonic()
                got = upstream_checks.prove(one, target, modes, args.repeat,
                                            workdir, say)
                rows += got
                say('== %s on %s: %s in %.0f s' % (
                    one.slug, target.label, 'ok' if all(
                        r.ok for r in got) else 'FAILED',
                    time.monotonic() - begun))
    if rows:
        say('')
        say(upstream_checks.table(rows))
    for row in rows:
        for problem in row.problems:
            say('%s on %s (%s): %s' % (row.series.slug, row.target.label,
                                       row.mode, problem))
    left = upstream_series.unfilled(values)
    if left:
        say('upstream/contributor.ini is still the template (%s): fill it '
            'in and run --regenerate before sending the patches' % left)
    if args.regenerate_only and not failed:
        say('upstream: the patches of %d series written' % len(series))
        return 0
    bad = [row for row in rows if not row.ok]
    if bad or failed:
        say('upstream: %d of %d rows failed%s' % (
            len(bad), len(rows), '; %s failed before any row'
            % ', '.join(failed) if failed else ''))
        return 1
    say('upstream: %d rows, every series applies, shows its bug, is fixed '
        'and passes its controls and the existing tests' % len(rows))
    return 0


if __name__ == '__main__':
    sys.exit(main())
