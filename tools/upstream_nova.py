"""The "host lost" reproducer and fix as patches for nova, checked on nova.

``upstream/nova/`` holds two patches for nova 34.0.0 (``git format-patch``
output): 0001 adds a functional reproducer
(``nova/tests/functional/regressions/test_shelve_offload_host_race.py``,
asserting the bug), 0002 fixes ``ComputeManager._shelve_offload_instance``
(host and node cleared in the save that makes the server
SHELVED_OFFLOADED), flips the reproducer to the correct state and adjusts
nova's shelve unit tests. They are generated (``--regenerate``) from what
sits next to them: the reproducer (``test_shelve_offload_host_race.py``),
the change of 0002 (``fix.diff``) and the commit messages
(``commit-0001.txt``, ``commit-0002.txt``), with a fixed author, committer
and date, so that regenerating gives the same patches.

:func:`run` (the default) downloads nova's sdist into ``WORKDIR/download``
(once), unpacks it into a fresh git tree, applies each patch with
``git am`` and runs, with the tree's nova imported (the tree first on
``sys.path``, through ``tools/nova_functional.py --as-python``, so an
installed nova is shadowed): the reproducer ``--repeat`` times on the
unpatched tree (it must pass: bug shown), the lifecycle exploration of
:mod:`shelvefix.nova.program` (it must find ``host lost``); then on the
patched tree the flipped reproducer, nova's shelve unit tests, a slice of
nova's functional shelve tests and the exploration again (no ``host
lost``).

It needs the Python of ``tox -e nova-functional`` (nova's test
requirements, shelvefix installed) and git; nova 34.0.0 itself is
installed from the sdist, with its dependencies, if that Python has not
got it. Only the standard library is imported at the top.

Usage::

    python tools/upstream_nova.py [--workdir DIR] [--repeat N] [--regenerate]
"""

import argparse
import importlib.metadata
import importlib.util
import json
import os
import shutil
import subprocess
import sys
import time

NOVA_VERSION = '34.0.0'
HERE = os.path.dirname(os.path.abspath(__file__))
SOURCES = os.path.join(os.path.dirname(HERE), 'upstream', 'nova')
REPRODUCER = 'test_shelve_offload_host_race.py'
REPRODUCER_PATH = 'nova/tests/functional/regressions/' + REPRODUCER
REPRODUCER_ID = REPRODUCER_PATH[:-len('.py')].replace('/', '.')
UNIT_ID = 'nova.tests.unit.compute.test_shelve'
#: nova's functional tests of shelve offload and unshelve, between hosts
#: and on one (13 tests of nova 34.0.0, about three minutes on two busy
#: cores): ServerMovingTests' shelve tests, the shelve-offload port binding
#: and unshelve spawn failure tests, and the shelve regression tests.
FUNCTIONAL_SLICE = (
    r'^nova\.tests\.functional\.test_servers\.ServerMovingTests\.'
    r'test_(un)?shelve',
    r'^nova\.tests\.functional\.test_servers\.'
    r'(PortBindingShelvedServerTest|ServerUnshelveSpawnFailTests)\.',
    r'^nova\.tests\.functional\.regressions\.'
    r'(test_bug_1862633|test_bug_2025480|test_shelve_offload_host_race)\.',
    r'^nova\.tests\.functional\.regressions\.test_bug_1835822\..*shelve',
)
HOST_LOST = 'host lost'
DATE = '2025-12-01T00:00:00+00:00'
GIT_ENV = {
    'GIT_AUTHOR_NAME': 'shelvefix',
    'GIT_AUTHOR_EMAIL': 'shelvefix@example.org',
    'GIT_COMMITTER_NAME': 'shelvefix',
    'GIT_COMMITTER_EMAIL': 'shelvefix@example.org',
    'GIT_AUTHOR_DATE': DATE, 'GIT_COMMITTER_DATE': DATE,
    # Neither the user's nor the system's configuration (signatures,
    # signing, hooks) may change the commits or the patches.
    'GIT_CONFIG_NOSYSTEM': '1', 'GIT_CONFIG_GLOBAL': os.devnull,
}


class StepFailed(Exception):
    """A step did not give what it must."""


