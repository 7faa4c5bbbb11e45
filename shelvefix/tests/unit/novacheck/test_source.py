"""Tests for finding nova's compute manager without importing nova."""

import importlib.machinery
import importlib.metadata
import os
import sys
import tarfile
from unittest import mock
import zipfile

import fixtures
import testtools

from shelvefix.novacheck import source


def write(path, text='', mode='w'):
    os.makedirs(os.path.dirname(path), exist_ok=True)
    with open(path, mode) as f:
        f.write(text)
    return path


class FakeDistribution(object):

    def __init__(self, root, version='34.0.0'):
        self.root = root
        self.version = version

    def locate_file(self, path):
        return os.path.join(self.root, path)


class FromPathTestCase(testtools.TestCase):

    def setUp(self):
        super(FromPathTestCase, self).setUp()
        self.root = self.useFixture(fixtures.TempDir()).path
        self.manager = write(os.path.join(self.root, 'nova', 'compute',
                                          'manager.py'), 'x = 1\n')

    def test_source_tree(self):
        found = source.from_path(self.root)
        self.assertEqual(self.manager, found.filename)
        self.assertEqual('nova/compute/manager.py', found.display)
        self.assertIsNone(found.version)
        self.assertEqual('x = 1\n', found.read())

    def test_package_directory(self):
        found = source.from_path(os.path.join(self.root, 'nova'))
        self.assertEqual(self.manager, found.filename)
        self.assertEqual('nova/compute/manager.py', found.display)

    def test_file(self):
        found = source.from_path(self.manager)
        self.assertEqual(self.manager, found.filename)
        self.assertEqual(self.manager, found.display)

    def test_nothing_there(self):
        empty = self.useFixture(fixtures.TempDir()).path
        e = self.assertRaises(source.SourceError, source.from_path, empty)
        self.assertEqual('file not found: neither %s nor %s exists' % (
            os.path.join(empty, 'nova', 'compute', 'manager.py'),
            os.path.join(empty, 'compute', 'manager.py')), str(e))
        missing = os.path.join(empty, 'nope')
        e = self.assertRaises(source.SourceError, source.from_path, missing)
        self.assertEqual('file not found: %s does not exist' % missing,
                         str(e))

    def test_unreadable(self):
        bad = write(os.path.join(self.root, 'latin1.py'), b'x = "\xe9"\n',
                    mode='wb')
        e = self.assertRaises(source.SourceError,
                              source.from_path(bad).read)
        self.assertIn('cannot read %s: not UTF-8' % bad, str(e))
        gone = source.ManagerFile(os.path.join(self.root, 'gone.py'), 'g')
        e = self.assertRaises(source.SourceError, gone.read)
        self.assertIn('cannot read %s: No such file or directory'
                      % gone.filename, str(e))


