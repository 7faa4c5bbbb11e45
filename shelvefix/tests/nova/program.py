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

The scenarios (:data:`SCENARIOS`):

``lifecycle``
    the server is shelved on compute-1: ``compute-1`` offloads it
    (``shelve_offload_instance``), ``periodic-1`` audits compute-1,
    ``conductor`` is the API's unshelve then nova's conductor and
    scheduler, ``compute-2`` serves the cast (``unshelve_instance``) and
    ``periodic-2`` audits compute-2;
``unshelve-periodic``
    the server is offloaded already; ``conductor``, ``compute-2`` and
    ``periodic-2``;
``offload-unshelve``
    ``compute-1``, ``conductor`` and ``compute-2``, no audit.

After each run the outcome is read from the end state with
:mod:`shelvefix.race.outcomes` (:func:`classify`).

This module imports nova; load it through
:func:`shelvefix.tests.nova.base.load`.
"""

import collections

from nova import exception as nova_exception

from shelvefix import explorer
from shelvefix.race import outcomes
from shelvefix.race import steps
from shelvefix.tests.nova import lifecycle

LIFECYCLE = 'lifecycle'
UNSHELVE_PERIODIC = 'unshelve-periodic'
OFFLOAD_UNSHELVE = 'offload-unshelve'

#: The service each actor runs for (whose locks it takes).
SERVICE_OF_ACTOR = {
    'compute-1': lifecycle.SOURCE, 'periodic-1': lifecycle.SOURCE,
    'conductor': lifecycle.CONDUCTOR,
    'compute-2': lifecycle.DESTINATION, 'periodic-2': lifecycle.DESTINATION,
}

Scenario = collections.namedtuple('Scenario', ['start', 'actors'])
SCENARIOS = {
    LIFECYCLE: Scenario(lifecycle.ON_SOURCE, (
        'compute-1', 'periodic-1', 'conductor', 'compute-2', 'periodic-2')),
    UNSHELVE_PERIODIC: Scenario(lifecycle.OFFLOADED, (
        'conductor', 'compute-2', 'periodic-2')),
    OFFLOAD_UNSHELVE: Scenario(lifecycle.ON_SOURCE, (
        'compute-1', 'conductor', 'compute-2')),
}


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


class NovaRaceProgram(object):
    """One scenario on a set-up :class:`~.lifecycle.NovaCloud`.

    :param cloud: the cloud fixture; its placement and providers are
        shared by all runs, everything else is made anew for each
    :param scenario: a key of :data:`SCENARIOS`
    """

    def __init__(self, cloud, scenario):
        self.cloud = cloud
        self.scenario = SCENARIOS[scenario]
        self.actors = self.scenario.actors
        self.injected = ((nova_exception.PortBindingFailed,)
                         if cloud.binding_fails else ())

    def _actors(self, run):
        funcs = {
            'compute-1': run.shelve_offload,
            'periodic-1': lambda: run.periodic(lifecycle.SOURCE),
            'conductor': run.api_unshelve,
            'compute-2': run.serve,
            'periodic-2': lambda: run.periodic(lifecycle.DESTINATION),
        }
        return [(name, self.cloud.locks.running(SERVICE_OF_ACTOR[name],
                                                funcs[name]))
                for name in self.actors]

    def __call__(self, controller):
        run = self.cloud.start(self.scenario.start)
        src = run.providers[lifecycle.SOURCE]
        dst = run.providers[lifecycle.DESTINATION]
        names = steps.Names([(run.uuid, '{instance}'), (src, '{compute-1}'),
                             (dst, '{compute-2}')])
        undo = instrument(controller, self.cloud, run, names,
                          [SERVICE_OF_ACTOR[name] for name in self.actors],
                          'wait for SHELVED_OFFLOADED')

        def check(results):
            undo()
            try:
                return classify(run, results, self.injected)
            finally:
                run.remove_from_placement()
        return explorer.RunSpec(actors=self._actors(run), check=check)


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
    providers = tuple(run.providers[host] for host in lifecycle.HOSTS)
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


def explore(cloud, scenario, reduce=True, max_runs=None):
    """Explore a scenario's interleavings on ``cloud``.

    :returns: the :class:`~shelvefix.explorer.Exploration`
    """
    return explorer.explore(NovaRaceProgram(cloud, scenario), reduce=reduce,
                            max_runs=max_runs)
