"""Ghost consumers, in placement's own tree: the reproducer and the fix.

``tools/upstream.py`` runs this (``tox -e upstream``); it runs alone too:

1. the sdist of openstack-placement (the installed version, by default)
   becomes a git tree, ``WORKDIR/openstack_placement-VERSION``, of one
   commit, "Import openstack-placement VERSION" (fixed author and dates);
2. ``git am upstream/placement/0001-*.patch`` (it must add
   ``upstream/placement/test_allocation_ghost_consumer.py``), then the
   reproducer runs ``--repeat`` times with stestr, the tree first on
   ``PYTHONPATH``: it passes, by showing the bug, the same each time;
3. ``git am 0002-*.patch`` (the fix), and the reproducer passes again, now
   asserting the correct state, while 0001's version of it fails;
4. placement's own tests of the changed code (:data:`OWN_TESTS`) pass;
5. ``shelvefix faults --backend real --verbose`` runs on the unpatched,
   then the patched placement. Its ``DELETE partly committed`` case fails
   placement's ``DELETE FROM consumers``: ``absorbed`` means compute found
   the allocations gone after the 500 and a ghost was left; ``failed
   cleanly, retry completed`` means the DELETE changed nothing: no ghost.

A step that does not do what it must raises :class:`StepFailed`.
``--regenerate`` first rebases the patches onto the sdist (``git am -3``,
the reproducer taken from ``upstream/placement``) and writes them again.

Usage::

    python tools/upstream_placement.py [--workdir DIR] [--version V]
        [--repeat N] [--regenerate]
"""

import argparse
import glob
import io
import os
import re
import shutil
import subprocess
import sys
import tarfile
import time

PROJECT = 'openstack-placement'
PATCH_DIR = os.path.join(os.path.dirname(os.path.dirname(
    os.path.abspath(__file__))), 'upstream', 'placement')
REPRO_FILE = 'test_allocation_ghost_consumer.py'
REPRO_PATH = 'placement/tests/functional/' + REPRO_FILE
REPRO_MODULE = 'placement.tests.functional.test_allocation_ghost_consumer'
#: placement's own tests of the changed code: (what, stestr filter).
OWN_TESTS = (
    ('unit objects/test_allocation',
     r'^placement\.tests\.unit\.objects\.test_allocation\.'),
    ('functional db/test_allocation',
     r'^placement\.tests\.functional\.db\.test_allocation\.'),
    ('functional db/test_consumer',
     r'^placement\.tests\.functional\.db\.test_consumer\.'),
    ('gabbi allocations*.yaml',
     r'^placement\.tests\.functional\.test_api\.allocations[-_]'),
)
#: What placement's tox.ini sets for its tests (less the locale).
TEST_ENV = {'OS_STDOUT_CAPTURE': '1', 'OS_STDERR_CAPTURE': '1',
            'OS_LOG_CAPTURE': '1', 'OS_TEST_TIMEOUT': '160',
            'PYTHONDONTWRITEBYTECODE': '1'}
# Fixed identity and dates, and no user or system configuration: the same
# commits and patches anywhere.
GIT_ENV = dict(('GIT_%s_%s' % (who, what), value)
               for who in ('AUTHOR', 'COMMITTER') for what, value in (
                   ('NAME', 'shelvefix dev'),
                   ('EMAIL', 'dev@shelvefix.invalid'),
                   ('DATE', '2026-12-01T12:00:00+0000')))
GIT_ENV.update(GIT_CONFIG_GLOBAL=os.devnull, GIT_CONFIG_NOSYSTEM='1')
GHOST_CASE = 'DELETE partly committed'
#: The fault matrix's verdicts on GHOST_CASE: ghost left or not.
VERDICTS = {'absorbed': True, 'failed cleanly, retry completed': False}


class StepFailed(Exception):
    """A step did not do what it must."""


def _run(cmd, timeout, text=True, **kwargs):
    try:
        return subprocess.run(cmd, capture_output=True, text=text,
                              timeout=timeout, **kwargs)
    except subprocess.TimeoutExpired:
        raise StepFailed('%s: no answer in %d s' % (' '.join(cmd), timeout))


def _check(cmd, timeout, **kwargs):
    """Run ``cmd``; its CompletedProcess (text), StepFailed if it failed."""
    proc = _run(cmd, timeout, **kwargs)
    if proc.returncode:
        raise StepFailed('%s failed (exit %d): %s' % (
            ' '.join(cmd), proc.returncode,
            (proc.stdout + proc.stderr).strip()[-3000:]))
    return proc


