"""The trees a series is proven on, and the Python that runs their tests.

A :class:`Target` is one tree of nova or placement as a git repository in
the work directory, at one commit (its ``base``), and how its tests run:

* :func:`release`: the project's latest release on PyPI, its sdist
  unpacked and imported as one commit (what ``tox -e upstream`` proves by
  default);
* :func:`checkout`: a git checkout the user names (a clone of master, a
  stable branch, a change under review), cloned at its ``HEAD`` commit so
  that the checkout itself is never touched (its uncommitted changes are
  not taken).

The tests run with the Python that runs this tool (``tox -e upstream``'s,
which has nova's and placement's dependencies), the tree first on
``PYTHONPATH``. A tree whose ``requirements.txt`` or
``test-requirements.txt`` asks for what that Python has not got (master
moves ahead of the latest release) gets those requirements installed into
an overlay directory of its own, between the tree and the tool's
``site-packages``, under ``--constraints`` (openstack/requirements'
``upper-constraints.txt``) when given.

Only the standard library is imported at the top.
"""

import importlib.metadata
import os
import re
import shutil
import subprocess
import sys
import tarfile

import upstream_series

#: PyPI's name of each project.
DISTRIBUTIONS = {'nova': 'nova', 'placement': 'openstack-placement'}
#: What each project's own tox.ini sets for its tests, less the locale.
TEST_ENV = {'OS_STDOUT_CAPTURE': '1', 'OS_STDERR_CAPTURE': '1',
            'OS_LOG_CAPTURE': '1', 'OS_TEST_TIMEOUT': '160',
            'PYTHONDONTWRITEBYTECODE': '1'}
#: nova's two test modes (its tox.ini's functional and
#: functional-py313-threading environments); placement has one.
MODES = {
    'nova': {
        'eventlet': {'OS_NOVA_DISABLE_EVENTLET_PATCHING': 'False',
                     'NOVA_RAISE_ON_GREENLET_LEAK': 'True'},
        'threading': {'OS_NOVA_DISABLE_EVENTLET_PATCHING': 'True',
                      'NOVA_RAISE_ON_GREENLET_LEAK': 'True'},
    },
    'placement': {'-': {}},
}
#: nova's list of functional tests left out in the threading mode.
THREADING_EXCLUDES = 'threading_functional_test_excludes.txt'


class TargetError(Exception):
    """A tree cannot be had, or is not the project it should be."""


class Target(object):
    """A tree of a project, at its base commit, and how to run its tests.

    :ivar project: ``nova`` or ``placement``
    :ivar label: what the table calls it, e.g. ``nova 34.0.0`` or ``nova
        master@00a030403f``
    :ivar tree: the git repository in the work directory
    :ivar base: the commit every series starts from
    :ivar overlay: the directory of the requirements installed for the
        tree, or None
    """

    def __init__(self, project, label, tree, overlay=None):
        self.project = project
        self.label = label
        self.tree = tree
        self.base = upstream_series.git(
            tree, 'rev-parse', 'HEAD').stdout.strip()
        self.overlay = overlay

    def __repr__(self):
        return '<Target %s>' % self.label

    def env(self, mode):
        """The environment of the tree's tests in ``mode``."""
        env = dict(os.environ, **TEST_ENV)
        env.update(MODES[self.project][mode])
        path = [self.tree] + ([self.overlay] if self.overlay else []) + [
            p for p in env.get('PYTHONPATH', '').split(os.pathsep) if p]
        env['PYTHONPATH'] = os.pathsep.join(path)
        return env

    def modes(self):
        """The project's test modes."""
        return MODES[self.project]

    def default_env(self):
        """The environment of the first mode by name.

        For work outside the tests: the import check, an exploration.
        """
        return self.env(sorted(self.modes())[0])

    def excludes(self, mode, suite_path):
        """The project's exclusion list for ``mode`` and suite, or None."""
        path = os.path.join(self.tree, THREADING_EXCLUDES)
        if (mode == 'threading' and '/tests/functional' in suite_path and
                os.path.isfile(path)):
            return path
        return None

    def reset(self):
        """Back to the base commit, nothing else in the tree."""
        upstream_series.git(self.tree, 'am', '--abort', check=False)
        upstream_series.git(self.tree, 'checkout', '--quiet', '--force',
                            '--detach', self.base)
        upstream_series.git(self.tree, 'clean', '--quiet', '-fdx')


def _pip(*args):
    proc = subprocess.run((sys.executable, '-m', 'pip') + args, text=True,
                          stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                          timeout=1800)
    if proc.returncode:
        raise TargetError('pip %s: %s' % (' '.join(args),
                                          proc.stdout.strip()[-2000:]))
    return proc.stdout


def unpack(sdist, dest):
    """Unpack ``sdist`` into ``dest``, refusing paths that leave it.

    :returns: the one top directory the archive holds, unpacked afresh
    :raises TargetError: for a path that leaves ``dest``, a link, a
        device or more than one top directory
    """
    root = os.path.realpath(dest)
    with tarfile.open(sdist) as archive:
        tops = set()
        for member in archive.getmembers():
            target = os.path.realpath(os.path.join(root, member.name))
            if (os.path.commonpath([root, target]) != root or
                    member.issym() or member.islnk() or member.isdev()):
                raise TargetError('refusing %s in %s' % (member.name, sdist))
            tops.add(member.name.split('/')[0])
        if len(tops) != 1:
            raise TargetError('%s has %d top directories' % (sdist,
                                                             len(tops)))
        top = os.path.join(root, tops.pop())
        shutil.rmtree(top, ignore_errors=True)
        archive.extractall(root)
    return top