def nova_functional():
    """``tools/nova_functional.py``, imported from its path."""
    spec = importlib.util.spec_from_file_location(
        'nova_functional', os.path.join(HERE, 'nova_functional.py'))
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def git(tree, *args, **kwargs):
    """Run git in ``tree``; returns its standard output."""
    # The unpacked files keep the sdist's owner: git must trust the tree.
    return subprocess.run(
        ('git', '-c', 'safe.directory=%s' % tree) + args, cwd=tree,
        env=dict(os.environ, **GIT_ENV), check=True, text=True,
        stdout=subprocess.PIPE, **kwargs).stdout


def step(out, figures, name, line, begun):
    figures[name]['seconds'] = round(time.monotonic() - begun, 1)
    out.write('nova: %s (%.1f s)\n' % (line, figures[name]['seconds']))
    out.flush()


def prepare(workdir, out, figures, nf):
    """Download (once) and unpack the sdist into a fresh git tree.

    :returns: the tree, ``WORKDIR/src/nova-<version>``, with one commit
    """
    begun = time.monotonic()
    name = 'nova-%s' % NOVA_VERSION
    download = os.path.join(workdir, 'download')
    sdist = os.path.join(download, name + '.tar.gz')
    cached = os.path.exists(sdist)
    if not cached:
        os.makedirs(download, exist_ok=True)
        nf.pip('download', '--quiet', '--no-deps', '--no-binary', ':all:',
               '--dest', download, 'nova==%s' % NOVA_VERSION)
    try:
        installed = importlib.metadata.version('nova')
    except importlib.metadata.PackageNotFoundError:
        installed = None
    if installed != NOVA_VERSION:
        # nova's dependencies; the tree's nova comes first on sys.path.
        nf.pip('install', '--quiet', sdist)
    tree = os.path.join(workdir, 'src', name)
    shutil.rmtree(tree, ignore_errors=True)
    nf.unpack(sdist, os.path.dirname(tree))
    git(tree, 'init', '--quiet')
    git(tree, 'add', '--all', '--force')
    git(tree, 'commit', '--quiet', '--no-verify', '-m',
        'Import nova %s' % NOVA_VERSION)
    figures['prepare'] = {'sdist': sdist, 'cached': cached, 'tree': tree,
                          'nova_installed': installed}
    step(out, figures, 'prepare', '%s (%s), unpacked into %s, imported as '
         '%s' % (os.path.basename(sdist), 'cached' if cached else
                 'downloaded', tree, git(tree, 'rev-parse', '--short',
                                         'HEAD').strip()), begun)
    return tree


def read(path):
    with open(path) as f:
        return f.read()


def without_index_lines(diff):
    return [line for line in diff.splitlines()
            if not line.startswith('index ')]


def patches():
    """The two patch files of ``upstream/nova``, in order."""
    found = sorted(name for name in os.listdir(SOURCES)
                   if name[:4] in ('0001', '0002') and
                   name.endswith('.patch'))
    if [name[:4] for name in found] != ['0001', '0002']:
        raise StepFailed('%s must hold one 0001-*.patch and one '
                         '0002-*.patch, not %s' % (SOURCES, found))
    return [os.path.join(SOURCES, name) for name in found]


def apply_patch(tree, patch, out, figures, name):
    """``git am`` a patch; then check it against its sources."""
    begun = time.monotonic()
    try:
        git(tree, 'am', '--quiet', patch, stderr=subprocess.PIPE)
    except subprocess.CalledProcessError as e:
        raise StepFailed('git am %s: %s' % (patch, e.stderr.strip()))
    if name == 'am-0001':
        same = (read(os.path.join(tree, REPRODUCER_PATH)) ==
                read(os.path.join(SOURCES, REPRODUCER)))
        source = REPRODUCER
    else:
        same = (without_index_lines(git(tree, 'diff', 'HEAD~1', 'HEAD')) ==
                without_index_lines(read(os.path.join(SOURCES, 'fix.diff'))))
        source = 'fix.diff'
    if not same:
        raise StepFailed('%s differs from upstream/nova/%s: run '
                         '--regenerate' % (os.path.basename(patch), source))
    figures[name] = {'patch': os.path.basename(patch),
                     'commit': git(tree, 'rev-parse', 'HEAD').strip()}
    step(out, figures, name, 'git am %s: applied, as upstream/nova/%s'
         % (os.path.basename(patch), source), begun)


