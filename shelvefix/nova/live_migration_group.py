"""Two members of an anti-affinity group live-migrated at once, on nova.

The race lab's ``live-migrate-group`` scenario (nova only): servers A and
B are the members of one server group with the ``anti-affinity`` policy,
A ``ACTIVE`` on compute-1 and B on compute-3; compute-2 is free. Each is
live-migrated with no host named, at the same time: the scheduler's
anti-affinity filter leaves each of them compute-2 only, and the group's
policy allows one of them there. The actors are the two migrations' API
and conductor parts, where the scheduling and the destination's first
check happen:

``conductor``
    A's live migration: the API's live-migrate and nova's conductor
    (``LiveMigrationTask``: the migration, the scheduler's pick, the
    destination's ``check_can_live_migrate_destination`` as an RPC call,
    then the ``live_migration`` cast to compute-1);
``conductor-b``
    B's, cast to compute-3.

compute-2 checks each migration against the group's policy as nova does
(``_validate_instance_group_policy``, under the group's lock, in
``check_can_live_migrate_destination`` and ``pre_live_migration``),
reading the servers on it and the migrations in progress to it (steps of
the explorer, as every read of the records is). After each run,
unexplored, compute-1 then compute-3 run what was cast to them (the
migrations themselves, ``pre_live_migration`` on compute-2 included:
:meth:`GroupRun.finish_moves`). Exploring those two services as actors
too made a search that did not end in a quarter of an hour.

A run ends judged for A as the other move scenarios are, and for the
group: ``anti-affinity violated`` if both end on one host
(:meth:`GroupRun.end_labels`).

This module imports nova (see :mod:`shelvefix.nova`).
"""
import random
import uuid as uuid_lib

import fixtures
from nova.compute import power_state
from nova.compute import task_states
from nova.compute import vm_states
from nova import exception as nova_exception
from nova import objects
from oslo_utils import timeutils
from oslo_utils import uuidutils

from shelvefix.explorer import model as explorer_model
from shelvefix.nova import deletion
from shelvefix.nova import doubles
from shelvefix.nova import harness
from shelvefix.nova import lifecycle
from shelvefix.nova import live_migration
from shelvefix.nova import moves
from shelvefix import race
from shelvefix.race import move_outcomes
from shelvefix import rpc

SOURCE = live_migration.SOURCE
THIRD = live_migration.THIRD
#: Both members on one host.
VIOLATED = move_outcomes.GROUP_VIOLATED
#: The migrations nova's ``get_in_progress_by_host_and_node`` leaves out.
NOT_IN_PROGRESS = ('confirmed', 'reverted', 'error', 'failed', 'completed',
                   'cancelled', 'done')


def _after(uuid):
    """A new uuid that sorts after ``uuid`` (a random one's).

    ``uuid`` is a random (version 4) uuid: its version digit keeps its
    value below 2**128 - 2**64, so the sum never overflows.
    """
    value = uuid_lib.UUID(uuid).int + random.randrange(1, 2 ** 64)
    return str(uuid_lib.UUID(int=value))


