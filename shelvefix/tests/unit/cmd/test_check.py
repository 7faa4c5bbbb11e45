"""Tests for the ``shelvefix check`` command (``shelvefix.cmd.check``)."""

import io
import json
import os
from unittest import mock

import fixtures
import testtools

from shelvefix.cmd import main
from shelvefix.novacheck import source
from shelvefix.tests.unit.novacheck import shapes


class CheckCommandTestCase(testtools.TestCase):

    def setUp(self):
        super(CheckCommandTestCase, self).setUp()
        self.root = self.useFixture(fixtures.TempDir()).path

    def tree(self, text):
        path = os.path.join(self.root, 'nova', 'compute', 'manager.py')
        os.makedirs(os.path.dirname(path), exist_ok=True)
        with open(path, 'w') as f:
            f.write(text)
        return path

    def run_check(self, *argv):
        out, err = io.StringIO(), io.StringIO()
        rc = main.main(['check'] + list(argv), out=out, err=err)
        return rc, out.getvalue(), err.getvalue()

    def test_fixed_tree(self):
        text = shapes.modern_fixed()
        self.tree(text)
        rc, out, err = self.run_check(self.root)
        self.assertEqual((0, ''), (rc, err))
        lines = out.splitlines()
        self.assertEqual('nova/compute/manager.py (%s)'
                         % os.path.join(self.root, 'nova', 'compute',
                                        'manager.py'), lines[0])
        self.assertTrue(lines[1].startswith('FIXED: '))
        self.assertIn('  frees allocations: nova/compute/manager.py:%d: '
                      'self.rt.delete_allocation_for_shelve_offloaded_'
                      'instance(context, instance)'
                      % shapes.line_of(text, 'self.rt.delete'), lines)

    def test_legacy_tree_exits_1(self):
        self.tree(shapes.rocky_legacy())
        rc, out, _err = self.run_check(os.path.join(self.root, 'nova'))
        self.assertEqual(1, rc)
        self.assertIn('LEGACY ORDER: ', out)
        self.assertIn('rt bound at:', out)

    def test_json(self):
        path = self.tree(shapes.rocky_fixed())
        rc, out, _err = self.run_check('--json', path)
        self.assertEqual(0, rc)
        data = json.loads(out)
        self.assertEqual(('fixed', 0, path, path),
                         (data['status'], data['exit_code'], data['file'],
                          data['path']))

    def test_cannot_tell_exits_2_with_the_reason(self):
        missing = os.path.join(self.root, 'nowhere')
        rc, out, _err = self.run_check(missing)
        self.assertEqual(2, rc)
        self.assertEqual('CANNOT TELL: file not found: %s does not exist\n'
                         % missing, out)
        rc, out, _err = self.run_check('--json', missing)
        self.assertEqual(2, rc)
        self.assertEqual('unknown', json.loads(out)['status'])

    def test_unreadable_file(self):
        path = self.tree('')
        with open(path, 'wb') as f:
            f.write(b'# \xff\n')
        rc, out, _err = self.run_check(path)
        self.assertEqual(2, rc)
        self.assertIn('CANNOT TELL: cannot read %s: not UTF-8' % path, out)
        self.assertTrue(out.startswith(path + '\n'))

    def test_installed(self):
        path = self.tree(shapes.modern_legacy())
        found = source.ManagerFile(path, 'nova/compute/manager.py', '18.3.0')
        with mock.patch.object(source, 'installed', return_value=found):
            rc, out, _err = self.run_check('--installed')
        self.assertEqual(1, rc)
        self.assertEqual('nova/compute/manager.py (%s, nova 18.3.0)' % path,
                         out.splitlines()[0])

    def test_installed_but_missing(self):
        with mock.patch.object(source, 'installed', side_effect=(
                source.SourceError('file not found: nova is not installed '
                                   'for /usr/bin/python3'))):
            rc, out, _err = self.run_check('--installed')
        self.assertEqual(2, rc)
        self.assertEqual('CANNOT TELL: file not found: nova is not installed '
                         'for /usr/bin/python3\n', out)

    def test_path_or_installed_exactly_once(self):
        for argv in ((), ('--installed', self.root)):
            rc, out, err = self.run_check(*argv)
            self.assertEqual((2, ''), (rc, out))
            self.assertEqual('shelvefix check: give either PATH or '
                             '--installed\n', err)
