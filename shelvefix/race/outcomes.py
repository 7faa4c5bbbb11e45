"""What went wrong in one run of the race, read from the end state.

One classification for every way a scenario is run (the explorer, random
runs, the stress run): the actors' exceptions say who failed and how, and
the end state says what was lost. The end state is read three ways and
compared: what placement holds for the server, what the server's saved
state says it uses (:func:`implied_hosts`), and what each compute node's
resource tracker counts. A consumer generation conflict is recognised by
its exception type (:class:`~shelvefix.exception.ConsumerGenerationConflict`),
never by placement's text.

A node's tracker counting a server its state says is gone is not judged:
the next audit heals it, and it errs on the safe side. The opposite,
``usage untracked``, is bug 2025480's symptom: the server runs on the
node while the node reports its resources free.
"""

from shelvefix.compute import vm_states
from shelvefix import exception
from shelvefix.race import client
from shelvefix import rpc
from shelvefix.scheduler.client import errors

OK = 'ok'
SCHEDULER_409 = 'scheduler 409'
COMPUTE_409 = 'compute 409'
CLAIM_WIPED = 'claim wiped'
LEAKED = 'allocations leaked'
CONSUMER_LEFT = 'consumer left behind'
USAGE_UNTRACKED = 'usage untracked'
HOST_LOST = 'host lost'
TASK_STUCK = 'task state stuck'
#: nova's REST API answered a client with a server error (HTTP 5xx).
API_500 = 'API 500'
BAD_OUTCOMES = (SCHEDULER_409, COMPUTE_409, CLAIM_WIPED, LEAKED,
                CONSUMER_LEFT, USAGE_UNTRACKED, HOST_LOST, TASK_STUCK,
                API_500)
#: The states of a server that has no host.
HOSTLESS_STATES = (vm_states.SHELVED_OFFLOADED, vm_states.DELETED)
#: Placement itself failed (a 5xx, a database error, no answer): not an
#: outcome of the ordering, which is what the gates judge.
PLACEMENT_FAILED = 'placement failed'
#: An actor raised what no outcome names (``compute error: TypeError``):
#: the run went wrong in a way the lab does not classify.
ACTOR_ERROR = '%s error: %s'


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
            labels.append(ACTOR_ERROR % (name, type(error).__name__))
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


def is_unclassified(label):
    """True for an actor's error no outcome names (:data:`ACTOR_ERROR`)."""
    return ' error: ' in label


def implied_hosts(row):
    """The hosts a saved instance row says the server uses: 0 or 1.

    A server uses its host's resources unless its state allows removal
    (:func:`~shelvefix.compute.vm_states.allow_resource_removal`, the
    corrected rule: a server an unshelve is spawning counts).
    """
    if row['host'] is None or vm_states.allow_resource_removal(
            vm_state=row['vm_state'], task_state=row['task_state']):
        return set()
    return {row['host']}


def untracked(row, tracked):
    """``usage untracked`` if a node's tracker misses the server.

    :param row: the server's saved row
    :param tracked: ``{host: uuids counted on its node}`` for the hosts
        whose trackers the run has
    :returns: a list with the label, or empty
    """
    for host in implied_hosts(row):
        if (host in tracked and row['node'] == host and
                row['uuid'] not in tracked[host]):
            return [USAGE_UNTRACKED]
    return []


def placement_labels(row, held, providers):
    """Placement against the saved state, for a run whose actors are done.

    :param row: the server's saved row
    :param held: ``{rp_uuid: resources}`` placement holds for it
    :param providers: ``{host: rp_uuid}``
    :returns: :data:`LEAKED` for allocations on a provider the state does
        not place the server on, :data:`CLAIM_WIPED` for a host the state
        places it on without allocations there; :data:`HOST_LOST` alone for
        a server whose state says it runs somewhere but names no host
    """
    if row['host'] is None and row['vm_state'] not in HOSTLESS_STATES:
        return [HOST_LOST]
    implied = {providers[host] for host in implied_hosts(row)}
    labels = []
    if implied - set(held):
        labels.append(CLAIM_WIPED)
    if set(held) - implied:
        labels.append(LEAKED)
    return labels


def actor_labels(results, injected=(), deleted=False):
    """Labels for what the actors raised.

    :param results: actor name -> result (``error``)
    :param injected: exception classes a fault of the run raises on
        purpose (not judged)
    :param deleted: True if the server's saved record is destroyed
        (soft-deleted): an actor finding it gone (InstanceNotFound) is
        then not judged, as nova's operations end when their server is
        deleted under them (e.g. a confirm racing the delete)
    """
    labels = []
    for name, result in sorted(results.items()):
        error = result.error
        if error is None or isinstance(error, tuple(injected) + (
                client.GaveUp, rpc.NothingToReceive)):
            continue
        if deleted and isinstance(error, exception.InstanceNotFound):
            continue
        if _conflict(error):
            label = (COMPUTE_409 if name.startswith('compute')
                     else SCHEDULER_409)
        elif placement_failed(error):
            label = PLACEMENT_FAILED
        else:
            label = ACTOR_ERROR % (name, type(error).__name__)
        if label not in labels:
            labels.append(label)
    return labels


def classify_cloud(cloud, results, injected=()):
    """The outcome of one run of a :class:`~shelvefix.race.cloud.Cloud`.

    :param results: actor name -> result, every actor done or stuck
    :param injected: see :func:`actor_labels`
    :returns: a tuple of labels (see :func:`as_outcome`)
    """
    row = cloud.saved()
    held = cloud.held()
    labels = actor_labels(results, injected)
    labels += placement_labels(row, held, cloud.providers)
    labels += untracked(row, cloud.tracked())
    if row['task_state'] is not None:
        labels.append(TASK_STUCK)
    state = getattr(cloud.placement, 'state', None)
    if (not held and state is not None and
            cloud.instance.uuid in state.consumers):
        labels.append(CONSUMER_LEFT)
    return as_outcome(labels)


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
    labels += untracked(saved, {scn.rt.host: scn.rt.tracked_on(scn.rt.host)})
    # Only the double can tell a consumer record from no consumer.
    state = getattr(scn.placement, 'state', None)
    if (not held and state is not None and
            scn.instance.uuid in state.consumers):
        labels.append(CONSUMER_LEFT)
    return as_outcome(labels)
