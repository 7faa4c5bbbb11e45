"""nova's services as a program of the interleaving explorer.

:class:`NovaRaceProgram` runs a :class:`~.lifecycle.NovaCloud` under
:func:`shelvefix.explorer.explore`, instrumented as the race lab's own
lifecycle program (:class:`shelvefix.race.program.CloudRaceProgram`) is:
every placement request is a step (:class:`~shelvefix.race.steps.
StepTransport` mounted on the fixture's session), every instance read,
list, wait and save is one (the store's interceptor), casts and receives
are (the RPC transport's), and so are nova's locks on a service with more
than one actor: ``nova.utils.synchronized`` takes them from that
service's :class:`~shelvefix.utils.Locks` (:class:`~.doubles.
ServiceLocks`), whose acquire is a guarded step, never a blocking lock.

The scenarios are the race lab's (:mod:`shelvefix.race.scenarios`), with
their actors: ``compute-1`` (or, in ``offload-unshelve``, ``compute``) is
compute-1's ``shelve_offload_instance``, ``periodic-1`` and
``periodic-2`` audit each host, ``conductor`` (or ``scheduler``) is the
API's unshelve then nova's conductor and scheduler, ``compute-2`` serves
the ``unshelve_instance`` cast. Where no actor serves that cast
(``offload-unshelve``), compute-2 runs it after the run, unexplored, so
that the end state is the unshelve's. :data:`OFFLOAD_TAIL` explores
compute-2's part too.

After each run the outcome is read from the end state with
:mod:`shelvefix.race.outcomes` (:func:`classify`).

This module imports nova (see :mod:`shelvefix.nova`).
"""

import collections
import threading

from nova import exception as nova_exception

from shelvefix import explorer
from shelvefix.nova import lifecycle
from shelvefix import race
from shelvefix.race import outcomes
from shelvefix.race import random_runs
from shelvefix.race import scenarios
from shelvefix.race import steps
from shelvefix import rpc

LIFECYCLE = race.LIFECYCLE
UNSHELVE_PERIODIC = race.UNSHELVE_PERIODIC
OFFLOAD_UNSHELVE = race.OFFLOAD_UNSHELVE

#: The offload's tail against a whole unshelve, compute-2's part
#: explored too (the actors of bug 1798688's remainder, "host lost").
OFFLOAD_TAIL = (('compute-1', lifecycle.SOURCE), ('conductor', None),
                ('compute-2', lifecycle.DESTINATION))


def service(host):
    """The service whose locks an actor running for ``host`` takes."""
    return host or lifecycle.CONDUCTOR


def classify(run, results, injected=()):
    """The outcome of one run, as :mod:`~shelvefix.race.outcomes` labels.

    nova reports a consumer generation conflict of the claim as
    ``AllocationUpdateFailed`` (its report client raises it for nothing
    else on this path): that is the scheduler's 409. Everything else is
    judged as :func:`shelvefix.race.outcomes.classify_cloud` judges the
    library's cloud, with nova's trackers' ``tracked_instances``.

    :param run: the :class:`~.lifecycle.Run`, its actors done or stuck
    :param results: actor name -> :class:`shelvefix.explorer.ActorResult`
    :param injected: exception classes a fault raises on purpose
    """
    labels, others = conflicts(results)
    labels += outcomes.actor_labels(others, injected)
    row = run.saved()
    held = run.held()
    labels += outcomes.placement_labels(row, held, run.providers)
    labels += outcomes.untracked(row, run.tracked())
    if row['task_state'] is not None:
        labels.append(outcomes.TASK_STUCK)
    state = getattr(run.cloud.placement, 'state', None)
    if not held and state is not None and run.uuid in state.consumers:
        labels.append(outcomes.CONSUMER_LEFT)
    return outcomes.as_outcome(sorted(set(labels), key=labels.index))


def conflicts(results):
    """The 409s of nova's report client among the actors' results.

    nova reports a consumer generation conflict of a claim as
    ``AllocationUpdateFailed`` (its report client raises it for nothing
    else on these paths).

    :returns: ``(labels, others)``: the 409 labels, and the results of the
        actors that raised anything else or nothing
    """
    labels, others = [], {}
    for name, result in results.items():
        if isinstance(result.error, nova_exception.AllocationUpdateFailed):
            label = (outcomes.COMPUTE_409 if name.startswith('compute')
                     else outcomes.SCHEDULER_409)
            if label not in labels:
                labels.append(label)
        else:
            others[name] = result
    return labels, others


class NovaProgram(object):
    """What the nova target's programs share: their runs with real threads.

    A subclass makes a run (``_start``), lists its actors (``_actors(run,
    timeout, done)``) and judges it (``_finish(run, results)``).
    """

    def random_run(self, rng, poll_interval, max_start_delay):
        """One run with real threads; returns its outcome."""
        run = self._start()
        done = {name: threading.Event() for name in self.actors}
        results = random_runs.run_threads(
            self._actors(run, timeout=10.0, done=done), rng,
            max_start_delay, done)
        return self._finish(run, results)


