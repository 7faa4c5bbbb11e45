"""``shelvefix check`` on nova's releases, as PyPI serves them.

The first and the last release of every series since Queens (and Pike's
last) that pip fetches are downloaded as wheels, nothing built, and checked
as files, with every fix of the lifecycle asked about; so are, for each fix
backported in the middle of a series, the last release of that series
without it and the first with it. Each verdict must be the one nova's
history gives: whether the release's tag descends from the fix commit or
one of its backports (``git merge-base --is-ancestor``, on nova's
repository):

* bug 1798688, 6369f39244: Stein on (backported to stable/rocky only after
  its last release);
* bug 2025480, f1dc4ec39b: 2024.1 on, and backported to 26.2.2 (Zed),
  27.3.0 (2023.1) and 28.1.0 (2023.2);
* bug 1862633, e65d4a131a: Ussuri on, and backported to 19.2.0 (Stein) and
  20.2.0 (Train);
* host lost: no release.

The downloads need PyPI, so the tests run only when
``SHELVEFIX_NOVA_RELEASES`` names a directory to keep the wheels in, as
``tox -e releases`` does; otherwise they skip.
"""

import glob
import os
import subprocess
import sys

import testscenarios
import testtools

from shelvefix.novacheck import check
from shelvefix.novacheck import fixes
from shelvefix.novacheck import outcome

load_tests = testscenarios.load_tests_apply_scenarios

CACHE_VARIABLE = 'SHELVEFIX_NOVA_RELEASES'
# Series name, first and last release pip fetches from PyPI.
# (Current pip refuses 21.0.0: its metadata has an invalid requirement.)
SERIES = [
    ('pike', '16.1.8', None),
    ('queens', '17.0.7', '17.0.13'),
    ('rocky', '18.0.2', '18.3.0'),
    ('stein', '19.0.0', '19.3.2'),
    ('train', '20.0.0', '20.6.1'),
    ('ussuri', '21.1.0', '21.2.4'),
    ('victoria', '22.0.0', '22.4.0'),
    ('wallaby', '23.0.0', '23.2.2'),
    ('xena', '24.0.0', '24.2.1'),
    ('yoga', '25.0.0', '25.3.0'),
    ('zed', '26.0.0', '26.3.0'),
    ('2023.1', '27.0.0', '27.5.1'),
    ('2023.2', '28.0.0', '28.3.1'),
    ('2024.1', '29.0.0', '29.4.0'),
    ('2024.2', '30.0.0', '30.3.0'),
    ('2025.1', '31.0.0', '31.3.1'),
    ('2025.2', '32.0.0', '32.2.1'),
    ('2026.1', '33.0.0', '33.0.2'),
    ('2026.2', '34.0.0', None),
]
# Per fix: the first series every release of which has it, and for the
# series before that, the first release with a backport.
HISTORY = {
    '1798688': (19, {}),
    '2025480': (29, {26: '26.2.2', 27: '27.3.0', 28: '28.1.0'}),
    '1862633': (21, {19: '19.2.0', 20: '20.2.0'}),
    'host-lost': (None, {}),
}
# The last release without a backport, for each backport above.
LAST_WITHOUT = {'26.2.2': '26.2.1', '27.3.0': '27.2.0', '28.1.0': '28.0.1',
                '19.2.0': '19.1.0', '20.2.0': '20.1.1'}


# Each release is checked once, for all its tests.
REPORTS = {}


def _key(version):
    return tuple(int(part) for part in version.split('.'))


def has_fix(bug, version):
    """Whether nova ``version`` has the fix, as its history says."""
    since, backports = HISTORY[bug]
    major = _key(version)[0]
    if since is not None and major >= since:
        return True
    first = backports.get(major)
    return first is not None and _key(version) >= _key(first)


