"""Tests for the actor threads kept from one run to the next."""

import threading

import testtools

from shelvefix import explorer
from shelvefix.explorer import threads


class ActorThreadsTestCase(testtools.TestCase):

    def test_a_thread_is_reused_once_its_job_is_done(self):
        pool = threads.ActorThreads()
        self.addCleanup(pool.close)
        done = threading.Event()
        seen = []

        def job():
            seen.append((threading.get_ident(),
                         threading.current_thread().name))
        for name in ('first', 'second'):
            done.clear()
            pool.submit(job, 'explorer:%s' % name, done.set)
            self.assertTrue(done.wait(5))
        self.assertEqual(1, pool.started)
        self.assertEqual(seen[0][0], seen[1][0])
        self.assertEqual(['explorer:first', 'explorer:second'],
                         [name for _ident, name in seen])

    def test_busy_threads_are_not_shared(self):
        pool = threads.ActorThreads()
        self.addCleanup(pool.close)
        release = threading.Event()
        started = threading.Semaphore(0)

        def job():
            started.release()
            release.wait(5)
        for name in 'ab':
            pool.submit(job, name, lambda: None)
            self.assertTrue(started.acquire(timeout=5))
        release.set()
        self.assertEqual(2, pool.started)

    def test_close_ends_the_threads(self):
        pool = threads.ActorThreads()
        done = threading.Event()
        pool.submit(lambda: None, 'job', done.set)
        self.assertTrue(done.wait(5))
        worker = pool._idle[0]
        pool.close()
        worker.thread.join(5)
        self.assertFalse(worker.thread.is_alive())
        self.assertRaises(RuntimeError, pool.submit, len, 'late', len)


class ReuseTestCase(testtools.TestCase):

    def test_explore_keeps_one_thread_per_actor(self):
        idents = set()

        def program(controller):
            def actor():
                idents.add(threading.get_ident())
                for _ in range(2):
                    controller.step('mem', 'x')
            return [('a', actor), ('b', actor), ('c', actor)]

        exploration = explorer.explore(program, reduce=False)
        self.assertEqual(90, len(exploration.runs))
        # Every run's actors finish (or are unwound) before the next run
        # starts, and their threads are back in the pool by then.
        self.assertEqual(3, len(idents))

    def test_stuck_actors_are_unwound_and_their_threads_reused(self):
        unwound, idents = [], set()

        def program(controller):
            def waiter():
                idents.add(threading.get_ident())
                try:
                    controller.step('mem', 'x', guard=lambda: False)
                finally:
                    unwound.append(None)

            def other():
                idents.add(threading.get_ident())
                controller.step('mem', 'y')
                controller.step('mem', 'y')
            return [('waiter', waiter), ('b', other), ('c', other)]

        exploration = explorer.explore(program, reduce=False)
        self.assertEqual(6, len(exploration.runs))
        self.assertTrue(all(run.results['waiter'].stuck
                            for run in exploration.runs))
        self.assertEqual(6, len(unwound))
        self.assertEqual(3, len(idents))
