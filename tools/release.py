"""A release as a user gets it: built, checked, installed elsewhere, run.

``tox -e release`` runs this, from a checkout (a clone with its tags:
pbr reads the version from git). It

1. builds the sdist and the wheel with ``python -m build`` into a
   temporary directory; a line of the build's output that warns fails it;
2. checks both with ``twine check --strict``;
3. checks their version: on a release tag, the tag's (``0.1.0``);
   elsewhere pbr's development version after the last tag
   (``0.1.1.dev3``);
4. checks the wheel holds what an installed shelvefix reads beside its
   package: the oslo-config-generator file, the benchmarks and tools its
   shipped tests load;
5. makes a virtualenv outside the checkout, installs the wheel with its
   ``placement`` extra and the test requirements, and, from a directory
   outside the checkout, runs the main job (``shelvefix race``) and the
   installed package's unit tests (stestr on
   ``site-packages/shelvefix/tests/unit``), where a test that cannot find
   a shipped file fails instead of skipping.

Each step prints a line; the first that fails ends the script with
status 1. Usage: ``python tools/release.py [--keep DIR]`` (``--keep``
leaves the artifacts and the virtualenv in DIR).
"""

import argparse
import glob
import os
import re
import shutil
import subprocess
import sys
import tempfile
import zipfile

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
#: What the wheel must hold beside the package (``*.data/data/``).
SHIPPED = ('etc/shelvefix/shelvefix-config-generator.conf',
           'share/shelvefix/benchmarks/bench_explorer.py',
           'share/shelvefix/benchmarks/figures.py',
           'share/shelvefix/tools/upstream.py',
           'share/shelvefix/upstream/contributor.ini')
WARNING = re.compile(r'warning', re.IGNORECASE)
#: Lines of the build that say "warning" about the machine, not the
#: project: byte-compiling off (PYTHONDONTWRITEBYTECODE) and pbr's own
#: manifest rules for files a checkout does not have.
HARMLESS = (re.compile(r'byte-compiling is disabled'),
            re.compile(r"no previously-included files (found )?matching "
                       r"'(\*\.pyc|\.gitreview)'"))


class ReleaseError(Exception):
    """A step failed: its one-line reason."""


def run(argv, cwd=None, env=None):
    """Run a command; its output, or ReleaseError with its last lines."""
    proc = subprocess.run(argv, cwd=cwd, env=env, stdin=subprocess.DEVNULL,
                          stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                          universal_newlines=True)
    if proc.returncode:
        tail = '\n'.join(proc.stdout.splitlines()[-20:])
        raise ReleaseError('%s exited %d:\n%s' % (
            ' '.join(argv), proc.returncode, tail))
    return proc.stdout


def build_warnings(output):
    """The lines of a build's output that warn about the project."""
    return [line for line in output.splitlines()
            if WARNING.search(line) and
            not any(pattern.search(line) for pattern in HARMLESS)]


def expected_version():
    """The release tag HEAD is on, or None (a development version)."""
    proc = subprocess.run(['git', 'describe', '--tags', '--exact-match'],
                          cwd=ROOT, stdout=subprocess.PIPE,
                          stderr=subprocess.DEVNULL, universal_newlines=True)
    return proc.stdout.strip() if proc.returncode == 0 else None


def version_of(wheel):
    """The version in a wheel's file name."""
    return os.path.basename(wheel).split('-')[1]


def check_version(wheel, sdist, tag):
    version = version_of(wheel)
    if not sdist.endswith('-%s.tar.gz' % version):
        raise ReleaseError('sdist %s and wheel %s differ in version'
                           % (os.path.basename(sdist), version))
    if tag is not None and version != tag:
        raise ReleaseError('HEAD is tagged %s but the wheel is %s'
                           % (tag, version))
    if tag is None and '.dev' not in version:
        raise ReleaseError('HEAD is not a release tag but the wheel is %s, '
                           'not a development version' % version)
    return version


def check_shipped(wheel):
    names = zipfile.ZipFile(wheel).namelist()
    data = {name.split('.data/data/', 1)[1] for name in names
            if '.data/data/' in name}
    missing = [path for path in SHIPPED if path not in data]
    if missing:
        raise ReleaseError('the wheel lacks %s' % ', '.join(missing))
    return len(data)


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument('--keep', metavar='DIR',
                        help='build and install in DIR, and leave it')
    args = parser.parse_args(argv)
    work = args.keep or tempfile.mkdtemp(prefix='shelvefix-release-')
    os.makedirs(work, exist_ok=True)
    try:
        return release(work)
    except ReleaseError as e:
        print('FAILED: %s' % e)
        return 1
    finally:
        if not args.keep:
            shutil.rmtree(work, ignore_errors=True)


def release(work):
    dist = os.path.join(work, 'dist')
    output = run([sys.executable, '-m', 'build', '--outdir', dist, ROOT])
    warned = build_warnings(output)
    if warned:
        raise ReleaseError('the build warned:\n%s' % '\n'.join(warned))
    wheel, = glob.glob(os.path.join(dist, '*.whl'))
    sdist, = glob.glob(os.path.join(dist, '*.tar.gz'))
    print('built %s and %s, no warning' % (os.path.basename(sdist),
                                           os.path.basename(wheel)))
    run([sys.executable, '-m', 'twine', 'check', '--strict', sdist, wheel])
    print('twine check --strict: both PASSED')
    tag = expected_version()
    version = check_version(wheel, sdist, tag)
    print('version %s (%s)' % (
        version, 'the release tag' if tag else
        'a development version: HEAD has no release tag'))
    print('the wheel holds %d files beside the package, the config '
          "generator's and the shipped tests' among them"
          % check_shipped(wheel))
    venv = os.path.join(work, 'venv')
    run([sys.executable, '-m', 'venv', venv])
    python = os.path.join(venv, 'bin', 'python')
    run([python, '-m', 'pip', 'install', '--quiet', '%s[placement]' % wheel,
         '-r', os.path.join(ROOT, 'test-requirements.txt')])
    elsewhere = os.path.join(work, 'elsewhere')
    os.makedirs(elsewhere, exist_ok=True)
    installed = run([python, '-c', 'import os, shelvefix; '
                     'print(os.path.dirname(shelvefix.__file__))'],
                    cwd=elsewhere).strip()
    if installed.startswith(ROOT + os.sep):
        raise ReleaseError('the virtualenv imports shelvefix from the '
                           'checkout (%s)' % installed)
    print('installed into a fresh virtualenv: %s' % installed)
    shown = run([os.path.join(venv, 'bin', 'shelvefix'), '--version'],
                cwd=elsewhere).strip()
    if shown != 'shelvefix %s' % version:
        raise ReleaseError('shelvefix --version says %r, not %s'
                           % (shown, version))
    run([os.path.join(venv, 'bin', 'shelvefix'), 'race'], cwd=elsewhere)
    print('shelvefix race (the main job): exit 0')
    env = dict(os.environ, SHELVEFIX_SHIPPED_REQUIRED='1')
    site = os.path.dirname(installed)
    output = run([python, '-m', 'stestr', '--test-path',
                  os.path.join(installed, 'tests', 'unit'), '--top-dir',
                  site, 'run'], cwd=elsewhere, env=env)
    totals = [line.strip() for line in output.splitlines()
              if re.match(r'\s*(Ran:| - Passed:| - Skipped:| - Failed:)',
                          line)]
    print('unit tests of the installed package: %s' % ', '.join(totals))
    print('release checks passed: %s' % version)
    return 0


if __name__ == '__main__':
    sys.exit(main())
