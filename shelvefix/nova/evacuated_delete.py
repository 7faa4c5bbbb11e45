"""nova's own API deleting an evacuated server while its old host starts.

:class:`EvacuatedDeleteRun` starts where an evacuation ends
(:data:`EVACUATED`): set up as :class:`~.evacuation.EvacuationRun`
(:data:`~.evacuation.SCHEDULED`), then compute-2 runs the
``rebuild_instance`` it was cast. The server is ``ACTIVE`` on compute-2,
the evacuation migration ``done``, and placement holds the server's
allocations on both hosts, as nova leaves them until compute-1's service
starts again. compute-1 has been down since: when it starts, it is a new
process, whose tracker knows no compute node before its first audit
(``init_host`` reads the node's record from the database), and whose
hypervisor still runs the old guest.
That hypervisor frees what a destroyed guest used, its flavor, as nova's
own fake driver does: destroying the guest reads ``instance.flavor``.

The actors, for the ``evacuate-delete`` scenario (nova's only):

``delete``
    a client deleting the server: nova's ``API.delete``, which casts
    ``terminate_instance`` to compute-2 (:class:`~.deletion.DeleteRun`);
``compute-2``
    compute-2's service running that cast: the server's allocations
    freed, its record destroyed;
``compute-1``
    compute-1's service starting again
    (:meth:`~.evacuation.EvacuationRun.source_starts`):
    ``_destroy_evacuated_instances`` (its guest destroyed, compute-1
    removed from the server's allocations, the migration ``completed``),
    then ``_init_instance`` of the host's instances.

A run is judged as the other move scenarios' are
(:func:`~.move_program.classify`), but compute-1 failing to start with
``InstanceNotFound`` is judged even when the server is deleted: a
service's start is no operation on the server that ends with it.

This module imports nova (see :mod:`shelvefix.nova`).
"""

from nova import exception as nova_exception

from shelvefix.nova import deletion
from shelvefix.nova import doubles
from shelvefix.nova import evacuation
from shelvefix.nova import harness
from shelvefix.nova import lifecycle
from shelvefix.nova import move_program
from shelvefix.nova import program
from shelvefix import race
from shelvefix.race import outcomes

SOURCE = evacuation.SOURCE
DESTINATION = evacuation.DESTINATION
#: Evacuated: the migration ``done``, compute-1 not started since.
EVACUATED = 'evacuated'
#: The label of compute-1's start-up failing on a deleted server.
START_FAILED = outcomes.ACTOR_ERROR % ('compute-1', 'InstanceNotFound')


class GuestDriver(doubles.HostDriver):
    """A hypervisor that frees the flavor of a guest it destroys."""

    def destroy(self, context, instance, network_info, block_device_info=None,
                destroy_disks=True, destroy_secrets=True):
        flavor = instance.flavor
        self._record('release', flavor.vcpus, flavor.memory_mb,
                     flavor.root_gb)
        super(GuestDriver, self).destroy(
            context, instance, network_info,
            block_device_info=block_device_info,
            destroy_disks=destroy_disks, destroy_secrets=destroy_secrets)


class EvacuatedDeleteRun(deletion.DeleteRun, evacuation.EvacuationRun):
    """One run: an evacuated server, nova's API, compute-1 still down."""

    def _create_instance(self, start):
        if start != EVACUATED:
            raise ValueError('an evacuated server starts %r, not %r'
                             % (EVACUATED, start))
        uuid = super(EvacuatedDeleteRun, self)._create_instance(
            evacuation.SCHEDULED)
        self.rebuild()
        row = self.store.peek(uuid)
        status = self.saved_migration()['status']
        if (row['host'], row['task_state'], status) != (
                DESTINATION, None, 'done'):
            raise AssertionError(
                'the evacuation did not end: host %s, task %s, migration '
                '%s' % (row['host'], row['task_state'], status))
        self._restart_source()
        return uuid

    def _restart_source(self):
        """compute-1's service is a new process: new tracker and driver.

        The tracker knows no compute node yet (see :meth:`~.evacuation.
        EvacuationRun._fresh_tracker`).
        """
        compute = self.computes[SOURCE]
        driver = GuestDriver(SOURCE, self.providers[SOURCE],
                             lifecycle.INVENTORY, self.events)
        driver.running = set(compute.driver.running)
        compute.driver = driver
        harness.add_share_manager(compute, driver)
        self._fresh_tracker()


def classify(run, results, injected=()):
    """The outcome of one run; compute-1's start judged whatever happened.

    :func:`~.move_program.classify`, and :data:`START_FAILED` if
    compute-1's start-up raised ``InstanceNotFound`` (which that leaves
    out once the server is deleted).
    """
    outcome = move_program.classify(run, results, injected)
    start = results.get('compute-1')
    if (start is None or START_FAILED in outcome or not isinstance(
            start.error, nova_exception.InstanceNotFound)):
        return outcome
    return outcomes.as_outcome(
        [label for label in outcome if label != outcomes.OK] +
        [START_FAILED])


class EvacuatedDeleteProgram(move_program.NovaMoveProgram):
    """The ``evacuate-delete`` scenario on a set-up ``NovaMoveCloud``."""

    def __init__(self, cloud, without=()):
        super(EvacuatedDeleteProgram, self).__init__(
            cloud, race.EVACUATE_DELETE, without)

    def _actors(self, run, timeout=60.0, done=None):
        done = done or {}
        funcs = {
            'delete': run.delete,
            'compute-2': lambda: run.serve(
                DESTINATION, timeout=timeout,
                give_up=program.after(done, 'delete')),
            'compute-1': run.source_starts,
        }
        return self._as_services(funcs)

    def _start(self):
        return self.cloud.start(EVACUATED, EvacuatedDeleteRun)

    def _finish(self, run, results):
        try:
            self.ends.append(run.end_state())
            return classify(run, results, self.injected)
        finally:
            run.remove_from_placement()
