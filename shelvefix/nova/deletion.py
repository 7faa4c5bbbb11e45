"""nova's own API deleting a resized server while its user confirms it.

:class:`DeleteRun` is a :class:`~.moves.MoveRun` (a resized server, not yet
confirmed) with nova's compute API in front of it, for the library's
``resize-delete`` scenario (:mod:`shelvefix.race.move_program`). What runs
is nova's code:

* the user's confirm: nova's ``API.confirm_resize`` (refused unless the
  server is ``RESIZED`` with no task and has a ``finished`` migration),
  which casts ``confirm_resize`` to compute-1, and compute-1 running it;
* the API's delete: nova's ``API.delete``: the server saved ``DELETING``;
  a ``RESIZED`` one's migration confirmed first
  (``_confirm_resize_on_deleting``: an RPC call, which compute-1's service
  runs while the API waits); then ``terminate_instance`` cast to the
  server's host;
* compute-2 running ``terminate_instance``: ``_delete_instance`` shuts the
  server down, saves it ``DELETED``, frees its allocations
  (``_complete_deletion``) and destroys the record (``instance.destroy``,
  a soft delete of the store's row);
* compute-1's periodic audit.

Stubbed besides what :mod:`~.moves` stubs: the service group (every
compute service is up), and the records only the delete path writes
(:class:`~.move_database.DeletionDatabase`).

This module imports nova (see :mod:`shelvefix.nova`).
"""

from nova.compute import api as compute_api
from nova.compute import manager as nova_manager
from nova.compute import rpcapi as compute_rpcapi
from nova import exception as nova_exception

from shelvefix import exception as shelvefix_exception
from shelvefix.nova import doubles
from shelvefix.nova import harness
from shelvefix.nova import moves

SOURCE = moves.SOURCE
DESTINATION = moves.DESTINATION


class ServiceGroup(object):
    """nova's service group API: every compute service reports in time."""

    def service_is_up(self, member):
        return True


class DeleteRun(moves.MoveRun):
    """One run: the services, the resized server and nova's API."""

    def _create_instance(self, start):
        uuid = super(DeleteRun, self)._create_instance(start)
        cloud = self.cloud
        for host in moves.HOSTS:
            compute = self.computes[host]
            compute.instance_events = nova_manager.InstanceEvents()
            cloud.router.endpoints[host] = (
                lambda func, host=host: cloud.locks.running(host, func),
                compute)
        self.api = compute_api.API.__new__(compute_api.API)
        self.api.compute_rpcapi = compute_rpcapi.ComputeAPI.__new__(
            compute_rpcapi.ComputeAPI)
        self.api.servicegroup_api = ServiceGroup()
        self.api.notifier = doubles.Notifier(self.events, 'api')
        self.api.image_api = None
        self.api.volume_api = None
        return uuid

    def _api_instance(self, actor):
        """What the API reads: a 404 once the server is destroyed."""
        context = harness.context(actor)
        try:
            row = self.store.get(self.uuid)
        except shelvefix_exception.InstanceNotFound:
            raise nova_exception.InstanceNotFound(instance_id=self.uuid)
        return context, self.cloud.database.load(context, row)

    # -- the actors ---------------------------------------------------------

    def user_confirm(self):
        """The user's confirm: nova's API, then compute-1 runs the cast.

        :returns: True, or ``'refused'`` if the API refused it
        """
        try:
            context, instance = self._api_instance('api')
            self.api.confirm_resize(context, instance)
        except (nova_exception.InstanceNotFound,
                nova_exception.InstanceInvalidState,
                nova_exception.MigrationNotFoundByStatus):
            return 'refused'
        self.serve(SOURCE)
        return True

    def delete(self):
        """The API's delete: nova's ``API.delete``."""
        try:
            context, instance = self._api_instance('delete')
        except nova_exception.InstanceNotFound:
            return 'refused'
        self.api.delete(context, instance)
        return True
