"""nova's own functional tests on real placement, then on the double.

``tox -e nova-functional`` runs this. It

1. downloads nova's latest sdist from PyPI (nova's functional tests are in
   the sdist only, not in the wheel) into ``WORKDIR/download``, unpacks it
   into ``WORKDIR/src`` and installs it (with its dependencies) into the
   running Python, once per nova version;
2. runs a slice of nova's functional tests that exercises placement
   (:data:`DEFAULT_FILTERS`, or the regular expressions given) with stestr
   in the unpacked tree, once per backend: ``real`` is nova's own
   ``PlacementFixture`` (openstack-placement over sqlite), ``double``
   replaces it with
   :class:`shelvefix.backends.nova_fixture.PlacementFixture`;
3. prints, per backend, ``real: 340 tests, 338 passed, 0 failed, 2 skipped
   in 25.1 min``, then every test whose outcome differs, and exits 1 if
   anything failed or the pass counts differ.

The swap happens in each stestr worker: stestr starts its workers with
``$PYTHON -m stestr.subunit_runner.run ...``, and ``$PYTHON`` is this
script in ``--as-python`` mode, which imports nova first (so that nova's
eventlet monkey patching comes before anything else), patches
``nova.tests.functional.fixtures.PlacementFixture`` for the ``double``
backend (``SHELVEFIX_NOVA_PLACEMENT=double``) and then runs the module it
was given. Only the standard library is imported at the top, for that
reason.

Usage::

    python tools/nova_functional.py [--workdir DIR] [--backend NAME ...]
        [--concurrency N] [--exclude REGEX] [--prepare-only] [REGEX ...]
"""

import argparse
import glob
import os
import runpy
import subprocess
import sys
import time

import upstream_trees

BACKEND_VAR = 'SHELVEFIX_NOVA_PLACEMENT'
BACKENDS = ('real', 'double')
#: The slice (388 tests of nova 34.0.0): every shelve and unshelve test,
#: the move tests (``ServerMovingTests``, whose nested-provider subclasses
#: repeat it; their shelve tests are in), the port resource request tests
#: (admin; the non-admin and multi-group classes repeat them) and every
#: regression test. stestr selects a test when any expression matches its
#: id; all of ``ServerMovingTests*`` and ``test_servers_resource_request``
#: (604 tests in all) is ``'[Ss]helve' '\.ServerMovingTests'
#: 'test_servers_resource_request\.' 'functional\.regressions\.'``.
DEFAULT_FILTERS = (
    r'[Ss]helve',
    r'\.ServerMovingTests\.',
    r'^nova\.tests\.functional\.test_servers_resource_request\.'
    r'(PortResourceRequestBasedSchedulingTest|'
    r'ServerMoveWithPortResourceRequestTest)\.',
    r'^nova\.tests\.functional\.regressions\.',
)
#: What nova's own ``tox -e functional`` sets for its tests.
NOVA_TEST_ENV = {
    'OS_STDOUT_CAPTURE': '1',
    'OS_STDERR_CAPTURE': '1',
    'OS_TEST_TIMEOUT': '160',
    'NOVA_RAISE_ON_GREENLET_LEAK': 'True',
    'OS_NOVA_DISABLE_EVENTLET_PATCHING': 'False',
    'PYTHONDONTWRITEBYTECODE': '1',
}
OUTCOMES = ('success', 'fail', 'skip')


def as_python(argv):
    """Be ``python -m MODULE ARGS...`` with nova's placement swapped.

    :param argv: ``['-m', MODULE, ARGS...]``, as stestr gives ``$PYTHON``
    """
    if len(argv) < 2 or argv[0] != '-m':
        sys.exit('--as-python takes -m MODULE [ARGS...], not %r' % argv)
    # The unpacked tree (the working directory) comes before the installed
    # nova, as it does for "python -m" run there.
    sys.path[0:1] = [os.getcwd()]
    backend = os.environ.get(BACKEND_VAR, 'real')
    if backend not in BACKENDS:
        sys.exit('%s must be one of %s, not %r'
                 % (BACKEND_VAR, ', '.join(BACKENDS), backend))
    # nova's package patches eventlet in on import: before anything else.
    import nova.tests.functional.fixtures  # noqa: F401
    if backend == 'double':
        from shelvefix.backends import nova_fixture
        nova_fixture.use_in_nova()
    sys.argv = [argv[1]] + argv[2:]
    runpy.run_module(argv[1], run_name='__main__', alter_sys=True)


def pip(*args):
    subprocess.check_call((sys.executable, '-m', 'pip') + args)


def prepare(workdir):
    """Download, unpack and install nova's latest sdist (once each).

    :returns: the unpacked tree, ``WORKDIR/src/nova-<version>``
    """
    download = os.path.join(workdir, 'download')
    os.makedirs(download, exist_ok=True)
    pip('download', '--quiet', '--no-deps', '--no-binary', ':all:',
        '--dest', download, 'nova')
    sdists = sorted(glob.glob(os.path.join(download, 'nova-*.tar.gz')),
                    key=os.path.getmtime)
    if not sdists:
        sys.exit('pip downloaded no nova sdist into %s' % download)
    name = os.path.basename(sdists[-1])[:-len('.tar.gz')]
    tree = os.path.join(workdir, 'src', name)
    if not os.path.isdir(tree):
        try:
            upstream_trees.unpack(sdists[-1], os.path.dirname(tree))
        except upstream_trees.TargetError as exc:
            sys.exit(str(exc))
    marker = os.path.join(workdir, 'installed-%s' % name)
    if not os.path.exists(marker):
        pip('install', '--quiet', tree)
        open(marker, 'w').close()
    return tree


