"""``shelvefix check`` on nova's releases, as PyPI serves them.

The first and the last release of every series since Queens (and Pike's
last) that pip fetches are downloaded as wheels, nothing built, and checked
as files: the verdict must be the one nova's history gives. The fix (change
I2a6ccaff904c1f0759d55feeeef0ec1da32c65df) merged in Stein; Rocky's last
release, 18.3.0, still has the legacy order.

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

load_tests = testscenarios.load_tests_apply_scenarios

CACHE_VARIABLE = 'SHELVEFIX_NOVA_RELEASES'
# Series name, first and last release pip fetches from PyPI, verdict.
# (Current pip refuses 21.0.0: its metadata has an invalid requirement.)
SERIES = [
    ('pike', '16.1.8', None, check.LEGACY),
    ('queens', '17.0.7', '17.0.13', check.LEGACY),
    ('rocky', '18.0.2', '18.3.0', check.LEGACY),
    ('stein', '19.0.0', '19.3.2', check.FIXED),
    ('train', '20.0.0', '20.6.1', check.FIXED),
    ('ussuri', '21.1.0', '21.2.4', check.FIXED),
    ('victoria', '22.0.0', '22.4.0', check.FIXED),
    ('wallaby', '23.0.0', '23.2.2', check.FIXED),
    ('xena', '24.0.0', '24.2.1', check.FIXED),
    ('yoga', '25.0.0', '25.3.0', check.FIXED),
    ('zed', '26.0.0', '26.3.0', check.FIXED),
    ('2023.1', '27.0.0', '27.5.1', check.FIXED),
    ('2023.2', '28.0.0', '28.3.1', check.FIXED),
    ('2024.1', '29.0.0', '29.4.0', check.FIXED),
    ('2024.2', '30.0.0', '30.3.0', check.FIXED),
    ('2025.1', '31.0.0', '31.3.1', check.FIXED),
    ('2025.2', '32.0.0', '32.2.1', check.FIXED),
    ('2026.1', '33.0.0', '33.0.2', check.FIXED),
    ('2026.2', '34.0.0', None, check.FIXED),
]
RELEASES = [(series, version, verdict)
            for series, first, last, verdict in SERIES
            for version in (first, last) if version]


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
                  {'series': series, 'version': version, 'verdict': verdict})
                 for series, version, verdict in RELEASES]

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

    def test_verdict(self):
        result = check.check_path(self.wheel)
        rendered = result.render()
        self.assertEqual(self.verdict, result.status, rendered)
        self.assertEqual(self.version, result.version)
        free = result.free.innermost.node.lineno
        save = result.save.innermost.node.lineno
        if self.verdict == check.FIXED:
            self.assertLess(free, save, rendered)
        else:
            self.assertLess(save, free, rendered)
        # The path that decided holds both lines, in that order.
        lines = [step.line for step in result.path]
        self.assertIn(free, lines)
        self.assertIn(save, lines)
        self.assertEqual(sorted([free, save]),
                         [n for n in lines if n in (free, save)])
