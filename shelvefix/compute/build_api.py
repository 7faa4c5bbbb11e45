"""The API's delete of a server, also one still being built.

:class:`API` mirrors the part of nova's ``nova.compute.api.API`` a user's
``DELETE /servers/{id}`` runs, with nova's names, in today's nova order:

* :meth:`API.get` reads the server as the API shows it: from the cell its
  instance mapping names, or from its build request while the mapping has
  no cell (and from the cell after all if the conductor destroyed the
  build request meanwhile);
* :meth:`API.delete` of a server with no host: the build request is
  destroyed if it is still there (``_delete_while_booting``: the
  conductor then builds nothing, and destroys a record it created in the
  cell meanwhile), else the record in the cell is destroyed; either way
  ``_local_delete_cleanup`` frees the server's allocations and marks its
  mapping queued for deletion;
* a server with a host is deleted by its host: ``DELETING`` saved, then
  ``terminate_instance`` cast there (:mod:`shelvefix.compute.delete`).

One deviation, noted where it is: nova's ``destroy`` of a server with no
host refuses if the saved row got a host meanwhile (a constraint on the
row); the library's instance store has no such constraint, so the delete
re-reads the record and takes the host path if it has one.
"""

from oslo_log import log as logging

from shelvefix.compute import task_states
from shelvefix import exception
from shelvefix.objects import build_request as build_request_obj
from shelvefix.objects import instance as instance_obj

LOG = logging.getLogger(__name__)


class API(object):
    """The API's reads and deletes of servers.

    :param compute_rpcapi: a :class:`~shelvefix.compute.rpcapi.ComputeAPI`
    :param placementclient: a ``SchedulerReportClient``
    :param build_requests: the API database's
        :class:`~shelvefix.objects.build_request.BuildRequestStore`
    :param instance_mappings: its
        :class:`~shelvefix.objects.build_request.InstanceMappingStore`
    :param cells: ``{cell name: InstanceStore}``
    """

    def __init__(self, compute_rpcapi, placementclient, build_requests,
                 instance_mappings, cells):
        self.compute_rpcapi = compute_rpcapi
        self.placementclient = placementclient
        self.build_requests = build_requests
        self.instance_mappings = instance_mappings
        self.cells = cells

    # -- reads

    def get(self, context, instance_id):
        """The server as the API shows it.

        :returns: an :class:`~shelvefix.objects.instance.Instance`, saved
            in a cell or, while the server is not in one, built from the
            build request (not saved anywhere)
        :raises InstanceNotFound: no such server
        """
        mapping = self._mapping(instance_id)
        if mapping.cell is None:
            try:
                return build_request_obj.BuildRequest.get_by_instance_uuid(
                    self.build_requests, instance_id).get_new_instance(
                        self.cells[build_request_obj.CELL1])
            except exception.BuildRequestNotFound:
                # Built meanwhile (or deleted): the mapping says where.
                mapping = self._mapping(instance_id)
                if mapping.cell is None:
                    raise exception.InstanceNotFound(instance_id=instance_id)
        return instance_obj.Instance.get_by_uuid(self.cells[mapping.cell],
                                                 instance_id)

    def _mapping(self, instance_id):
        try:
            return build_request_obj.InstanceMapping.get_by_instance_uuid(
                self.instance_mappings, instance_id)
        except exception.InstanceMappingNotFound:
            raise exception.InstanceNotFound(instance_id=instance_id)

    def _lookup_instance(self, context, uuid):
        """``(cell, instance)`` of a server in a cell, or ``(None, None)``."""
        try:
            mapping = build_request_obj.InstanceMapping.get_by_instance_uuid(
                self.instance_mappings, uuid)
        except exception.InstanceMappingNotFound:
            return None, None
        if mapping.cell is None:
            return None, None
        try:
            return mapping.cell, instance_obj.Instance.get_by_uuid(
                self.cells[mapping.cell], uuid)
        except exception.InstanceNotFound:
            return None, None

    # -- delete

    def delete(self, context, instance):
        """Delete the server ``instance`` (as :meth:`get` returned it)."""
        LOG.debug('Going to try to terminate instance %s', instance.uuid)
        self._delete(context, instance)

    def _delete(self, context, instance):
        instance_uuid = instance.uuid
        if not instance.host:
            if self._delete_while_booting(context, instance):
                self._local_delete_cleanup(context, instance_uuid)
                return
            cell, found = self._lookup_instance(context, instance_uuid)
            if found is None:
                self._local_delete_cleanup(context, instance_uuid)
                return
            if not found.host:
                try:
                    found.destroy()
                except exception.InstanceNotFound:
                    pass
                self._local_delete_cleanup(context, instance_uuid)
                return
            # nova's destroy refuses here (the row got a host): the
            # server's host deletes it.
            instance = found
        original_task_state = instance.task_state
        instance.task_state = task_states.DELETING
        instance.save()
        if original_task_state in (task_states.DELETING,
                                   task_states.SOFT_DELETING):
            LOG.info('Instance %s is being deleted already', instance_uuid)
            return
        self.compute_rpcapi.terminate_instance(context, instance, None)

    def _delete_while_booting(self, context, instance):
        """True if the server never got (or no longer is) in a cell.

        The build request destroyed here stops the conductor; a record it
        created in the cell meanwhile is destroyed too.
        """
        if not self._attempt_delete_of_buildrequest(context, instance):
            return False
        cell, found = self._lookup_instance(context, instance.uuid)
        if found is not None:
            try:
                found.destroy()
            except exception.InstanceNotFound:
                pass
        return True

    def _attempt_delete_of_buildrequest(self, context, instance):
        try:
            build_request_obj.BuildRequest.get_by_instance_uuid(
                self.build_requests, instance.uuid).destroy()
        except exception.BuildRequestNotFound:
            # The conductor destroyed it: the server is in a cell.
            return False
        return True

    def _local_delete_cleanup(self, context, instance_uuid):
        """Free the server's allocations; queue its mapping for deletion."""
        try:
            self.placementclient.delete_allocation_for_instance(
                context, instance_uuid, force=True)
        except exception.AllocationDeleteFailed:
            LOG.info('Allocation delete failed during local delete cleanup '
                     'of instance %s', instance_uuid)
        try:
            self._update_queued_for_deletion(context, instance_uuid, True)
        except exception.InstanceMappingNotFound:
            LOG.info('Instance mapping of %s does not exist while '
                     'attempting local delete cleanup', instance_uuid)

    def _update_queued_for_deletion(self, context, instance_uuid, qfd):
        mapping = build_request_obj.InstanceMapping.get_by_instance_uuid(
            self.instance_mappings, instance_uuid)
        mapping.queued_for_delete = qfd
        mapping.save()
