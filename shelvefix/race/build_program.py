"""The ``build`` and ``build-delete`` scenarios on the library's code.

The actors, as on the nova target (:mod:`shelvefix.nova.build`,
:mod:`shelvefix.nova.build_delete`), on a
:class:`~shelvefix.race.build.BuildCloud`:

``build``
    ``conductor`` is ``schedule_and_build_instances`` (the scheduler's
    claim of compute-1, compute-2 kept as the alternate, the record in the
    cell, the mapping, the build request destroyed, the cast to compute-1),
    then the conductor service serving a reschedule; ``compute-1`` serves
    the build (the tracker's ``instance_claim`` under its lock, the
    driver's spawn); ``compute-2`` serves a rescheduled build;
    ``periodic-1`` is compute-1's audit; ``conductor-2`` is idle (nova's
    ``pci-parallel-builds`` only). Cells: corrected; ``build-fails``
    (compute-1's spawn fails: compute-1 frees the claim and casts the
    reschedule, the conductor claims compute-2); ``alternate-claim-fails``
    (that claim is refused too: the server goes to ``ERROR``);
    ``compute-restarts`` (compute-1's service restarts once it took the
    cast: ``init_host`` sets the lost build to ``ERROR`` and frees its
    allocations). nova's PCI cells are not the library's:
    :attr:`BuildProgram.faults` lists those it runs.
``build-delete``
    ``conductor`` is the build, as above (no reschedule comes);
    ``delete`` the user's delete of the server; ``periodic-1``
    compute-1's audit. After each run, unexplored, compute-1 serves what
    was cast to it (the build, which finds the server gone, or a
    ``terminate_instance``).

A run is judged by :func:`classify`, as the nova target judges it: what
placement, the trackers and the records must agree on once every actor
is done.
"""

from shelvefix.compute import collaborators
from shelvefix.compute import vm_states
from shelvefix import explorer
from shelvefix.explorer import model
from shelvefix import race
from shelvefix.race import build
from shelvefix.race import outcomes
from shelvefix.race import program
from shelvefix.race import random_runs
from shelvefix.race import steps
from shelvefix.race import variants

SOURCE = build.SOURCE
DESTINATION = build.DESTINATION

#: What each fault makes a host's virt driver fail.
FAILING = {race.BUILD_FAILS: {SOURCE: ('spawn',)},
           race.ALTERNATE_CLAIM_FAILS: {SOURCE: ('spawn',)}}
#: ``alternate-claim-fails``: placement refuses the server's second claim
#: (the first is the scheduler's of compute-1; the second the conductor's
#: of compute-2 on the reschedule), as it refuses a host with no room
#: left.
NO_ROOM = '{"errors": [{"status": 409, "title": "Conflict", "detail": ' \
    '"There was a conflict when trying to complete your request.\\n\\n ' \
    'Unable to allocate inventory: Unable to create allocation for ' \
    '\'MEMORY_MB\' on resource provider \'{compute-2}\'. The requested ' \
    'amount would exceed the capacity. ", ' \
    '"code": "placement.undefined_code"}]}'
PLACEMENT_FAULTS = {race.ALTERNATE_CLAIM_FAILS: dict(
    method='PUT', path='^/allocations/', nth=2, status=409, body=NO_ROOM)}


def _no_wait(seconds):
    pass


def expected_providers(cloud, row):
    """``(required, allowed)`` providers the saved row lets the server hold.

    None for a server still building (not judged by placement).
    """
    if row is None or cloud.deleted():
        return set(), set()
    host = row['host']
    if row['vm_state'] == vm_states.ACTIVE and host is not None:
        return {cloud.providers[host]}, {cloud.providers[host]}
    if row['vm_state'] == vm_states.ERROR:
        return set(), ({cloud.providers[host]} if host else set())
    return None


def server_labels(cloud):
    """What the record, placement and the trackers say of the server."""
    labels = []
    row = cloud.saved()
    live = row is not None and not cloud.deleted()
    if live and (row['vm_state'] == vm_states.BUILDING or
                 row['task_state'] is not None):
        labels.append(outcomes.TASK_STUCK)
    elif live and row['vm_state'] == vm_states.ACTIVE and not row['host']:
        labels.append(outcomes.HOST_LOST)
    expected = expected_providers(cloud, row)
    if expected is not None:
        held = set(cloud.held())
        required, allowed = expected
        if required - held:
            labels.append(outcomes.CLAIM_WIPED)
        if held - allowed:
            labels.append(outcomes.LEAKED)
    if (live and row['vm_state'] == vm_states.ACTIVE and row['host'] and
            any(cloud.usage()[row['host']].get(rc, 0) < amount
                for rc, amount in row['flavor'].resources.items())):
        labels.append(outcomes.USAGE_UNTRACKED)
    return labels


