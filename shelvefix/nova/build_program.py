"""A server's build on nova's code as a program of the explorer, judged.

:class:`BuildProgram` runs the ``build`` scenario (and, with
:mod:`~.build_delete`'s run, ``build-delete``) on a
:class:`~.build.BuildCloud`, instrumented as the move programs are
(:class:`~.move_program.NovaMoveProgram`): placement requests, the
instance store, casts and receives, contended locks, and the API
database's build requests and instance mappings are explorer steps.

:func:`classify` judges a run's end by what placement, the trackers and
the records must agree on once every actor is done:

* a server ``ACTIVE`` on a host holds allocations there and nowhere else
  (``claim wiped``, ``allocations leaked``), and that host's tracker counts
  it (``usage untracked``);
* a server in ``ERROR`` holds nothing but on its host, if it has one (a
  build that failed without a host holds nothing: nova's compute frees
  a failed build's allocations, since no tracker counts the server any
  more);
* a server deleted, or whose record was never created, holds nothing;
* a server still ``BUILDING``, or with a task left, is ``task state
  stuck``: nothing will move it on;
* an actor's exception is ``<actor> error: <exception>`` (a server
  deleted under an operation ending it with ``InstanceNotFound`` is not
  judged, as elsewhere).

This module imports nova (see :mod:`shelvefix.nova`).
"""

from nova.compute import vm_states

from shelvefix.nova import build
from shelvefix.nova import build_parallel
from shelvefix.nova import lifecycle
from shelvefix.nova import move_program
from shelvefix.nova import moves
from shelvefix.nova import program
from shelvefix import race
from shelvefix.race import outcomes
from shelvefix.race import steps

SOURCE = build.SOURCE
DESTINATION = build.DESTINATION


def expected_providers(run, uuid, row):
    """The providers a server's saved row allows it to hold.

    :returns: ``(required, allowed)`` provider sets, or None for a server
        still building (not judged by placement)
    """
    providers = run.providers
    if row is None or run.deleted(uuid):
        return set(), set()
    host = row['host']
    if row['vm_state'] == vm_states.ACTIVE and host is not None:
        return {providers[host]}, {providers[host]}
    if row['vm_state'] == vm_states.ERROR:
        return set(), ({providers[host]} if host is not None else set())
    return None


def server_labels(run, uuid):
    """What the records, placement and the trackers say of one server."""
    labels = []
    row = run.saved(uuid)
    live = row is not None and not run.deleted(uuid)
    if live and (row['vm_state'] == vm_states.BUILDING or
                 row['task_state'] is not None):
        labels.append(outcomes.TASK_STUCK)
    elif live and row['vm_state'] == vm_states.ACTIVE and not row['host']:
        labels.append(outcomes.HOST_LOST)
    expected = expected_providers(run, uuid, row)
    if expected is not None:
        held = set(run.held(uuid))
        required, allowed = expected
        if required - held:
            labels.append(outcomes.CLAIM_WIPED)
        if held - allowed:
            labels.append(outcomes.LEAKED)
    return labels


def untracked(run):
    """``usage untracked`` if a host's tracker counts less than it runs.

    Every server ``ACTIVE`` on a host uses its flavor there; the tracker
    of a host it has a compute node record of must count them all.
    """
    implied = {}
    for uuid in run.servers():
        row = run.saved(uuid)
        if (row is None or run.deleted(uuid) or
                row['vm_state'] != vm_states.ACTIVE or not row['host']):
            continue
        flavor = moves.resources(row['flavor'] or lifecycle.flavor())
        host = implied.setdefault(row['host'], {})
        for rc, amount in flavor.items():
            host[rc] = host.get(rc, 0) + amount
    usage = run.usage()
    for host, needed in implied.items():
        if host in usage and any(usage[host][rc] < amount
                                 for rc, amount in needed.items()):
            return [outcomes.USAGE_UNTRACKED]
    return []


def classify(run, results, injected=()):
    """The outcome of one build run (labels of :mod:`~.outcomes`).

    An actor's ``InstanceNotFound`` is not judged if a server it may
    have been working on is deleted.
    """
    deleted = any(run.deleted(uuid) for uuid in run.servers())
    labels = outcomes.actor_labels(results, injected, deleted=deleted)
    for uuid in run.servers():
        labels += server_labels(run, uuid)
    labels += untracked(run)
    extra = getattr(run, 'end_labels', lambda: [])()
    labels += [label for label in extra if label not in labels]
    return outcomes.as_outcome(sorted(set(labels), key=labels.index))


class BuildProgram(move_program.NovaMoveProgram):
    """The ``build`` scenario on a set-up :class:`~.build.BuildCloud`.

    :param without: actors left out (``periodic-1``, ``compute-2``,
        ``conductor-2``)

    ``conductor-2`` is a second conductor worker, which builds a second
    server with the ``pci-parallel-builds`` fault
    (:mod:`~.build_parallel`), and does nothing without it; with it,
    ``periodic-1`` does nothing.
    """

    run_cls = build.BuildRun

    def __init__(self, cloud, scenario=race.BUILD, without=()):
        if set(without) - {'periodic-1', 'compute-2', 'conductor-2'}:
            raise ValueError('the build needs its conductor and compute-1')
        super(BuildProgram, self).__init__(cloud, scenario, without)
        if 'conductor-2' in self.hosts:
            self.hosts['conductor-2'] = build.CONDUCTOR_2
        self.injected = ()

    def _start(self):
        run_cls = (build_parallel.ParallelBuildRun
                   if getattr(self.cloud, 'parallel', False)
                   else self.run_cls)
        return self.cloud.start(build.BUILD_REQUESTED, run_cls)

    def _functions(self, run, timeout, done):
        """``{actor: function}`` of the scenario's actors."""
        def after(name):
            return program.after(done, name)
        compute_1 = (
            (lambda: run.restart(timeout=timeout, give_up=after('conductor')))
            if self.cloud.restarts else
            (lambda: run.serve(SOURCE, timeout=timeout,
                               give_up=after('conductor'))))
        if self.cloud.parallel:
            compute_1 = (lambda: run.serve_all(
                SOURCE, timeout=timeout, give_up=lambda: (
                    after('conductor')() and after('conductor-2')())))
        return {
            'conductor': lambda: run.conduct(timeout=timeout,
                                             give_up=after('compute-1')),
            'conductor-2': getattr(run, 'conduct_second', lambda: True),
            'compute-1': compute_1,
            'compute-2': lambda: run.serve(DESTINATION, timeout=timeout,
                                           give_up=after('conductor')),
            # With two builds, whose claims race under compute-1's lock,
            # compute-1's audit would make thousands of runs: it is idle.
            'periodic-1': ((lambda: True) if self.cloud.parallel
                           else (lambda: run.periodic(SOURCE))),
        }

    def _actors(self, run, timeout=60.0, done=None):
        return self._as_services(self._functions(run, timeout, done or {}))

    def _finish(self, run, results):
        try:
            self.ends.append(run.end_state())
            return classify(run, results, self.injected)
        finally:
            run.remove_from_placement()

    def _names(self, run):
        """The servers (numbered from the second) and both providers."""
        return steps.Names([
            (uuid, '{instance %d}' % (number + 1) if number else '{instance}')
            for number, uuid in enumerate(run.servers())] + [
            (run.providers[SOURCE], '{compute-1}'),
            (run.providers[DESTINATION], '{compute-2}')])

    def _stores(self, run):
        """The migrations, the build requests and instance mappings."""
        return [(run.migrations, 'migration'),
                (run.build_requests, 'build request'),
                (run.mappings, 'instance mapping')]
