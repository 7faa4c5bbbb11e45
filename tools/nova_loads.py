#!/usr/bin/env python3
"""Which novas the nova target loads and drives, on which Pythons.

For each Python (an interpreter with shelvefix and its ``[nova]`` extra
installed) and each nova (a wheel, an unpacked sdist or a source tree),
runs ``shelvefix race --nova NOVA --backend double --scenario SCENARIO
--json`` and prints one row per nova: per Python, whether it loaded and
explored every cell (with the runs made and the seconds taken), or the
one line it refused with. The exit status is 0 only if every
combination gave an answer (explored, or refused in one line): a
traceback or no JSON is this tool's failure.

Example (the figures of doc/source/exploring-nova.rst)::

    python tools/nova_loads.py --python /tmp/py310/bin/python \\
        --python .tox/nova/bin/python /tmp/nova-releases/*.whl ~/nova
"""

import argparse
import json
import os
import subprocess
import sys
import time


def _explore(python, nova, scenario, timeout):
    """``(text, good)`` of one combination."""
    started = time.monotonic()
    try:
        done = subprocess.run(
            [python, '-m', 'shelvefix', 'race', '--nova', nova,
             '--backend', 'double', '--scenario', scenario, '--workers',
             '1', '--json'], capture_output=True, text=True,
            timeout=timeout)
    except subprocess.TimeoutExpired:
        return 'no answer within %d s' % timeout, False
    seconds = time.monotonic() - started
    lines = done.stderr.strip().splitlines()
    if done.returncode == 2 and len(lines) == 1:
        return 'refused: %s' % lines[0].split(': ', 1)[-1], True
    try:
        document = json.loads(done.stdout)
    except ValueError:
        return 'FAILED (status %d): %s' % (
            done.returncode, lines[-1] if lines else 'no output'), False
    runs = sum(cell['interleavings'] for cell in document['cells'])
    version = document['target'].split('(nova ', 1)[-1].split(',')[0]
    return 'nova %s: %d runs, %.1f s' % (version, runs, seconds), True


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.split('\n\n')[0])
    parser.add_argument('novas', nargs='+', metavar='NOVA')
    parser.add_argument('--python', action='append', required=True,
                        help='an interpreter with shelvefix[nova] '
                             '(repeatable)')
    parser.add_argument('--scenario', default='resize-confirm')
    parser.add_argument('--timeout', type=int, default=600)
    args = parser.parse_args(argv)
    good = True
    versions = {}
    for python in args.python:
        versions[python] = subprocess.run(
            [python, '-c', 'import platform; '
             'print(platform.python_version())'],
            capture_output=True, text=True).stdout.strip() or python
    print('scenario %s on the double, each nova on each Python\n'
          % args.scenario)
    for nova in args.novas:
        print(os.path.basename(os.path.normpath(nova)))
        for python in args.python:
            text, ok = _explore(python, nova, args.scenario, args.timeout)
            good = good and ok
            print('  Python %-8s %s' % (versions[python], text))
    return 0 if good else 1


if __name__ == '__main__':
    sys.exit(main())
