"""nova's own REST API shelving one server for two clients at once.

:class:`ShelveApiCloud` is a :class:`~.lifecycle.NovaCloud` whose server
runs (``ACTIVE``, no task) on compute-1, with nova's REST controller in
front of it, for the ``shelve-api`` scenario (bug 1850694). Each client
(``api-1``, ``api-2``) runs nova's ``ShelveController._shelve`` with a
request of its own; what runs is nova's code:

* the controller: its decorators (expected errors: whatever else escapes
  is an HTTP 500; the request body's schema), ``common.get_instance``
  (nova's ``API.get``: the instance mapping, the cell's
  ``Instance.get_by_uuid``), the policy check's call, and the mapping of
  nova's exceptions to HTTP errors;
* nova's ``API.shelve``: its checks (shares, accelerator ports, vTPM,
  accelerators, lock, vm and task state), the ``SHELVING`` save with
  ``expected_task_state=[None]``, the instance action, the snapshot's
  image record and the ``shelve_instance`` cast to compute-1, which lands
  on the run's RPC transport and is never served (compute need not run).

Stubbed besides what :mod:`~.lifecycle` stubs: the policy engine (it
reads its files through an initialised oslo.config; the check is recorded
and passes, as nova's default rules pass a member of the server's
project), the image service (records the snapshot image), the instance
action record, the save of the instance mapping (nova writes the user id
it lacks), the release file a 500's text names the vendor from (none),
and the scatter-gather over the one cell, which runs in the calling
thread (nova's runs it in a pool: the explorer schedules the actors' own
threads only).

This module imports nova (see :mod:`shelvefix.nova`).
"""

import collections
import functools

import fixtures
from nova.api.openstack import api_version_request
from nova.api.openstack.compute import shelve as shelve_api
from nova.compute import api as compute_api
from nova.compute import rpcapi as compute_rpcapi
from nova.compute import task_states
from nova.compute import vm_states
from nova import context as nova_context
from oslo_utils import timeutils
from oslo_utils import uuidutils
import webob

from shelvefix import explorer
from shelvefix.nova import database as database_mod
from shelvefix.nova import doubles
from shelvefix.nova import harness
from shelvefix.nova import lifecycle
from shelvefix.nova import program
from shelvefix import race
from shelvefix.race import outcomes
from shelvefix.race import scenarios
from shelvefix.race import steps

SOURCE = lifecycle.SOURCE
HOSTS = lifecycle.HOSTS
#: The roles of the clients' tokens: a member of the server's project.
ROLES = ('member', 'reader')
#: What the request body of a shelve action is.
BODY = {'shelve': None}


class ImageAPI(object):
    """The image service: records the snapshot images nova creates."""

    def __init__(self, events):
        self.events = events

    def create(self, context, image_meta, data=None):
        image = dict(image_meta, id=uuidutils.generate_uuid())
        self.events.append(('image.create', image['name']))
        return image


class Request(object):
    """What nova's controller reads of an API request.

    :param context: the client's ``RequestContext`` (``nova.context`` of
        the WSGI environment, as nova's auth middleware leaves it)
    """

    def __init__(self, context):
        self.environ = {'nova.context': context}
        self.api_version_request = api_version_request.APIVersionRequest(
            api_version_request.DEFAULT_API_VERSION)

    def is_legacy_v2(self):
        return False


def client_context(actor):
    """The context of a client's request: a project member's token."""
    return nova_context.RequestContext(
        user_id=harness.USER, project_id=harness.PROJECT, is_admin=False,
        roles=list(ROLES),
        request_id='req-%s-%s' % (actor, uuidutils.generate_uuid()))


def _in_this_thread(context, cell_mapping, fn, *args, **kwargs):
    """``scatter_gather_single_cell`` without its thread pool."""
    with nova_context.target_cell(context, cell_mapping) as cctxt:
        try:
            result = fn(cctxt, *args, **kwargs)
        except Exception as e:
            # nova's returns the cell's exception as its result.
            result = e
    return {cell_mapping.uuid: result}


class ShelveApiCloud(lifecycle.NovaCloud):
    """nova's API and services around an active server on compute-1.

    :ivar clients: the current run's :class:`Clients`
    """

    def _setUp(self):
        super(ShelveApiCloud, self)._setUp()
        database = self.database

        def allowed(context, action, target=None, fatal=True):
            database.events.append(('policy', action))
            return True
        patches = [
            ('nova.context.scatter_gather_single_cell', _in_this_thread),
            ('nova.context.RequestContext.can', allowed),
            ('nova.objects.instance_mapping.InstanceMapping.save',
             database._record('instance_mapping.save')),
            ('nova.objects.instance_action.InstanceAction.action_start',
             doubles.class_call(database._record('action.start'))),
            # The first 500's text would look for the release file
            # through an uninitialised oslo.config.
            ('nova.version.loaded', True),
        ]
        for name, value in patches:
            self.useFixture(fixtures.MonkeyPatch(name, value))

    def start(self, start=None):
        """A fresh run whose server is active on compute-1; its clients.

        The run is the lifecycle's, from a server shelved on compute-1
        (claimed there, running in compute-1's driver, audited), set
        back to what it was before any shelve: ``ACTIVE``, no task (the
        scenario's ``active-on-source``, whatever ``start`` says).
        """
        run = super(ShelveApiCloud, self).start(lifecycle.ON_SOURCE)
        run.store.update(run.uuid, {'vm_state': vm_states.ACTIVE,
                                    'task_state': None,
                                    'launched_at': timeutils.utcnow()})
        self.clients = Clients(run)
        return run


