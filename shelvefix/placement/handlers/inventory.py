"""``/resource_providers/{uuid}/inventories[/{resource_class}]``."""

import collections
import contextlib

from shelvefix.placement import errors
from shelvefix.placement import exception
from shelvefix.placement.handlers import common
from shelvefix.placement.objects import models
from shelvefix.placement import schemas
from shelvefix.placement import validation
from shelvefix.placement import wsgi

_FIELDS = ('total', 'reserved', 'min_unit', 'max_unit', 'step_size',
           'allocation_ratio')


def _serialize(inventory, generation=None):
    data = collections.OrderedDict(
        (field, getattr(inventory, field)) for field in _FIELDS)
    # Placement drops a zero generation here (it tests truthiness).
    if generation:
        data['resource_provider_generation'] = generation
    return data


def _build(fields):
    # Values as sent (an int allocation_ratio stays an int in the answer
    # to the write, as in placement; the stored one is a float).
    fields = dict(fields)
    fields.pop('resource_provider_generation', None)
    return models.Inventory.build(**fields)


def _read_inventories(req, state):
    return common.read_provider(
        req, state.get_inventories,
        'No resource provider with uuid %s found : %s')


def _reserved_can_be_total(req):
    return req.version.matches((1, 26))


def _inventories_response(req, generation, inventories, last_modified):
    body = {'resource_provider_generation': generation,
            'inventories': collections.OrderedDict(
                (rc, _serialize(inv)) for rc, inv in inventories.items())}
    return common.cache_headers(req, wsgi.json_response(body),
                                last_modified)


def index(req, state):
    """``GET /resource_providers/{uuid}/inventories``.

    :param req: the request (path: ``uuid``).
    :param state: the placement state.
    :raises: NotAcceptable, NotFound.
    """
    common.check_accept(req)
    uuid, (generation, inventories) = _read_inventories(req, state)
    return _inventories_response(req, generation, inventories,
                                 state.inventory_last_modified(uuid))


def _write_request(req, state, schema):
    """Check a write's content type, provider and body, in that order.

    :returns: ``(uuid, body)``
    :raises: UnsupportedMediaType, BadRequest; unknown uuid: 404.
    """
    common.require_json(req)
    uuid = req.params['uuid']
    state.get_provider(uuid)
    return uuid, validation.extract_json(req.body, schema)


@contextlib.contextmanager
def _update_refusals(uuid):
    """Placement's answers to what refuses any inventory update."""
    try:
        yield
    except exception.ProviderGenerationConflict as exc:
        raise errors.Conflict(str(exc), code=errors.CONCURRENT_UPDATE)
    except exception.InvalidInventoryCapacity as exc:
        raise errors.BadRequest(
            'Unable to update inventory for resource provider %s: %s'
            % (uuid, exc))


def replace(req, state):
    """``PUT /resource_providers/{uuid}/inventories``: set them all.

    :param req: the request (path: ``uuid``).
    :param state: the placement state.
    :raises: UnsupportedMediaType, BadRequest, Conflict; unknown uuid: 404.
    """
    uuid, data = _write_request(req, state, schemas.PUT_INVENTORIES)
    wanted = collections.OrderedDict(
        (rc, _build(fields))
        for rc, fields in data['inventories'].items())
    try:
        with _update_refusals(uuid):
            generation = state.set_inventories(
                uuid, data['resource_provider_generation'], wanted,
                reserved_can_be_total=_reserved_can_be_total(req))
    except exception.InventoryInUse as exc:
        raise errors.Conflict('update conflict: %s' % exc,
                              code=errors.INVENTORY_INUSE)
    except exception.ResourceClassNotFound as exc:
        raise errors.BadRequest(
            'Unknown resource class in inventory for resource provider '
            '%s: %s' % (uuid, exc))
    # Dated now, as placement dates new rows; no rows, no date.
    return _inventories_response(req, generation, wanted,
                                 models.utcnow() if wanted else None)


