"""Which nova the nova target runs, and what of it the target needs.

Nothing here imports nova: the unit tests' process has loaded
:mod:`shelvefix.conf`, whose ``[placement]`` group nova's would clash
with. The surface check runs over fake modules.
"""

import functools
import inspect
import os
import sys
import types
from unittest import mock
import zipfile

import fixtures

from shelvefix import nova
from shelvefix.nova import tree
from shelvefix.tests import base


class LocateTestCase(base.TestCase):
    """``tree.locate``: the ``sys.path`` entry of the nova named."""

    def setUp(self):
        super(LocateTestCase, self).setUp()
        self.root = self.useFixture(fixtures.TempDir()).path

    def test_a_missing_path_is_named(self):
        path = os.path.join(self.root, 'no-nova-here')
        error = self.assertRaises(nova.NovaUnusable, tree.locate, path)
        self.assertEqual('--nova %s: no such file or directory' % path,
                         str(error))

    def test_a_directory_without_nova_is_not_a_tree(self):
        os.mkdir(os.path.join(self.root, 'nova'))
        error = self.assertRaises(nova.NovaUnusable, tree.locate,
                                  self.root)
        self.assertEqual(
            '--nova %s: not a nova source tree, unpacked sdist or wheel '
            '(no nova/__init__.py in it)' % self.root, str(error))

    def test_a_tree_is_its_absolute_path(self):
        os.mkdir(os.path.join(self.root, 'nova'))
        open(os.path.join(self.root, 'nova', '__init__.py'), 'w').close()
        with mock.patch('os.getcwd', return_value=self.root):
            entry, description = tree.locate('.')
        self.assertEqual(self.root, entry)
        self.assertEqual('the tree %s' % self.root, description)

    def test_a_wheel_is_put_on_the_path_as_it_is(self):
        path = os.path.join(self.root, 'nova-34.0.0-py3-none-any.whl')
        open(path, 'wb').close()
        self.assertEqual((path, 'the wheel %s' % path), tree.locate(path))

    def test_no_installed_nova_says_how_to_install_it(self):
        with mock.patch('importlib.util.find_spec',
                        return_value=None) as find_spec:
            error = self.assertRaises(nova.NovaUnusable, tree.locate, None)
        find_spec.assert_called_once_with('nova')
        self.assertIn('nova is not installed', str(error))
        self.assertIn('pip install "shelvefix[nova]"', str(error))
        self.assertIn('--nova PATH', str(error))

    def test_the_installed_nova_is_found_without_importing_it(self):
        with mock.patch('importlib.util.find_spec',
                        return_value=mock.sentinel.spec):
            self.assertEqual((None, 'the installed nova'), tree.locate())
        self.assertNotIn('nova', sys.modules)


def _traced(func):
    """A decorator hiding ``func``'s signature behind ``*args, **kwargs``."""
    @functools.wraps(func)
    def wrapper(*args, **kwargs):
        return func(*args, **kwargs)
    return wrapper


class _Manager(object):

    def complete(self, context, instance, migration=None):
        pass

    def short(self, context):
        pass

    def anything(self, context, **kwargs):
        pass

    @_traced
    def decorated(self, context):
        pass


def _helper(adapter):
    pass


