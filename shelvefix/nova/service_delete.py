"""nova's own API deleting the compute service of a host that is gone.

An operator evacuates the servers of a host that is down, and, the host
never coming back, deletes its compute service. :class:`ServiceDeleteRun`
starts where the evacuation ends, as
:class:`~.evacuated_delete.EvacuatedDeleteRun` does
(:data:`~.evacuated_delete.EVACUATED`): the server ``ACTIVE`` on compute-2,
the evacuation migration ``done``, placement holding the server's
allocations on both hosts, since only compute-1's start-up would remove
compute-1's. compute-1 does not start again.

The actors, for the ``service-delete`` scenario (nova's only):

``api``
    nova's ``ServiceController.delete`` of compute-1's service
    (``DELETE /os-services/{service_id}``, microversion 2.53): its checks
    (no server on the host, no migration in progress through its node),
    then the report client's ``delete_resource_provider`` with
    ``cascade=True`` (the allocations of the host's servers, and the
    source allocations of the servers evacuated from it, removed; then the
    node's provider deleted), the host mapping and the service record;
``periodic-2``
    compute-2's periodic audit.

A run is judged as the other move scenarios' are
(:func:`~.move_program.classify`), and the service deleted is compute-1
gone for good: the server may no longer hold compute-1's allocations,
which nothing will remove any more (:meth:`ServiceDeleteRun.end_labels`).
The provider the delete removed is made again for the next run.

This module imports nova (see :mod:`shelvefix.nova`).
"""

import fixtures
from nova.api.openstack import api_version_request
from nova.api.openstack.compute import services as services_api
from nova.api.openstack import wsgi
from nova import exception as nova_exception
from nova import objects
import os_traits
import webob

from shelvefix.nova import doubles
from shelvefix.nova import evacuated_delete
from shelvefix.nova import evacuation
from shelvefix.nova import harness
from shelvefix.nova import lifecycle
from shelvefix.nova import move_program
from shelvefix import race
from shelvefix.race import outcomes

SOURCE = evacuation.SOURCE
DESTINATION = evacuation.DESTINATION
#: The microversion the API's client asks for: services by uuid.
MICROVERSION = '2.53'
#: What an actor's result is when the API answers with an HTTP error.
REFUSED = 'refused'
#: The migrations nova's ``get_in_progress_by_host_and_node`` leaves out.
NOT_IN_PROGRESS = ('confirmed', 'reverted', 'error', 'failed', 'completed',
                   'cancelled', 'done')


class HostAPI(object):
    """The API's ``compute.HostAPI``, as far as a service delete reads it."""

    def __init__(self, database):
        self.database = database

    def service_get_by_id(self, context, service_id):
        for service in self.database.services.values():
            if service.uuid == service_id:
                return service.obj_clone()
        raise nova_exception.ServiceNotFound(service_id=service_id)


class AggregateAPI(object):
    """The API's ``compute.AggregateAPI``: the host is in no aggregate."""

    def get_aggregates_by_host(self, context, host_name):
        return objects.AggregateList.get_by_host(context, host_name)

    def remove_host_from_aggregate(self, context, aggregate_id, host_name):
        raise AssertionError('the host is in no aggregate')


class ServiceDatabase(fixtures.Fixture):
    """The records a compute service's delete reads and writes.

    The servers on a host are counted and listed from the run's instance
    store (a step of the explorer each); the host's migrations in progress
    are read from its migration store (the host's compute nodes are the
    database's, :class:`~.database.Database`). The service's and host
    mapping's destroys are recorded.

    :param cloud: the :class:`~.moves.NovaMoveCloud`
    """

    def __init__(self, cloud):
        super(ServiceDatabase, self).__init__()
        self.cloud = cloud

    def _setUp(self):
        cloud = self.cloud

        def count_by_hosts(context, hosts):
            return sum(len(cloud.run.store.query(host=host))
                       for host in hosts)

        def uuids_by_host_and_node(context, host, node):
            return [row['uuid'] for row in
                    cloud.run.store.query(host=host, node=node)]

        def in_progress(context, host, node):
            def here(row):
                return (row['status'] not in NOT_IN_PROGRESS and (
                    (row['source_compute'], row['source_node']) ==
                    (host, node) or
                    (row['dest_compute'], row['dest_node']) == (host, node)))
            return objects.MigrationList(objects=[
                cloud.move_database.load(context, row)
                for row in cloud.run.migrations.query(predicate=here)])

        def host_mapping(context, host):
            return objects.HostMapping(host=host)

        def record(name):
            def destroy(obj):
                cloud.run.events.append((name, obj.host))
            return destroy

        patches = [
            ('nova.objects.instance.InstanceList.get_count_by_hosts',
             doubles.class_call(count_by_hosts)),
            ('nova.objects.instance.InstanceList.get_uuids_by_host_and_node',
             doubles.class_call(uuids_by_host_and_node)),
            ('nova.objects.migration.MigrationList.'
             'get_in_progress_by_host_and_node',
             doubles.class_call(in_progress)),
            ('nova.objects.host_mapping.HostMapping.get_by_host',
             doubles.class_call(host_mapping)),
            ('nova.objects.host_mapping.HostMapping.destroy',
             record('host_mapping.destroy')),
            ('nova.objects.service.Service.destroy',
             record('service.destroy')),
        ]
        for name, value in patches:
            self.useFixture(fixtures.MonkeyPatch(name, value))


