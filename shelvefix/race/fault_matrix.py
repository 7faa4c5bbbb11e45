"""The fault matrix: a fault at every placement request, nothing lost.

For each way of freeing allocations and each placement request of the
shelve-offload (compute) and of the unshelve claim (scheduler), each kind of
fault is injected at the transport, in front of whichever placement backs
the run (the double, the real service in-process, or a remote one). After
each case the invariants are checked against placement itself:

* no instance is ``SHELVED_OFFLOADED`` while it still holds allocations;
* no claim is lost: a claim reported successful is held exactly, a claim
  reported failed left nothing behind;
* every failure surfaces as a shelvefix exception naming the consumer and an
  ERROR log naming it too;
* the failed operation, retried once the fault is gone, completes (nothing
  is left in a state no retry can leave).
"""

import collections
import logging

from shelvefix.compute import task_states
from shelvefix.compute import vm_states
from shelvefix import exception
from shelvefix import race
from shelvefix.race import scenario
from shelvefix import utils

Kind = collections.namedtuple(
    'Kind', ['name', 'when', 'exception', 'status', 'body', 'methods'],
    defaults=(None,))
Kind.__doc__ = """A kind of fault: where it happens and what it answers.

``when`` is ``'before'`` (placement never sees the request), ``'after'``
(placement commits, the reply is lost) or ``'inside'`` (placement's own
database fails half-way, see ``fail_consumer_cleanup``); ``methods`` limits
it to requests with those methods (None: any).
"""

INSIDE = 'inside'

KINDS = [
    Kind('connection refused', 'before', 'connect', None, None),
    Kind('timeout', 'before', 'timeout', None, None),
    Kind('timeout after commit', 'after', 'timeout', None, None),
    Kind('500', 'before', None, 500, None),
    Kind('500 after commit', 'after', None, 500, None),
    Kind('503 non-JSON', 'before', None, 503,
         '<html><body>503 Service Unavailable</body></html>'),
    Kind('409', 'before', None, 409, None),
    Kind('truncated body', 'before', None, None, '{"allocations": {"'),
    Kind('non-JSON body', 'before', None, None, 'OK'),
    # Placement deletes the allocations, then fails to delete the consumer
    # (a database error between its two transactions): 500, and a ghost.
    Kind('DELETE partly committed', INSIDE, None, 500, None, ('DELETE',)),
]

Point = collections.namedtuple('Point', ['phase', 'method', 'nth'])


def points(free):
    """The placement requests of the offload and of the claim."""
    offload = ([Point('offload', 'DELETE', 1)] if free == race.DELETE else
               [Point('offload', 'GET', 1), Point('offload', 'PUT', 1)])
    return offload + [Point('claim', 'GET', 1), Point('claim', 'PUT', 1)]


def applies(kind, point):
    """Whether ``kind`` can happen at the request ``point``."""
    return kind.methods is None or point.method in kind.methods


def _arm(placement, kind, point):
    if kind.when == INSIDE:
        placement.fail_consumer_cleanup()
    else:
        placement.inject_fault(**_fault_args(kind, point))


def _fault_args(kind, point):
    args = {'method': point.method, 'nth': point.nth, 'when': kind.when}
    if kind.exception:
        args['exception'] = kind.exception
        return args
    status = kind.status
    if status is None:
        # A broken body on what would otherwise be a success for a read,
        # on an error for a write (a 204 has no body to break).
        status = 200 if point.method == 'GET' else 409
    args['status'] = status
    if kind.body is not None:
        args['body'] = kind.body
    return args


Case = collections.namedtuple(
    'Case', ['free', 'point', 'kind', 'failed', 'error', 'violations',
             'not_injected'], defaults=(None,))
Case.__doc__ = """One fault at one request, and what it left.

``not_injected`` says why the fault could not be injected into this
placement (a fault inside placement's database, for a placement in
another process); the case then did not run.
"""

#: Why a fault inside placement cannot be injected into a remote one.
NOT_IN_THIS_PROCESS = ("placement's database is another process's: a "
                       "fault inside it cannot be injected from here")


def injects_inside(placement):
    """Whether ``placement`` takes faults inside (``fail_consumer_cleanup``).

    Asked by disarming it, which changes nothing where it is supported.
    """
    try:
        placement.fail_consumer_cleanup(0)
    except NotImplementedError:
        return False
    return True


class _ErrorLog(logging.Handler):
    def __init__(self):
        super().__init__(level=logging.ERROR)
        self.messages = []

    def emit(self, record):
        self.messages.append(record.getMessage())


def _check_failure(error, errors_logged, consumer, what):
    problems = []
    if not isinstance(error, exception.ShelvefixException):
        problems.append('%s failed with %s, not a shelvefix exception: %s'
                        % (what, type(error).__name__, error))
    elif consumer not in str(error):
        problems.append('%s error does not name the consumer: %s'
                        % (what, error))
    if not any(consumer in message for message in errors_logged):
        problems.append('%s failure left no ERROR log naming the consumer'
                        % what)
    return problems


def _attempt(func, log):
    """Run ``func`` with a fresh ERROR log; return what it raised, or None."""
    del log.messages[:]
    try:
        func()
    except Exception as e:
        return e
    return None


def _offload(scn, log):
    """Offload; returns (error, violations)."""
    error = _attempt(scn.shelve_offload, log)
    problems = []
    saved = scn.saved()
    held = scn.held()
    if saved['vm_state'] == vm_states.SHELVED_OFFLOADED and held:
        problems.append('SHELVED_OFFLOADED while holding %s' % held)
    if error is not None:
        problems += _check_failure(error, log.messages, scn.instance.uuid,
                                   'shelve-offload')
        if saved['vm_state'] == vm_states.SHELVED_OFFLOADED:
            problems.append('offload raised but the instance is '
                            'SHELVED_OFFLOADED')
        elif set(held) - {scn.src}:
            problems.append('failed offload left %s' % held)
    return error, problems


