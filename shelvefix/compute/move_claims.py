"""The resource tracker's side of resize, cold migration and evacuation.

A move makes two nodes count one server for a while. The destination's
claim (``resize_claim``, ``rebuild_claim``) counts the new flavor there and
tracks the migration; the source keeps counting the old flavor, for a
possible revert, until the move is confirmed. The periodic audit recounts
both from the migrations in progress: an instance moving in is counted on
the destination until it is saved there, one that has moved out is
counted on the source until its migration ends.

Ending a move drops a claim: confirming drops the source's
(``drop_move_claim_at_source``), reverting the destination's
(``drop_move_claim_at_dest``). Each sets the migration's status *and*
drops the usage under the tracker's lock, in one critical section. Done
apart (bug 1879878), an audit run between the two no longer counts the
migration (its status says it ended), and the drop that follows subtracts
the flavor a second time. For the same reason the source takes a reverted
server back in one critical section (``revert_migration_at_source``):
nova saves its host back outside the lock, and an audit of the source
between the destination's drop and that save leaves the source counting
nothing for the server it runs again (found by ``shelvefix race --scenario
resize-revert``). A live migration's destination takes the server the same
way (``finish_live_migration_at_dest``): nova claims nothing there for it,
and its audit counts the migration only while the server is
``MIGRATING``.

A confirm drops only an old flavor no earlier confirm of the migration
dropped (:func:`stashed_old_flavor`), as nova's drops the instance's
stashed ``old_flavor``: the user's confirm and the delete's may both run
(found by ``shelvefix race --scenario resize-delete``).

The mixin expects the tracker's ``host``, ``store``, ``tracked_instances``,
``tracked_migrations``, ``_semaphore`` and ``_update_usage``.
"""

from oslo_log import log as logging

from shelvefix.compute import claims
from shelvefix.compute import task_states
from shelvefix.compute import vm_states
from shelvefix import exception
from shelvefix.objects import instance as instance_obj
from shelvefix.objects import migration as migration_obj

LOG = logging.getLogger(__name__)


def instance_in_resize_state(instance):
    """True if a resize, a cold migration or a rebuild is moving it."""
    if instance.vm_state == vm_states.RESIZED:
        return True
    return (instance.vm_state in (vm_states.ACTIVE, vm_states.STOPPED) and
            instance.task_state in (task_states.resizing_states +
                                    task_states.rebuild_states))


def instance_is_live_migrating(instance):
    """True if a live migration is moving it (``ACTIVE``, ``MIGRATING``).

    The audit counts a live migration's record as a move's while this
    holds, as nova's does: the destination counts the server from the
    moment the migration names it, for a server it claims nothing for.
    """
    return (instance.vm_state == vm_states.ACTIVE and
            instance.task_state == task_states.MIGRATING)


def stashed_old_flavor(instance, migration):
    """The old flavor a confirm still has to drop at the source, or None.

    nova's confirm drops ``instance.old_flavor``, stashed by the resize and
    cleared by the first confirm that gets to its ``finally``, success or
    not; a second confirm (the user's and the delete's, both holding the
    migration as ``confirming``, ``shelvefix race --scenario
    resize-delete``) reads the instance again under its lock and drops
    nothing. Here the old flavor is the migration's and nothing clears
    it: it is still stashed while the instance, as the confirm read it
    under that lock, is ``RESIZED``. The first confirm saves it
    ``ACTIVE``, ``STOPPED`` or ``ERROR`` before it releases the lock.

    Given None, ``_drop_move_claim`` subtracts nothing unless the node
    still tracks the migration (nova's then falls back on a flavor too);
    once the first confirm dropped it, the node tracks nothing of it.

    A resize across cells confirms the source cell's own copy of the
    server instead, hidden there, still on the source and
    ``RESIZE_MIGRATED`` (what the move left it as): its old flavor is
    stashed until the conductor destroys that copy, after the confirm
    (:mod:`shelvefix.compute.cross_cell`).
    """
    if instance.vm_state == vm_states.RESIZED or (
            instance.task_state == task_states.RESIZE_MIGRATED and
            instance.host == migration.source_compute):
        return migration.old_flavor
    LOG.info('Migration %(migration)s of instance %(uuid)s was confirmed '
             'before: its old flavor is dropped already',
             {'migration': migration.uuid, 'uuid': instance.uuid})
    return None