def releases():
    """``(series, version)`` of every release checked, oldest first."""
    found = set()
    for series, first, last in SERIES:
        found.update((series, v) for v in (first, last) if v)
        for backport, before in LAST_WITHOUT.items():
            if _key(backport)[0] == _key(first)[0]:
                found.update([(series, backport), (series, before)])
    return sorted(found, key=lambda pair: _key(pair[1]))


def wheel(version, cache):
    """The wheel of nova ``version`` in ``cache``, downloaded if missing."""
    pattern = os.path.join(cache, 'nova-%s-*.whl' % version)
    found = glob.glob(pattern)
    if not found:
        subprocess.run(
            [sys.executable, '-m', 'pip', 'download', '--quiet', '--no-deps',
             '--only-binary=:all:', '--dest', cache, 'nova==%s' % version],
            check=True, stdout=subprocess.PIPE, stderr=subprocess.STDOUT)
        found = glob.glob(pattern)
    return found[0]


class ReleaseTestCase(testscenarios.WithScenarios, testtools.TestCase):

    scenarios = [('%s-%s' % (series, version),
                  {'series': series, 'version': version})
                 for series, version in releases()]

    def setUp(self):
        super(ReleaseTestCase, self).setUp()
        cache = os.environ.get(CACHE_VARIABLE)
        if not cache:
            self.skipTest('%s is not set; run "tox -e releases"'
                          % CACHE_VARIABLE)
        os.makedirs(cache, exist_ok=True)
        try:
            self.wheel = wheel(self.version, cache)
        except subprocess.CalledProcessError as e:
            self.fail('pip could not download nova %s: %s'
                      % (self.version, e.stdout.decode(errors='replace')))
        if self.version not in REPORTS:
            REPORTS[self.version] = fixes.check_path(self.wheel, fixes.BUGS)
        self.report = REPORTS[self.version]

    def test_bug_1798688(self):
        result = self.report.offload
        rendered = result.render()
        verdict = (check.FIXED if has_fix('1798688', self.version)
                   else check.LEGACY)
        self.assertEqual(verdict, result.status, rendered)
        self.assertEqual(self.version, result.version)
        free = result.free.innermost.node.lineno
        save = result.save.innermost.node.lineno
        if verdict == check.FIXED:
            self.assertLess(free, save, rendered)
        else:
            self.assertLess(save, free, rendered)
        # The path that decided holds both lines, in that order.
        lines = [step.line for step in result.path]
        self.assertIn(free, lines)
        self.assertIn(save, lines)
        self.assertEqual(sorted([free, save]),
                         [n for n in lines if n in (free, save)])

    def assertFix(self, bug):
        verdict = self.report.verdicts[bug]
        expected = (outcome.FIXED if has_fix(bug, self.version)
                    else outcome.MISSING)
        self.assertEqual(expected, verdict.status, self.report.render())
        self.assertTrue(verdict.evidence, self.report.render())

    def test_bug_2025480(self):
        self.assertFix('2025480')

    def test_bug_1862633(self):
        self.assertFix('1862633')

    def test_host_lost(self):
        self.assertFix('host-lost')

    def test_exit_status_answers_for_the_fixes_asked(self):
        expected = [0 if has_fix(bug, self.version) else 1
                    for bug in fixes.BUGS]
        self.assertEqual(max(expected), self.report.exit_code)


class HistoryTestCase(testtools.TestCase):
    """The table of releases itself: every boundary is checked."""

    def test_every_backport_has_both_sides(self):
        versions = [version for _series, version in releases()]
        for backport, before in LAST_WITHOUT.items():
            self.assertIn(backport, versions)
            self.assertIn(before, versions)
            for bug, (_since, backports) in HISTORY.items():
                if backport in backports.values():
                    self.assertTrue(has_fix(bug, backport))
                    self.assertFalse(has_fix(bug, before))

    def test_host_lost_is_in_no_release(self):
        self.assertFalse(any(has_fix('host-lost', version)
                             for _series, version in releases()))
