"""``POST /reshaper`` (microversion 1.30 and later).

See :mod:`shelvefix.placement.objects.reshaper` for the semantics. The
handler checks what placement checks before its transaction, in the same
order: each provider of the inventories exists and was seen at its
current generation; then the state replaces inventories and allocations
together, and a refusal reads as placement's.
"""

import collections

from shelvefix.placement import errors
from shelvefix.placement import exception
from shelvefix.placement.handlers import allocation
from shelvefix.placement.handlers import common
from shelvefix.placement.objects import models
from shelvefix.placement import schemas
from shelvefix.placement import validation
from shelvefix.placement import wsgi


def reshape(req, state):
    """``POST /reshaper``.

    :param req: the request.
    :param state: the placement state.
    :raises: NotFound (before 1.30), UnsupportedMediaType, BadRequest,
        Conflict.
    """
    common.require_version(req, (1, 30))
    common.require_json(req)
    data = validation.extract_json(req.body, schemas.reshaper(req.version))
    inventories = collections.OrderedDict()
    for uuid, body in data['inventories'].items():
        try:
            provider = state.get_provider(uuid)
        except exception.ResourceProviderNotFound as exc:
            raise errors.BadRequest(
                'Resource provider %s in inventories not found: %s'
                % (uuid, exc), code=errors.RESOURCE_PROVIDER_NOT_FOUND)
        given = body['resource_provider_generation']
        if given != provider.generation:
            raise errors.Conflict(str(exception.ReshapeGenerationConflict(
                uuid=uuid, actual=provider.generation, given=given)),
                code=errors.CONCURRENT_UPDATE)
        inventories[uuid] = (given, collections.OrderedDict(
            (rc, models.Inventory.build(**fields))
            for rc, fields in body['inventories'].items()))
    writes = [allocation.consumer_write(req, consumer, body)
              for consumer, body in data['allocations'].items()]
    try:
        state.reshape(inventories, writes)
    except exception.ConsumerGenerationConflict as exc:
        raise errors.Conflict(str(exc), code=errors.CONCURRENT_UPDATE)
    except exception.ResourceProviderConcurrentUpdateDetected as exc:
        # A provider written after the check above: placement's
        # transaction finds it out and says so in its own words.
        raise errors.Conflict('update conflict: %s' % exc,
                              code=errors.CONCURRENT_UPDATE)
    except exception.AllocationProviderNotFound as exc:
        raise errors.BadRequest(str(exc))
    except exception.NotFound as exc:
        raise errors.BadRequest('malformed reshaper data: %s' % exc)
    except exception.InventoryInUse as exc:
        raise errors.Conflict('update conflict: %s' % exc,
                              code=errors.INVENTORY_INUSE)
    except exception.InvalidInventory as exc:
        raise errors.Conflict('Unable to allocate inventory: %s' % exc)
    return wsgi.empty_response()