def git(tree, *args):
    """``git -C tree ARGS`` with the fixed identity; returns its stdout."""
    cmd = ['git', '-c', 'safe.directory=' + tree, '-C', tree] + list(args)
    return _check(cmd, 120, env=dict(os.environ, **GIT_ENV)).stdout


def patches(patch_dir=PATCH_DIR):
    """The reproducer's and the fix's patch files, in that order."""
    found = [glob.glob(os.path.join(patch_dir, '000%d-*.patch' % n))
             for n in (1, 2)]
    if [len(f) for f in found] != [1, 1]:
        raise StepFailed('%s must hold one 0001- and one 0002-*.patch'
                         % patch_dir)
    return [f[0] for f in found]


def download(version, dest):
    """The sdist of ``version`` in ``dest`` (downloaded once)."""
    def cached():
        return glob.glob(os.path.join(
            dest, 'openstack[-_]placement-%s.tar.gz' % version))
    if not cached():
        _check([sys.executable, '-m', 'pip', 'download', '--quiet',
                '--no-deps', '--no-binary', ':all:', '--dest', dest,
                '%s==%s' % (PROJECT, version)], 900)
    if not cached():
        raise StepFailed('pip downloaded no sdist of %s %s into %s'
                         % (PROJECT, version, dest))
    return cached()[0]


def _extract(archive, workdir, sdist):
    """Extract, refusing what would leave ``workdir``, owned by us.

    (To git run as root, a tree owned by the archive's users is
    "dubious".) Python's data filter does both where it exists (3.11.4).
    """
    if hasattr(tarfile, 'data_filter'):
        archive.extractall(workdir, filter='data')
        return
    root = os.path.realpath(workdir)
    for member in archive.getmembers():
        target = os.path.realpath(os.path.join(root, member.name))
        if (os.path.commonpath([root, target]) != root or member.issym() or
                member.islnk() or member.isdev()):
            raise StepFailed('refusing %s in %s' % (member.name, sdist))
    archive.extractall(root)
    uid, gid = os.getuid(), os.getgid()
    for member in archive.getmembers():
        os.lchown(os.path.join(root, member.name), uid, gid)


def import_tree(sdist, version, workdir):
    """Unpack ``sdist`` afresh as a git tree of one commit; its path."""
    with tarfile.open(sdist) as archive:
        top = {m.split('/')[0] for m in archive.getnames()}
        if len(top) != 1:
            raise StepFailed('%s has %d top directories' % (sdist, len(top)))
        tree = os.path.join(workdir, top.pop())
        shutil.rmtree(tree, ignore_errors=True)
        _extract(archive, workdir, sdist)
    git(tree, 'init', '--quiet', '--initial-branch', 'master')
    git(tree, 'add', '--all')
    git(tree, 'commit', '--quiet', '-m', 'Import %s %s' % (PROJECT, version))
    return tree


def test_env(tree):
    """The environment of placement's tests: the tree first on the path."""
    env = dict(os.environ, **TEST_ENV)
    path = [tree] + env.get('PYTHONPATH', '').split(os.pathsep)
    return dict(env, PYTHONPATH=os.pathsep.join(p for p in path if p))


def stestr(tree, repo, args, timeout=900):
    """Run stestr in the tree: ``{test id: (status, traceback)}``.

    :param args: stestr's arguments, ``run --subunit`` among them
    """
    import subunit
    import testtools
    os.makedirs(repo, exist_ok=True)
    cmd = [sys.executable, '-m', 'stestr', '--repo-url', repo] + list(args)
    proc = _run(cmd, timeout, text=False, cwd=tree, env=test_env(tree))
    tests = []
    result = testtools.StreamToDict(tests.append)
    result.startTestRun()
    subunit.ByteStreamToStreamResult(
        io.BytesIO(proc.stdout), non_subunit_name='stdout').run(result)
    result.stopTestRun()
    ran = {t['id']: (t['status'], t['details'].get('traceback'))
           for t in tests if t['status'] not in ('exists', None)}
    if not ran:
        raise StepFailed('%s ran no test (exit %d): %s' % (
            ' '.join(cmd), proc.returncode,
            proc.stderr.decode('utf-8', 'replace').strip()[-2000:]))
    return {test_id: (status, tb.as_text() if tb else '')
            for test_id, (status, tb) in ran.items()}


def _failures(results):
    return ['%s: %s\n%s' % (test_id, status, tb)
            for test_id, (status, tb) in sorted(results.items())
            if status not in ('success', 'skip', 'xfail')]


def reproducer(tree, repo, module=REPRO_MODULE):
    """Run the reproducer (no discovery) in the tree; its results."""
    return stestr(tree, repo, ['run', '--subunit', '-n', module])