class SurfaceTestCase(base.TestCase):
    """``tree.surface_gaps``: what of the surface nova lacks."""

    def setUp(self):
        super(SurfaceTestCase, self).setUp()
        manager = types.ModuleType('fake_nova_manager')
        manager.Manager = _Manager
        utils = types.ModuleType('fake_nova_utils')
        utils.helper = _helper
        self.useFixture(fixtures.MockPatchObject(tree, 'SURFACE', {
            'fake_nova_manager': {
                'Manager': {
                    'complete': ('context', 'instance', 'migration'),
                    'short': ('context', 'instance'),
                    'gone': ('context',),
                    'anything': ('context', 'instance', 'whatever'),
                    'decorated': ('context', 'instance'),
                },
                'Absent': {'method': ()},
            },
            'fake_nova_utils': {None: {'helper': ('adapter',),
                                       'vanished': ()}},
        }))
        patcher = mock.patch.dict(sys.modules, {
            'fake_nova_manager': manager, 'fake_nova_utils': utils})
        patcher.start()
        self.addCleanup(patcher.stop)

    def test_each_gap_is_one_text(self):
        self.assertEqual(
            ["fake_nova_manager.Manager.short takes no argument "
             "'instance'",
             'fake_nova_manager.Manager.gone is missing',
             "fake_nova_manager.Manager.decorated takes no argument "
             "'instance'",
             'fake_nova_manager.Absent is missing',
             'fake_nova_utils.vanished is missing'],
            tree.surface_gaps())

    def test_a_complete_surface_has_no_gap(self):
        tree.SURFACE['fake_nova_manager'] = {'Manager': {
            'complete': ('context', 'instance', 'migration')}}
        tree.SURFACE['fake_nova_utils'] = {None: {'helper': ('adapter',)}}
        self.assertEqual([], tree.surface_gaps())


class UnacceptedTestCase(base.TestCase):
    """``tree._unaccepted``: the parameters a function takes no value for."""

    def test_missing_parameters_in_the_order_asked(self):
        def func(context, instance):
            pass
        self.assertEqual(['node', 'image'], tree._unaccepted(
            func, ('node', 'context', 'image')))

    def test_every_parameter_of_a_function_is_accepted(self):
        def func(context, instance, *args, clean_shutdown=True):
            pass
        self.assertEqual([], tree._unaccepted(
            func, ('context', 'instance', 'clean_shutdown')))

    def test_keyword_arguments_accept_anything(self):
        def func(context, **kwargs):
            pass
        self.assertEqual([], tree._unaccepted(func, ('context', 'any')))

    def test_a_decorated_function_is_judged_by_what_it_wraps(self):
        def func(context):
            pass
        self.assertEqual(['instance'], tree._unaccepted(
            _traced(func), ('context', 'instance')))

    def test_a_bound_method_leaves_self_out(self):
        self.assertEqual(['self'], tree._unaccepted(
            _Manager().short, ('self', 'context')))

    def test_no_signature_is_no_gap(self):
        # A builtin inspect cannot read: nothing to say against it.
        self.assertRaises(ValueError, inspect.signature, next)
        self.assertEqual([], tree._unaccepted(next, ('iterator',)))


class UnpackTestCase(base.TestCase):
    """A wheel is imported unpacked, from under the caller's scratch."""

    def setUp(self):
        super(UnpackTestCase, self).setUp()
        self.root = self.useFixture(fixtures.TempDir()).path

    def test_a_wheel_is_unpacked_with_its_directories(self):
        wheel = os.path.join(self.root, 'nova-1.2.3-py3-none-any.whl')
        with zipfile.ZipFile(wheel, 'w') as archive:
            archive.writestr('nova/__init__.py', '')
            archive.writestr('nova/scheduler/filters/a_filter.py', 'X = 1\n')
        scratch = os.path.join(self.root, 'scratch')
        os.mkdir(scratch)
        target = tree.unpack(wheel, scratch)
        self.assertEqual(os.path.join(scratch, 'nova-1.2.3-py3-none-any'),
                         target)
        # What nova lists to find its filters is a directory now.
        self.assertEqual(['a_filter.py'], os.listdir(
            os.path.join(target, 'nova', 'scheduler', 'filters')))
        self.assertEqual('1.2.3', tree.version(wheel))

    def test_a_wheel_that_is_no_zip_is_one_line(self):
        wheel = os.path.join(self.root, 'nova-1.2.3-py3-none-any.whl')
        with open(wheel, 'w') as f:
            f.write('not a zip')
        e = self.assertRaises(nova.NovaUnusable, tree.unpack, wheel,
                              self.root)
        self.assertEqual('--nova %s: cannot unpack the wheel: File is not '
                         'a zip file' % wheel, str(e))

    def test_an_sdist_says_its_version(self):
        with open(os.path.join(self.root, 'PKG-INFO'), 'w') as f:
            f.write('Metadata-Version: 2.1\nName: nova\nVersion: 31.2.0\n')
        self.assertEqual('31.2.0', tree.version(self.root))
