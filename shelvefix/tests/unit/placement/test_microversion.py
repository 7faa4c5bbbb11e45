"""Tests for shelvefix.placement.microversion."""

import testtools

from shelvefix.placement import microversion


def environ(value=None):
    env = {}
    if value is not None:
        env['HTTP_OPENSTACK_API_VERSION'] = value
    return env


class MicroversionTestCase(testtools.TestCase):

    def test_range(self):
        self.assertEqual('1.0', microversion.min_version_string())
        self.assertEqual('1.39', microversion.max_version_string())
        self.assertEqual(40, len(microversion.VERSIONS))

    def test_default_is_minimum(self):
        self.assertEqual((1, 0), microversion.from_environ(environ()))
        self.assertEqual((1, 0), microversion.from_environ(
            environ('compute 2.1')))

    def test_parsing(self):
        cases = {
            'placement 1.28': (1, 28),
            'placement latest': (1, 39),
            'PLACEMENT 1.5': (1, 5),
            'placement  latest ': (1, 39),
            'placement 1.01': (1, 1),
            'compute 2.1, placement 1.38': (1, 38),
            'placement 1.3, placement 1.4': (1, 4),
            'placement 1.x, placement 1.3': (1, 3),
            'placement': (1, 0),
        }
        for header, expected in cases.items():
            version = microversion.from_environ(environ(header))
            self.assertEqual(expected, version, header)
        self.assertEqual('1.28', str(microversion.Version(1, 28)))

    def test_not_a_version_is_invalid(self):
        cases = {
            'placement 1.28x': "invalid version string: 1.28x; invalid "
                               "literal for int() with base 10: '28x'",
            'placement 1': "invalid version string: 1; Version.__new__() "
                           "missing 1 required positional argument: "
                           "'minor'",
            'placement 1.2.3': "invalid version string: 1.2.3; invalid "
                               "literal for int() with base 10: '2.3'",
            'placement LATEST': "invalid version string: LATEST; invalid "
                                "literal for int() with base 10: 'LATEST'",
        }
        for header, message in cases.items():
            exc = self.assertRaises(microversion.InvalidVersion,
                                    microversion.from_environ,
                                    environ(header))
            self.assertEqual(message, str(exc))

    def test_out_of_range_is_unacceptable(self):
        for value in ('1.40', '0.9', '2.0'):
            exc = self.assertRaises(microversion.UnacceptableVersion,
                                    microversion.from_environ,
                                    environ('placement %s' % value))
            self.assertEqual('Unacceptable version header: %s' % value,
                             str(exc))

    def test_matches(self):
        version = microversion.Version(1, 28)
        self.assertTrue(version.matches((1, 28)))
        self.assertTrue(version.matches((1, 0), (1, 28)))
        self.assertFalse(version.matches((1, 29)))
        self.assertFalse(version.matches((1, 0), (1, 27)))
        self.assertTrue(microversion.Version(1, 39).matches((1, 38)))