def create(req, state):
    """``POST /resource_providers/{uuid}/inventories``: add one class.

    :param req: the request (path: ``uuid``).
    :param state: the placement state.
    :raises: UnsupportedMediaType, BadRequest, Conflict; unknown uuid: 404.
    """
    uuid, data = _write_request(req, state, schemas.POST_INVENTORY)
    resource_class = data.pop('resource_class')
    inventory = _build(data)
    try:
        generation = state.add_inventory(
            uuid, resource_class, inventory,
            reserved_can_be_total=_reserved_can_be_total(req))
    except exception.InventoryExists as exc:
        raise errors.Conflict('Update conflict: %s' % exc,
                              code=errors.CONCURRENT_UPDATE)
    except (exception.InvalidInventoryCapacity, exception.NotFound) as exc:
        raise errors.BadRequest(
            'Unable to create inventory for resource provider %s: %s'
            % (uuid, exc))
    response = wsgi.json_response(_serialize(inventory, generation), 201)
    response.add_header('Location', '%s%s/inventories/%s' % (
        req.host_url, common.provider_url(req, uuid), resource_class))
    return common.cache_headers(req, response)


def delete_all(req, state):
    """``DELETE /resource_providers/{uuid}/inventories`` (1.5 and later).

    :param req: the request (path: ``uuid``).
    :param state: the placement state.
    :raises: MethodNotAllowed (before 1.5), Conflict; unknown uuid: 404.
    """
    common.require_version(req, (1, 5), status=405)
    uuid = req.params['uuid']
    try:
        state.set_inventories(uuid, None, {})
    except exception.InventoryInUse as exc:
        raise errors.Conflict(str(exc), code=errors.INVENTORY_INUSE)
    return wsgi.empty_response()


def show(req, state):
    """``GET /resource_providers/{uuid}/inventories/{resource_class}``.

    :param req: the request (path: ``uuid, resource_class``).
    :param state: the placement state.
    :raises: NotAcceptable, NotFound.
    """
    common.check_accept(req)
    uuid, (generation, inventories) = _read_inventories(req, state)
    resource_class = req.params['resource_class']
    if resource_class not in inventories:
        raise errors.NotFound('No inventory of class %s for %s'
                              % (resource_class, uuid))
    return common.cache_headers(
        req,
        wsgi.json_response(_serialize(inventories[resource_class],
                                      generation)),
        state.inventory_last_modified(uuid, resource_class))


def update(req, state):
    """``PUT /resource_providers/{uuid}/inventories/{resource_class}``.

    An unknown resource class is a plain 404, as in placement.

    :param req: the request (path: ``uuid, resource_class``).
    :param state: the placement state.
    :raises: UnsupportedMediaType, BadRequest, Conflict; unknown uuid or class:
        404.
    """
    resource_class = req.params['resource_class']
    uuid, data = _write_request(req, state, schemas.INVENTORY)
    inventory = _build(data)
    try:
        with _update_refusals(uuid):
            generation = state.update_inventory(
                uuid, data['resource_provider_generation'], resource_class,
                inventory, reserved_can_be_total=_reserved_can_be_total(req))
    except exception.InventoryNotFound as exc:
        raise errors.BadRequest(
            'No inventory record with resource class for resource provider '
            '%s: %s' % (uuid, exc))
    return common.cache_headers(
        req, wsgi.json_response(_serialize(inventory, generation)))


def delete(req, state):
    """``DELETE /resource_providers/{uuid}/inventories/{resource_class}``.

    :param req: the request (path: ``uuid, resource_class``).
    :param state: the placement state.
    :raises: NotFound, Conflict; unknown uuid: 404.
    """
    uuid = req.params['uuid']
    resource_class = req.params['resource_class']
    state.get_provider(uuid)
    try:
        state.delete_inventory(uuid, resource_class)
    except exception.InventoryInUse as exc:
        raise errors.Conflict(
            'Unable to delete inventory of class %s: %s'
            % (resource_class, exc), code=errors.CONCURRENT_UPDATE)
    except exception.NotFound as exc:
        raise errors.NotFound('No inventory of class %s found for delete: %s'
                              % (resource_class, exc))
    return wsgi.empty_response()
