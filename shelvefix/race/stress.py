"""Stress: K servers × M shelve-offload / unshelve cycles, real threads.

Each server has its own thread acting as the API client: it shelves the
server, starts the compute host's shelve-offload in a second thread, polls
the saved state every ``poll_interval`` seconds like a client polling the
server's status, and unshelves as soon as it reads ``SHELVED_OFFLOADED``:
task_state UNSHELVING, the scheduler's claim on the other host, then that
host's compute manager unshelves it (its claim on the node, the spawn,
ACTIVE on the new host). Servers run concurrently, so placement also
sees provider generation races between them. Nothing is paused or ordered:
this is the race as a gate run would meet it.

Each cycle is classified from placement itself (scheduler 409, compute 409,
claim wiped, allocations leaked); at the end every provider's usage is
compared with what the servers' final states say it should be.

Every placement request is made in a thread of the run's own, never in the
calling (main) thread: a signal's ``KeyboardInterrupt`` is raised in the
main thread at whatever bytecode it is running, and raised inside a
request (keystoneauth, urllib3's connection pool, logging, a socket's
connect) it can leave a lock held or a connection open but never used, and
the clean-up's requests then hang. The main thread only waits
(``Thread.join``, which an interrupt leaves consistent), with a timeout
so that it handles a signal the kernel gave another thread.
"""

import collections
import logging
import random
import threading
import time

from oslo_log import log as oslo_logging

from shelvefix import exception
from shelvefix import race
from shelvefix.race import outcomes
from shelvefix.race import stress_harness
from shelvefix import utils

LOG = oslo_logging.getLogger(__name__)

#: Seconds an interrupted run waits for the cycles under way to end. Each
#: of a cycle's waits gives up once the run is stopped, so only a request
#: in flight (bounded by the client's timeout) is waited for; the
#: clean-up starts after this in any case.
INTERRUPT_JOIN_TIMEOUT = 30.0

StressResult = collections.namedtuple(
    'StressResult', ['ordering', 'free', 'servers', 'cycles', 'elapsed',
                     'counts', 'usage_expected', 'usage_actual', 'lost',
                     'ghosts_healed', 'completed', 'ghosts_left',
                     'ghosts_left_by_cleanup', 'checked', 'disagreed'],
    defaults=({}, 0, None, None, None, 0, 0))
StressResult.__doc__ = """One ordering's run.

``cycles`` is what was asked (servers x cycles); ``counts`` the outcome
labels of the cycles that ran to their end (a cycle may have several);
``completed`` how many cycles ran to their end and were classified
(None: not counted, as in a result made by hand; :func:`verdict` then
takes it as ``cycles`` less the lost ones); ``lost`` ``{cause: cycles}``
the cycles that did not: a cycle that raised (a placement failure the
code under test passed on, a harness error) is lost to that exception's
class, and its server's next cycle starts from the state it left, as a
user's retry would. ``ghosts_healed`` counts the claims that found a
ghost consumer (placement's record of a consumer whose allocations a
``DELETE`` removed without it) and claimed over it.

``ghosts_left`` is how many ghost consumers the run made and left (read
by the observer before the clean-up, less those there before the run),
``ghosts_left_by_cleanup`` how many the clean-up's own requests left
(None: the observer cannot count them). ``checked`` is how many cycle
judgements were compared with another read, ``disagreed`` how many read
otherwise there (see :meth:`~shelvefix.backends.observe.Observer.
cross_check`).
"""

#: The reason :func:`verdict` gives when no ordering ran at all.
NOTHING_RAN = 'no ordering ran'

Verdict = collections.namedtuple('Verdict', ['status', 'corrected_is_clean',
                                             'reasons'])
Verdict.__doc__ = """What a stress run shows; see :func:`verdict`.

``status`` is the exit status (0 or 1); ``corrected_is_clean`` True
exactly when ``status`` is 0 and the corrected order ran, None when it
did not run; ``reasons`` why the run is not clean (each names its run as
``ordering/free``), empty when it is.
"""

#: The report client's logger, and the start of what it logs when a claim
#: heals a ghost consumer.
_REPORT_LOGGER = 'shelvefix.scheduler.client.report'
_GHOST_HEALED = 'Placement keeps consumer'


class _GhostsHealed(logging.Handler):
    """Counts the report client's ghost heals, while attached."""

    def __init__(self):
        super().__init__(level=logging.WARNING)
        self.count = 0

    def emit(self, record):
        if str(record.msg).startswith(_GHOST_HEALED):
            self.count += 1


def _stop(runner, stop):
    """Start no more cycles and wait (bounded) for those under way.

    Another interrupt ends the wait: the clean-up starts at once.
    """
    stop.set()
    try:
        runner.wait(INTERRUPT_JOIN_TIMEOUT)
    except KeyboardInterrupt:
        pass


