"""The API side of an unshelve or a move: a client that asks once it may.

A user (tempest, a script) polls the server's status and asks to unshelve
as soon as it reads ``SHELVED_OFFLOADED``; nova's API then sets
``task_state = UNSHELVING``, saved only if no other task owns the instance,
and the conductor asks the scheduler to claim a destination. That sequence
is what races compute's shelve-offload, and :func:`unshelve` is its one
copy: the race program, the stress run, the fault matrix and the tests on
nova's own code all run it.

:func:`move` is the same client for a cold migration or a resize: it
asks as soon as it reads the server ``ACTIVE`` (or ``STOPPED``) with no
task, as when a script moves a server again right after confirming its
last resize (``shelvefix race --scenario resize-migrate``).

Only ``vm_states`` and ``task_states`` are imported, so that code which
cannot load shelvefix's configuration (the tests on nova's code) can use
it too.
"""

from shelvefix.compute import task_states
from shelvefix.compute import vm_states


def offloaded(row):
    """True once a saved row shows the server shelve-offloaded."""
    return row['vm_state'] == vm_states.SHELVED_OFFLOADED


class GaveUp(Exception):
    """The client stopped waiting: there is nothing to unshelve."""


def unshelve(store, uuid, load, claim, timeout=60.0, poll_interval=0.001,
             give_up=None, revert=True):
    """Wait for ``SHELVED_OFFLOADED``, then unshelve through ``claim``.

    If the claim fails, the task state is cleared again (as nova's
    conductor does), so the server can be unshelved once more.

    :param store: the :class:`~shelvefix.objects.instance.InstanceStore`
        the API reads
    :param uuid: the server
    :param load: ``load(row)`` returns the instance object the API saves
        (a shelvefix ``Instance``, or nova's)
    :param claim: ``claim(instance)`` runs the scheduler's claim and
        returns its result
    :param timeout: seconds to wait for the offloaded state
    :param poll_interval: seconds between status polls
    :param give_up: None, or a callable: once it returns true the client
        stops waiting (the offload failed, say)
    :param revert: clear the task state if ``claim`` raises; False when
        ``claim`` is the conductor's, which clears it itself
    :returns: what ``claim`` returned
    :raises GaveUp: ``give_up`` said so before the server was offloaded
    :raises UnexpectedTaskStateError: another task owns the instance
    :raises: whatever ``claim`` raised
    """
    row = store.wait_for(
        uuid, lambda row: offloaded(row) or bool(give_up and give_up()),
        timeout=timeout, poll_interval=poll_interval)
    if not offloaded(row):
        raise GaveUp('%s was not shelve-offloaded' % uuid)
    instance = load(row)
    instance.task_state = task_states.UNSHELVING
    instance.save(expected_task_state=[None])
    if not revert:
        return claim(instance)
    try:
        return claim(instance)
    except Exception:
        instance.task_state = None
        instance.save(expected_task_state=[task_states.UNSHELVING])
        raise


def movable(row):
    """True if nova's API lets the server be resized or migrated now."""
    return (row['vm_state'] in (vm_states.ACTIVE, vm_states.STOPPED) and
            row['task_state'] is None)


def move(store, uuid, load, schedule, timeout=60.0, poll_interval=0.001,
         give_up=None):
    """Wait until the server may move, then move it through ``schedule``.

    As nova's ``API.resize``: the task state ``RESIZE_PREP`` is saved
    only if no other task owns the server, then the conductor's task
    runs (it clears the task state again if it fails).

    :param schedule: ``schedule(instance)`` runs the conductor's task and
        returns its result
    :param give_up: None, or a callable: once it returns true the client
        stops waiting
    :raises GaveUp: ``give_up`` said so before the server could move
    :raises UnexpectedTaskStateError: another task owns the server
    :returns: what ``schedule`` returned

    The other parameters are :func:`unshelve`'s.
    """
    row = store.wait_for(
        uuid, lambda row: movable(row) or bool(give_up and give_up()),
        timeout=timeout, poll_interval=poll_interval)
    if not movable(row):
        raise GaveUp('%s cannot be moved: %s, task %s'
                     % (uuid, row['vm_state'], row['task_state']))
    instance = load(row)
    instance.task_state = task_states.RESIZE_PREP
    instance.save(expected_task_state=[None])
    return schedule(instance)