class Outcomes(object):
    """A testtools ``StreamResult``: each test's last status and time.

    :ivar outcome: ``{test id: status}`` (``success``, ``fail``, ``skip``,
        ``xfail`` or ``uxsuccess``)
    :ivar seconds: the tests' own time, summed
    """

    def __init__(self):
        self.outcome = {}
        self.started = {}
        self.seconds = 0.0

    def startTestRun(self):
        pass

    def stopTestRun(self):
        pass

    def status(self, test_id=None, test_status=None, timestamp=None,
               **kwargs):
        if test_id is None or test_status is None:
            return
        if test_status == 'inprogress' and timestamp is not None:
            self.started[test_id] = timestamp
        elif test_status in ('success', 'fail', 'skip', 'xfail',
                             'uxsuccess'):
            self.outcome[test_id] = test_status
            begun = self.started.pop(test_id, None)
            if begun is not None and timestamp is not None:
                self.seconds += (timestamp - begun).total_seconds()


def read_outcomes(stream):
    """The outcomes of a subunit v2 byte stream (a file opened 'rb')."""
    import subunit
    outcomes = Outcomes()
    subunit.ByteStreamToStreamResult(stream, non_subunit_name='stdout').run(
        outcomes)
    return outcomes


def run_backend(tree, workdir, backend, filters, concurrency, exclude=None):
    """Run the slice on one backend; returns (outcomes, wall seconds)."""
    repo = os.path.join(workdir, 'stestr-%s' % backend)
    env = dict(os.environ, **NOVA_TEST_ENV)
    env[BACKEND_VAR] = backend
    # stestr expands ${PYTHON} unquoted in a shell command: no quotes (so
    # no spaces in these paths).
    env['PYTHON'] = '%s %s --as-python' % (
        sys.executable, os.path.abspath(__file__))
    stestr = (sys.executable, '-m', 'stestr', '--test-path',
              './nova/tests/functional', '--top-dir', './', '--repo-url',
              repo)
    if not os.path.isdir(os.path.join(repo, '.stestr')):
        os.makedirs(repo, exist_ok=True)
        subprocess.check_call(stestr + ('init',), cwd=tree,
                              stdout=subprocess.DEVNULL)
    subunit_file = os.path.join(workdir, '%s.subunit' % backend)
    begun = time.monotonic()
    with open(subunit_file, 'wb') as out:
        subprocess.call(stestr + ('run', '--subunit', '--concurrency',
                                  str(concurrency)) +
                        (('--exclude-regex', exclude) if exclude else ()) +
                        tuple(filters),
                        cwd=tree, env=env, stdout=out)
    seconds = time.monotonic() - begun
    with open(subunit_file, 'rb') as stream:
        return read_outcomes(stream), seconds


def summary(backend, outcomes, seconds):
    counts = {name: 0 for name in OUTCOMES}
    for status in outcomes.outcome.values():
        counts['success' if status == 'xfail' else
               'fail' if status == 'uxsuccess' else status] += 1
    return counts, ('%s: %d tests, %d passed, %d failed, %d skipped in '
                    '%.1f min (tests %.1f min)'
                    % (backend, len(outcomes.outcome), counts['success'],
                       counts['fail'], counts['skip'], seconds / 60,
                       outcomes.seconds / 60))


def main(argv=None):
    argv = sys.argv[1:] if argv is None else argv
    if argv[:1] == ['--as-python']:
        return as_python(argv[1:])
    parser = argparse.ArgumentParser(description=__doc__.split('\n')[0])
    parser.add_argument('--workdir', default=os.path.join(
        os.getcwd(), '.nova-functional'))
    parser.add_argument('--backend', action='append', choices=BACKENDS)
    parser.add_argument('--concurrency', type=int, default=2)
    parser.add_argument('--prepare-only', action='store_true')
    parser.add_argument('--exclude', metavar='REGEX',
                        help='leave out the tests this matches')
    parser.add_argument('filters', nargs='*', metavar='REGEX')
    args = parser.parse_args(argv)
    workdir = os.path.abspath(args.workdir)
    tree = prepare(workdir)
    print('nova functional tests from %s' % tree, flush=True)
    if args.prepare_only:
        return 0
    backends = args.backend or list(BACKENDS)
    filters = args.filters or list(DEFAULT_FILTERS)
    results, lines, failed = {}, [], False
    for backend in backends:
        outcomes, seconds = run_backend(tree, workdir, backend, filters,
                                        args.concurrency, args.exclude)
        counts, line = summary(backend, outcomes, seconds)
        print(line, flush=True)
        lines.append(line)
        results[backend] = (outcomes.outcome, counts)
        failed = failed or counts['fail'] > 0 or not outcomes.outcome
    print('\n'.join(lines))
    if len(results) == 2:
        (one, (a, ca)), (two, (b, cb)) = (
            (name, results[name]) for name in backends)
        for test_id in sorted(set(a) | set(b)):
            if a.get(test_id) != b.get(test_id):
                print('differs: %s: %s %s, %s %s' % (
                    test_id, one, a.get(test_id), two, b.get(test_id)))
        if ca['success'] != cb['success']:
            print('the pass counts differ: %s %d, %s %d'
                  % (one, ca['success'], two, cb['success']))
            failed = True
    return 1 if failed else 0


if __name__ == '__main__':
    sys.exit(main())
