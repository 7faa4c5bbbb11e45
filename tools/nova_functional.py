"""nova's own functional tests on real placement and on the double.

``tox -e nova-functional`` runs this. It

1. downloads nova's latest sdist from PyPI (nova's functional tests are in
   the sdist only, not in the wheel) into ``WORKDIR/download``, unpacks it
   into ``WORKDIR/src`` and installs it (with its dependencies) into the
   running Python, once per nova version;
2. selects tests with ``stestr list``: a slice that exercises placement
   (:data:`DEFAULT_FILTERS`), the regular expressions given, or ``--all``
   of them; ``--shard I/N`` keeps the I-th of N parts (whole test classes,
   in id order), so that several invocations or machines share a
   whole-suite run;
3. runs them with stestr once per backend, the backends side by side (so
   that their tests' times compare on one load): ``real`` is nova's own
   ``PlacementFixture`` (openstack-placement over sqlite), ``double`` the
   double in its place, ``differential`` real placement with every
   request replayed on the double and the answers compared
   (:mod:`shelvefix.backends.differential`). Each stestr worker is
   ``tools/nova_functional_worker.py``, which swaps the fixture and
   reports each test's start; a worker whose test runs longer than
   ``--hang-timeout`` has its stacks dumped and is killed;
4. prints, per backend, ``real: selected 340, ran 340, passed 338,
   failed 0, skipped 2, did not finish 0 in 25.1 min (tests 40.2 min)``,
   each test that ended differently, the double's time over real's, the
   differential counts and differences, and exits 0 only when every
   selected test finished on every backend, no worker hung and the
   backends agree test for test (and answer for answer);
5. saves each backend's run of the shard under ``WORKDIR/results``;
   ``--report N`` adds up the saved shards of an N-way run and judges
   them the same way (a shard never run counts against it). ``--repeat
   K`` runs the selection K times instead, each repetition's tests
   counted apart (to show that a test no longer hangs).

Usage::

    python tools/nova_functional.py [--workdir DIR] [--backend NAME ...]
        [--concurrency N] [--all] [--shard I/N] [--report N] [--repeat K]
        [--hang-timeout S] [--exclude REGEX] [--prepare-only] [REGEX ...]
"""

import argparse
import glob
import os
import shutil
import signal
import subprocess
import sys
import time

import nova_functional_results as results
import nova_functional_worker as worker
import upstream_trees

BACKENDS = tuple(sorted(worker.SWAPS))
#: The slice (388 tests of nova 34.0.0): every shelve and unshelve test,
#: the move tests (``ServerMovingTests``, whose nested-provider subclasses
#: repeat it; their shelve tests are in), the port resource request tests
#: (admin; the non-admin and multi-group classes repeat them) and every
#: regression test.
DEFAULT_FILTERS = (
    r'[Ss]helve',
    r'\.ServerMovingTests\.',
    r'^nova\.tests\.functional\.test_servers_resource_request\.'
    r'(PortResourceRequestBasedSchedulingTest|'
    r'ServerMoveWithPortResourceRequestTest)\.',
    r'^nova\.tests\.functional\.regressions\.',
)
TEST_PATH = './nova/tests/functional'
#: What nova's own ``tox -e functional`` sets for its tests.
NOVA_TEST_ENV = {
    'OS_STDOUT_CAPTURE': '1',
    'OS_STDERR_CAPTURE': '1',
    'OS_TEST_TIMEOUT': '160',
    'NOVA_RAISE_ON_GREENLET_LEAK': 'True',
    'OS_NOVA_DISABLE_EVENTLET_PATCHING': 'False',
    'PYTHONDONTWRITEBYTECODE': '1',
}
#: Seconds between two looks at the workers' progress.
WATCH_EVERY = 2.0


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


def positive(text):
    try:
        value = int(text)
    except ValueError:
        value = 0
    if value < 1:
        raise argparse.ArgumentTypeError('not a positive integer: %r'
                                         % text)
    return value


def parse_shard(text):
    """``'3/12'`` as ``(3, 12)``."""
    try:
        shard, shards = (int(part) for part in text.split('/'))
    except ValueError:
        raise argparse.ArgumentTypeError('a shard is I/N, not %r' % text)
    if not 1 <= shard <= shards:
        raise argparse.ArgumentTypeError(
            'shard %d/%d: I must be between 1 and N' % (shard, shards))
    return shard, shards


