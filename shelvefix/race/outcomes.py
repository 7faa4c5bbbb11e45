"""What went wrong in one run of the race, read from placement itself.

One classification for every way the race is run (the explorer, random
runs, the stress run): the actors' exceptions say who failed and how, and
what placement holds for the instance afterwards says what was lost. A
consumer generation conflict is recognised by its exception type
(:class:`~shelvefix.exception.ConsumerGenerationConflict`), never by
placement's text.
"""

from shelvefix.compute import vm_states
from shelvefix import exception
from shelvefix.scheduler.client import errors

OK = 'ok'
SCHEDULER_409 = 'scheduler 409'
COMPUTE_409 = 'compute 409'
CLAIM_WIPED = 'claim wiped'
LEAKED = 'allocations leaked'
CONSUMER_LEFT = 'consumer left behind'
BAD_OUTCOMES = (SCHEDULER_409, COMPUTE_409, CLAIM_WIPED, LEAKED,
                CONSUMER_LEFT)
#: Placement itself failed (a 5xx, a database error, no answer): not an
#: outcome of the ordering, which is what the gates judge.
PLACEMENT_FAILED = 'placement failed'


def _conflict(error):
    return isinstance(error, exception.ConsumerGenerationConflict)


def placement_failed(error):
    """True if ``error`` comes from placement failing, not refusing.

    A 5xx (placement's own fault, a database error, a proxy), or no answer
    at all (connection refused, timeout), as the report client saw it.
    """
    while error is not None:
        placement_error = getattr(error, 'kwargs', {}).get('placement_error')
        if placement_error is not None:
            return errors.is_server_error(placement_error)
        if isinstance(error, errors.TRANSPORT_ERRORS):
            return True
        error = error.__cause__
    return False


def outcome_labels(compute_error, scheduler_error, claimed, held, dst,
                   must_hold_nothing):
    """Outcome labels from the actors' errors and what placement holds.

    :param compute_error: what the offload raised, or None
    :param scheduler_error: what the unshelve (wait + claim) raised, or None
    :param claimed: True if the scheduler's claim reported success
    :param held: ``{rp_uuid: resources}`` placement holds for the instance
    :param dst: the provider the claim was for
    :param must_hold_nothing: for an unclaimed instance, whether holding
        anything is a leak (it is once the instance is offloaded)
    :returns: a list of labels, empty when nothing went wrong
    """
    labels = []
    if _conflict(scheduler_error):
        labels.append(SCHEDULER_409)
    if _conflict(compute_error):
        labels.append(COMPUTE_409)
    for name, error in (('compute', compute_error),
                        ('scheduler', scheduler_error)):
        if error is None or _conflict(error):
            continue
        if placement_failed(error):
            if PLACEMENT_FAILED not in labels:
                labels.append(PLACEMENT_FAILED)
        else:
            labels.append('%s error: %s' % (name, type(error).__name__))
    if claimed:
        if dst not in held:
            labels.append(CLAIM_WIPED)
        if set(held) - {dst}:
            labels.append(LEAKED)
    elif must_hold_nothing and held:
        labels.append(LEAKED)
    return labels


def as_outcome(labels):
    """The outcome of a run: its labels as a tuple, ``('ok',)`` if none."""
    return tuple(labels) or (OK,)


def ordered(labels):
    """Labels in table order: ok, the known bad ones, then the others."""
    known = [OK] + list(BAD_OUTCOMES) + [PLACEMENT_FAILED]
    seen = set(labels)
    return ([label for label in known if label in seen] +
            sorted(seen - set(known)))


def is_bad(label):
    """True for every label but ``ok``."""
    return label != OK


def is_ordering_failure(label):
    """True for what the order of the actors' steps caused.

    Everything bad but :data:`PLACEMENT_FAILED`: placement failing is
    reported, not judged.
    """
    return is_bad(label) and label != PLACEMENT_FAILED


def classify(scn, results):
    """The outcome of one run of a ``ShelveScenario``.

    :param scn: the run's scenario, after its actors finished
    :param results: actor name → result with ``value``/``error``/``stuck``
        (``compute`` and ``scheduler``)
    :returns: a tuple of labels (see :func:`as_outcome`)
    """
    compute, sched = results['compute'], results['scheduler']
    held = scn.held()
    claimed = sched.error is None and not sched.stuck and bool(sched.value)
    saved = scn.store.peek(scn.instance.uuid)
    labels = outcome_labels(
        compute.error, sched.error, claimed, held, scn.dst,
        must_hold_nothing=saved['vm_state'] == vm_states.SHELVED_OFFLOADED)
    # Only the double can tell a consumer record from no consumer.
    state = getattr(scn.placement, 'state', None)
    if (not held and state is not None and
            scn.instance.uuid in state.consumers):
        labels.append(CONSUMER_LEFT)
    return as_outcome(labels)