def _claim(scn, log):
    """Unshelve claim; returns (error, violations)."""
    error = _attempt(lambda: scn.api_unshelve(timeout=5.0), log)
    problems = []
    held = scn.held()
    saved = scn.saved()
    wanted = {scn.dst: dict(scenario.FLAVOR.resources)}
    if error is None and held != wanted:
        problems.append('claim reported successful but placement holds %s'
                        % held)
    if error is not None:
        problems += _check_failure(error, log.messages, scn.instance.uuid,
                                   'unshelve claim')
        if held:
            problems.append('failed claim left allocations %s while the '
                            'instance is %s' % (held, saved['vm_state']))
        if saved['task_state'] is not None:
            problems.append('failed claim left task_state %s'
                            % saved['task_state'])
    return error, problems


def _under_fault(placement, point, kind, phase, attempt):
    """Run one phase, with the fault armed if it is the phase's.

    :returns: what ``attempt()`` returns, ``(error, violations)``
    """
    if point.phase == phase:
        _arm(placement, kind, point)
    try:
        return attempt()
    finally:
        placement.clear_faults()


def run_case(placement, free, point, kind):
    """Inject one fault at one request and check the invariants.

    :param placement: a set-up placement fixture, shared across cases
    :param free: ``race.DELETE`` or ``race.GET_PUT``
    :returns: a :class:`Case`
    """
    log = _ErrorLog()
    root = logging.getLogger()
    root.addHandler(log)
    scn = scenario.ShelveScenario(free=free, placement=placement,
                                  shared=True)
    scn.setUp()
    try:
        error, violations = _under_fault(placement, point, kind, 'offload',
                                         lambda: _offload(scn, log))
        if error is not None:
            # The operator (or nova's periodic task) retries.
            scn.instance.refresh()
            scn.instance.task_state = task_states.SHELVING_OFFLOADING
            scn.instance.save()
            retry_error, problems = _offload(scn, log)
            violations += problems
            if retry_error is not None:
                violations.append('offload retry failed: %s' % retry_error)
                return Case(free, point, kind, True, error, violations)
        claim_error, problems = _under_fault(placement, point, kind, 'claim',
                                             lambda: _claim(scn, log))
        violations += problems
        if claim_error is not None:
            error = error or claim_error
            retry_error, problems = _claim(scn, log)
            violations += problems
            if retry_error is not None:
                violations.append('claim retry failed: %s' % retry_error)
        return Case(free, point, kind, error is not None, error, violations)
    finally:
        root.removeHandler(log)
        scn.cleanUp()


def matrix(frees=race.FREE_METHODS, kinds=None):
    """The cases to run: ``(free, point, kind)``, in order."""
    return [(free, point, kind)
            for free in frees for point in points(free)
            for kind in kinds or KINDS if applies(kind, point)]


def run_matrix(placement, frees=race.FREE_METHODS, kinds=None,
               progress=None):
    """Every fault kind at every request point; returns the cases.

    :param progress: called with the number of cases run so far (of
        ``len(matrix(frees, kinds))``)
    """
    cases = []
    inside = injects_inside(placement)
    for free, point, kind in matrix(frees, kinds):
        if kind.when == INSIDE and not inside:
            cases.append(Case(free, point, kind, False, None, [],
                              NOT_IN_THIS_PROCESS))
        else:
            cases.append(run_case(placement, free, point, kind))
        if progress:
            progress(len(cases))
    return cases


def summary(cases):
    """Counts for the report: tried, surfaced, absorbed, held, lost.

    ``not_injected`` counts the cases that could not run here; they are
    in no other count.
    """
    skipped = [c for c in cases if c.not_injected]
    cases = [c for c in cases if not c.not_injected]
    lost = [c for c in cases if c.violations]
    return {
        'faults_tried': len(cases),
        'failures_surfaced': sum(1 for c in cases if c.failed),
        'absorbed': sum(1 for c in cases if not c.failed),
        'invariants_held': len(cases) - len(lost),
        'lost': len(lost),
        'not_injected': len(skipped),
    }


def excluded(case):
    """True for a case that does not apply to the placement it was for.

    The one exclusion: a fault inside placement's database
    (:data:`INSIDE`) on a placement in another process
    (:data:`NOT_IN_THIS_PROCESS`). The report names it; it is not a case
    to run there, so it neither counts as run nor spoils the verdict.
    """
    return (case.kind.when == INSIDE and
            case.not_injected == NOT_IN_THIS_PROCESS)


def unearned(cases, frees=race.FREE_METHODS, kinds=None):
    """Why one backend's cases cannot back a clean verdict, or None.

    The one place ``shelvefix faults`` decides that it ran enough to say
    clean: every case of the matrix (:func:`matrix`) has a result, at
    least one ran, and every case that did not run is an
    :func:`excluded` one.

    :param cases: what :func:`run_matrix` returned for ``frees`` and
        ``kinds``
    :returns: one line saying what did not run
    """
    expected = len(matrix(frees, kinds))
    if len(cases) != expected:
        return '%d of the %d cases have a result' % (len(cases), expected)
    missed = [c for c in cases if c.not_injected and not excluded(c)]
    if missed:
        return '%s not run (%s): %s' % (
            utils.plural(len(missed), 'case'),
            ', '.join(sorted(set(c.kind.name for c in missed))),
            missed[0].not_injected)
    if all(c.not_injected for c in cases):
        return 'no case ran'
    return None