def run_tests(tree, workdir, nf, name, filters, concurrency=1):
    """Run nova's tests with stestr in ``tree``; returns the counts.

    ``filters`` is ``('--no-discover', TEST_ID)`` or regular expressions.
    """
    rundir = os.path.join(workdir, 'runs', name)
    os.makedirs(rundir, exist_ok=True)
    # The workers' warnings go to a file, not between the progress lines.
    sys.stderr.flush()
    saved = os.dup(2)
    with open(os.path.join(rundir, 'stderr.log'), 'w') as log:
        os.dup2(log.fileno(), 2)
    try:
        outcomes, seconds = nf.run_backend(tree, rundir, 'real', filters,
                                           concurrency)
    finally:
        os.dup2(saved, 2)
        os.close(saved)
    counts, _ = nf.summary(name, outcomes, seconds)
    counts['tests'] = len(outcomes.outcome)
    counts['subunit'] = os.path.join(rundir, 'real.subunit')
    return counts


def counted(counts):
    return '%d tests, %d passed, %d failed, %d skipped' % (
        counts['tests'], counts['success'], counts['fail'], counts['skip'])


def check_passed(counts, what):
    if counts['fail'] or not counts['success']:
        raise StepFailed('%s: %s; see subunit2pyunit < %s'
                         % (what, counted(counts), counts['subunit']))


def reproducer(tree, workdir, out, figures, nf, name, label, repeat=1):
    begun = time.monotonic()
    results = []
    for _ in range(repeat):
        counts = run_tests(tree, workdir, nf, name,
                           ('--no-discover', REPRODUCER_ID))
        check_passed(counts, 'reproducer %s' % label)
        results.append((counts['tests'], counts['success']))
    figures[name] = {'runs': repeat, 'passed': sum(r[1] for r in results),
                     'same': results.count(results[0])}
    state = 'bug shown' if name == 'reproducer-unpatched' else 'correct state'
    step(out, figures, name, 'reproducer on %s %s: %s (%d passed)%s'
         % (NOVA_VERSION, label, state, results[0][1],
            ', %d/%d same result' % (figures[name]['same'], repeat)
            if repeat > 1 else ''), begun)


def suite(tree, workdir, out, figures, nf, name, what, filters):
    begun = time.monotonic()
    counts = run_tests(tree, workdir, nf, name, filters, concurrency=2)
    check_passed(counts, what)
    figures[name] = counts
    step(out, figures, name, '%s on %s + fix: %s'
         % (what, NOVA_VERSION, counted(counts)), begun)


