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

from keystoneauth1 import exceptions as ks_exc
from keystoneauth1 import loading as ks_loading
from oslo_log import log as logging

from shelvefix import conf
from shelvefix import exception
from shelvefix.scheduler.client import errors
from shelvefix import utils

CONF = conf.CONF
LOG = logging.getLogger(__name__)

CONSUMER_GENERATION_VERSION = '1.28'
POST_RPS_RETURNS_PAYLOAD_API_VERSION = '1.20'
GET_USAGES_VERSION = '1.9'
NESTED_PROVIDER_API_VERSION = '1.14'

# Transport-level failures keystoneauth1 raises instead of returning a
# response: connection refused, timeouts, no endpoint.
TRANSPORT_ERRORS = (ks_exc.ConnectionError, ks_exc.EndpointNotFound,
                    ks_exc.DiscoveryFailure, ks_exc.RequestTimeout)


class _ProviderGenerationConflict(Exception):
    """Internal: a write lost a provider generation race and may retry."""

    def __init__(self, err):
        super(_ProviderGenerationConflict, self).__init__(err.detail)
        self.err = err


def _transport_error(exc):
    return ('unable to communicate with the placement API (%s: %s)'
            % (type(exc).__name__, exc))


def _move_operation_alloc_request(source_allocs, dest_alloc_req):
    """Merge a consumer's current allocations into a new request.

    While a consumer is being moved it holds resources on both hosts. The
    result keeps every current allocation (only its ``resources``) and adds
    the requested providers the consumer does not use yet; a provider in both
    (a shared disk provider, say) keeps its current amounts.

    :param source_allocs: ``{rp_uuid: {'resources': {...}, ...}}`` as read
        from placement
    :param dest_alloc_req: an allocation request, ``{'allocations': {...}}``
    :returns: a new allocation request; neither argument is changed
    """
    merged = {rp: {'resources': dict(alloc['resources'])}
              for rp, alloc in source_allocs.items()}
    for rp, alloc in dest_alloc_req['allocations'].items():
        if rp not in merged:
            merged[rp] = copy.deepcopy(alloc)
    LOG.debug('Doubled-up allocation request for a move: %s', merged)
    return {'allocations': merged}


def _validate_alloc_request(consumer_uuid, alloc_request):
    """Raise InvalidAllocationRequest unless the request is well formed."""
    def bad(reason):
        raise exception.InvalidAllocationRequest(
            consumer_uuid=consumer_uuid, reason=reason)

    if not isinstance(alloc_request, dict):
        bad('expected a dict, got %s' % type(alloc_request).__name__)
    allocs = alloc_request.get('allocations')
    if not isinstance(allocs, dict) or not allocs:
        bad("missing or empty 'allocations' mapping")
    for rp_uuid, alloc in allocs.items():
        if not utils.is_uuid_like(rp_uuid):
            bad('resource provider %r is not a uuid' % (rp_uuid,))
        if not isinstance(alloc, dict) or 'resources' not in alloc:
            bad("allocation for provider %s has no 'resources'" % rp_uuid)
        resources = alloc['resources']
        if not isinstance(resources, dict) or not resources:
            bad("'resources' for provider %s is not a non-empty mapping"
                % rp_uuid)
        for rc, amount in resources.items():
            if (not isinstance(amount, int) or isinstance(amount, bool) or
                    amount < 1):
                bad('amount of %s on provider %s must be a positive '
                    'integer, got %r' % (rc, rp_uuid, amount))


def _version_tuple(version, what='microversion'):
    try:
        major, minor = version.split('.')
        return int(major), int(minor)
    except (AttributeError, ValueError):
        raise exception.Invalid(
            reason='%s must look like "1.28", got %r' % (what, version))


