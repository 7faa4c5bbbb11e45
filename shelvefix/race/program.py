"""The scenarios as programs the explorer runs.

Every actor runs the library's real code and pauses before each access to
shared state (:mod:`shelvefix.race.steps`); after each run the outcome is
read from the end state (:mod:`shelvefix.race.outcomes`).

``offload-unshelve`` (bug 1798688)
    ``compute`` runs ``shelve_offload_instance``; ``scheduler`` is the API
    client (wait for ``SHELVED_OFFLOADED``, save ``UNSHELVING``) and the
    scheduler's ``claim_resources``. Cells: ordering (corrected, legacy) x
    how compute frees (GET + PUT empty, as on the bug's Rocky branch;
    DELETE, as since Ussuri), optionally with a ghost-consumer fault.
``unshelve-periodic`` (bugs 2025480, 1862633)
    the server is offloaded; ``conductor`` is the API client, the conductor
    and the scheduler (candidates, claim, cast to compute-2); ``compute-2``
    serves ``unshelve_instance``; ``periodic-2`` is compute-2's
    ``update_available_resource``. Cells: corrected, pre-2025480 and
    pre-1862633, each without a fault and with compute-2's port binding
    failing.
``lifecycle``
    the server is shelved on compute-1: ``compute-1`` offloads it,
    ``periodic-1`` audits compute-1, and the three actors above unshelve it
    to compute-2. Cells: corrected without and with the port binding fault,
    and each pre-fix variant with the fault that shows its bug.
"""

import threading

from shelvefix import context
from shelvefix import exception
from shelvefix import explorer
from shelvefix import race
from shelvefix.race import cloud as cloud_mod
from shelvefix.race import outcomes
from shelvefix.race import random_runs
from shelvefix.race import scenario
from shelvefix.race import scenarios
from shelvefix.race import steps
from shelvefix.race import variants


def _names(instance_uuid, src, dst):
    return steps.Names([(instance_uuid, '{instance}'),
                        (src, '{compute-1}'), (dst, '{compute-2}')])


class _Program(object):
    """What the race programs share: providers made once, for all runs."""

    providers = None

    def close(self, interrupted=False):
        """Delete the providers the runs shared.

        Every run removes what it made, so a provider left with
        allocations is an error, unless the exploration was
        ``interrupted`` (Ctrl-C, SIGTERM) in the middle of a run: then
        whatever that run holds goes first (see
        :meth:`~shelvefix.backends.fixture.PlacementFixture.delete_provider`).
        """
        if self.providers:
            ctx = context.get_admin_context()
            for rp in self.providers:
                if interrupted:
                    self.placement.delete_provider(rp)
                else:
                    self.placement.client.delete_resource_provider(ctx, rp)
            self.providers = None


class ShelveRaceProgram(_Program):
    """One offload-unshelve cell as an explorer program.

    :param placement: a set-up placement fixture, shared by all runs
    :param cell: the :class:`~shelvefix.race.scenarios.Cell` (ordering,
        way of freeing, fault)
    :param scenario: the offload-unshelve
        :class:`~shelvefix.race.scenarios.Scenario`
    """

    def __init__(self, placement, cell, scenario):
        self.placement = placement
        self.cell = cell
        self.providers = None
        self.actors = scenario.actor_names

    def _scenario(self):
        # The providers are made once per program and reused by every run
        # (each run's consumer is removed at its end, so they start empty).
        if self.providers is None:
            self.providers = scenario.create_providers(self.placement)
        scn = scenario.ShelveScenario(
            free=self.cell.free,
            manager_cls=variants.compute_manager(self.cell.variant),
            placement=self.placement, shared=True,
            providers=self.providers)
        scn.setUp()
        if self.cell.fault == race.GHOST:
            self.placement.fail_consumer_cleanup()
        return scn

    def _finish(self, scn, results):
        """The run's outcome; then its fault disarmed and state removed."""
        try:
            self.placement.clear_faults()
            return outcomes.classify(scn, results)
        finally:
            if self.cell.fault == race.GHOST:
                scn.remove_ghost()
            scn.cleanUp()

    def _actors(self, scn, poll_interval=0.001, timeout=60.0):
        def compute():
            scn.shelve_offload()
            return True

        def scheduler():
            return scn.api_unshelve(timeout=timeout,
                                    poll_interval=poll_interval)
        return list(zip(self.actors, (compute, scheduler)))

    def __call__(self, controller):
        scn = self._scenario()
        names = _names(scn.instance.uuid, scn.src, scn.dst)
        undo = cloud_mod.instrument_placement(
            controller, self.placement, names, (scn.src, scn.dst),
            {scn.instance.uuid: {scn.src}})
        scn.store.interceptor = steps.StoreStepper(
            controller, scn.store, 'wait for SHELVED_OFFLOADED', names)

        def check(results):
            undo()
            scn.store.interceptor = None
            return self._finish(scn, results)
        return explorer.RunSpec(actors=self._actors(scn), check=check)

    def random_run(self, rng, poll_interval, max_start_delay):
        """One run with real threads; returns its outcome."""
        scn = self._scenario()
        funcs = self._actors(scn, poll_interval=poll_interval, timeout=10.0)
        return self._finish(scn, random_runs.run_threads(funcs, rng,
                                                         max_start_delay))