def fault_matrix(tree):
    """``shelvefix faults --backend real`` on the tree's placement.

    :returns: (summary lines, the ghost case's verdict)
    """
    env = test_env(tree)
    where = _check([sys.executable, '-c',
                    'import placement; print(placement.__file__)'], 120,
                   env=env).stdout.strip()
    if not where.startswith(os.path.join(tree, '')):
        raise StepFailed('placement comes from %s, not %s' % (where, tree))
    cmd = [sys.executable, '-m', 'shelvefix', 'faults', '--backend', 'real',
           '--verbose']
    lines = _check(cmd, 900, env=env).stdout.splitlines()
    table = [line for line in lines if line.startswith('backend ') or
             (line.startswith('real ') and line.split()[1].isdigit())]
    case = [line for line in lines if GHOST_CASE in line]
    lost = [line for line in lines if line.startswith('Lost:')]
    verdict = case[0].rsplit(': ', 1)[-1] if len(case) == 1 else None
    if len(table) != 2 or verdict not in VERDICTS or len(lost) != 1:
        raise StepFailed('unexpected output from %s:\n%s'
                         % (' '.join(cmd), '\n'.join(lines)))
    return table + case + lost, verdict


def regenerate(version, sdist, workdir, patch_dir, say):
    """Rebase the patches onto ``sdist`` and write them again.

    The reproducer that 0001 adds is ``patch_dir``'s.
    """
    scratch = os.path.join(workdir, 'regenerate')
    shutil.rmtree(scratch, ignore_errors=True)
    os.makedirs(scratch)
    tree = import_tree(sdist, version, scratch)
    one, two = patches(patch_dir)
    git(tree, 'am', '--quiet', '-3', one)
    shutil.copyfile(os.path.join(patch_dir, REPRO_FILE),
                    os.path.join(tree, REPRO_PATH))
    if git(tree, 'status', '--porcelain'):
        git(tree, 'commit', '--quiet', '--all', '--amend', '--no-edit')
    git(tree, 'am', '--quiet', '-3', two)
    written = git(tree, 'format-patch', '--no-signature', '-o',
                  os.path.join(scratch, 'patches'), 'HEAD~2').split()
    for old in (one, two):
        os.remove(old)
    for new in written:
        shutil.copy(new, patch_dir)
    say('regenerated %s' % ', '.join(os.path.basename(p) for p in written))


def _check_reproducer(tree, repo, one, two, repeat, say):
    """Steps 2 and 3: the reproducer before and after the fix."""
    started = time.monotonic()
    runs = [reproducer(tree, repo) for _ in range(repeat)]
    per_run = (time.monotonic() - started) / repeat
    bad = _failures(runs[0])
    if bad:
        raise StepFailed('the reproducer fails on unpatched placement '
                         '(the bug is not shown):\n' + '\n'.join(bad))
    same = sum(1 for r in runs if r == runs[0])
    say('reproducer on unpatched placement: %d passed (the bug shown); '
        '%d/%d runs the same result (%.1f s a run)'
        % (len(runs[0]), same, repeat, per_run))
    if same != repeat:
        raise StepFailed('the reproducer is not deterministic')
    git(tree, 'am', '--quiet', two)
    patched = reproducer(tree, repo)
    bad = _failures(patched)
    if bad:
        raise StepFailed('the reproducer fails on patched placement:\n' +
                         '\n'.join(bad))
    # 0001's reproducer must notice the fix.
    old = os.path.join(tree, REPRO_PATH[:-3] + '_0001.py')
    with open(old, 'w') as f:
        f.write(git(tree, 'show', 'HEAD~1:' + REPRO_PATH))
    try:
        stale = reproducer(tree, repo, module=REPRO_MODULE + '_0001')
    finally:
        os.remove(old)
    if not _failures(stale):
        raise StepFailed("0001's reproducer still passes on the fix")
    say("git am %s; reproducer on patched placement: %d passed (the "
        "correct state); 0001's version fails there"
        % (os.path.basename(two), len(patched)))
    return {'tests': len(runs[0]), 'runs': repeat, 'same': same,
            'patched_tests': len(patched)}