def run(placement, ordering, free, servers, cycles, poll_interval=0.005,
        latency=0.0, seed=0, progress=None, setup_progress=None,
        observer=None):
    """Run K × M cycles of one ordering; returns a :class:`StressResult`.

    An interrupt (``KeyboardInterrupt``) stops the run: no cycle starts,
    those under way give up their waits and end (within
    :data:`INTERRUPT_JOIN_TIMEOUT` seconds), and everything the run made
    is removed before the interrupt is raised on. If the clean-up could
    not remove everything, the interrupt carries its
    :class:`~shelvefix.exception.StressCleanupFailed` as
    ``cleanup_failure``; without an interrupt that is raised instead. An
    interrupt while the clean-up runs lets it finish (a second one
    abandons it).

    :param placement: a set-up placement fixture (any backend)
    :param poll_interval: seconds between the API client's status polls
    :param latency: extra seconds before each of compute's placement
        requests (the optional knob; 0 by default)
    :param progress: called with the number of cycles done
    :param setup_progress: called with the number of servers made
    :param observer: the :class:`~shelvefix.backends.observe.Observer`
        that judges the cycles and counts usages and ghosts (default:
        placement's API)
    :raises StressCleanupFailed: what the run created could not all be
        removed
    """
    # Many threads logging tracebacks at once (see utils).
    utils.serialize_ast_parse()
    session = placement.session.session
    if latency:
        session.mount(placement.endpoint,
                      stress_harness._ComputeLatencyTransport(
                          placement.transport, latency))
    harness = stress_harness.Harness(placement, ordering, free, observer)
    ghosts = {'before': _ghosts(harness.observer)}
    # One observer may serve several runs: this run's judgements only.
    judged = (harness.observer.checked, harness.observer.disagreed)
    healed = _GhostsHealed()
    report_log = logging.getLogger(_REPORT_LOGGER)
    report_log.addHandler(healed)
    counts = collections.Counter()
    lost = collections.Counter()
    lock = threading.Lock()
    stop = threading.Event()
    done = [0]
    # The cycles classified: the evidence the verdict counts (``done``
    # also counts the lost ones, for the progress line).
    completed = [0]

    def worker(server, rng):
        for number in range(cycles):
            if stop.is_set():
                return
            try:
                labels = server.cycle(poll_interval, rng, stop)
            except Exception as e:
                # As a user would, the server goes on: its next cycle
                # starts from the state this one left (an unshelve that
                # failed is unshelved again, an offload that failed is
                # offloaded again).
                LOG.warning('Server %(uuid)s: cycle %(number)d raised and '
                            'is lost: %(error)s',
                            {'uuid': server.uuid, 'number': number + 1,
                             'error': e}, exc_info=True)
                with lock:
                    lost[type(e).__name__] += 1
                    done[0] += 1
                    if progress:
                        progress(done[0])
                continue
            if labels is None:
                return
            with lock:
                counts.update(labels)
                completed[0] += 1
                done[0] += 1
                if progress:
                    progress(done[0])

    def body():
        harness.set_up(servers, progress=setup_progress, stop=stop)
        if stop.is_set():
            return None
        threads = [threading.Thread(
            target=worker, args=(s, random.Random(seed * 1000 + i)),
            daemon=True) for i, s in enumerate(harness.servers)]
        start = time.monotonic()
        for thread in threads:
            thread.start()
        for thread in threads:
            thread.join()
        if stop.is_set():
            return None
        elapsed = time.monotonic() - start
        # Before the clean-up: what its own requests leave is counted
        # apart.
        ghosts['run'] = _ghosts(harness.observer)
        return StressResult(
            ordering, free, servers, servers * cycles, elapsed, dict(counts),
            harness.expected_usage(), harness.actual_usage(), dict(lost),
            healed.count, completed[0], _new(ghosts, 'before', 'run'), None,
            harness.observer.checked - judged[0],
            harness.observer.disagreed - judged[1])

    runner = utils.Background(body, 'stress-run')
    interrupt = None
    try:
        runner.start().wait()
    except KeyboardInterrupt as e:
        interrupt = e
        _stop(runner, stop)
    finally:
        report_log.removeHandler(healed)
    if latency:
        session.mount(placement.endpoint, placement.transport)
    cleaner = utils.Background(harness.clean_up, 'stress-clean-up')
    try:
        cleaner.start().wait()
    except KeyboardInterrupt as e:
        if interrupt is not None:
            # A second interrupt: the clean-up is abandoned.
            raise
        interrupt = e
        stop.set()
        cleaner.wait()
    if interrupt is not None:
        if isinstance(cleaner.error, exception.StressCleanupFailed):
            interrupt.cleanup_failure = cleaner.error
        elif cleaner.error is not None:
            raise cleaner.error from interrupt
        raise interrupt
    if cleaner.error is not None:
        if runner.error is not None:
            raise cleaner.error from runner.error
        raise cleaner.error
    result = runner.outcome()
    if result is not None and 'run' in ghosts:
        ghosts['clean-up'] = _ghosts(harness.observer)
        result = result._replace(
            ghosts_left_by_cleanup=_new(ghosts, 'run', 'clean-up'))
    return result


