"""nova's own services moving a server again once its resize is confirmed.

:class:`SecondMoveRun` is a :class:`~.moves.MoveRun` (a server resized to
compute-2, not yet confirmed) in a cloud whose compute-1 is enabled again
(:class:`SecondMoveCloud`), for the library's ``resize-migrate`` scenario
(:mod:`shelvefix.race.move_program`). What runs is nova's code:

* the user's confirm (:meth:`~.moves.MoveRun.confirm`): the migration
  ``confirming``, then compute-1's ``confirm_resize``, which saves the
  server ``ACTIVE`` before it deletes the migration's allocations on
  compute-1;
* a client that migrates the server as soon as it reads it ``ACTIVE``
  with no task (:func:`shelvefix.race.client.move`): the API's part of
  nova's ``API.resize`` for a cold migration (the source in the request
  spec's ``ignore_hosts``, as with ``allow_resize_to_same_host`` off, and
  ``RESIZE_PREP`` saved only if no other task owns the server), then
  nova's conductor, ``ComputeTaskManager.migrate_server``: its
  ``MigrationTask`` creates the second migration, moves the server's
  allocations on compute-2 to it, has the scheduler claim compute-1 and
  casts ``prep_resize`` there;
* compute-1's service running that ``prep_resize``: the tracker's
  ``resize_claim`` on the node the confirm is cleaning up, then
  ``resize_instance`` cast to compute-2;
* compute-1's periodic audit.

After each run, not explored, the rest of the second move runs to its end
(:meth:`SecondMoveRun.finish_moves`): compute-2's ``resize_instance`` and
compute-1's ``finish_resize``, nova's code too, so that the end state is
one a user could see.

Stubbed besides what :mod:`~.moves` stubs: what ``ComputeManager``'s
constructor would set (its task bookkeeping), the records only this path
reads or writes (a compute node by host and node, the request spec's
save, the network info cache's refresh) and the resize notification;
and the virt driver's two halves of a resize
(:class:`~.doubles.HostDriver`).

This module imports nova (see :mod:`shelvefix.nova`).
"""

import threading

import fixtures
from nova.compute import manager as nova_manager
from nova import exception as nova_exception

from shelvefix.explorer import model
from shelvefix.nova import doubles
from shelvefix.nova import harness
from shelvefix.nova import lifecycle
from shelvefix.nova import moves
from shelvefix.race import client

SOURCE = moves.SOURCE
DESTINATION = moves.DESTINATION


class SecondMoveCloud(moves.NovaMoveCloud):
    """A :class:`~.moves.NovaMoveCloud` whose compute-1 takes servers again.

    Its service is enabled and its provider has no
    ``COMPUTE_STATUS_DISABLED`` trait, so that the scheduler can send the
    second move there (the first went to compute-2 before the run).
    """

    def _setUp(self):
        super(SecondMoveCloud, self)._setUp()
        # Its only trait was COMPUTE_STATUS_DISABLED.
        self.placement.set_traits(self.providers[SOURCE], [])
        service = self.database.services[SOURCE]
        service.disabled, service.disabled_reason = False, None
        database = self.database

        def by_host_and_nodename(context, host, nodename):
            for node in database.compute_nodes.values():
                if (node.host, node.hypervisor_hostname) == (host, nodename):
                    return node.obj_clone()
            raise nova_exception.ComputeHostNotFound(host=host)

        for name, value in [
                ('nova.objects.compute_node.ComputeNode.'
                 'get_by_host_and_nodename',
                 doubles.class_call(by_host_and_nodename)),
                ('nova.objects.request_spec.RequestSpec.save',
                 database._record('request_spec.save')),
                ('nova.objects.instance_info_cache.InstanceInfoCache.'
                 'refresh', lambda cache: None),
                ('nova.compute.utils.notify_about_resize_prep_instance',
                 database._record('notify.resize_prep'))]:
            self.useFixture(fixtures.MonkeyPatch(name, value))


