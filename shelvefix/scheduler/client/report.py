"""The placement report client: allocations and consumer generations.

``SchedulerReportClient`` mirrors the public names, signatures and return
values of ``nova.scheduler.client.report.SchedulerReportClient`` for the
methods on the shelve-offload and unshelve paths. It differs from nova where
nova hides failures:

* every failure is an exception naming the consumer and placement's error
  (nova returns ``None``, ``False`` or ``{}`` in places, and its
  ``safe_connect`` decorator swallows connection failures);
* exhausted provider-generation retries raise instead of returning False;
* the sleep between retries and its random jitter are injectable.
"""

import copy
import random
import time

from oslo_log import log as logging

from shelvefix import conf
from shelvefix import exception
from shelvefix.scheduler.client import alloc_request as alloc_request_mod
from shelvefix.scheduler.client import candidates
from shelvefix.scheduler.client import errors
from shelvefix.scheduler.client import moves
from shelvefix.scheduler.client import providers
from shelvefix.scheduler.client import tree_report
from shelvefix.scheduler.client import writes
from shelvefix import utils

CONF = conf.CONF
LOG = logging.getLogger(__name__)

CONSUMER_GENERATION_VERSION = '1.28'


class SchedulerReportClient(writes.AllocationWrites,
                            tree_report.ProviderTreeCalls,
                            providers.ProviderCalls,
                            candidates.CandidateQueries,
                            moves.AllocationMoves):
    """Client for the placement API, as nova's scheduler and compute use it.

    :param adapter: a keystoneauth1 ``Adapter`` for placement. Without one,
        an adapter is built from the ``[placement]`` options of ``conf``.
    :param conf: an oslo.config ``ConfigOpts`` (default: the global CONF).
    :param sleep: called with seconds to wait between retries
        (default ``time.sleep``).
    :param jitter: ``jitter(low, high)`` returns the delay for a retry
        (default ``random.uniform``).
    """

    def __init__(self, adapter=None, conf=None, sleep=None, jitter=None):
        self._conf = conf if conf is not None else CONF
        self._sleep = sleep or time.sleep
        self._jitter = jitter or random.uniform
        self._client = adapter or self._create_adapter()

    def _create_adapter(self):
        return conf.placement.load_adapter(self._conf)

    @property
    def adapter(self):
        """The keystoneauth1 Adapter requests go through."""
        return self._client

    # -- HTTP verbs, as nova has them: a response back, never an HTTP error
    # raised. Transport failures (keystoneauth1 exceptions) propagate.

    def _request(self, method, url, data=None, version=None,
                 global_request_id=None):
        kwargs = {'microversion': version,
                  'global_request_id': global_request_id,
                  'raise_exc': False,
                  'headers': {'accept': 'application/json'}}
        if data is not None:
            # json= makes keystoneauth1 send application/json, which
            # placement insists on for PUT and POST.
            kwargs['json'] = data
        return self._client.request(url, method, **kwargs)

    def get(self, url, version=None, global_request_id=None):
        return self._request('GET', url, version=version,
                             global_request_id=global_request_id)

    def post(self, url, data, version=None, global_request_id=None):
        return self._request('POST', url, data=data, version=version,
                             global_request_id=global_request_id)

    def put(self, url, data, version=None, global_request_id=None):
        return self._request('PUT', url, data=data, version=version,
                             global_request_id=global_request_id)

    def delete(self, url, version=None, global_request_id=None):
        return self._request('DELETE', url, version=version,
                             global_request_id=global_request_id)

    # -- reading allocations

    def get_allocs_for_consumer(self, context, consumer):
        """GET /allocations/{consumer} at microversion 1.28.

        :param context: the request context
        :param consumer: the consumer's uuid
        :returns: placement's body: ``allocations`` (per provider
            ``resources`` and ``generation``) and, for a known consumer,
            ``consumer_generation``, ``project_id`` and ``user_id``
        :raises InvalidUUID: if ``consumer`` is not a uuid
        :raises ConsumerAllocationRetrievalFailed: on any failure, transport
            failures included
        """
        utils.validate_uuid(consumer)
        url = '/allocations/%s' % consumer
        try:
            resp = self.get(url, version=CONSUMER_GENERATION_VERSION,
                            global_request_id=context.global_id)
        except errors.TRANSPORT_ERRORS as e:
            raise exception.ConsumerAllocationRetrievalFailed(
                consumer_uuid=consumer,
                error=errors.describe_transport_error(e)) from e
        if resp.status_code != 200:
            err = errors.error_from_response(resp)
            raise exception.ConsumerAllocationRetrievalFailed(
                consumer_uuid=consumer, error=errors.describe(err),
                placement_error=err)
        try:
            body = resp.json()
            body['allocations'].items()
        except (ValueError, KeyError, TypeError, AttributeError):
            raise exception.ConsumerAllocationRetrievalFailed(
                consumer_uuid=consumer,
                error='placement answered 200 without an allocations '
                      'document: %r' % resp.text[:200])
        return body

    def get_allocations_for_consumer(self, context, consumer):
        """Return only the ``allocations`` part of the consumer's document.

        Unlike nova's legacy method, failures raise (see
        :meth:`get_allocs_for_consumer`) instead of returning None or {}.
        """
        return self.get_allocs_for_consumer(context, consumer)['allocations']

    # -- writing allocations

    def _put_allocations(self, context, consumer_uuid, payload,
                         version=CONSUMER_GENERATION_VERSION):
        """One PUT; returns None on 204, raises on anything else."""
        url = '/allocations/%s' % consumer_uuid
        try:
            resp = self.put(url, payload, version=version,
                            global_request_id=context.global_id)
        except errors.TRANSPORT_ERRORS as e:
            if self._landed(context, consumer_uuid, payload['allocations']):
                return
            raise exception.AllocationUpdateFailed(
                consumer_uuid=consumer_uuid,
                error=errors.describe_transport_error(e)) from e
        if resp.status_code == 204:
            return
        if resp.status_code >= 500 and self._landed(
                context, consumer_uuid, payload['allocations']):
            return
        err = errors.error_from_response(resp)
        LOG.warning('Failed to save allocation for %(consumer)s. %(error)s',
                    {'consumer': consumer_uuid,
                     'error': errors.describe(err)})
        if errors.is_provider_generation_conflict(err):
            raise writes.ProviderGenerationConflict(err)
        if errors.is_consumer_generation_conflict(err):
            raise exception.AllocationUpdateConflict(
                consumer_uuid=consumer_uuid, error=err.detail,
                placement_error=err)
        raise exception.AllocationUpdateFailed(
            consumer_uuid=consumer_uuid, error=errors.describe(err),
            placement_error=err)

    def put_allocations(self, context, consumer_uuid, payload):
        """PUT the given allocations document for a consumer.

        :param payload: the body of PUT /allocations/{consumer_uuid} at
            microversion 1.28 (``allocations``, ``consumer_generation``,
            ``project_id``, ``user_id``)
        :returns: True
        :raises AllocationUpdateFailed: consumer generation conflict (with
            placement's detail), any other error, transport failures, or
            provider generation conflicts that outlast the retries
        """
        utils.validate_uuid(consumer_uuid)
        return self._with_retries(
            'put_allocations', consumer_uuid,
            lambda: self._put_allocations(context, consumer_uuid,
                                          payload) or True)

    def claim_resources(self, context, consumer_uuid, alloc_request,
                        project_id, user_id, allocation_request_version,
                        consumer_generation=None):
        """Claim an allocation request for a consumer.

        Reads the consumer's current allocations first. If it has some, the
        request is treated as a move: the current allocations are doubled up
        into the request and the consumer generation just read is sent
        (unless the request carries its own). Otherwise ``consumer_generation``
        (None for a new consumer) is sent.

        :param context: the request context
        :param consumer_uuid: the instance's uuid
        :param alloc_request: ``{'allocations': {rp_uuid: {'resources':
            {...}}}}``, as from GET /allocation_candidates; not modified
        :param project_id: project owning the allocations
        :param user_id: user owning the allocations
        :param allocation_request_version: microversion to PUT with
        :param consumer_generation: the generation expected for a consumer
            with no allocations (None: a new consumer)
        :returns: True when the allocations were written
        :raises InvalidUUID: ``consumer_uuid`` is not a uuid
        :raises InvalidAllocationRequest: ``alloc_request`` is malformed
        :raises ConsumerAllocationRetrievalFailed: the initial GET failed
        :raises AllocationUpdateFailed: the PUT failed; for a consumer
            generation conflict the message carries placement's detail
        """
        utils.validate_uuid(consumer_uuid)
        alloc_request_mod.validate(consumer_uuid, alloc_request)
        version = allocation_request_version or CONSUMER_GENERATION_VERSION
        send_generation = (utils.version_tuple(version) >=
                           utils.version_tuple(CONSUMER_GENERATION_VERSION))

        def attempt():
            # Never change the caller's request: the scheduler reuses it.
            payload = copy.deepcopy(alloc_request)
            generation = consumer_generation
            current = self.get_allocs_for_consumer(context, consumer_uuid)
            if current['allocations']:
                generation = alloc_request.get(
                    'consumer_generation',
                    current.get('consumer_generation'))
                payload = alloc_request_mod.move_operation_alloc_request(
                    current['allocations'], alloc_request)
            payload.pop('consumer_generation', None)
            payload['project_id'] = project_id
            payload['user_id'] = user_id
            if send_generation:
                payload['consumer_generation'] = generation
            try:
                self._put_allocations(context, consumer_uuid, payload,
                                      version=version)
            except exception.AllocationUpdateConflict as conflict:
                if (current['allocations'] or not send_generation or
                        generation is not None):
                    raise
                self._claim_ghost(context, consumer_uuid, payload, version,
                                  conflict)
            return True

        LOG.debug('Attempting to claim resources in the placement API for '
                  'consumer %s', consumer_uuid)
        return self._with_retries('claim_resources', consumer_uuid, attempt)

    def _claim_ghost(self, context, consumer_uuid, payload, version,
                     conflict):
        """Claim for a consumer placement keeps without allocations.

        A claim that read no allocations sends ``consumer_generation:
        null``; placement refuses it if it still holds a consumer record
        with no allocations (a *ghost*: its ``DELETE /allocations`` deletes
        the allocations and then, in a separate transaction, the consumer,
        and the second step can fail). Read the consumer again: if it now
        holds allocations, someone else claimed, and their claim stands
        (the conflict is raised). If it still holds none, send the
        generation placement reported once: placement checks it, so the
        write fails if anything changed the consumer meanwhile. Nothing
        anyone wrote can be overwritten. See the guide, "Ghost consumers".

        :raises AllocationUpdateConflict: ``conflict``, or the retry's
        """
        found, expected = errors.expected_consumer_generation(
            conflict.kwargs['placement_error'])
        if not found or expected is None:
            raise conflict
        current = self.get_allocs_for_consumer(context, consumer_uuid)
        if current['allocations']:
            raise conflict
        LOG.warning('Placement keeps consumer %(consumer)s at generation '
                    '%(generation)d without allocations (a ghost consumer); '
                    'claiming with that generation',
                    {'consumer': consumer_uuid, 'generation': expected})
        self._put_allocations(context, consumer_uuid,
                              dict(payload, consumer_generation=expected),
                              version=version)

    # -- freeing allocations

    def delete_allocation_for_instance(self, context, uuid,
                                       consumer_type='instance', force=False):
        """Remove every allocation of a consumer.

        :param context: the request context
        :param uuid: the consumer (instance or migration) uuid
        :param consumer_type: 'instance' or 'migration', for the logs
        :param force: True sends DELETE /allocations/{uuid}, which ignores
            consumer generations (nova since Ussuri). False reads the
            allocations and PUTs an empty set with the consumer generation
            just read (nova on Rocky), which fails on a concurrent change.
        :returns: True if allocations were removed, False if the consumer
            had none
        :raises InvalidUUID: ``uuid`` is not a uuid
        :raises AllocationDeleteFailed: on any failure, including a
            consumer generation conflict and transport failures
        """
        utils.validate_uuid(uuid)
        url = '/allocations/%s' % uuid
        what = {'consumer_type': consumer_type, 'uuid': uuid}

        def failed(error, cause=None, err=None):
            LOG.warning('Unable to delete allocation for %(consumer_type)s '
                        '%(uuid)s: %(error)s', dict(what, error=error))
            exc_class = exception.AllocationDeleteFailed
            if err is not None and errors.is_consumer_generation_conflict(err):
                exc_class = exception.AllocationDeleteConflict
            exc = exc_class(consumer_uuid=uuid, error=error,
                            placement_error=err)
            exc.__cause__ = cause
            return exc

        if force:
            def deleted(resp):
                if resp.status_code == 404:
                    LOG.debug('No allocations to delete for %(consumer_type)s '
                              '%(uuid)s', what)
                    return False
                if resp.status_code != 204:
                    err = errors.error_from_response(resp)
                    raise failed(errors.describe(err), err=err)
                LOG.info('Deleted allocations for %(consumer_type)s '
                         '%(uuid)s', what)
                return True
            return self._free(
                context, uuid, failed, deleted,
                lambda: self.delete(url, global_request_id=context.global_id))

        try:
            current = self.get_allocs_for_consumer(context, uuid)
        except exception.ConsumerAllocationRetrievalFailed as e:
            raise failed('while reading the consumer generation: %s'
                         % e.kwargs['error'], e,
                         err=e.kwargs.get('placement_error'))
        if not current['allocations']:
            LOG.debug('Cannot delete allocation for %s consumer in placement '
                      'as consumer does not exist', uuid)
            return False
        payload = {'allocations': {},
                   'consumer_generation': current.get('consumer_generation'),
                   'project_id': current.get('project_id'),
                   'user_id': current.get('user_id')}

        def emptied(resp):
            if resp.status_code == 204:
                return True
            err = errors.error_from_response(resp)
            if errors.is_provider_generation_conflict(err):
                # Placement lost a race on a provider to another consumer's
                # write; the consumer itself is unchanged, so the same
                # request is still right.
                raise writes.ProviderGenerationConflict(err)
            if errors.is_consumer_generation_conflict(err):
                raise failed(err.detail, err=err)
            raise failed(errors.describe(err), err=err)

        self._with_retries(
            'delete_allocation_for_instance', uuid,
            lambda: self._free(
                context, uuid, failed, emptied,
                lambda: self.put(url, payload,
                                 version=CONSUMER_GENERATION_VERSION,
                                 global_request_id=context.global_id)),
            exc=exception.AllocationDeleteFailed)
        LOG.info('Deleted allocation for %(consumer_type)s %(uuid)s', what)
        return True