class ServiceDeleteRun(evacuated_delete.EvacuatedDeleteRun):
    """One run: an evacuated server, nova's API, compute-1 gone."""

    #: The API deleted compute-1's service: compute-1 never starts again.
    service_deleted = False

    def _restart_source(self):
        """compute-1 stays down."""

    def delete_service(self):
        """The API's ``DELETE /os-services/{id}`` of compute-1's service.

        :returns: True, or :data:`REFUSED` for the API's HTTP error (a
            conflict: a server on the host, or a migration in progress)
        """
        context = harness.context('api', is_admin=True)
        context.can = lambda *args, **kwargs: True
        service = self.cloud.database.services[SOURCE]
        request = wsgi.Request.blank(
            '/v2.1/os-services/%s' % service.uuid, method='DELETE')
        request.environ['nova.context'] = context
        request.api_version_request = api_version_request.APIVersionRequest(
            MICROVERSION)
        controller = services_api.ServiceController.__new__(
            services_api.ServiceController)
        controller.host_api = HostAPI(self.cloud.database)
        controller.aggregate_api = AggregateAPI()
        # Its placementclient is nova's report client singleton: the
        # run's (NovaCloud).
        try:
            controller.delete(request, service.uuid)
        except webob.exc.HTTPException as e:
            self.events.append(('api refused', e.code))
            return REFUSED
        self.service_deleted = True
        return True

    def end_labels(self):
        """What only the run's own records say, as outcome labels.

        Those of :meth:`~.evacuation.EvacuationRun.end_labels`, and
        ``allocations leaked`` if compute-1's service was deleted and the
        server still holds compute-1's allocations.
        """
        labels = super(ServiceDeleteRun, self).end_labels()
        if (self.service_deleted and outcomes.LEAKED not in labels and
                not self.store.is_deleted(self.uuid) and
                self.providers[SOURCE] in self.held()):
            labels.append(outcomes.LEAKED)
        return labels

    def remove_from_placement(self):
        """Free what the run left, and make compute-1's provider again."""
        super(ServiceDeleteRun, self).remove_from_placement()
        placement = self.cloud.placement
        uuid = self.providers[SOURCE]
        found = placement.admin_adapter.get(
            '/resource_providers/%s' % uuid, raise_exc=False)
        if found.status_code == 404:
            placement.create_provider(SOURCE, uuid=uuid,
                                      inventory=lifecycle.INVENTORY)
            # Down, as the cloud made it (NovaCloud).
            placement.set_traits(uuid, [os_traits.COMPUTE_STATUS_DISABLED])


class ServiceDeleteProgram(move_program.NovaMoveProgram):
    """The ``service-delete`` scenario on a set-up ``NovaMoveCloud``."""

    def __init__(self, cloud, without=()):
        super(ServiceDeleteProgram, self).__init__(
            cloud, race.SERVICE_DELETE, without)
        cloud.useFixture(ServiceDatabase(cloud))

    def _actors(self, run, timeout=60.0, done=None):
        funcs = {
            'api': run.delete_service,
            'periodic-2': lambda: run.periodic(DESTINATION),
        }
        return self._as_services(funcs)

    def _start(self):
        return self.cloud.start(evacuated_delete.EVACUATED, ServiceDeleteRun)