def _ghosts(observer):
    """The ghost consumers' uuids the observer reads now, or None.

    None also when the tables cannot be read (see :meth:`~shelvefix.
    backends.observe.Observer.ghosts`): the report says "not counted".
    """
    try:
        return observer.ghosts()
    except Exception as e:
        LOG.warning('Ghost consumers not counted: %s', e)
        return None


def _new(ghosts, before, after):
    """How many ghosts ``after`` has that ``before`` had not, or None."""
    if ghosts.get(before) is None or ghosts.get(after) is None:
        return None
    return len(ghosts[after] - ghosts[before])


def bad(result):
    """What the gate judges: outcomes of the ordering, and lost usage.

    Placement failing (a 5xx, a database error) is reported, not judged;
    what it leaves behind still shows as a usage mismatch.
    """
    labels = set(label for label in result.counts
                 if outcomes.is_ordering_failure(label))
    if result.usage_expected != result.usage_actual:
        labels.add('usage mismatch')
    return labels


def completed(result):
    """How many of ``result``'s cycles ran to their end, classified."""
    if result.completed is not None:
        return result.completed
    return result.cycles - sum(result.lost.values())


def shortfall(result):
    """What of ``result``'s cycles is not evidence: ``[]``, or phrases.

    A lost cycle (it raised) shows nothing about the order of the steps,
    nor does a cycle that never ran (its server's thread ended early) or
    a run of no cycles at all.
    """
    lost = sum(result.lost.values())
    done = completed(result)
    missing = result.cycles - done - lost
    phrases = []
    if lost:
        phrases.append('%d of %d cycles lost (%s)' % (
            lost, result.cycles,
            ', '.join('%s %d' % item for item in sorted(result.lost.items()))))
    if missing > 0:
        phrases.append('%d of %d cycles never ran' % (missing, result.cycles))
    if done <= 0 and not phrases:
        phrases.append('no cycle ran')
    return phrases


def verdict(results):
    """The one place ``shelvefix stress`` decides whether it may say clean.

    The report's verdict line, ``--json``'s ``corrected_is_clean`` and
    the exit status all come from here. Status 0 needs all of:

    * at least one ordering ran;
    * every cycle of every run, of either ordering, ran to its end and
      was classified (:func:`shortfall`). A lost legacy cycle counts too:
      the legacy order is the comparison the report shows, and what loses
      a cycle there (an input the checks missed, a harness error,
      placement failing under the code) is not the ordering's doing, so
      the run did not do what it was asked;
    * no corrected run shows a bad outcome (:func:`bad`). A cycle
      classified ``placement failed`` completed: placement failing by
      itself is reported, not judged. The legacy order's bad outcomes are
      what it is expected to show, and are not judged;
    * every corrected run has at least one cycle that ended ok: a run
      whose every cycle placement failed completed, and showed nothing of
      the order;
    * no cycle judgement of any run read otherwise on another path
      (``disagreed``): one of the two reads was stale, so the judgement
      may be wrong.

    :param results: the :class:`StressResult` of each run
    :returns: a :class:`Verdict`
    """
    if not results:
        return Verdict(1, False, [NOTHING_RAN])
    reasons = []
    for r in results:
        if r.ordering == race.CORRECTED and bad(r):
            reasons.append('%s/%s: %s' % (r.ordering, r.free,
                                          ', '.join(sorted(bad(r)))))
    for r in results:
        if (r.ordering == race.CORRECTED and completed(r) > 0 and
                not r.counts.get(outcomes.OK) and not bad(r)):
            reasons.append('%s/%s: no cycle ended ok (%s): nothing shows '
                           'the order' % (r.ordering, r.free, ', '.join(
                               '%s %d' % item
                               for item in sorted(r.counts.items()))))
    for r in results:
        if r.disagreed:
            reasons.append('%s/%s: %d of %d cycle judgements read otherwise '
                           'on another path (a stale read)' % (
                               r.ordering, r.free, r.disagreed, r.checked))
    for r in results:
        phrases = shortfall(r)
        if phrases:
            reasons.append('%s/%s: %s' % (r.ordering, r.free,
                                          ', '.join(phrases)))
    status = 1 if reasons else 0
    ran_corrected = any(r.ordering == race.CORRECTED for r in results)
    return Verdict(status, (status == 0) if ran_corrected else None,
                   reasons)
