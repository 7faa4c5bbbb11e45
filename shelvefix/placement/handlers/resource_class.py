"""``/resource_classes`` and ``/resource_classes/{name}`` (1.2 and later).

``PUT /resource_classes/{name}`` renames a custom class up to microversion
1.6; from 1.7 it creates the class named in the path (201), or confirms
it exists (204), and ignores any body. An unknown class is a plain 404
(raised outside the handlers, as in placement), except for ``PUT`` from
1.7.
"""

from shelvefix.placement import errors
from shelvefix.placement import exception
from shelvefix.placement.handlers import common
from shelvefix.placement import schemas
from shelvefix.placement import validation
from shelvefix.placement import wsgi

SINCE = (1, 2)
# From this microversion PUT creates the class named in the path.
PUT_CREATES = (1, 7)


def class_url(req, name):
    """The relative URL of a resource class, below the mount point.

    :param req: the request.
    :param name: the resource class.
    """
    return '%s/resource_classes/%s' % (req.script_name, name)


def _serialize(req, name):
    return {'name': name,
            'links': [{'rel': 'self', 'href': class_url(req, name)}]}


def _located(req, status, name):
    response = wsgi.empty_response(status)
    response.add_header('Location', req.host_url + class_url(req, name))
    return response


def index(req, state):
    """``GET /resource_classes``: every class, standard ones first.

    :param req: the request.
    :param state: the placement state.
    :raises: NotFound (before 1.2), NotAcceptable.
    """
    common.require_version(req, SINCE)
    common.check_accept(req)
    classes = state.list_resource_classes()
    body = {'resource_classes': [_serialize(req, rc.name)
                                 for rc in classes]}
    return common.cache_headers(
        req, wsgi.json_response(body),
        common.newest(rc.last_modified for rc in classes))


def create(req, state):
    """``POST /resource_classes``: 201 with a Location and no body.

    :param req: the request.
    :param state: the placement state.
    :raises: NotFound (before 1.2), UnsupportedMediaType, BadRequest,
        Conflict (the class exists).
    """
    common.require_version(req, SINCE)
    common.require_json(req)
    name = validation.extract_json(req.body,
                                   schemas.RESOURCE_CLASS)['name']
    try:
        state.create_resource_class(name)
    except exception.ResourceClassExists:
        raise errors.Conflict(
            'Conflicting resource class already exists: %s' % name)
    return _located(req, 201, name)


def show(req, state):
    """``GET /resource_classes/{name}``.

    :param req: the request (path: ``name``).
    :param state: the placement state.
    :raises: NotFound (before 1.2), NotAcceptable; an unknown class
        escapes as a plain 404.
    """
    common.require_version(req, SINCE)
    common.check_accept(req)
    resource_class = state.get_resource_class(req.params['name'])
    return common.cache_headers(
        req, wsgi.json_response(_serialize(req, resource_class.name)),
        resource_class.last_modified)


def update(req, state):
    """``PUT /resource_classes/{name}``: rename (1.2-1.6), ensure (1.7+).

    :param req: the request (path: ``name``).
    :param state: the placement state.
    :raises: NotFound (before 1.2), UnsupportedMediaType (before 1.7),
        BadRequest, Conflict; an unknown class escapes as a plain 404.
    """
    common.require_version(req, SINCE)
    if req.version.matches(PUT_CREATES):
        return _ensure(req, state)
    common.require_json(req)
    name = req.params['name']
    new_name = validation.extract_json(req.body,
                                       schemas.RESOURCE_CLASS)['name']
    try:
        renamed = state.rename_resource_class(name, new_name)
    except exception.ResourceClassExists:
        raise errors.Conflict('Resource class already exists: %s'
                              % new_name)
    except exception.ResourceClassCannotUpdateStandard:
        raise errors.BadRequest('Cannot update standard resource class %s'
                                % name)
    return wsgi.json_response(_serialize(req, renamed.name))


def _ensure(req, state):
    name = req.params['name']
    # Placement checks the name by pasting it into a JSON document, so a
    # name that breaks the JSON is refused as malformed JSON.
    validation.extract_json(('{"name": "%s"}' % name).encode('utf-8'),
                            schemas.RESOURCE_CLASS)
    resource_class, created = state.ensure_resource_class(name)
    return _located(req, 201 if created else 204, resource_class.name)


def delete(req, state):
    """``DELETE /resource_classes/{name}`` of an unused custom class.

    :param req: the request (path: ``name``).
    :param state: the placement state.
    :raises: NotFound (before 1.2), BadRequest (standard class), Conflict
        (in use by inventories); an unknown class escapes as a plain 404.
    """
    common.require_version(req, SINCE)
    try:
        state.delete_resource_class(req.params['name'])
    except exception.ResourceClassCannotDeleteStandard as exc:
        raise errors.BadRequest('Error in delete resource class: %s' % exc)
    except exception.ResourceClassInUse as exc:
        raise errors.Conflict('Error in delete resource class: %s' % exc)
    return wsgi.empty_response()