def manager_state(compute):
    """What nova's ``Manager`` and ``ComputeManager`` constructors set.

    Only the task bookkeeping ``prep_resize`` reads, and the instance
    events ``resize_instance`` clears (the harness builds the managers
    without their constructors).
    """
    compute._shutdown_in_progress = threading.Event()
    compute._in_progress_tasks = {}
    compute._failed_tasks = {}
    compute._completed_task_count = 0
    compute._in_progress_task_key_counter = 0
    compute._in_progress_task_cond = threading.Condition()
    compute._pending_dest_resizes = {}
    compute.instance_events = nova_manager.InstanceEvents()


class SecondMoveRun(moves.MoveRun):
    """One run: the resized server, and a client to move it again."""

    def _create_instance(self, start):
        uuid = super(SecondMoveRun, self)._create_instance(start)
        for compute in self.computes.values():
            manager_state(compute)
        #: The second migration's uuid (nova's create gets it).
        self.second_uuid = self.cloud.move_database.next_uuid
        self.holdings[self.second_uuid] = set()
        return uuid

    def migrate_again(self, timeout=60.0):
        """The client, the API's part of a cold migration, nova's conductor.

        The explorer leaves the client waiting (stuck) if the server
        never becomes movable (the confirm failed).
        """
        def load(row):
            return self.cloud.database.load(harness.context('api'), row)

        def schedule(instance):
            spec = self.request_spec()
            spec.flavor = instance.flavor
            # nova's API.resize, allow_resize_to_same_host off.
            spec.ignore_hosts = [instance.host]
            self.conductor.migrate_server(
                harness.context(lifecycle.CONDUCTOR, is_admin=True),
                instance, {'filter_properties': {
                    'ignore_hosts': [instance.host]}},
                False, False, instance.flavor, None, None,
                clean_shutdown=True, request_spec=spec, host_list=None)
            return True

        return client.move(self.store, self.uuid, load, schedule,
                           timeout=timeout)

    def finish_moves(self, rounds=4):
        """Serve what is still cast to either host (not explored).

        :param rounds: how many times both queues are emptied, at most
        :returns: ``{'<host> later': ActorResult}`` for the casts that
            failed, as the explorer reports an actor's error
        """
        failed = self.later = {}
        for _round in range(rounds):
            served = False
            for host in moves.HOSTS:
                while self.transport.waiting(doubles.COMPUTE_TOPIC, host):
                    served = True
                    try:
                        self.cloud.locks.running(
                            host, lambda: self.serve(host, timeout=0))()
                    except Exception as exc:
                        failed['%s later' % host] = model.ActorResult(
                            None, exc, False)
            if not served:
                break
        return failed

    def saved_migrations(self):
        """Both migrations' rows (the second once nova created it)."""
        saved = set(self.migrations.uuids())
        return [self.migrations.peek(uuid)
                for uuid in (self.migration_uuid, self.second_uuid)
                if uuid in saved]

    def end_state(self):
        """:meth:`~.moves.MoveRun.end_state`, and the second migration's.

        ``'second'`` is its status (None if never created),
        ``'second_held'`` the hosts placement holds for it, and ``'later'``
        what :meth:`finish_moves` saw fail (``'<host>: <error>'``).
        """
        state = super(SecondMoveRun, self).end_state()
        host_of = {rp: host for host, rp in self.providers.items()}
        rows = {row['uuid']: row for row in self.saved_migrations()}
        second = rows.get(self.second_uuid)
        state['second'] = second and second['status']
        state['second_held'] = sorted(
            host_of[rp] for rp in self.held(self.second_uuid))
        state['later'] = sorted(
            '%s: %s' % (name.split()[0], result.error)
            for name, result in getattr(self, 'later', {}).items())
        return state

    def remove_from_placement(self):
        super(SecondMoveRun, self).remove_from_placement()
        self.scheduler_client.delete_allocation_for_instance(
            self.admin, self.second_uuid, force=True)