def explore(tree, workdir, out, figures, name, label, expect_host_lost):
    """The lifecycle exploration with the tree's nova (a subprocess)."""
    begun = time.monotonic()
    env = dict(os.environ, PYTHONPATH=os.pathsep.join(
        [tree] + [p for p in [os.environ.get('PYTHONPATH')] if p]))
    proc = subprocess.run((sys.executable, os.path.abspath(__file__),
                           '--explore'), cwd=workdir, env=env, text=True,
                          stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    if proc.returncode:
        raise StepFailed('exploration %s failed:\n%s' % (label, proc.stderr))
    result = json.loads(proc.stdout.splitlines()[-1])
    if not result['nova'].startswith(tree + os.sep):
        raise StepFailed('the exploration imported nova from %s, not from '
                         '%s' % (result['nova'], tree))
    lost = sum(count for outcome, count in result['outcomes'].items()
               if HOST_LOST in outcome.split(' + '))
    if not result['complete'] or bool(lost) != expect_host_lost:
        raise StepFailed('exploration %s: %s' % (label, result))
    result['host_lost'] = lost
    figures[name] = result
    step(out, figures, name, 'lifecycle exploration on %s %s: %d runs, %s%s'
         % (NOVA_VERSION, label, result['runs'],
            ', '.join('%s %d' % item for item in result['outcomes'].items()),
            '' if lost else ', no host lost'), begun)


def explore_here():
    """``--explore``: the lifecycle scenario on the double, as JSON."""
    import logging
    # Thousands of runs of nova's code, which warns in many.
    logging.disable(logging.CRITICAL)
    import nova
    from shelvefix.nova import lifecycle
    from shelvefix.nova import program
    cloud = lifecycle.NovaCloud(backend='double')
    cloud.setUp()
    try:
        exploration = program.explore(cloud, program.LIFECYCLE)
    finally:
        cloud.cleanUp()
    print(json.dumps({
        'nova': nova.__file__, 'runs': len(exploration.runs),
        'complete': exploration.complete,
        'outcomes': {' + '.join(outcome): count for outcome, count
                     in exploration.outcome_counts().items()}}))
    return 0


def run(workdir, out, repeat=10):
    """Apply the patches to nova's sdist and run what checks them.

    :param workdir: where the sdist, the tree and the test runs go
    :param out: a text stream for the progress lines
    :param repeat: how many times the reproducer runs on the unpatched tree
    :returns: the figures, a dict per step
    :raises StepFailed: a step did not give what it must
    """
    workdir = os.path.abspath(workdir)
    nf = nova_functional()
    figures = {}
    first, second = patches()
    tree = prepare(workdir, out, figures, nf)
    apply_patch(tree, first, out, figures, 'am-0001')
    reproducer(tree, workdir, out, figures, nf, 'reproducer-unpatched',
               '(unpatched)', repeat)
    explore(tree, workdir, out, figures, 'explore-unpatched', '(unpatched)',
            expect_host_lost=True)
    apply_patch(tree, second, out, figures, 'am-0002')
    reproducer(tree, workdir, out, figures, nf, 'reproducer-patched',
               '+ fix')
    suite(tree, workdir, out, figures, nf, 'unit',
          'unit tests %s' % UNIT_ID, ('--no-discover', UNIT_ID))
    suite(tree, workdir, out, figures, nf, 'functional',
          'functional shelve slice', FUNCTIONAL_SLICE)
    explore(tree, workdir, out, figures, 'explore-patched', '+ fix',
            expect_host_lost=False)
    return figures


def regenerate(workdir, out):
    """Rebuild the patches of ``upstream/nova`` from their sources."""
    workdir = os.path.abspath(workdir)
    nf = nova_functional()
    figures = {}
    tree = prepare(workdir, out, figures, nf)
    shutil.copyfile(os.path.join(SOURCES, REPRODUCER),
                    os.path.join(tree, REPRODUCER_PATH))
    git(tree, 'add', REPRODUCER_PATH)
    git(tree, 'commit', '--quiet', '--no-verify', '--file',
        os.path.join(SOURCES, 'commit-0001.txt'))
    git(tree, 'apply', '--index', os.path.join(SOURCES, 'fix.diff'))
    git(tree, 'commit', '--quiet', '--no-verify', '--file',
        os.path.join(SOURCES, 'commit-0002.txt'))
    for name in os.listdir(SOURCES):
        if name.endswith('.patch'):
            os.remove(os.path.join(SOURCES, name))
    written = git(tree, 'format-patch', '--no-signature', '-o', SOURCES,
                  'HEAD~2').split()
    for path in written:
        out.write('nova: wrote %s\n' % path)
    return {'patches': written}


def main(argv=None):
    argv = sys.argv[1:] if argv is None else argv
    if argv == ['--explore']:
        return explore_here()
    parser = argparse.ArgumentParser(description=__doc__.split('\n')[0])
    parser.add_argument('--workdir', default=os.path.join(
        os.getcwd(), '.upstream-nova'))
    parser.add_argument('--repeat', type=int, default=10,
                        help='runs of the reproducer on the unpatched tree')
    parser.add_argument('--regenerate', action='store_true',
                        help='rebuild the patches from upstream/nova/ first')
    args = parser.parse_args(argv)
    try:
        if args.regenerate:
            regenerate(args.workdir, sys.stdout)
        run(args.workdir, sys.stdout, args.repeat)
    except (StepFailed, subprocess.CalledProcessError) as e:
        print('nova: FAILED: %s' % e, flush=True)
        return 1
    return 0


if __name__ == '__main__':
    sys.exit(main())
