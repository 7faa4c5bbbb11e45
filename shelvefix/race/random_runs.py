"""The race lab's actors with real threads and real timing.

Nothing is paused: each actor starts after a small random delay (seeded)
and the operating system interleaves them, as in an ordinary test run. The
programs of :mod:`shelvefix.race.program` make one such run each
(``random_run``) with :func:`run_threads`;
:func:`shelvefix.race.scenarios.run_random` repeats it and counts outcomes.
"""

import collections
import threading
import time

from shelvefix import explorer

#: Seconds an interrupted run waits for its actors: more than their own
#: timeouts (the programs give them 10 s).
INTERRUPT_JOIN_TIMEOUT = 15.0

RandomResult = collections.namedtuple('RandomResult',
                                      ['cell', 'runs', 'counts', 'elapsed'])


def run_threads(funcs, rng, max_start_delay, done=None):
    """Run ``(name, callable)`` pairs in threads after random delays."""
    results = {}
    delays = {name: rng.uniform(0, max_start_delay) for name, _f in funcs}

    def target(name, func):
        time.sleep(delays[name])
        value = error = None
        try:
            value = func()
        except Exception as e:
            error = e
        results[name] = explorer.ActorResult(value, error, False)
        if done is not None:
            done[name].set()

    threads = [threading.Thread(target=target, args=pair) for pair in funcs]
    for thread in threads:
        thread.start()
    try:
        for thread in threads:
            thread.join()
    except KeyboardInterrupt:
        # Interrupted: the actors cannot be stopped, but each gives up
        # within its own timeout; let them, so that none still acts on
        # placement while the caller cleans up.
        deadline = time.monotonic() + INTERRUPT_JOIN_TIMEOUT
        for thread in threads:
            thread.join(max(0.0, deadline - time.monotonic()))
        raise
    return results


def finished(done, name):
    """Whether the actor ``name`` has ended.

    :param done: ``{actor: threading.Event}`` set as each actor of a run
        with real threads ends (empty when the explorer orders the run)
    """
    event = done.get(name)
    return event is not None and event.is_set()