class SchedulerReportClient(object):
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
        self._conf = conf or CONF
        self._sleep = sleep or time.sleep
        self._jitter = jitter or random.uniform
        self._client = adapter or self._create_adapter()

    def _create_adapter(self):
        group = 'placement'
        conf.placement.register_ksa_opts(self._conf)
        auth = ks_loading.load_auth_from_conf_options(self._conf, group)
        session = ks_loading.load_session_from_conf_options(
            self._conf, group, auth=auth)
        return ks_loading.load_adapter_from_conf_options(
            self._conf, group, session=session, auth=auth)

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
        except TRANSPORT_ERRORS as e:
            raise exception.ConsumerAllocationRetrievalFailed(
                consumer_uuid=consumer, error=_transport_error(e)) from e
        if resp.status_code != 200:
            err = errors.error_from_response(resp)
            raise exception.ConsumerAllocationRetrievalFailed(
                consumer_uuid=consumer, error=errors.describe(err))
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

    def _landed(self, context, consumer_uuid, allocations):
        """After an ambiguous failure, did our write take effect anyway?

        A timeout, a dropped connection or a 5xx from a proxy can hide a
        write placement committed. Reporting such a write as failed would
        lose it (a claim nobody owns, or allocations thought still there),
        so the consumer is read back and compared with what was sent.

        :returns: True if placement holds exactly ``allocations``
            (``{rp: {'resources': {...}}}``), False if not or if it cannot
            be read
        """
        try:
            current = self.get_allocs_for_consumer(context, consumer_uuid)
        except exception.ConsumerAllocationRetrievalFailed as e:
            LOG.warning('Could not verify the allocations of consumer '
                        '%(consumer)s after an ambiguous failure: %(error)s',
                        {'consumer': consumer_uuid, 'error': e})
            return False
        held = {rp: a['resources']
                for rp, a in current['allocations'].items()}
        wanted = {rp: a['resources'] for rp, a in allocations.items()}
        if held == wanted:
            LOG.warning('The reply from placement for consumer %s was lost '
                        'but its allocations were written as requested',
                        consumer_uuid)
            return True
        return False

    def _put_allocations(self, context, consumer_uuid, payload,
                         version=CONSUMER_GENERATION_VERSION):
        """One PUT; returns None on 204, raises on anything else."""
        url = '/allocations/%s' % consumer_uuid
        try:
            resp = self.put(url, payload, version=version,
                            global_request_id=context.global_id)
        except TRANSPORT_ERRORS as e:
            if self._landed(context, consumer_uuid, payload['allocations']):
                return
            raise exception.AllocationUpdateFailed(
                consumer_uuid=consumer_uuid, error=_transport_error(e)) from e
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
            raise _ProviderGenerationConflict(err)
        if errors.is_consumer_generation_conflict(err):
            raise exception.AllocationUpdateFailed(
                consumer_uuid=consumer_uuid, error=err.detail,
                placement_error=err)
        raise exception.AllocationUpdateFailed(
            consumer_uuid=consumer_uuid, error=errors.describe(err),
            placement_error=err)

    def _with_retries(self, operation, consumer_uuid, func,
                      exc=exception.AllocationUpdateFailed):
        """Call ``func`` until it stops losing provider generation races.

        :param exc: what to raise when the retries run out
        """
        attempts = self._conf.placement.claim_retry_attempts
        max_delay = self._conf.placement.claim_retry_max_delay
        last = None
        for attempt in range(attempts):
            if attempt:
                self._sleep(self._jitter(0, attempt * max_delay))
            try:
                return func()
            except _ProviderGenerationConflict as e:
                last = e.err
                LOG.debug('Unable to %(op)s for consumer %(consumer)s: '
                          '%(detail)s; retrying (%(n)d of %(total)d)',
                          {'op': operation, 'consumer': consumer_uuid,
                           'detail': last.detail, 'n': attempt + 1,
                           'total': attempts})
        LOG.error('Failed scheduler client operation %(op)s for consumer '
                  '%(consumer)s: out of retries', {'op': operation,
                                                   'consumer': consumer_uuid})
        raise exc(consumer_uuid=consumer_uuid,
                  error='out of retries after %d attempts; last error: %s'
                        % (attempts, errors.describe(last)),
                  placement_error=last)

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
        _validate_alloc_request(consumer_uuid, alloc_request)
        version = allocation_request_version or CONSUMER_GENERATION_VERSION
        send_generation = (_version_tuple(version) >=
                           _version_tuple(CONSUMER_GENERATION_VERSION))

        def attempt():
            # Never change the caller's request: the scheduler reuses it.
            payload = copy.deepcopy(alloc_request)
            generation = consumer_generation
            current = self.get_allocs_for_consumer(context, consumer_uuid)
            if current['allocations']:
                generation = alloc_request.get(
                    'consumer_generation',
                    current.get('consumer_generation'))
                payload = _move_operation_alloc_request(
                    current['allocations'], alloc_request)
            payload.pop('consumer_generation', None)
            payload['project_id'] = project_id
            payload['user_id'] = user_id
            if send_generation:
                payload['consumer_generation'] = generation
            self._put_allocations(context, consumer_uuid, payload,
                                  version=version)
            return True

        LOG.debug('Attempting to claim resources in the placement API for '
                  'consumer %s', consumer_uuid)
        return self._with_retries('claim_resources', consumer_uuid, attempt)

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

        def failed(error, cause=None):
            LOG.warning('Unable to delete allocation for %(consumer_type)s '
                        '%(uuid)s: %(error)s', dict(what, error=error))
            exc = exception.AllocationDeleteFailed(consumer_uuid=uuid,
                                                   error=error)
            exc.__cause__ = cause
            return exc

        def send_free(send):
            # None when the reply was lost but the allocations are gone.
            try:
                resp = send()
            except TRANSPORT_ERRORS as e:
                if self._landed(context, uuid, {}):
                    return None
                raise failed(_transport_error(e), e)
            if resp.status_code >= 500 and self._landed(context, uuid, {}):
                return None
            return resp

        if force:
            resp = send_free(lambda: self.delete(
                url, global_request_id=context.global_id))
            if resp is None:
                return True
            if resp.status_code == 204:
                LOG.info('Deleted allocations for %(consumer_type)s '
                         '%(uuid)s', what)
                return True
            if resp.status_code == 404:
                LOG.debug('No allocations to delete for %(consumer_type)s '
                          '%(uuid)s', what)
                return False
            raise failed(errors.describe(errors.error_from_response(resp)))

        try:
            current = self.get_allocs_for_consumer(context, uuid)
        except exception.ConsumerAllocationRetrievalFailed as e:
            raise failed('while reading the consumer generation: %s'
                         % e.kwargs['error'], e)
        if not current['allocations']:
            LOG.debug('Cannot delete allocation for %s consumer in placement '
                      'as consumer does not exist', uuid)
            return False
        payload = {'allocations': {},
                   'consumer_generation': current.get('consumer_generation'),
                   'project_id': current.get('project_id'),
                   'user_id': current.get('user_id')}

        def put_empty():
            resp = send_free(lambda: self.put(
                url, payload, version=CONSUMER_GENERATION_VERSION,
                global_request_id=context.global_id))
            if resp is None or resp.status_code == 204:
                return True
            err = errors.error_from_response(resp)
            if errors.is_provider_generation_conflict(err):
                # Placement lost a race on a provider to another consumer's
                # write; the consumer itself is unchanged, so the same
                # request is still right.
                raise _ProviderGenerationConflict(err)
            if errors.is_consumer_generation_conflict(err):
                raise failed(err.detail)
            raise failed(errors.describe(err))

        self._with_retries('delete_allocation_for_instance', uuid, put_empty,
                           exc=exception.AllocationDeleteFailed)
        LOG.info('Deleted allocation for %(consumer_type)s %(uuid)s', what)
        return True

    # -- providers and usages, for setting up and checking scenarios

    def _json_or_raise(self, context, method, path, exc, data=None,
                       version=None, **exc_kwargs):
        """One request whose 200 body is returned; ``exc`` on any failure."""
        try:
            resp = self._request(method, path, data=data, version=version,
                                 global_request_id=context.global_id)
        except TRANSPORT_ERRORS as e:
            raise exc(error=_transport_error(e), **exc_kwargs) from e
        if resp.status_code != 200:
            raise exc(error=errors.describe(errors.error_from_response(resp)),
                      **exc_kwargs)
        return resp.json()

    def create_resource_provider(self, context, uuid, name):
        """POST /resource_providers; returns placement's provider document.

        :raises ResourceProviderCreationFailed: on any failure
        """
        utils.validate_uuid(uuid)
        return self._json_or_raise(
            context, 'POST', '/resource_providers',
            exception.ResourceProviderCreationFailed,
            data={'uuid': uuid, 'name': name},
            version=POST_RPS_RETURNS_PAYLOAD_API_VERSION, name=name)

    def get_resource_provider(self, context, uuid):
        """GET /resource_providers/{uuid}; returns the provider document.

        :raises ResourceProviderRetrievalFailed: on any failure, 404 included
        """
        utils.validate_uuid(uuid)
        return self._json_or_raise(
            context, 'GET', '/resource_providers/%s' % uuid,
            exception.ResourceProviderRetrievalFailed,
            version=NESTED_PROVIDER_API_VERSION, uuid=uuid)

    def set_inventory_for_provider(self, context, rp_uuid, inv_data):
        """Replace a provider's inventory.

        :param inv_data: ``{resource_class: {'total': N, ...}}``
        :returns: the provider's new generation
        :raises ResourceProviderUpdateFailed: on any failure, a provider
            generation conflict included (the caller decides to retry)
        """
        provider = self.get_resource_provider(context, rp_uuid)
        url = '/resource_providers/%s/inventories' % rp_uuid
        payload = {'resource_provider_generation': provider['generation'],
                   'inventories': inv_data}
        body = self._json_or_raise(
            context, 'PUT', url, exception.ResourceProviderUpdateFailed,
            data=payload, url=url)
        return body['resource_provider_generation']

    def get_provider_usages(self, context, rp_uuid):
        """GET /resource_providers/{uuid}/usages; returns ``{rc: used}``.

        :raises ResourceProviderRetrievalFailed: on any failure
        """
        utils.validate_uuid(rp_uuid)
        return self._json_or_raise(
            context, 'GET', '/resource_providers/%s/usages' % rp_uuid,
            exception.ResourceProviderRetrievalFailed, uuid=rp_uuid)['usages']

    def delete_resource_provider(self, context, rp_uuid):
        """DELETE /resource_providers/{uuid}.

        :returns: True if deleted, False if placement did not know it
        :raises ResourceProviderUpdateFailed: on any other failure (a 409
            if it still has allocations)
        """
        utils.validate_uuid(rp_uuid)
        url = '/resource_providers/%s' % rp_uuid
        try:
            resp = self.delete(url, global_request_id=context.global_id)
        except TRANSPORT_ERRORS as e:
            raise exception.ResourceProviderUpdateFailed(
                url=url, error=_transport_error(e)) from e
        if resp.status_code in (204, 404):
            return resp.status_code == 204
        raise exception.ResourceProviderUpdateFailed(
            url=url, error=errors.describe(errors.error_from_response(resp)))
