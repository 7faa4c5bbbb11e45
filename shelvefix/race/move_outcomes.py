"""What went wrong in one run of a move scenario, read from the end state.

As for the shelve lifecycle (:mod:`shelvefix.race.outcomes`, whose labels
are reused), the end state is read three ways and compared, now with two
consumers (the server and its migration record):

* placement against the saved records: the server holds its host's
  allocations, nothing else (``allocations leaked``, ``claim wiped``;
  after an evacuation, also the source's until that host starts again
  and removes them); the
  migration holds the source's only while the move is in progress
  (:data:`MIGRATION_LEAKED` otherwise: after a confirm or a revert, or a
  failure that ended it);
* each node's tracker against the records: what the node counts may not be
  less than what the records say it must (``usage untracked``); a node
  counting more is healed by its next audit and is not judged;
* the records themselves: a host for a server that runs (``host lost``), no
  task left set (``task state stuck``).

A deleted server (``DELETED``, or its record destroyed:
:func:`as_deleted`; after the concurrent delete of ``resize-delete``) may
hold nothing anywhere, nor its migration (``allocations leaked``,
:data:`MIGRATION_LEAKED`), and no node's tracker
may still count it as one of the node's instances
(:data:`DELETED_COUNTED`): its host stops counting it as it completes the
deletion, and the audit never counts a deleted server. An actor that
found the server gone (InstanceNotFound: a confirm whose save comes after
the delete destroyed the record) is judged only if the record is not
destroyed (:func:`~shelvefix.race.outcomes.actor_labels`). A node still
counting the flavor of a migration that stopped (a failed confirm) counts
more than it must, as above: its next audit heals it.
"""

from shelvefix.compute import move_claims
from shelvefix.compute import vm_states
from shelvefix.objects import instance as instance_obj
from shelvefix.objects import migration as migration_obj
from shelvefix.race import outcomes

MIGRATION_LEAKED = 'migration allocations leaked'
DELETED_COUNTED = 'deleted server counted'
#: An evacuated host destroyed its guest of the server but kept its disk
#: (on storage it does not share): judged by the nova target's evacuation,
#: whose source records how it destroyed the guest.
SOURCE_DISK_KEPT = 'source disk kept'
#: The scheduler's view of a host's servers (what the computes' instance
#: info casts left) still holds a server that is not there: judged by the
#: nova target's resize runs, whose scheduler client keeps that view.
SCHEDULER_INFO_STALE = 'scheduler instance info stale'
#: Two members of an anti-affinity group saved on one host: judged by the
#: nova target's ``live-migrate-group``.
GROUP_VIOLATED = 'anti-affinity violated'


def _in_progress(migration):
    return migration['status'] not in migration_obj.NOT_IN_PROGRESS


def _moving(row):
    return move_claims.instance_in_resize_state(
        instance_obj.Instance(None, **row))


def implied_usage(row, migrations, host):
    """What ``host``'s node must count, from the saved records.

    The server's flavor where it is saved (unless its state allows
    removal); and for each migration in progress while the server is
    moving, the flavor the migration holds on a node the server is not
    saved on: the new one on the destination, the old one on the source.

    :param migrations: the server's migration rows (or one row)
    :returns: ``{resource class: amount}``
    """
    if isinstance(migrations, dict):
        migrations = [migrations]
    usage = {}

    def add(flavor):
        for rc, amount in flavor.resources.items():
            usage[rc] = usage.get(rc, 0) + amount

    if row['host'] == host and not vm_states.allow_resource_removal(
            vm_state=row['vm_state'], task_state=row['task_state']):
        add(row['flavor'])
    for migration in migrations:
        if not (_in_progress(migration) and _moving(row) and
                row['host'] != host):
            continue
        if migration['dest_compute'] == host and migration['new_flavor']:
            add(migration['new_flavor'])
        elif migration['source_compute'] == host and migration['old_flavor']:
            add(migration['old_flavor'])
    return usage


def stale_hosts(row, migrations, info, deleted=False):
    """The hosts the scheduler's instance info wrongly places a server on.

    A server is on its saved host; while it is moving, with a migration in
    progress, also on that migration's source and destination (nova
    reports it to the destination as the move finishes there, and removes
    it from the source as the move is confirmed). A deleted server is on
    none.

    :param info: ``{host: set of instance uuids}`` the scheduler keeps
    :returns: the sorted hosts holding the server that it is not on
    """
    on = set()
    if not (deleted or row['vm_state'] == vm_states.DELETED):
        on.add(row['host'])
        for migration in migrations:
            if _in_progress(migration) and _moving(row):
                on.update((migration['source_compute'],
                           migration['dest_compute']))
    return sorted(host for host, uuids in info.items()
                  if row['uuid'] in uuids and host not in on)


