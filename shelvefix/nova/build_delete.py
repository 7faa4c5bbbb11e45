"""nova's own API deleting a server while nova's conductor builds it.

The race lab's ``build-delete`` scenario (nova only): the build of
:mod:`~.build` (:class:`~.build.BuildRun`, from the boot the API
accepted), and a user deleting the server meanwhile. The actors:

``conductor``
    nova's ``schedule_and_build_instances``, as in ``build``: it checks
    that the build request is still there before it creates the server in
    the cell (and frees the scheduler's allocations if it is not), and, if
    it cannot destroy the build request once the server is in the cell
    (the user's delete got there first), destroys the server's record;
``delete``
    the user's ``DELETE /servers/{id}``: nova's ``ServersController``
    (the server read as nova's API reads it: from the build request while
    the instance mapping has no cell, else from the cell), then
    ``API.delete``: a server with no host is deleted while it boots
    (``_delete_while_booting``: the build request destroyed, the record
    destroyed if it is in the cell already), then ``_local_delete_cleanup``
    (the server's allocations freed, its mapping queued for deletion); a
    server that got a host meanwhile is deleted the normal way
    (``terminate_instance`` cast to its host);
``periodic-1``
    compute-1's audit.

After each run, unexplored, compute-1's service runs what was cast to it:
the build (which finds the server gone if the delete destroyed it), then
a ``terminate_instance`` the delete cast, if the server had a host.

A run is judged as a build's (:func:`~.build_program.classify`); the API
answering the delete with an HTTP 5xx is ``API 500`` and ``delete error:
<cause> (HTTP 500)``, as the ``shelve-api`` scenario has it.

This module imports nova (see :mod:`shelvefix.nova`).
"""

from nova.api.openstack import api_version_request
from nova.api.openstack.compute import servers as servers_api
from nova.api.openstack import wsgi
from nova.compute import api as compute_api
from nova.compute import rpcapi as compute_rpcapi
import webob

from shelvefix.explorer import model as explorer_model
from shelvefix.nova import build
from shelvefix.nova import build_doubles
from shelvefix.nova import build_program
from shelvefix.nova import deletion
from shelvefix.nova import doubles
from shelvefix.nova import harness
from shelvefix.nova import shelve_api
from shelvefix import race
from shelvefix.race import outcomes

SOURCE = build.SOURCE
#: The microversion of the user's request.
MICROVERSION = '2.1'
#: What the delete actor returns when nova's API answered it with a 4xx.
REFUSED = 'refused'


class BuildDeleteRun(build.BuildRun):
    """One run: a boot the API accepted, and the user's delete of it."""

    def _create_instance(self, start):
        uuid = super(BuildDeleteRun, self)._create_instance(start)
        api = compute_api.API.__new__(compute_api.API)
        api.compute_rpcapi = compute_rpcapi.ComputeAPI.__new__(
            compute_rpcapi.ComputeAPI)
        api.servicegroup_api = deletion.ServiceGroup()
        api.notifier = doubles.Notifier(self.events, 'api')
        api.network_api = build_doubles.NetworkAPI('api', self.events)
        api.image_api = None
        api.volume_api = None
        self.controller = servers_api.ServersController.__new__(
            servers_api.ServersController)
        self.controller.compute_api = api
        return uuid

    # -- the actors ---------------------------------------------------------

    def delete(self):
        """The user's ``DELETE /servers/{id}``, through nova's controller.

        :returns: True (204), or :data:`REFUSED` for an HTTP 4xx
        :raises webob.exc.HTTPServerError: nova answered 5xx
        """
        context = harness.context('delete')
        context.can = lambda *args, **kwargs: True
        request = wsgi.Request.blank('/v2.1/servers/%s' % self.uuid,
                                     method='DELETE')
        request.environ['nova.context'] = context
        request.api_version_request = (
            api_version_request.APIVersionRequest(MICROVERSION))
        try:
            self.controller.delete(request, self.uuid)
        except webob.exc.HTTPClientError as e:
            self.events.append(('api refused', e.code))
            return REFUSED
        return True


def classify(run, results, injected=()):
    """A build's outcome, the API's 5xx answer to the delete judged first."""
    labels, others = [], {}
    for name, result in results.items():
        failed = shelve_api.server_error(result.error)
        if failed is None:
            others[name] = result
            continue
        if outcomes.API_500 not in labels:
            labels.insert(0, outcomes.API_500)
        labels.append(outcomes.ACTOR_ERROR % (
            name, '%s (HTTP %d)' % (failed[1], failed[0])))
    judged = build_program.classify(run, others, injected)
    return outcomes.as_outcome(
        labels + [label for label in judged if label != outcomes.OK])


class BuildDeleteProgram(build_program.BuildProgram):
    """The ``build-delete`` scenario on a set-up :class:`~.build.BuildCloud`.

    :param without: actors left out (``periodic-1`` only)

    compute-1 is no actor: :meth:`compute_tail` runs its part.
    """

    run_cls = BuildDeleteRun

    def __init__(self, cloud, scenario=race.BUILD_DELETE, without=()):
        if set(without) - {'periodic-1'}:
            raise ValueError('the build-delete scenario needs its '
                             'conductor and delete')
        build_program.BuildProgram.__init__(self, cloud, scenario, without)
        # The user's delete runs in nova-api, with its locks.
        self.hosts['delete'] = build.API

    def _functions(self, run, timeout, done):
        funcs = super(BuildDeleteProgram, self)._functions(run, timeout,
                                                           done)
        funcs['delete'] = run.delete
        # No reschedule comes: compute-1 builds after the run.
        funcs['conductor'] = lambda: run.conduct(timeout=timeout,
                                                 give_up=lambda: True)
        return funcs

    def _finish(self, run, results):
        try:
            results = dict(results, **self.compute_tail(run))
            self.ends.append(run.end_state())
            return classify(run, results, self.injected)
        finally:
            run.remove_from_placement()

    def compute_tail(self, run):
        """compute-1 runs what was cast to it, after the run, unexplored.

        The build (which finds the server deleted, or builds it), then a
        ``terminate_instance`` the delete cast.

        :returns: ``{'compute-1': ActorResult}``
        """
        def serve():
            return run.serve_all(SOURCE, give_up=lambda: True)
        try:
            value = self.cloud.locks.running(SOURCE, serve)()
        except Exception as e:
            return {'compute-1': explorer_model.ActorResult(None, e, False)}
        return {'compute-1': explorer_model.ActorResult(value, None, False)}