class Clients(object):
    """nova's shelve controller, and the clients' requests to it.

    :param run: the :class:`~.lifecycle.Run`
    """

    def __init__(self, run):
        self.run = run
        api = compute_api.API.__new__(compute_api.API)
        api.compute_rpcapi = compute_rpcapi.ComputeAPI.__new__(
            compute_rpcapi.ComputeAPI)
        api.image_api = ImageAPI(run.events)
        api.notifier = doubles.Notifier(run.events, 'api')
        self.controller = shelve_api.ShelveController.__new__(
            shelve_api.ShelveController)
        self.controller.compute_api = api

    def shelve(self, actor):
        """A client's ``POST /servers/{id}/action {"shelve": null}``.

        :returns: the response's status code (202), or that of the HTTP
            error a refusal raises (4xx)
        :raises webob.exc.HTTPServerError: nova answered 5xx
        """
        request = Request(client_context(actor))
        try:
            self.controller._shelve(request, self.run.uuid, body=dict(BODY))
        except webob.exc.HTTPClientError as e:
            return e.code
        return 202

    def casts(self):
        """How many casts wait for compute-1 (``shelve_instance``)."""
        return self.run.transport.waiting(doubles.COMPUTE_TOPIC, SOURCE)


def server_error(error):
    """``(code, cause)`` of an HTTP 5xx an actor ended in, else None.

    nova's controller turns whatever it did not expect into a 500 whose
    context is the exception it caught: that is the cause.
    """
    if not isinstance(error, webob.exc.HTTPServerError):
        return None
    cause = error.__cause__ or error.__context__
    return error.code, type(cause or error).__name__


def classify(clients, results):
    """The outcome of one run: the API's answers and the server's state.

    An actor refused with an HTTP 4xx is a correct answer (``ok``). One
    that ended in an HTTP 5xx is :data:`~shelvefix.race.outcomes.API_500`
    and ``<actor> error: <cause> (HTTP 500)``; any other exception is an
    actor error. The end state must be one shelve's: the server
    ``SHELVING`` with one cast to compute-1 if one client was answered
    202, else no task and no cast (:data:`~shelvefix.race.outcomes.
    TASK_STUCK` otherwise).

    :param clients: the run's :class:`Clients`
    :param results: actor name -> :class:`shelvefix.explorer.ActorResult`
    """
    labels = []
    accepted = 0
    for name, result in sorted(results.items()):
        error = result.error
        if error is None:
            accepted += result.value == 202
            continue
        failed = server_error(error)
        if failed is None:
            labels.append(outcomes.ACTOR_ERROR % (name, type(error).__name__))
            continue
        if outcomes.API_500 not in labels:
            labels.insert(0, outcomes.API_500)
        labels.append(outcomes.ACTOR_ERROR % (
            name, '%s (HTTP %d)' % (failed[1], failed[0])))
    row = clients.run.saved()
    expected = task_states.SHELVING if accepted else None
    if (accepted > 1 or row['task_state'] != expected or
            row['vm_state'] != vm_states.ACTIVE or
            clients.casts() != accepted):
        labels.append(outcomes.TASK_STUCK)
    return outcomes.as_outcome(labels)


class ShelveApiProgram(program.NovaProgram):
    """The ``shelve-api`` scenario on a :class:`ShelveApiCloud`.

    Each actor (``api-1``, ``api-2``) is a client shelving the server
    through nova's controller (:meth:`Clients.shelve`); under the
    explorer every instance read and save and every cast is a step
    (:func:`~.program.instrument`).

    :param cloud: the set-up cloud; its placement and providers are shared
        by all runs, everything else is made anew for each
    :param scenario: the scenario's name
    """

    def __init__(self, cloud, scenario=race.SHELVE_API):
        self.cloud = cloud
        self.hosts = collections.OrderedDict(
            scenarios.get_scenario(scenario).actors)
        self.actors = tuple(self.hosts)

    def _start(self):
        return self.cloud.start()

    def _actors(self, run, timeout=60.0, done=None):
        clients = self.cloud.clients
        return [(name, self.cloud.locks.running(
            program.service(self.hosts[name]),
            functools.partial(clients.shelve, name)))
            for name in self.actors]

    def _finish(self, run, results):
        try:
            return classify(self.cloud.clients, results)
        finally:
            run.remove_from_placement()

    def __call__(self, controller):
        run = self._start()
        # nova's API takes the lock of the cell it targets (its cache of
        # the cell's connections) for each read of the server.
        names = steps.Names(
            [(run.uuid, '{instance}'), (database_mod.CELL_UUID, '{cell1}')] +
            [(run.providers[host], '{%s}' % host) for host in HOSTS])
        undo = program.instrument(
            controller, self.cloud, run, names,
            [program.service(host) for host in self.hosts.values()],
            'wait for the server')

        def check(results):
            undo()
            return self._finish(run, results)
        return explorer.RunSpec(actors=self._actors(run), check=check)