class GroupCloud(live_migration.LiveMigrationCloud):
    """The live migration's cloud with a third host and a server group.

    The group's record is the run's :attr:`GroupRun.group` (``members``
    A and B); the servers on a host and the migrations in progress to it
    are read from the run's stores. The scheduler's ``HostManager`` knows
    each host's servers from what the computes told it (the run's
    ``scheduler_info``: nova's ``_instance_info`` with
    ``track_instance_changes``, its default; the other scenarios' host
    manager, with it off, lists no server on any host): its anti-affinity
    filter reads them.
    """

    def __init__(self, **kwargs):
        super(GroupCloud, self).__init__(**kwargs)
        self.hosts = moves.HOSTS + (THIRD,)

    def _setUp(self):
        super(GroupCloud, self)._setUp()
        cloud = self

        def group(context=None, *args, **kwargs):
            return cloud.run.group.obj_clone()

        def by_instance(context, instance_uuid):
            if instance_uuid not in cloud.run.group.members:
                raise nova_exception.InstanceGroupNotFound(
                    group_uuid=instance_uuid)
            return group()

        def hosts(instance_group, exclude=None, filter_project=True):
            members = set(instance_group.members) - set(exclude or ())
            return sorted(set(
                row['host'] for row in cloud.run.store.query(
                    predicate=lambda row: row['uuid'] in members)))

        def uuids_by_host(context, host):
            return [row['uuid'] for row in cloud.run.store.query(host=host)]

        def instances_by_host(manager, context, host_name):
            return {uuid: objects.Instance(uuid=uuid, host=host_name)
                    for uuid in sorted(cloud.run.scheduler_info.get(
                        host_name, ()))}

        def in_progress(context, host, node):
            def here(row):
                return (row['status'] not in NOT_IN_PROGRESS and (
                    (row['source_compute'], row['source_node']) ==
                    (host, node) or
                    (row['dest_compute'], row['dest_node']) == (host, node)))
            return objects.MigrationList(objects=[
                cloud.move_database.load(context, row)
                for row in cloud.run.migrations.query(predicate=here)])

        for name, value in [
                ('nova.objects.instance_group.InstanceGroup.'
                 'get_by_instance_uuid', doubles.class_call(by_instance)),
                ('nova.objects.instance_group.InstanceGroup.get_by_uuid',
                 doubles.class_call(group)),
                ('nova.objects.instance_group.InstanceGroup.get_by_hint',
                 doubles.class_call(group)),
                ('nova.objects.instance_group.InstanceGroup.get_hosts',
                 hosts),
                ('nova.objects.instance.InstanceList.get_uuids_by_host',
                 doubles.class_call(uuids_by_host)),
                ('nova.scheduler.host_manager.HostManager.'
                 '_get_instances_by_host', instances_by_host),
                ('nova.objects.migration.MigrationList.'
                 'get_in_progress_by_host_and_node',
                 doubles.class_call(in_progress))]:
            self.useFixture(fixtures.MonkeyPatch(name, value))


