#!/usr/bin/env python3
"""The findings' counterexamples on nova's code, saved for the guide.

The guide draws each finding's interleaving from the explorer's own first
counterexample (``.. shelvefix-diagram::``). Where the finding is in
nova's code only, the guide's build (which does not install nova) reads
the file ``shelvefix race --target nova ... --diagram FILE`` wrote, saved
under ``doc/source/findings/diagrams/`` (``:saved:``). This tool writes
those files again, or, with ``--check``, explores again and says whether
each saved file is still what nova's code gives (exit 1 if not).

Run it with a Python that has nova installed (``tox -e nova``'s)::

    .tox/nova/bin/python tools/finding_diagrams.py [--check] [NAME ...]

The explorations run on the placement double, one process each; the
whole set takes about a quarter of an hour on two cores. (The resize
finding has no diagram: its scenario explores four cells, over ten
thousand runs, where the finding's is the first.)
"""

import argparse
import difflib
import os
import subprocess
import sys
import tempfile

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
SAVED = os.path.join(ROOT, 'doc', 'source', 'findings', 'diagrams')
TIMEOUT = 1800

#: Each saved file: its name and the race arguments that draw it.
DIAGRAMS = [
    ('host-lost', ['--scenario', 'lifecycle', '--variant', 'corrected']),
    ('live-migrate', ['--scenario', 'live-migrate']),
    ('live-migrate-group', ['--scenario', 'live-migrate-group']),
    ('resize-delete', ['--scenario', 'resize-delete']),
    ('resize-migrate', ['--scenario', 'resize-migrate']),
    ('resize-revert', ['--scenario', 'resize-revert']),
    ('evacuate', ['--scenario', 'evacuate']),
    # The destination alone with its audit: the rebuild's end saved before
    # the server is the destination's.
    ('evacuate-destination', ['--scenario', 'evacuate',
                              '--without', 'conductor',
                              '--without', 'compute-1']),
]


def command(arguments, path):
    """The race command that writes ``path``."""
    return [sys.executable, '-m', 'shelvefix', 'race', '--target', 'nova',
            '--backend', 'double'] + arguments + ['--diagram', path]


def draw(arguments):
    """The Markdown ``race --diagram`` writes for ``arguments``.

    :raises RuntimeError: race exited with neither 0 nor 1, or wrote none
    """
    with tempfile.TemporaryDirectory(prefix='finding-diagram-') as tmp:
        path = os.path.join(tmp, 'race.md')
        proc = subprocess.run(command(arguments, path), capture_output=True,
                              text=True, timeout=TIMEOUT, cwd=ROOT)
        if proc.returncode not in (0, 1) or not os.path.exists(path):
            raise RuntimeError('race %s exited %d: %s' % (
                ' '.join(arguments), proc.returncode,
                (proc.stdout + proc.stderr)[-2000:]))
        with open(path, encoding='utf-8') as f:
            return f.read()


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.split('\n')[0])
    parser.add_argument('--check', action='store_true',
                        help='compare with the saved files, write nothing')
    parser.add_argument('names', nargs='*', metavar='NAME',
                        help='only these (default: all): %s' % ', '.join(
                            name for name, _args in DIAGRAMS))
    args = parser.parse_args(argv)
    known = dict(DIAGRAMS)
    unknown = [name for name in args.names if name not in known]
    if unknown:
        parser.exit(2, 'finding_diagrams.py: unknown diagram %s (known: '
                       '%s)\n' % (', '.join(unknown), ', '.join(known)))
    stale = 0
    for name in args.names or [name for name, _args in DIAGRAMS]:
        path = os.path.join(SAVED, name + '.md')
        try:
            drawn = draw(known[name])
        except (RuntimeError, subprocess.TimeoutExpired) as e:
            print('%-20s FAILED: %s' % (name, e))
            stale += 1
            continue
        if not args.check:
            os.makedirs(SAVED, exist_ok=True)
            with open(path, 'w', encoding='utf-8') as f:
                f.write(drawn)
            print('%-20s written' % name)
            continue
        try:
            with open(path, encoding='utf-8') as f:
                saved = f.read()
        except OSError:
            saved = ''
        if saved == drawn:
            print('%-20s current' % name)
            continue
        stale += 1
        print('%-20s STALE: run tools/finding_diagrams.py %s' % (name, name))
        sys.stdout.writelines(list(difflib.unified_diff(
            saved.splitlines(True), drawn.splitlines(True), 'saved',
            'drawn now'))[:40])
    return 1 if stale else 0


if __name__ == '__main__':
    sys.exit(main())