class NovaRaceProgram(NovaProgram):
    """One shelve scenario on a set-up :class:`~.lifecycle.NovaCloud`.

    :param cloud: the cloud fixture; its placement and providers are
        shared by all runs, everything else is made anew for each
    :param scenario: a shelve scenario's name (see
        :data:`shelvefix.race.scenarios.SCENARIOS`)
    :param actors: ``(name, host)`` of the actors, if not the
        scenario's (:data:`OFFLOAD_TAIL`)
    """

    def __init__(self, cloud, scenario, actors=None):
        spec = scenarios.get_scenario(scenario)
        self.cloud = cloud
        self.start = spec.start
        self.hosts = collections.OrderedDict(actors or spec.actors)
        self.actors = tuple(self.hosts)
        self.injected = ((nova_exception.PortBindingFailed,)
                         if cloud.binding_fails else ())

    def _actors(self, run, timeout=60.0, done=None):
        done = done or {}
        funcs = {
            'compute-1': run.shelve_offload,
            'compute': run.shelve_offload,
            'periodic-1': lambda: run.periodic(lifecycle.SOURCE),
            'conductor': lambda: run.api_unshelve(
                timeout=timeout, give_up=after(done, 'compute-1')),
            'scheduler': lambda: run.api_unshelve(
                timeout=timeout, give_up=after(done, 'compute')),
            'compute-2': lambda: run.serve(
                timeout=timeout, give_up=after(done, 'conductor')),
            'periodic-2': lambda: run.periodic(lifecycle.DESTINATION),
        }
        return [(name, self.cloud.locks.running(service(self.hosts[name]),
                                                funcs[name]))
                for name in self.actors]

    def _finish(self, run, results):
        """The run's outcome; compute-2 serves a cast nobody served."""
        try:
            if 'compute-2' not in self.actors:
                try:
                    run.serve(give_up=lambda: True)
                except rpc.NothingToReceive:
                    pass
            return classify(run, results, self.injected)
        finally:
            run.remove_from_placement()

    def _start(self):
        return self.cloud.start(self.start)

    def __call__(self, controller):
        run = self._start()
        src = run.providers[lifecycle.SOURCE]
        dst = run.providers[lifecycle.DESTINATION]
        names = steps.Names([(run.uuid, '{instance}'), (src, '{compute-1}'),
                             (dst, '{compute-2}')])
        undo = instrument(controller, self.cloud, run, names,
                          [service(host) for host in self.hosts.values()],
                          'wait for SHELVED_OFFLOADED')

        def check(results):
            undo()
            return self._finish(run, results)
        return explorer.RunSpec(actors=self._actors(run), check=check)


def after(done, name):
    """A ``give_up`` that is true once the actor ``name`` has ended."""
    return lambda: random_runs.finished(done, name)


def instrument(controller, cloud, run, names, services, wait):
    """Make every access of a run to shared state a step of the explorer.

    Placement requests (a :class:`~shelvefix.race.steps.StepTransport` on
    the fixture's session), the instance store's reads, lists, waits and
    saves, casts and receives,
    and the locks of each service more than one actor runs for (a service
    with one actor has no contended lock: its locks stay real ones, and
    cost no steps).

    :param run: the run, with its ``providers``, ``holdings``, ``store``
        and ``transport``
    :param names: the :class:`~shelvefix.race.steps.Names` of the run's
        resources, so that they read the same in every run
    :param services: the service of each actor
    :param wait: the label of the instance store's waits
    :returns: a callable that undoes it all
    """
    placement = cloud.placement
    session = placement.session.session
    providers = tuple(run.providers[host] for host in cloud.hosts)
    session.mount(placement.endpoint, steps.StepTransport(
        placement.transport, controller, names, providers, run.holdings))
    run.store.interceptor = steps.StoreStepper(controller, run.store, wait,
                                               names)
    run.transport.interceptor = steps.RpcStepper(controller)
    for service, locks in cloud.locks.locks.items():
        if services.count(service) > 1:
            locks.interceptor = steps.LockStepper(controller, service, names)

    def undo():
        session.mount(placement.endpoint, placement.transport)
        run.store.interceptor = None
        run.transport.interceptor = None
        for locks in cloud.locks.locks.values():
            locks.interceptor = None
    return undo


def explore(cloud, scenario, reduce=True, max_runs=None, actors=None):
    """Explore a scenario's interleavings on ``cloud``.

    :param actors: see :class:`NovaRaceProgram`
    :returns: the :class:`~shelvefix.explorer.Exploration`
    """
    return explorer.explore(NovaRaceProgram(cloud, scenario, actors),
                            reduce=reduce, max_runs=max_runs)
