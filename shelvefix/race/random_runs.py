"""The race lab's actors with real threads and real timing.

Nothing is paused: each actor starts after a small random delay (seeded)
and the operating system interleaves them, as in an ordinary test run. The
programs of :mod:`shelvefix.race.program` make one such run each
(``random_run``) with :func:`run_threads`;
:func:`run_random` repeats it for a cell's program and counts outcomes.
"""

import collections
import random
import threading
import time

from shelvefix import explorer
from shelvefix.race import scenarios

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


def run_random(prog, cell, runs, seed, poll_interval=0.0005,
               max_start_delay=0.002, progress=None):
    """Run a cell's program ``runs`` times with real threads and timing.

    Nothing is paused: the actors start after small random delays (seeded)
    and the API client polls the saved state every ``poll_interval``
    seconds, as a client polling the API would. This is what an ordinary
    test run sees. The program is closed on the way out.

    :returns: a :class:`RandomResult` with per-label counts
    """
    rng = random.Random(seed)
    counts = collections.Counter()
    start = time.monotonic()
    with scenarios.closing(prog):
        for index in range(runs):
            for label in prog.random_run(rng, poll_interval,
                                         max_start_delay):
                counts[label] += 1
            if progress:
                progress(index + 1)
    return RandomResult(cell, runs, dict(counts), time.monotonic() - start)