def shard_of(test_ids, shard, shards):
    """The tests of part ``shard`` of ``shards``: whole classes, in order.

    A class goes to the part its middle test falls in when the sorted ids
    are cut into ``shards`` runs of equal length.
    """
    classes = {}
    for test_id in sorted(test_ids):
        classes.setdefault(test_id.split('(')[0].rsplit('.', 1)[0],
                           []).append(test_id)
    kept, index, total = [], 0, len(test_ids)
    for members in classes.values():
        middle = index + (len(members) - 1) / 2.0
        if int(middle * shards // total) + 1 == shard:
            kept.extend(members)
        index += len(members)
    return kept


class Runner(object):
    """stestr, run in ``tree`` for the backends, with a watchdog."""

    def __init__(self, tree, workdir, concurrency=2, hang_timeout=600.0,
                 test_path=TEST_PATH, extra_env=None):
        self.tree = tree
        self.workdir = workdir
        self.concurrency = concurrency
        self.hang_timeout = hang_timeout
        self.test_path = test_path
        self.env = dict(os.environ, **NOVA_TEST_ENV)
        self.env.update(extra_env or {})
        # stestr expands ${PYTHON} unquoted in a shell command: no quotes
        # (so no spaces in these paths).
        self.env['PYTHON'] = '%s %s' % (sys.executable,
                                        os.path.abspath(worker.__file__))

    def stestr(self, repo, *args):
        return (sys.executable, '-m', 'stestr', '--test-path',
                self.test_path, '--top-dir', './', '--repo-url',
                repo) + args

    def select(self, filters, exclude=None):
        """The ids ``stestr list`` gives for the filters."""
        repo = self.repo('list')
        listed = subprocess.run(
            self.stestr(repo, 'list', *(
                (('--exclude-regex', exclude) if exclude else ()) +
                tuple(filters))),
            cwd=self.tree, env=self.env, capture_output=True, text=True)
        if listed.returncode:
            sys.exit('stestr list failed (%d): %s' % (
                listed.returncode, listed.stderr.strip()[-2000:]))
        return sorted(set(line.strip() for line in listed.stdout.splitlines()
                          if line.strip()))

    def repo(self, name):
        repo = os.path.join(self.workdir, 'stestr-%s' % name)
        if not os.path.isdir(os.path.join(repo, '.stestr')):
            os.makedirs(repo, exist_ok=True)
            subprocess.check_call(self.stestr(repo, 'init'), cwd=self.tree,
                                  stdout=subprocess.DEVNULL)
        return repo

    def start(self, backend, selected):
        """Start one backend's stestr; returns its bookkeeping dict."""
        place = os.path.join(self.workdir, 'run', backend)
        shutil.rmtree(place, ignore_errors=True)
        progress = os.path.join(place, 'progress')
        os.makedirs(progress)
        load_list = os.path.join(place, 'selected.txt')
        with open(load_list, 'w') as out:
            out.write(''.join(test_id + '\n' for test_id in selected))
        env = dict(self.env)
        env[worker.BACKEND_VARIABLE] = backend
        env[worker.PROGRESS_VARIABLE] = progress
        log = os.path.join(place, 'differential.jsonl')
        env['SHELVEFIX_DIFFERENTIAL_LOG'] = log
        subunit = os.path.join(place, 'subunit')
        with open(subunit, 'wb') as out, \
                open(os.path.join(place, 'stderr'), 'wb') as err:
            process = subprocess.Popen(
                self.stestr(self.repo(backend), 'run', '--subunit',
                            '--concurrency', str(self.concurrency),
                            '--load-list', load_list),
                cwd=self.tree, env=env, stdout=out, stderr=err)
        return dict(backend=backend, selected=selected, process=process,
                    progress=progress, subunit=subunit, log=log,
                    begun=time.monotonic(), hung=[], wall=None)

    def watch(self, runs, timeout=None):
        """Wait for every run, killing hung workers; bounded by their tests.

        :param timeout: give up (kill stestr) after this many seconds.
        """
        deadline = None if timeout is None else time.monotonic() + timeout
        while any(run['wall'] is None for run in runs):
            for run in runs:
                if run['wall'] is None and run['process'].poll() is not None:
                    run['wall'] = time.monotonic() - run['begun']
                elif run['wall'] is None:
                    self.kill_hung(run)
            if deadline is not None and time.monotonic() > deadline:
                for run in runs:
                    if run['wall'] is None:
                        run['process'].kill()
                        run['process'].wait()
                        run['wall'] = time.monotonic() - run['begun']
            time.sleep(WATCH_EVERY if any(
                run['wall'] is None for run in runs) else 0)

    def kill_hung(self, run):
        now = time.time()
        for path in glob.glob(os.path.join(run['progress'], '[0-9]*')):
            if not os.path.basename(path).isdigit():
                continue
            seen = worker.read_progress(path)
            pid = int(os.path.basename(path))
            if (seen is None or now - seen[0] < self.hang_timeout or
                    any(hung['pid'] == pid for hung in run['hung'])):
                continue
            try:
                os.kill(pid, 0)
            except ProcessLookupError:
                # It ended (its last word was before the timeout).
                os.remove(path)
                continue
            stacks = path + '.stacks'
            for signum, pause in ((signal.SIGUSR2, 2.0),
                                  (signal.SIGUSR1, 1.0),
                                  (signal.SIGKILL, 0.0)):
                try:
                    os.kill(pid, signum)
                except ProcessLookupError:
                    break
                time.sleep(pause)
            # Kept out of the run's folder, which the next run empties.
            kept = os.path.join(self.workdir, 'hangs', '%s-%d-%d.stacks' % (
                run['backend'], pid, now))
            os.makedirs(os.path.dirname(kept), exist_ok=True)
            if os.path.exists(stacks):
                shutil.copyfile(stacks, kept)
            stacks = kept
            run['hung'].append(dict(pid=pid, state=seen[1], test=seen[2],
                                    seconds=round(now - seen[0]),
                                    stacks=stacks))
            print('%s: worker %d hung %s %s for %d s; stacks in %s, killed'
                  % (run['backend'], pid, seen[1], seen[2],
                     now - seen[0], stacks), flush=True)

    def finish(self, run, shard=(1, 1)):
        """The :class:`results.Run` of a finished backend run."""
        outcomes = results.read_subunit(run['subunit'])
        differential = differences = None
        if os.path.exists(run['log']):
            from shelvefix.backends import differential as diff_mod
            differential, differences = diff_mod.read_log(run['log'])
        return results.Run(
            run['backend'], run['selected'], outcomes.finished,
            outcomes.seconds, run['wall'], run['process'].returncode,
            run['hung'], differential, differences or (), shard,
            outcomes.unended)


def parser():
    parser = argparse.ArgumentParser(description=__doc__.split('\n')[0])
    parser.add_argument('--workdir', default=os.path.join(
        os.getcwd(), '.nova-functional'))
    parser.add_argument('--tree', help='a nova tree to run instead of '
                        "PyPI's latest sdist")
    parser.add_argument('--test-path', default=TEST_PATH)
    parser.add_argument('--backend', action='append', choices=BACKENDS)
    parser.add_argument('--concurrency', type=int, default=1,
                        help='stestr workers per backend (default 1)')
    parser.add_argument('--all', action='store_true',
                        help='every test of the suite')
    parser.add_argument('--shard', type=parse_shard, default=(1, 1),
                        metavar='I/N')
    parser.add_argument('--report', type=int, metavar='N',
                        help='add up the saved shards of an N-way run')
    parser.add_argument('--repeat', type=positive, default=1, metavar='K',
                        help='run the selection K times (not saved)')
    parser.add_argument('--hang-timeout', type=float, default=600.0,
                        metavar='SECONDS')
    parser.add_argument('--prepare-only', action='store_true')
    parser.add_argument('--exclude', metavar='REGEX',
                        help='leave out the tests this matches')
    parser.add_argument('filters', nargs='*', metavar='REGEX')
    return parser


def main(argv=None):
    args = parser().parse_args(sys.argv[1:] if argv is None else argv)
    if args.all and args.filters:
        sys.exit('--all and regular expressions exclude each other')
    workdir = os.path.abspath(args.workdir)
    tree = os.path.abspath(args.tree) if args.tree else prepare(workdir)
    print('nova functional tests from %s' % tree, flush=True)
    if args.prepare_only:
        return 0
    backends = args.backend or ['real', 'double']
    filters = [] if args.all else (args.filters or list(DEFAULT_FILTERS))
    runner = Runner(tree, workdir, args.concurrency, args.hang_timeout,
                    args.test_path)
    selected = runner.select(filters, args.exclude)
    name = os.path.basename(tree)
    if args.report:
        return report_shards(workdir, name, backends, selected,
                             args.report)
    shard = args.shard
    chosen = shard_of(selected, *shard)
    print('%d of %d tests selected (shard %d/%d)'
          % ((len(chosen), len(selected)) + shard), flush=True)
    every = {backend: [] for backend in backends}
    for repeat in range(1, args.repeat + 1):
        started = [runner.start(backend, chosen) for backend in backends]
        runner.watch(started)
        runs = [runner.finish(run, shard) for run in started]
        if args.repeat == 1:
            for run in runs:
                results.save(run, results.result_path(
                    workdir, name, run.backend, *shard))
            return results.report(runs)
        for run in runs:
            print('repeat %d of %d: %s' % (repeat, args.repeat, run.line()),
                  flush=True)
            every[run.backend].append(results.repeated(run, repeat))
    return results.report([results.add_up(backend, every[backend])
                           for backend in backends])


def report_shards(workdir, name, backends, selected, shards):
    """Add up and judge the saved shards of an N-way run.

    The tests of a shard with no saved result count as selected and not
    finished.
    """
    runs, missing = [], set()
    for backend in backends:
        parts = []
        for shard in range(1, shards + 1):
            path = results.result_path(workdir, name, backend, shard, shards)
            if os.path.exists(path):
                parts.append(results.load(path))
            else:
                missing.add(shard)
                parts.append(results.Run(
                    backend, shard_of(selected, shard, shards)))
        runs.append(results.add_up(backend, parts))
    print('%d-way run of %s: %d shards saved per backend'
          % (shards, name, shards - len(missing)))
    return results.report(runs, sorted(missing))


if __name__ == '__main__':
    sys.exit(main())
