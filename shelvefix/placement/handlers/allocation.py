"""``/allocations``, ``/allocations/{consumer_uuid}`` and a provider's.

See :mod:`shelvefix.placement.objects.allocation` for the semantics; this
module only speaks HTTP: which body format and which checks each microversion
gets, and how a refusal reads.
"""

import collections

from shelvefix.placement import errors
from shelvefix.placement import exception
from shelvefix.placement.handlers import common
from shelvefix.placement.objects import allocation
from shelvefix.placement import schemas
from shelvefix.placement import validation
from shelvefix.placement import wsgi

CONSUMER_GENERATION_VERSION = (1, 28)
CONSUMER_TYPE_VERSION = (1, 38)
# Placement's label for a consumer that never got a type.
UNKNOWN_CONSUMER_TYPE = 'unknown'


def for_consumer(req, state):
    """``GET /allocations/{consumer_uuid}``.

    An unknown (or malformed) consumer is not an error: the answer is
    ``{"allocations": {}}`` without any consumer fields.

    :param req: the request (path: ``consumer``).
    :param state: the placement state.
    :raises: NotAcceptable.
    """
    common.check_accept(req)
    consumer, rows = state.consumer_allocation_rows(req.params['consumer'])
    by_provider = collections.OrderedDict()
    for provider, generation, resource_class, used, _created in rows:
        entry = by_provider.setdefault(provider, {'resources': {}})
        entry['resources'][resource_class] = used
        entry['generation'] = generation
    body = {'allocations': by_provider}
    if rows and req.version.matches((1, 12)):
        body['project_id'] = consumer.project_id
        body['user_id'] = consumer.user_id
        if req.version.matches(CONSUMER_GENERATION_VERSION):
            body['consumer_generation'] = consumer.generation
        if req.version.matches(CONSUMER_TYPE_VERSION):
            body['consumer_type'] = (consumer.consumer_type or
                                     UNKNOWN_CONSUMER_TYPE)
    return common.cache_headers(req, wsgi.json_response(body),
                                common.newest(row[4] for row in rows))


def for_provider(req, state):
    """``GET /resource_providers/{uuid}/allocations``.

    :param req: the request (path: ``uuid``).
    :param state: the placement state.
    :raises: NotAcceptable, NotFound.
    """
    common.check_accept(req)
    uuid, (generation, rows) = common.read_provider(
        req, state.provider_allocation_rows,
        "Resource provider '%s' not found: %s")
    by_consumer = collections.OrderedDict()
    for consumer, record, resource_class, used, _created in rows:
        entry = by_consumer.setdefault(consumer, {'resources': {}})
        entry['resources'][resource_class] = used
        if req.version.matches(CONSUMER_GENERATION_VERSION):
            entry['consumer_generation'] = record.generation
    body = {'allocations': by_consumer,
            'resource_provider_generation': generation}
    return common.cache_headers(req, wsgi.json_response(body),
                                common.newest(row[4] for row in rows))


def consumer_write(req, consumer, data):
    """A :class:`ConsumerWrite` of one consumer's allocations body.

    :param req: the request (its microversion decides the format).
    :param consumer: the consumer uuid.
    :param data: the consumer's part of the validated body.
    """
    resources = data['allocations']
    if not req.version.matches((1, 12)):
        # The list format of 1.0 - 1.11 becomes the dict format.
        resources = collections.OrderedDict(
            (item['resource_provider']['uuid'], {
                'resources': item['resources']}) for item in resources)
    return allocation.ConsumerWrite(
        consumer,
        collections.OrderedDict((rp, alloc['resources'])
                                for rp, alloc in resources.items()),
        data.get('project_id'), data.get('user_id'),
        data.get('consumer_generation'),
        data.get('consumer_type'))


def _replace(req, state, writes, not_found_format):
    try:
        state.replace_allocations(
            writes, check_generation=req.version.matches(
                CONSUMER_GENERATION_VERSION))
    except exception.ConsumerGenerationConflict as exc:
        raise errors.Conflict(str(exc), code=errors.CONCURRENT_UPDATE)
    except exception.AllocationProviderNotFound as exc:
        raise errors.BadRequest(str(exc))
    except exception.NotFound as exc:
        raise errors.BadRequest(not_found_format % exc)
    except exception.InvalidInventory as exc:
        raise errors.Conflict('Unable to allocate inventory: %s' % exc)
    return wsgi.empty_response()


def put_for_consumer(req, state):
    """``PUT /allocations/{consumer_uuid}``: replace one consumer's.

    The consumer uuid must be a UUID (any spelling; it is normalized).
    From 1.28 the body names the consumer generation and may be empty.

    :param req: the request (path: ``consumer``).
    :param state: the placement state.
    :raises: UnsupportedMediaType, BadRequest, Conflict.
    """
    common.require_json(req)
    consumer = req.params['consumer']
    if not validation.is_uuid_like(consumer):
        raise errors.BadRequest('Malformed consumer_uuid: %s' % consumer)
    consumer = validation.normalize_uuid(consumer)
    data = validation.extract_json(req.body,
                                   schemas.put_allocations(req.version))
    return _replace(req, state, [consumer_write(req, consumer, data)],
                    'Unable to allocate inventory for consumer ' +
                    consumer.replace('%', '%%') + ': %s')


def post(req, state):
    """``POST /allocations`` (1.13 and later): several consumers at once.

    Consumer uuids are used as sent (the schema only checks their shape).

    :param req: the request.
    :param state: the placement state.
    :raises: NotFound (before 1.13), UnsupportedMediaType, BadRequest,
        Conflict.
    """
    common.require_version(req, (1, 13))
    common.require_json(req)
    data = validation.extract_json(req.body,
                                   schemas.post_allocations(req.version))
    writes = [consumer_write(req, consumer, body)
              for consumer, body in data.items()]
    return _replace(req, state, writes, 'Unable to allocate inventory %s')


def delete_for_consumer(req, state):
    """``DELETE /allocations/{consumer_uuid}``; no generation involved.

    :param req: the request (path: ``consumer``).
    :param state: the placement state.
    :raises: NotFound.
    """
    consumer = req.params['consumer']
    try:
        state.delete_allocations(consumer)
    except exception.NotFound as exc:
        raise errors.NotFound(str(exc))
    return wsgi.empty_response()
