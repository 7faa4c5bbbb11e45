"""Run test modules, each a given number of times, in this one process.

Run by :mod:`upstream_checks` with a tree's Python, in the tree::

    python upstream_repeat.py OUTPUT MODULE:RUNS [MODULE:RUNS ...]

Each run loads the module's tests afresh and runs them all; OUTPUT gets,
as JSON, ``{MODULE: [run, ...]}``, each run ``{"tests": N, "passed": N,
"failures": [...], "errors": [...], "skipped": N}``, a failure being an
assertion that did not hold and an error any other exception (a failure
or error as ``"TEST_ID: LAST LINE"``). One process for all keeps the
project's import (seconds for nova) to one.
"""

import json
import sys
import unittest


def _last_line(text):
    lines = [line for line in text.strip().splitlines() if line.strip()]
    return lines[-1].strip() if lines else ''


def run(module, runs):
    outcomes = []
    for _ in range(runs):
        suite = unittest.defaultTestLoader.loadTestsFromName(module)
        result = unittest.TestResult()
        suite.run(result)
        outcomes.append({
            'tests': result.testsRun,
            'passed': (result.testsRun - len(result.failures) -
                       len(result.errors) - len(result.skipped) -
                       len(result.unexpectedSuccesses)),
            'failures': ['%s: %s' % (test.id(), _last_line(text))
                         for test, text in result.failures],
            'errors': ['%s: %s' % (test.id(), _last_line(text))
                       for test, text in result.errors +
                       [(t, 'unexpected success')
                        for t in result.unexpectedSuccesses]],
            'skipped': len(result.skipped)})
    return outcomes


def main(argv):
    if len(argv) < 2:
        sys.exit('usage: upstream_repeat.py OUTPUT MODULE:RUNS ...')
    sys.path.insert(0, '.')
    results = {}
    for spec in argv[1:]:
        module, _, runs = spec.rpartition(':')
        results[module] = run(module, int(runs))
    with open(argv[0], 'w') as f:
        json.dump(results, f)
    return 0


if __name__ == '__main__':
    sys.exit(main(sys.argv[1:]))