def classify(cloud, results, injected=()):
    """The outcome of one run (labels of :mod:`~shelvefix.race.outcomes`)."""
    labels = outcomes.actor_labels(results, injected,
                                   deleted=cloud.deleted())
    labels += server_labels(cloud)
    return outcomes.as_outcome(labels)


class BuildProgram(program.CloudProgram):
    """One cell of ``build`` on the library.

    See :class:`~shelvefix.race.program.CloudProgram` for the parameters.
    """

    #: The faults of the scenario's cells the library runs (nova's PCI
    #: faults need PCI devices, which the library does not model).
    faults = (None, race.BUILD_FAILS, race.ALTERNATE_CLAIM_FAILS,
              race.COMPUTE_RESTARTS)

    def __init__(self, placement, cell, scenario):
        if cell.fault not in self.faults:
            raise ValueError('the library does not run the %s fault of '
                             '%s' % (cell.fault, scenario.name))
        super(BuildProgram, self).__init__(placement, cell, scenario)
        self.injected = ((collaborators.DriverFailed,)
                         if cell.fault in FAILING else ())
        #: Each run's :meth:`~.build.BuildCloud.end_state`, in order.
        self.ends = []

    def _cloud(self, explored):
        if self.providers is None:
            self.providers = build.create_providers(self.placement)
        code = variants.code(self.cell.variant)
        cloud = build.BuildCloud(
            self.placement, self.providers, manager_cls=code.manager_cls,
            tracker_cls=code.tracker_cls,
            failing=FAILING.get(self.cell.fault),
            sleep=_no_wait if explored else None)
        fault = PLACEMENT_FAULTS.get(self.cell.fault)
        if fault is not None:
            self.placement.inject_fault(**fault)
        return cloud

    def _names(self, cloud):
        src, dst = self.providers
        return steps.Names([(cloud.uuid, '{instance}'),
                            (src, '{compute-1}'), (dst, '{compute-2}')])

    def _holdings(self, cloud):
        return {}

    def _functions(self, cloud, timeout, done):
        def after(name):
            return lambda: random_runs.finished(done, name)
        if self.cell.fault == race.COMPUTE_RESTARTS:
            compute_1 = lambda: cloud.restart(  # noqa: E731
                timeout=timeout, give_up=after('conductor'))
        else:
            compute_1 = lambda: cloud.serve(  # noqa: E731
                SOURCE, timeout=timeout, give_up=after('conductor'))
        return {
            'conductor': lambda: cloud.conduct(
                timeout=timeout, give_up=after('compute-1')),
            'conductor-2': lambda: True,
            'compute-1': compute_1,
            'compute-2': lambda: cloud.serve(
                DESTINATION, timeout=timeout, give_up=after('conductor')),
            'periodic-1': lambda: cloud.periodic(SOURCE),
        }

    def _actors(self, cloud, timeout=60.0, poll_interval=None, done=None):
        funcs = self._functions(cloud, timeout, done or {})
        return [(name, funcs[name]) for name in self.actors]

    def __call__(self, controller):
        cloud = self._cloud(explored=True)
        names = self._names(cloud)
        undo = cloud.instrument(controller, names, self._holdings(cloud),
                                self.wait_label, self._actor_hosts())
        stores = [(cloud.build_requests, 'build request'),
                  (cloud.mappings, 'instance mapping')]
        for store, kind in stores:
            store.interceptor = steps.StoreStepper(
                controller, store, self.wait_label, names, kind=kind)

        def check(results):
            undo()
            for store, _kind in stores:
                store.interceptor = None
            return self._finish(cloud, results)
        return explorer.RunSpec(actors=self._actors(cloud), check=check)

    def _finish(self, cloud, results):
        try:
            self.placement.clear_faults()
            results = dict(results, **self._tail(cloud))
            self.ends.append(cloud.end_state())
            return classify(cloud, results, self.injected)
        finally:
            cloud.remove_from_placement()

    def _tail(self, cloud):
        """``{actor: ActorResult}`` of what runs after the run (nothing)."""
        return {}


class BuildDeleteProgram(BuildProgram):
    """One cell of ``build-delete`` on the library.

    compute-1 is no actor: :meth:`_tail` runs its part after each run.
    """

    faults = (None,)

    def _functions(self, cloud, timeout, done):
        return {
            # No reschedule comes: compute-1 builds after the run.
            'conductor': lambda: cloud.conduct(timeout=timeout,
                                               give_up=lambda: True),
            'delete': cloud.delete,
            'periodic-1': lambda: cloud.periodic(SOURCE),
        }

    def _tail(self, cloud):
        """compute-1 serves what was cast to it, unexplored.

        :returns: ``{'compute-1': ActorResult}``
        """
        errors = cloud.finish_casts()
        error = errors.get(SOURCE)
        return {'compute-1': model.ActorResult(
            None if error else True, error, False)}