def _check_own_tests(tree, repo, say):
    """Step 4: placement's own tests of the changed code, by group."""
    results = stestr(tree, repo, ['--test-path', './placement/tests',
                                  'run', '--subunit'] +
                     [regex for _what, regex in OWN_TESTS])
    groups = {}
    for what, regex in OWN_TESTS:
        statuses = [status for test_id, (status, _tb) in results.items()
                    if re.search(regex, test_id)]
        groups[what] = counts = {'tests': len(statuses),
                                 'passed': statuses.count('success'),
                                 'skipped': statuses.count('skip')}
        say('  %-30s %3d tests, %3d passed, %d skipped' % (
            what, counts['tests'], counts['passed'], counts['skipped']))
    bad = _failures(results)
    passed = sum(1 for s, _tb in results.values() if s == 'success')
    say("placement's own tests on the patched tree: %d tests, %d passed, "
        '%d failed' % (len(results), passed, len(bad)))
    if bad or not all(c['tests'] for c in groups.values()):
        raise StepFailed("placement's own tests: %d failed, groups %s:\n%s"
                         % (len(bad), groups, '\n'.join(bad)))
    return dict(groups, total=len(results), passed=passed, failed=len(bad))


def _check_faults(tree, say):
    """Step 5: the fault matrix on the unpatched, then patched placement."""
    found = {}
    for label, ref in (('unpatched', 'HEAD~1'), ('patched', 'HEAD')):
        started = time.monotonic()
        git(tree, 'checkout', '--quiet', ref, '--', 'placement')
        lines, verdict = fault_matrix(tree)
        found[label] = {'ghost_case': verdict, 'ghost': VERDICTS[verdict],
                        'summary': lines}
        say('shelvefix faults --backend real, %s placement (%.1f s):'
            % (label, time.monotonic() - started))
        for line in lines:
            say('  ' + line)
        say('  => %s' % ('ghost left: compute found the allocations gone '
                         'after the 500' if VERDICTS[verdict] else
                         'no ghost: the failed DELETE changed nothing'))
    if found['patched']['ghost']:
        raise StepFailed('the fault matrix still makes a ghost on the '
                         'patched placement')
    return found


def run(workdir, out, version=None, repeat=10, regen=False,
        patch_dir=PATCH_DIR):
    """Every step; the figures, or StepFailed at the first that fails."""
    def say(line):
        out.write(line + '\n')
        out.flush()

    def timed(name, func, *args):
        started = time.monotonic()
        result = func(*args)
        seconds[name] = round(time.monotonic() - started, 1)
        say('(%s: %.1f s)' % (name, seconds[name]))
        return result

    if version is None:
        from importlib import metadata
        try:
            version = metadata.version(PROJECT)
        except metadata.PackageNotFoundError:
            raise StepFailed('%s is not installed: give --version' % PROJECT)
    workdir = os.path.abspath(workdir)
    seconds = {}
    figures = {'version': version, 'seconds': seconds}
    sdist = timed('download', download, version,
                  os.path.join(workdir, 'download'))
    say('sdist: %s' % sdist)
    if regen:
        timed('regenerate', regenerate, version, sdist, workdir, patch_dir,
              say)
    one, two = patches(patch_dir)
    tree = timed('import', import_tree, sdist, version, workdir)
    repo = os.path.join(workdir, 'stestr')
    shutil.rmtree(repo, ignore_errors=True)
    git(tree, 'am', '--quiet', one)
    with open(os.path.join(patch_dir, REPRO_FILE), 'rb') as mine, \
            open(os.path.join(tree, REPRO_PATH), 'rb') as added:
        if mine.read() != added.read():
            raise StepFailed('%s differs from what %s adds (--regenerate '
                             'rebuilds the patches from it)'
                             % (REPRO_FILE, os.path.basename(one)))
    say('tree: %s, git am %s' % (tree, os.path.basename(one)))
    figures['reproducer'] = timed('reproducer', _check_reproducer, tree,
                                  repo, one, two, repeat, say)
    figures['own_tests'] = timed('own tests', _check_own_tests, tree, repo,
                                 say)
    figures['faults'] = timed('faults', _check_faults, tree, say)
    return figures


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.split('\n')[0])
    parser.add_argument('--workdir', help='for the sdist, tree and stestr',
                        default=os.path.join('.upstream', 'placement'))
    parser.add_argument('--version', help='default: the installed one')
    parser.add_argument('--repeat', type=int, default=10,
                        help='runs of the reproducer on unpatched placement')
    parser.add_argument('--regenerate', action='store_true',
                        help='rebase the patches and write them again')
    args = parser.parse_args(argv)
    started = time.monotonic()
    try:
        figures = run(args.workdir, sys.stdout, version=args.version,
                      repeat=args.repeat, regen=args.regenerate)
    except StepFailed as e:
        print('FAILED: %s' % e)
        return 1
    print('ok: openstack-placement %s in %.0f s' % (
        figures['version'], time.monotonic() - started))
    return 0


if __name__ == '__main__':
    sys.exit(main())
