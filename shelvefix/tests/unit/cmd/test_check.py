"""Tests for the ``shelvefix check`` command (``shelvefix.cmd.check``)."""

import io
import json
import os
from unittest import mock

import fixtures
import testtools

from shelvefix.cmd import main
from shelvefix.novacheck import check
from shelvefix.novacheck import source
from shelvefix.tests.unit.novacheck import corpus
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
        # One line per fix, then bug 1798688's verdict in full.
        self.assertEqual(['bug 1798688', 'bug 2025480', 'bug 1862633',
                          'host lost'], [line[:12].strip()
                                         for line in lines[1:5]])
        self.assertTrue(lines[1].startswith('bug 1798688  FIXED  '))
        self.assertEqual('', lines[5])
        self.assertTrue(lines[6].startswith('FIXED: '))
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

    def test_bug_asks_which_fixes_decide_the_exit_status(self):
        # nova 34's manager alone: 1798688 fixed, host lost missing; no
        # resource tracker beside it, so 2025480 cannot be told.
        self.tree(corpus.NOVA_34_MANAGER)
        for argv, expected in (((), 0), (('--bug', '1798688'), 0),
                               (('--bug', '2025480'), 2),
                               (('--bug', 'host-lost'), 1),
                               (('--bug', '1798688', '--bug', 'host-lost'),
                                1),
                               (('--bug', 'all'), 2)):
            rc, out, err = self.run_check(self.root, *argv)
            self.assertEqual((expected, ''), (rc, err), argv)
        rc, out, _err = self.run_check(self.root, '--bug', 'host-lost',
                                       '--json')
        data = json.loads(out)
        self.assertEqual((1, ['host-lost'], 'fixed', 'missing', 'unknown'),
                         (data['exit_code'], data['asked'],
                          data['fixes']['1798688']['status'],
                          data['fixes']['host-lost']['status'],
                          data['fixes']['2025480']['status']))
        self.assertIn('resource_tracker.py',
                      data['fixes']['2025480']['reason'])

    def test_missing_path_exits_2_with_one_line_on_stderr(self):
        missing = os.path.join(self.root, 'nowhere')
        rc, out, err = self.run_check(missing)
        self.assertEqual((2, ''), (rc, out))
        self.assertEqual('shelvefix check: file not found: %s does not '
                         'exist\n' % missing, err)
        rc, out, err = self.run_check('--json', missing)
        self.assertEqual(2, rc)
        data = json.loads(out)
        self.assertEqual(('unknown', True),
                         (data['status'], data['unreadable']))
        self.assertIn('does not exist', err)

    def test_unreadable_file(self):
        path = self.tree('')
        with open(path, 'wb') as f:
            f.write(b'# \xff\n')
        rc, out, err = self.run_check(path)
        self.assertEqual((2, ''), (rc, out))
        self.assertIn('shelvefix check: cannot read %s: not UTF-8' % path,
                      err)

    def test_nul_byte_is_not_a_verdict(self):
        # compile() refuses NUL bytes with a ValueError: once a traceback
        # and exit 1, which means LEGACY ORDER.
        path = self.tree(shapes.rocky_fixed() + '\0\n')
        rc, out, err = self.run_check(path)
        self.assertEqual((2, ''), (rc, out))
        self.assertEqual('shelvefix check: cannot read %s: not Python source '
                         '(a NUL byte at offset %d)\n'
                         % (path, len(shapes.rocky_fixed())), err)

    def test_nul_byte_in_source_text(self):
        result = check.check_source('x = 1\0\n', 'manager.py')
        self.assertEqual((check.UNKNOWN, True),
                         (result.status, result.unreadable))
        self.assertIn('not Python source: manager.py', result.reason)

    def test_device_and_symlink_loop(self):
        loop = os.path.join(self.root, 'loop')
        os.symlink(loop + '2', loop)
        os.symlink(loop, loop + '2')
        for path, expected in (
                (os.devnull, 'not a regular file or a directory'),
                (loop, 'cannot read %s: ' % loop)):
            rc, out, err = self.run_check(path)
            self.assertEqual((2, ''), (rc, out))
            self.assertIn(expected, err)
            self.assertNotIn('does not exist', err)

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
            rc, out, err = self.run_check('--installed')
        self.assertEqual((2, ''), (rc, out))
        self.assertEqual('shelvefix check: file not found: nova is not '
                         'installed for /usr/bin/python3\n', err)

    def test_path_or_installed_exactly_once(self):
        for argv in ((), ('--installed', self.root)):
            rc, out, err = self.run_check(*argv)
            self.assertEqual((2, ''), (rc, out))
            self.assertEqual('shelvefix check: give either PATH or '
                             '--installed\n', err)


class EvidenceTestCase(testtools.TestCase):
    """FIXED with nothing modelled behind it is no verdict (exit 2)."""

    def setUp(self):
        super(EvidenceTestCase, self).setUp()
        self.root = self.useFixture(fixtures.TempDir()).path

    tree = CheckCommandTestCase.tree
    run_check = CheckCommandTestCase.run_check

    def test_fixed_without_program_states_is_no_verdict(self):
        self.tree(shapes.modern_fixed())
        real_check_tree = check.check_tree

        def unexplored(*args, **kwargs):
            result = real_check_tree(*args, **kwargs)
            result.states = 0
            return result
        with mock.patch.object(check, 'check_tree', unexplored):
            rc, out, err = self.run_check(self.root)
        self.assertEqual(2, rc)
        self.assertIn('bug 1798688  FIXED', out)
        self.assertEqual('shelvefix check: no verdict: 1798688: FIXED, but '
                         'no program state of nova/compute/manager.py was '
                         'explored\n', err)

    def test_fixed_citing_nothing_is_no_verdict(self):
        from shelvefix.novacheck import outcome
        from shelvefix.novacheck import tracker
        self.tree(shapes.modern_fixed())
        with mock.patch.object(
                tracker, 'check',
                return_value=outcome.Verdict('2025480').fixed('assumed')):
            rc, out, err = self.run_check(self.root, '--bug', '2025480',
                                          '--json')
        self.assertEqual(2, rc)
        document = json.loads(out)
        self.assertEqual(2, document['exit_code'])
        self.assertEqual('2025480: FIXED, but no line of the tree is cited '
                         'for it, so nothing was modelled',
                         document['unearned'])
        self.assertIn('no verdict: 2025480', err)