def last_changed(migration):
    """When ``migration`` was last saved: updated, or else created."""
    return migration.updated_at or migration.created_at


#: See :class:`shelvefix.compute.claims.MoveClaim`.
MoveClaim = claims.MoveClaim


class MoveClaims(object):
    """Move claims, their drops and the audit of migrations in progress."""

    # -- claims on the destination ----------------------------------------

    def resize_claim(self, context, instance, flavor, nodename, migration,
                     allocations, image_meta=None, limits=None):
        """Claim ``flavor`` on this node for a resize or cold migration.

        :param migration: the conductor's migration record
        :param allocations: placement's allocations for the instance
            (nova's signature: the amounts come from the flavor)
        :returns: a :class:`MoveClaim`
        """
        with self._semaphore():
            return self._move_claim(context, instance, flavor, nodename,
                                    migration, allocations, limits=limits)

    def rebuild_claim(self, context, instance, nodename, allocations,
                      limits=None, image_meta=None, migration=None):
        """Claim the instance's flavor on this node for an evacuation."""
        with self._semaphore():
            return self._move_claim(
                context, instance, instance.flavor, nodename, migration,
                allocations, move_type=migration_obj.EVACUATION,
                limits=limits)

    def _move_claim(self, context, instance, new_flavor, nodename,
                    migration, allocations, move_type=None, limits=None):
        if migration is None:
            # nova's tracker makes one when the conductor did not; every
            # move here has the conductor's.
            raise exception.Invalid(
                reason='a move claim for instance %s needs its migration '
                       'record' % instance.uuid)
        self._claim_existing_migration(migration, nodename)
        self._update_usage_from_migration(context, instance, migration,
                                          nodename)
        return claims.MoveClaim(context, instance, nodename, new_flavor,
                                self, migration)

    def _claim_existing_migration(self, migration, nodename):
        """Make the migration this node's, so that audits count it."""
        migration.dest_compute = self.host
        migration.dest_node = nodename
        migration.status = migration_obj.PRE_MIGRATING
        migration.save()

    # -- ending a move -----------------------------------------------------

    def drop_move_claim_at_source(self, context, instance, migration):
        """Confirmed: the source stops counting the old flavor.

        The status and the drop are one critical section (bug 1879878).
        Only the first confirm of a migration drops anything (see
        :func:`stashed_old_flavor`).
        """
        with self._semaphore():
            migration.status = migration_obj.CONFIRMED
            migration.save()
            self._drop_move_claim(context, instance, migration.source_node,
                                  stashed_old_flavor(instance, migration))

    def drop_move_claim_at_dest(self, context, instance, migration):
        """Reverted: the destination stops counting the new flavor.

        The status and the drop are one critical section (bug 1879878).
        """
        with self._semaphore():
            migration.status = migration_obj.REVERTED
            migration.save()
            self._drop_move_claim(context, instance, migration.dest_node,
                                  migration.new_flavor)

    def revert_migration_at_source(self, context, instance, migration):
        """Reverted: the server is the source node's again, and counted.

        Its host, node and flavor are saved back in the same critical
        section that makes the node count it: as an instance now, with
        the old flavor the node still counts for the migration, or counted
        afresh if an audit has stopped counting the migration meanwhile
        (its status says reverted). Saved apart, as nova saves it, an
        audit in between leaves the node counting nothing for a server
        running on it until the next audit.
        """
        with self._semaphore():
            instance.flavor = migration.old_flavor
            instance.host = migration.source_compute
            instance.node = migration.source_node
            instance.save(expected_task_state=[
                task_states.RESIZE_REVERTING])
            resources = dict(migration.old_flavor.resources)
            tracked = self.tracked_migrations.pop(instance.uuid, None)
            if instance.uuid not in self.tracked_instances:
                self.tracked_instances[instance.uuid] = (
                    migration.source_node, resources)
                if tracked is None:
                    self._update_usage(resources, migration.source_node)

    def finish_live_migration_at_dest(self, context, instance, nodename,
                                      power_state):
        """Live-migrated: the server is this node's now, and counted.

        Its host and node, power state and no task are saved in the
        critical section that makes the node count it: as an instance now,
        with the flavor an audit may already count for its migration, or
        afresh. nova saves it outside the tracker's lock, and claims
        nothing here for a server without NUMA topology: an audit that
        lists the node's instances before that save and reads the
        migration after it (the task over, not counted any more) leaves
        the node counting nothing for the server until its next audit.

        :raises UnexpectedTaskStateError: the server is not ``MIGRATING``
        """
        with self._semaphore():
            instance.host = self.host
            instance.node = nodename
            instance.power_state = power_state
            instance.task_state = None
            instance.save(expected_task_state=[task_states.MIGRATING])
            resources = dict(instance.flavor.resources)
            tracked = self.tracked_migrations.pop(instance.uuid, None)
            if instance.uuid not in self.tracked_instances:
                self.tracked_instances[instance.uuid] = (nodename, resources)
                if tracked is None:
                    self._update_usage(resources, nodename)

    def drop_live_migrated_instance(self, context, instance, nodename):
        """The server left ``nodename`` by live migration: stop counting it.

        What nova's source gets from the audit it runs after the move,
        for this one server: subtracted once, if the node still counts it
        (an audit since may have dropped it already).
        """
        with self._semaphore():
            tracked = self.tracked_instances.get(instance.uuid)
            if tracked is not None and tracked[0] == nodename:
                del self.tracked_instances[instance.uuid]
                self._update_usage(tracked[1], nodename, sign=-1)

    def drop_move_claim(self, context, instance, nodename, flavor=None):
        """Stop counting a move on ``nodename``.

        :param flavor: what to subtract; None subtracts the new flavor of
            a migration the node tracks, and nothing otherwise
        """
        with self._semaphore():
            self._drop_move_claim(context, instance, nodename, flavor)

    def _drop_move_claim(self, context, instance, nodename, flavor=None):
        uuid = instance.uuid
        if flavor is None and uuid in self.tracked_migrations:
            flavor = self.tracked_migrations[uuid].new_flavor
        if flavor is not None:
            # Subtracted whether or not an audit still counted it, as
            # nova's tracker does: that is why the status must change in
            # the same critical section.
            self._update_usage(flavor.resources, nodename, sign=-1)
        self.tracked_migrations.pop(uuid, None)
        # Forgotten without subtracting: the flavor above was its usage.
        self.tracked_instances.pop(uuid, None)

    # -- the audit -----------------------------------------------------------

    def _update_usage_from_migration(self, context, instance, migration,
                                     nodename):
        """Count one migration moving ``instance`` into or out of a node."""
        incoming = (migration.dest_compute == self.host and
                    migration.dest_node == nodename)
        outbound = (migration.source_compute == self.host and
                    migration.source_node == nodename)
        tracked = instance.uuid in self.tracked_instances
        flavor = None
        if incoming and outbound:
            # A resize on one node: hold the flavor it is not running.
            flavor = (migration.new_flavor
                      if instance.flavor == migration.old_flavor
                      else migration.old_flavor)
        elif incoming and not tracked:
            flavor = migration.new_flavor
        elif outbound and not tracked:
            flavor = migration.old_flavor
        if flavor is not None:
            LOG.debug('Tracking migration %(migration)s of instance '
                      '%(uuid)s on %(node)s',
                      {'migration': migration.uuid, 'uuid': instance.uuid,
                       'node': nodename})
            self._update_usage(flavor.resources, nodename)
            self.tracked_migrations[instance.uuid] = migration

    def _update_usage_from_migrations(self, context, migrations, nodename):
        """Count the migrations in progress on ``nodename``.

        Each instance is read once. A migration is skipped if its instance
        is gone or not being moved; of several left for one instance only
        the one changed last counts (:func:`last_changed`), as in nova: a
        stale one, e.g. a resize never confirmed before the next move,
        would count the instance again.
        """
        self.tracked_migrations.clear()
        instances = {}
        newest = {}
        for migration in migrations:
            uuid = migration.instance_uuid
            if uuid not in instances:
                try:
                    instances[uuid] = instance_obj.Instance.get_by_uuid(
                        self.store, uuid)
                except exception.InstanceNotFound:
                    LOG.debug('Migration %(migration)s: instance %(uuid)s '
                              'not found', {'migration': migration.uuid,
                                            'uuid': uuid})
                    continue
            if not (instance_in_resize_state(instances[uuid]) or
                    instance_is_live_migrating(instances[uuid])):
                continue
            other = newest.get(uuid)
            if other is None or last_changed(migration) > last_changed(other):
                newest[uuid] = migration
        for migration in newest.values():
            self._update_usage_from_migration(
                context, instances[migration.instance_uuid], migration,
                nodename)
