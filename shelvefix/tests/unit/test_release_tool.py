"""``tools/release.py``: what fails a release before anything installs."""

import os
import zipfile

import fixtures
import testtools

from shelvefix.tests import shipped


class ReleaseToolTestCase(testtools.TestCase):

    def setUp(self):
        super().setUp()
        self.release = shipped.use_script(self, 'tools', 'release.py')
        self.tmp = self.useFixture(fixtures.TempDir()).path

    def test_a_warning_of_the_project_fails_the_build(self):
        output = '\n'.join([
            'running bdist_wheel',
            'warning: build_py: byte-compiling is disabled, skipping.',
            "warning: no previously-included files found matching "
            "'.gitreview'",
            'WARNING License classifiers are deprecated.',
            "/x/dist.py:1: SetuptoolsWarning: Package 'a.b' is absent"])
        self.assertEqual(
            ['WARNING License classifiers are deprecated.',
             "/x/dist.py:1: SetuptoolsWarning: Package 'a.b' is absent"],
            self.release.build_warnings(output))
        self.assertEqual([], self.release.build_warnings('all fine\n'))

    def test_the_version_follows_the_tag(self):
        wheel = 'dist/shelvefix-0.1.0-py3-none-any.whl'
        sdist = 'dist/shelvefix-0.1.0.tar.gz'
        self.assertEqual('0.1.0', self.release.check_version(
            wheel, sdist, '0.1.0'))
        error = self.release.ReleaseError
        self.assertRaisesRegex(error, 'HEAD is tagged 0.2.0 but the wheel '
                               'is 0.1.0', self.release.check_version,
                               wheel, sdist, '0.2.0')
        self.assertRaisesRegex(error, 'not a development version',
                               self.release.check_version, wheel, sdist,
                               None)
        self.assertEqual('0.1.1.dev3', self.release.check_version(
            'shelvefix-0.1.1.dev3-py3-none-any.whl',
            'shelvefix-0.1.1.dev3.tar.gz', None))
        self.assertRaisesRegex(error, 'differ in version',
                               self.release.check_version, wheel,
                               'shelvefix-0.1.1.tar.gz', '0.1.0')

    def wheel(self, data):
        path = os.path.join(self.tmp, 'shelvefix-1-py3-none-any.whl')
        with zipfile.ZipFile(path, 'w') as z:
            z.writestr('shelvefix/__init__.py', '')
            for name in data:
                z.writestr('shelvefix-1.data/data/' + name, '')
        return path

    def test_the_wheel_must_hold_what_the_package_reads(self):
        self.assertEqual(len(self.release.SHIPPED) + 1,
                         self.release.check_shipped(self.wheel(
                             self.release.SHIPPED + ('share/x',))))
        e = self.assertRaises(
            self.release.ReleaseError, self.release.check_shipped,
            self.wheel(self.release.SHIPPED[1:]))
        self.assertEqual('the wheel lacks %s' % self.release.SHIPPED[0],
                         str(e))