def under_counted(implied, counted):
    """True if a node counts less of any resource than it must.

    A negative count (a flavor subtracted twice) is always less.
    """
    return any(counted.get(rc, 0) < implied.get(rc, 0)
               for rc in set(implied) | set(counted))


def awaits_source_cleanup(row, migration, providers):
    """True for a finished evacuation whose source has not cleaned up.

    The server keeps its allocations on the evacuated host until that
    host's compute service starts again and removes them (the migration is
    then ``completed``): holding them before is not a leak.
    """
    return (migration['migration_type'] == migration_obj.EVACUATION and
            migration['status'] == migration_obj.DONE and
            row['host'] == migration['dest_compute'])


def migration_labels(row, migration, held, providers):
    """The migration consumer against its record.

    :param held: ``{rp_uuid: resources}`` placement holds for it
    """
    if not held:
        return []
    allowed = set()
    if (_in_progress(migration) and _moving(row) and
            migration['migration_type'] != migration_obj.EVACUATION):
        allowed.add(providers[migration['source_compute']])
    return [MIGRATION_LEAKED] if set(held) - allowed else []


def deleted_counted(row, trackers):
    """:data:`DELETED_COUNTED` if a node still counts a deleted server.

    :param trackers: the run's resource trackers
    :returns: a list with the label, or empty
    """
    if row['vm_state'] == vm_states.DELETED and any(
            row['uuid'] in rt.tracked_instances for rt in trackers):
        return [DELETED_COUNTED]
    return []


def as_deleted(row):
    """A destroyed record as the server it is: ``DELETED``, no task.

    Nobody finds a destroyed (soft-deleted) server any more, whatever its
    last save said: a confirm may save it ``ACTIVE`` between its host's
    save of ``DELETED`` and the destroy that follows, as in nova. It is
    judged as any deleted server is.
    """
    return dict(row, vm_state=vm_states.DELETED, task_state=None)


def classify_move(cloud, results, injected=()):
    """The outcome of one run of a move scenario's cloud.

    :param cloud: the :class:`~shelvefix.race.move_cloud.MoveCloud`; every
        migration it recorded is judged (``saved_migrations``: a second
        move's too)
    :param results: actor name -> result, every actor done or stuck
    :param injected: exception classes a fault of the run raises on
        purpose (not judged)
    :returns: a tuple of labels (see :func:`outcomes.as_outcome`)
    """
    row = cloud.saved()
    destroyed = cloud.store.is_deleted(cloud.instance.uuid)
    if destroyed:
        row = as_deleted(row)
    migrations = cloud.saved_migrations()
    labels = outcomes.actor_labels(results, injected, deleted=destroyed)
    # Each consumer read once: placement does not change any more.
    consumers = [cloud.instance.uuid] + [m['uuid'] for m in migrations]
    holdings = {consumer: cloud.held(consumer) for consumer in consumers}
    held = dict(holdings[cloud.instance.uuid])
    for migration in migrations:
        if awaits_source_cleanup(row, migration, cloud.providers):
            # Removed by the source's next start, as nova defers it.
            held.pop(cloud.providers[migration['source_compute']], None)
    labels += outcomes.placement_labels(row, held, cloud.providers)
    for migration in migrations:
        for label in migration_labels(row, migration,
                                      holdings[migration['uuid']],
                                      cloud.providers):
            if label not in labels:
                labels.append(label)
    counted = cloud.usage()
    if any(under_counted(implied_usage(row, migrations, host),
                         counted[host])
           for host in sorted(counted)):
        labels.append(outcomes.USAGE_UNTRACKED)
    labels += deleted_counted(row, cloud.rts.values())
    if row['task_state'] is not None:
        labels.append(outcomes.TASK_STUCK)
    state = getattr(cloud.placement, 'state', None)
    if state is not None and any(
            not holdings[consumer] and consumer in state.consumers
            for consumer in sorted(holdings)):
        labels.append(outcomes.CONSUMER_LEFT)
    return outcomes.as_outcome(labels)