class CloudProgram(_Program):
    """A cell on a two-host cloud, explored or with real threads.

    What every cloud scenario's run does, written once: make the cloud
    (:meth:`_cloud`), make each access of the actors to shared state an
    explorer step (the run's names, what placement holds at the start,
    the host each actor runs on), run the actors, then judge the end
    state and remove what the run made (:meth:`_finish`). A subclass
    supplies those parts.

    :param placement: a set-up placement fixture, shared by all runs
    :param cell: the :class:`~shelvefix.race.scenarios.Cell`
    :param scenario: the :class:`~shelvefix.race.scenarios.Scenario`,
        which names the actors and the host each runs on
    :ivar actors: the actors' names, in the order the explorer lists them
    """

    #: The label of an actor's wait on the store (in the run's steps).
    wait_label = 'wait'

    def __init__(self, placement, cell, scenario):
        self.placement = placement
        self.cell = cell
        self.scenario = scenario
        self.providers = None
        self.actors = scenario.actor_names

    def _cloud(self, explored):
        """The run's cloud; ``explored`` when the explorer orders it."""
        raise NotImplementedError()

    def _names(self, cloud):
        """The run's :class:`~shelvefix.race.steps.Names`."""
        src, dst = self.providers
        return _names(cloud.instance.uuid, src, dst)

    def _holdings(self, cloud):
        """``{consumer: providers}`` placement holds when the run starts."""
        raise NotImplementedError()

    def _actor_hosts(self):
        """The host each actor runs on (None: none), in actor order."""
        return [host for _name, host in self.scenario.actors]

    def _actors(self, cloud, timeout=60.0, poll_interval=0.001, done=None):
        """``(name, callable)`` of each actor.

        :param done: ``{name: Event}`` set as each ends (real threads): an
            actor waiting for another's work gives up once it has ended
        """
        raise NotImplementedError()

    def _finish(self, cloud, results):
        """The run's outcome (labels); the run's state removed."""
        raise NotImplementedError()

    def __call__(self, controller):
        cloud = self._cloud(explored=True)
        undo = cloud.instrument(controller, self._names(cloud),
                                self._holdings(cloud), self.wait_label,
                                self._actor_hosts())

        def check(results):
            undo()
            return self._finish(cloud, results)
        return explorer.RunSpec(actors=self._actors(cloud), check=check)

    def random_run(self, rng, poll_interval, max_start_delay):
        """One run with real threads; returns its outcome."""
        cloud = self._cloud(explored=False)
        done = {name: threading.Event() for name in self.actors}
        funcs = self._actors(cloud, timeout=10.0,
                             poll_interval=poll_interval, done=done)
        results = random_runs.run_threads(funcs, rng, max_start_delay, done)
        return self._finish(cloud, results)


class CloudRaceProgram(CloudProgram):
    """One cell of ``unshelve-periodic`` or ``lifecycle``.

    The server starts where the scenario says: on compute-1, which
    offloads it (the lifecycle), or offloaded (unshelve-periodic).
    """

    wait_label = 'wait for SHELVED_OFFLOADED'

    def __init__(self, placement, cell, scenario):
        super(CloudRaceProgram, self).__init__(placement, cell, scenario)
        self.lifecycle = scenario.start == scenarios.ON_SOURCE
        self.injected = ((exception.PortBindingFailed,)
                         if cell.fault == race.PORT_BINDING else ())

    def _cloud(self, explored):
        if self.providers is None:
            self.providers = cloud_mod.create_providers(self.placement)
        code = variants.code(self.cell.variant)
        return cloud_mod.Cloud(
            self.placement, self.providers,
            start=self.scenario.start,
            manager_cls=code.manager_cls, tracker_cls=code.tracker_cls,
            binding_fails=self.cell.fault == race.PORT_BINDING)

    def _holdings(self, cloud):
        return {cloud.instance.uuid: {self.providers[0]}} if (
            self.lifecycle) else {}

    def _actors(self, cloud, timeout=60.0, poll_interval=0.001, done=None):
        done = done or {}
        funcs = {
            'compute-1': cloud.shelve_offload,
            'periodic-1': lambda: cloud.periodic(cloud_mod.SOURCE),
            'conductor': lambda: cloud.api_unshelve(
                timeout=timeout, poll_interval=poll_interval,
                give_up=lambda: random_runs.finished(done, 'compute-1')),
            'compute-2': lambda: cloud.serve(
                timeout=timeout,
                give_up=lambda: random_runs.finished(done, 'conductor')),
            'periodic-2': lambda: cloud.periodic(cloud_mod.DESTINATION),
        }
        return [(name, funcs[name]) for name in self.actors]

    def _finish(self, cloud, results):
        try:
            return outcomes.classify_cloud(cloud, results, self.injected)
        finally:
            cloud.remove_from_placement()
