"""Tests for the per-host named locks."""

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
