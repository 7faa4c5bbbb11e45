"""Tests for the per-host named locks and the other helpers."""

import subprocess
import sys
import threading

from shelvefix.tests import base
from shelvefix import utils


class LocksTestCase(base.TestCase):

    def test_real_locks_serialise_per_name(self):
        locks = utils.Locks()
        order = []
        inside = threading.Event()
        release = threading.Event()

        def holder():
            with locks.lock('a'):
                order.append('holder in')
                inside.set()
                release.wait(5)
                order.append('holder out')

        thread = threading.Thread(target=holder)
        thread.start()
        inside.wait(5)
        self.assertTrue(locks.held('a'))
        with locks.lock('b'):
            order.append('other name')
        waiter = threading.Thread(target=lambda: locks.synchronized('a')(
            lambda: order.append('waiter in'))())
        waiter.start()
        release.set()
        thread.join(5)
        waiter.join(5)
        self.assertEqual(['holder in', 'other name', 'holder out',
                          'waiter in'], order)
        self.assertFalse(locks.held('a'))

    def test_two_hosts_never_share_a_lock(self):
        one, two = utils.Locks(), utils.Locks()
        with one.lock('x'):
            with two.lock('x'):
                self.assertTrue(one.held('x') and two.held('x'))

    def test_interceptor_is_asked_and_the_lock_still_released(self):
        seen = []
        locks = utils.Locks()
        locks.interceptor = lambda op, name, held: seen.append(
            (op, name, held()))

        @locks.synchronized('x')
        def fail():
            raise ValueError('inside')
        self.assertRaises(ValueError, fail)
        self.assertEqual([('acquire', 'x', False), ('release', 'x', True)],
                         seen)
        self.assertFalse(locks.held('x'))


class SerializeASTParseTestCase(base.TestCase):
    """gh-106905: one thread parses at a time, on the CPythons it hits."""

    def setUp(self):
        super().setUp()
        import ast
        self.ast = ast
        original = ast.parse
        self.addCleanup(setattr, ast, 'parse', original)
        # As on a CPython without the wrapper.
        ast.parse = getattr(original, '__wrapped__', original)

    def test_versions(self):
        for version, serialized in (((3, 11, 2), True), ((3, 11, 7), True),
                                    ((3, 11, 8), False), ((3, 12, 1), True),
                                    ((3, 12, 2), False), ((3, 13, 0), False),
                                    ((3, 10, 12), False)):
            self.ast.parse = getattr(self.ast.parse, '__wrapped__',
                                     self.ast.parse)
            self.assertEqual(serialized,
                             utils.serialize_ast_parse(version), version)

    def test_each_parse_holds_the_lock(self):
        self.assertTrue(utils.serialize_ast_parse((3, 11, 2)))
        wrapped = self.ast.parse
        # Once only.
        self.assertTrue(utils.serialize_ast_parse((3, 11, 2)))
        self.assertIs(wrapped, self.ast.parse)
        parsed = []
        thread = threading.Thread(
            target=lambda: parsed.append(self.ast.parse('x = 1')))
        with utils._ast_lock:
            thread.start()
            # Another thread holds the lock: the parse waits.
            thread.join(0.2)
            self.assertEqual([], parsed)
        thread.join(10)
        self.assertEqual(['Module'], [type(p).__name__ for p in parsed])


class FixedUUIDTestCase(base.TestCase):

    def test_same_in_every_process(self):
        code = 'from shelvefix import utils; print(utils.fixed_uuid("cell1"))'
        there = subprocess.run([sys.executable, '-c', code], check=True,
                               capture_output=True, text=True).stdout
        self.assertEqual(utils.fixed_uuid('cell1'), there.strip())
        self.assertTrue(utils.is_uuid_like(there.strip()))

    def test_one_per_name(self):
        self.assertNotEqual(utils.fixed_uuid('cell1'),
                            utils.fixed_uuid('image'))


class PluralTestCase(base.TestCase):

    def test_count_and_word(self):
        self.assertEqual(['0 cases', '1 case', '2 cases'],
                         [utils.plural(n, 'case') for n in (0, 1, 2)])
        self.assertEqual('1 ghost consumer',
                         utils.plural(1, 'ghost consumer'))