class GroupRun(live_migration.LiveMigrationRun):
    """One run: A on compute-1 and B on compute-3, both to be moved.

    :ivar other: B's uuid
    :ivar other_migration_uuid: the uuid of B's migration once made
    :ivar group: the group's record
    """

    def _create_instance(self, start):
        uuid = super(GroupRun, self)._create_instance(start)
        cloud = self.cloud
        # B's records sort after A's in every run: nova lists them in
        # uuid order, and the steps must come in one order.
        self.other = _after(uuid)
        self.other_migration_uuid = _after(self.migration_uuid)
        cloud.move_database.next_uuids = {
            uuid: self.migration_uuid,
            self.other: self.other_migration_uuid}
        self.group = objects.InstanceGroup(
            id=1, uuid=uuidutils.generate_uuid(), name='apart',
            user_id=harness.USER, project_id=harness.PROJECT,
            policy='anti-affinity', policies=['anti-affinity'], rules={},
            members=[uuid, self.other])
        self._create_other()
        self.scheduler_info[THIRD].add(self.other)
        for host in cloud.hosts:
            self.rts[host].update_available_resource(self.admin, host)
        return uuid

    def _create_other(self):
        """B ``ACTIVE`` on compute-3, holding its allocations there."""
        other = self.other
        old = moves.old_flavor()
        self.cloud.database.static_of[other] = lifecycle.static_fields(other)
        self.store.create({
            'id': 2, 'uuid': other, 'project_id': harness.PROJECT,
            'user_id': harness.USER, 'availability_zone': 'nova',
            'vm_state': vm_states.ACTIVE, 'task_state': None,
            'power_state': power_state.RUNNING,
            'host': THIRD, 'node': THIRD, 'launched_on': THIRD,
            'compute_id': 3, 'launched_at': timeutils.utcnow(),
            'flavor': old, 'old_flavor': None, 'new_flavor': None,
            'instance_type_id': old.id, 'vcpus': old.vcpus,
            'memory_mb': old.memory_mb, 'root_gb': old.root_gb,
            'ephemeral_gb': old.ephemeral_gb, 'migration_context': None,
            'system_metadata': {},
        })
        harness.NovaShelveScenario.assert_claimed(
            self.scheduler_client.claim_resources(
                self.admin, other, {'allocations': {
                    self.providers[THIRD]: {
                        'resources': moves.resources(old)}}},
                harness.PROJECT, harness.USER, harness.CLAIM_VERSION))
        self.computes[THIRD].driver.running.add(other)
        self.holdings[other] = {self.providers[THIRD]}
        self.holdings[self.other_migration_uuid] = set()

    def names(self):
        """How B, its migration and the group read in the timelines."""
        return [(self.other, '{instance B}'),
                (self.other_migration_uuid, '{migration B}'),
                (self.group.uuid, '{group}')]

    def request_spec(self, uuid=None):
        """The server's request spec (A's by default), with the group."""
        spec = super(GroupRun, self).request_spec()
        spec.instance_uuid = uuid or self.uuid
        spec.instance_group = objects.InstanceGroup(
            uuid=self.group.uuid, policy=self.group.policy,
            policies=[self.group.policy], rules=self.group.rules,
            members=list(self.group.members))
        return spec

    # -- the actors ---------------------------------------------------------

    def live_migrate_other(self):
        """B's live migration: the API's part, then nova's conductor."""
        instance = self.cloud.database.load(harness.context('api-b'),
                                            self.store.get(self.other))
        instance.task_state = task_states.MIGRATING
        instance.save(expected_task_state=[None])
        self.conductor.servicegroup_api = deletion.ServiceGroup()
        self.conductor.live_migrate_instance(
            harness.context(lifecycle.CONDUCTOR, is_admin=True), instance,
            {'host': None}, False, False, self.request_spec(self.other))
        return True

    def finish_moves(self):
        """compute-1, then compute-3, run what was cast to them.

        After the run, unexplored: each migration that was cast goes on
        (``pre_live_migration`` on compute-2, the move, its completion);
        then compute-2's audit, so that its tracker is judged as it stands
        once a periodic task has run.

        :returns: ``{'compute-1': ActorResult, 'compute-3': ActorResult,
            'periodic-2': ActorResult}``
        """
        results = {}
        for host in (SOURCE, THIRD):
            def serve(host=host):
                try:
                    self.serve(host, timeout=5.0, give_up=lambda: True)
                except rpc.NothingToReceive:
                    return False
                return True
            try:
                value = self.cloud.locks.running(host, serve)()
            except Exception as e:
                results[host] = explorer_model.ActorResult(None, e, False)
            else:
                results[host] = explorer_model.ActorResult(value, None, False)
        audit = self.cloud.locks.running(
            live_migration.DESTINATION,
            lambda: self.periodic(live_migration.DESTINATION))
        try:
            value = audit()
        except Exception as e:
            results['periodic-2'] = explorer_model.ActorResult(None, e, False)
        else:
            results['periodic-2'] = explorer_model.ActorResult(value, None,
                                                               False)
        return results

    # -- what happened --------------------------------------------------------

    def end_labels(self):
        """:data:`VIOLATED` if A and B are saved on one host."""
        labels = []
        a = self.store.peek(self.uuid)
        b = self.store.peek(self.other)
        if a['host'] is not None and a['host'] == b['host']:
            labels.append(VIOLATED)
        return labels

    def end_state(self):
        """A's, as :meth:`~.resize.ResizeRun.end_state`, and B's host."""
        state = super(GroupRun, self).end_state()
        row = self.store.peek(self.other)
        state['other'] = (row['vm_state'], row['task_state'], row['host'])
        return state

    def remove_from_placement(self):
        """Free what the run left, B's and its migration's too."""
        super(GroupRun, self).remove_from_placement()
        for consumer in (self.other, self.other_migration_uuid):
            self.scheduler_client.delete_allocation_for_instance(
                self.admin, consumer, force=True)


class GroupProgram(live_migration.LiveMigrationProgram):
    """The ``live-migrate-group`` scenario on a set-up :class:`GroupCloud`."""

    def __init__(self, cloud, without=()):
        if without:
            raise ValueError('the two migrations need both conductors')
        super(GroupProgram, self).__init__(cloud, race.LIVE_MIGRATE_GROUP)
        # Both conductors call compute-2's checks: its locks (the group's
        # among them) are contended, steps of the explorer.
        self.called = (live_migration.DESTINATION,
                       live_migration.DESTINATION)

    def _start(self):
        return self.cloud.start(live_migration.ACTIVE_ON_SOURCE, GroupRun)

    def _actors(self, run, timeout=60.0, done=None):
        return self._as_services({'conductor': run.live_migrate,
                                  'conductor-b': run.live_migrate_other})