def release(project, workdir, version=None):
    """The latest release (or ``version``) of ``project`` as a tree."""
    dist = DISTRIBUTIONS[project]
    download = os.path.join(workdir, 'download')
    os.makedirs(download, exist_ok=True)
    pattern = re.compile(r'^%s-(\d[\w.]*)\.tar\.gz$'
                         % dist.replace('-', '[-_]'))
    if version is None or not [name for name in os.listdir(download)
                               if pattern.match(name) and
                               pattern.match(name).group(1) == version]:
        _pip('download', '--quiet', '--no-deps', '--no-binary', ':all:',
             '--dest', download, dist + ('==' + version if version else ''))
    sdists = {pattern.match(name).group(1): os.path.join(download, name)
              for name in os.listdir(download) if pattern.match(name)}
    if not sdists:
        raise TargetError('pip downloaded no sdist of %s into %s'
                          % (dist, download))
    if version is None:
        version = max(sdists, key=_version_key)
    tree = unpack(sdists[version], os.path.join(workdir, 'src'))
    upstream_series.git(tree, 'init', '--quiet')
    upstream_series.git(tree, 'add', '--all', '--force')
    upstream_series.git(tree, 'commit', '--quiet', '--no-verify', '-m',
                        'Import %s %s' % (dist, version))
    return _target(project, '%s %s' % (project, version), tree, workdir,
                   None)


def _version_key(version):
    return [int(part) if part.isdigit() else -1
            for part in re.split(r'[.]', version)]


def checkout(project, path, workdir, constraints=None):
    """The commit a git checkout of ``project`` is at, as a tree."""
    source = os.path.abspath(path)
    if not os.path.isfile(os.path.join(source, project, '__init__.py')):
        raise TargetError('%s is not a %s tree (no %s/__init__.py)'
                          % (path, project, project))
    head = upstream_series.git(source, 'rev-parse', 'HEAD', check=False)
    if head.returncode:
        raise TargetError('%s is not a git checkout' % path)
    head = head.stdout.strip()
    branch = upstream_series.git(source, 'rev-parse', '--abbrev-ref',
                                 'HEAD').stdout.strip()
    tree = os.path.join(workdir, 'src', '%s-%s' % (project, head[:10]))
    shutil.rmtree(tree, ignore_errors=True)
    os.makedirs(os.path.dirname(tree), exist_ok=True)
    upstream_series.git(os.path.dirname(tree), 'clone', '--quiet',
                        '--shared', '--no-checkout', source, tree)
    upstream_series.git(tree, 'checkout', '--quiet', '--detach', head)
    label = '%s %s@%s' % (project, 'HEAD' if branch == 'HEAD' else branch,
                          head[:10])
    return _target(project, label, tree, workdir, constraints)


def _requirement(line):
    try:
        from packaging import requirements
    except ImportError:  # pip carries its own
        from pip._vendor.packaging import requirements
    line = line.split('#', 1)[0].strip()
    if not line or line.startswith('-'):
        return None
    try:
        return requirements.Requirement(line)
    except requirements.InvalidRequirement:
        return None


def _version(name, path):
    """The version of ``name`` the first of ``path`` has, or None."""
    for dist in importlib.metadata.distributions(name=name, path=path):
        return dist.version
    return None


def _unmet(requirements, path):
    missing = []
    for req in requirements:
        if req is None or (req.marker is not None and
                           not req.marker.evaluate({'extra': ''})):
            continue
        have = _version(req.name, path)
        if have is None or (req.specifier and not req.specifier.contains(
                have, prereleases=True)):
            missing.append(str(req))
    return missing


def unsatisfied(tree, path=None):
    """The tree's requirements the packages on ``path`` do not meet."""
    requirements = []
    for name in ('requirements.txt', 'test-requirements.txt'):
        if os.path.isfile(os.path.join(tree, name)):
            with open(os.path.join(tree, name)) as f:
                requirements += [_requirement(line) for line in f]
    return _unmet(requirements, sys.path if path is None else path)


def install(needed, overlay, constraints=None, rounds=10):
    """Install ``needed`` into ``overlay``, then what those need in turn.

    What neither the overlay nor this Python has, ``rounds`` times at most.
    """
    path = [overlay] + sys.path
    for _ in range(rounds):
        if not needed:
            return
        _pip('install', '--quiet', '--no-deps', '--target', overlay,
             *(['--constraint', constraints] if constraints else []),
             *needed)
        requirements = []
        for dist in importlib.metadata.distributions(path=[overlay]):
            requirements += [_requirement(r) for r in dist.requires or ()]
        needed = _unmet(requirements, path)
    raise TargetError('the requirements of %s still need %s after %d '
                      'rounds' % (overlay, ', '.join(needed), rounds))


def _target(project, label, tree, workdir, constraints):
    overlay = None
    needed = unsatisfied(tree)
    if needed:
        overlay = os.path.join(workdir, 'overlay',
                               os.path.basename(tree))
        marker = os.path.join(overlay, '.requirements')
        wanted = '\n'.join(sorted(needed) + [constraints or ''])
        if not (os.path.isfile(marker) and open(marker).read() == wanted):
            shutil.rmtree(overlay, ignore_errors=True)
            install(needed, overlay, constraints)
            with open(marker, 'w') as f:
                f.write(wanted)
    target = Target(project, label, tree, overlay)
    proc = subprocess.run(
        (sys.executable, '-c', 'import %s; print(%s.__file__)'
         % (project, project)), env=target.default_env(),
        cwd=tree, text=True, stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT, timeout=300)
    where = proc.stdout.strip().splitlines()[-1:] or ['nothing']
    if proc.returncode or not where[0].startswith(os.path.join(tree, '')):
        raise TargetError('%s imports %s from %s, not from its tree %s'
                          % (label, project, where[0], tree))
    return target
