"""The findings, proven in nova's and placement's own trees.

``tox -e upstream`` runs this. For each finding it takes the latest release
of the project from PyPI (the sdist, as a git tree), and

1. applies the reproducer patch (``upstream/PROJECT/0001-*.patch``) with
   ``git am`` and runs the reproducer: it passes by showing the bug;
2. applies the fix (``0002-*.patch``) and runs the reproducer again, now
   asserting the correct state;
3. runs the project's own tests that touch the changed code on the patched
   tree, with their counts;
4. runs shelvefix's exploration (nova: the whole shelve/unshelve lifecycle
   on nova's own code) or fault matrix (placement) on the patched tree.

* host lost, in nova: :mod:`upstream_nova`;
* ghost consumers, in placement: :mod:`upstream_placement`.

Each step prints one line; the exit status is 0 only if every step of
every finding asked for did what it must.

Usage::

    python tools/upstream.py [--workdir DIR] [--finding nova|placement]
"""

import argparse
import os
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

import upstream_nova  # noqa: E402
import upstream_placement  # noqa: E402

FINDINGS = (('nova', 'host lost', upstream_nova),
            ('placement', 'ghost consumers', upstream_placement))


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.split('\n')[0])
    parser.add_argument('--workdir', default=os.path.join(
        os.getcwd(), '.upstream'), help='where sdists and trees go')
    parser.add_argument('--finding', action='append',
                        choices=[name for name, _t, _m in FINDINGS],
                        help='only this project (repeatable)')
    args = parser.parse_args(argv)
    failed = []
    for name, title, module in FINDINGS:
        if args.finding and name not in args.finding:
            continue
        started = time.monotonic()
        print('== %s (%s)' % (title, name), flush=True)
        try:
            module.run(os.path.join(args.workdir, name), sys.stdout)
        except Exception as e:  # one finding failing must not hide another
            print('%s: FAILED: %s' % (name, e), flush=True)
            failed.append(name)
        print('== %s: %s in %.0f s' % (
            name, 'failed' if name in failed else 'ok',
            time.monotonic() - started), flush=True)
    if failed:
        print('upstream: %s failed' % ', '.join(failed))
        return 1
    print('upstream: every finding reproduced, fixed and tested')
    return 0


if __name__ == '__main__':
    sys.exit(main())