class InstalledTestCase(testtools.TestCase):
    """``--installed`` asks the finders, never the importer."""

    def setUp(self):
        super(InstalledTestCase, self).setUp()
        self.site = self.useFixture(fixtures.TempDir()).path
        self.package = os.path.join(self.site, 'nova')
        write(os.path.join(self.package, '__init__.py'),
              'raise RuntimeError("nova must not be imported")\n')
        self.manager = write(os.path.join(self.package, 'compute',
                                          'manager.py'))
        # A real nova imported by another test in this process would be
        # found in sys.modules first; hide it so the finders are asked.
        hidden = mock.patch.dict(sys.modules)
        hidden.start()
        self.addCleanup(hidden.stop)
        for name in [n for n in sys.modules
                     if n == 'nova' or n.startswith('nova.')]:
            del sys.modules[name]

    def finder(self, name):
        return importlib.machinery.PathFinder.find_spec(name, [self.site])

    def test_finds_the_package_without_importing_it(self):
        found = source.installed(
            find_spec=self.finder,
            distribution=lambda name: FakeDistribution(self.site))
        self.assertEqual(self.manager, found.filename)
        self.assertEqual('nova/compute/manager.py', found.display)
        self.assertEqual('34.0.0', found.version)
        self.assertNotIn('nova', sys.modules)

    def test_version_of_another_copy_is_not_trusted(self):
        other = self.useFixture(fixtures.TempDir()).path
        found = source.installed(
            find_spec=self.finder,
            distribution=lambda name: FakeDistribution(other))
        self.assertIsNone(found.version)

    def test_no_distribution_metadata(self):
        def missing(name):
            raise importlib.metadata.PackageNotFoundError(name)
        found = source.installed(find_spec=self.finder, distribution=missing)
        self.assertIsNone(found.version)

    def test_not_installed(self):
        e = self.assertRaises(source.SourceError, source.installed,
                              find_spec=lambda name: None)
        self.assertEqual('file not found: nova is not installed for %s'
                         % sys.executable, str(e))

    def test_finder_fails(self):
        def broken(name):
            raise ValueError('nova.__spec__ is None')
        e = self.assertRaises(source.SourceError, source.installed,
                              find_spec=broken)
        self.assertEqual('cannot locate the nova package: nova.__spec__ is '
                         'None', str(e))

    def test_package_without_compute_manager(self):
        os.remove(self.manager)
        e = self.assertRaises(source.SourceError, source.installed,
                              find_spec=self.finder)
        self.assertEqual('file not found: the installed nova package (%s) '
                         'has no compute/manager.py'
                         % os.path.join(self.package, '__init__.py'), str(e))

    def test_real_finder_imports_nothing(self):
        # The default finder, on whatever this Python has installed.
        self.useFixture(fixtures.MonkeyPatch('sys.path',
                                             [self.site] + sys.path))
        found = source.installed()
        self.assertEqual(self.manager, found.filename)
        self.assertNotIn('nova', sys.modules)


class FromArchiveTestCase(testtools.TestCase):
    """A release as ``pip download nova==X`` fetches it."""

    def setUp(self):
        super(FromArchiveTestCase, self).setUp()
        self.root = self.useFixture(fixtures.TempDir()).path

    def test_wheel(self):
        path = os.path.join(self.root, 'nova-18.3.0-py2.py3-none-any.whl')
        with zipfile.ZipFile(path, 'w') as archive:
            archive.writestr('nova/compute/manager.py', 'x = 18\n')
            archive.writestr('nova/tests/compute/manager.py', 'nope\n')
        found = source.from_path(path)
        self.assertEqual(('nova/compute/manager.py', '18.3.0'),
                         (found.display, found.version))
        self.assertEqual('x = 18\n', found.read())

    def test_sdist(self):
        manager = write(os.path.join(self.root, 'src', 'nova-19.0.0', 'nova',
                                     'compute', 'manager.py'), 'x = 19\n')
        path = os.path.join(self.root, 'nova-19.0.0.tar.gz')
        with tarfile.open(path, 'w:gz') as archive:
            archive.add(manager, 'nova-19.0.0/nova/compute/manager.py')
        found = source.from_path(path)
        self.assertEqual(('nova-19.0.0/nova/compute/manager.py', '19.0.0'),
                         (found.member, found.version))
        self.assertEqual('x = 19\n', found.read())

    def test_archive_without_a_manager(self):
        path = os.path.join(self.root, 'nova-1.0-py3-none-any.whl')
        with zipfile.ZipFile(path, 'w') as archive:
            archive.writestr('nova/__init__.py', '')
        e = self.assertRaises(source.SourceError, source.from_path, path)
        self.assertIn('no nova/compute/manager.py in', str(e))
        broken = write(os.path.join(self.root, 'nova-2.0.tar.gz'), 'junk')
        e = self.assertRaises(source.SourceError, source.from_path, broken)
        self.assertIn('nova-2.0.tar.gz: not a wheel, sdist or nova tree',
                      str(e))
