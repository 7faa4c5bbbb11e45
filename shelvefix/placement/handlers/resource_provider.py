"""``/resource_providers`` and ``/resource_providers/{uuid}``."""

import uuid as uuidlib

from shelvefix.placement import errors
from shelvefix.placement import exception
from shelvefix.placement.handlers import common
from shelvefix.placement import query
from shelvefix.placement import schemas
from shelvefix.placement import validation
from shelvefix.placement import wsgi

# The link relations a provider shows, and the microversion each appeared.
_LINKS = (('inventories', (1, 0)), ('usages', (1, 0)),
          ('aggregates', (1, 1)), ('traits', (1, 6)),
          ('allocations', (1, 11)))


def serialize(req, provider):
    """The JSON representation of a provider at the request's version.

    :param req: the request.
    :param provider: a :class:`~shelvefix.placement.objects.models.Provider`.
    """
    url = common.provider_url(req, provider.uuid)
    links = [{'rel': 'self', 'href': url}]
    links.extend({'rel': rel, 'href': '%s/%s' % (url, rel)}
                 for rel, since in _LINKS if req.version.matches(since))
    data = {'uuid': provider.uuid, 'name': provider.name,
            'generation': provider.generation, 'links': links}
    if req.version.matches((1, 14)):
        data['parent_provider_uuid'] = provider.parent_provider_uuid
        data['root_provider_uuid'] = provider.root_provider_uuid
    return data


def create(req, state):
    """``POST /resource_providers``.

    201 with only a Location header before 1.20, 200 with the provider
    from 1.20 on.

    :param req: the request.
    :param state: the placement state.
    :raises: BadRequest, UnsupportedMediaType, Conflict (duplicate name or
        uuid).
    """
    common.require_json(req)
    schema = schemas.POST_PROVIDER
    if req.version.matches((1, 14)):
        schema = schemas.POST_PROVIDER_V1_14
    data = validation.extract_json(req.body, schema)
    uuid = data.get('uuid')
    uuid = validation.normalize_uuid(uuid) if uuid else str(uuidlib.uuid4())
    try:
        provider = state.create_provider(
            data['name'], uuid, data.get('parent_provider_uuid'))
    except (exception.ProviderNameExists, exception.ProviderUuidExists) as e:
        raise errors.Conflict(str(e), code=errors.DUPLICATE_NAME)
    except exception.ProviderActionError as exc:
        raise errors.BadRequest(
            'Unable to create resource provider "%s", %s: %s'
            % (data['name'], uuid, exc))
    location = req.host_url + common.provider_url(req, provider.uuid)
    if req.version.matches((1, 20)):
        response = wsgi.json_response(serialize(req, provider))
        common.cache_headers(req, response)
    else:
        response = wsgi.empty_response(201)
    response.add_header('Location', location)
    return response


def show(req, state):
    """``GET /resource_providers/{uuid}``; an unknown uuid is a 404.

    :param req: the request (path: ``uuid``).
    :param state: the placement state.
    :raises: NotAcceptable; an unknown uuid escapes as a plain 404.
    """
    common.check_accept(req)
    uuid = req.params['uuid']
    provider = state.get_provider(uuid)
    return common.cache_headers(
        req, wsgi.json_response(serialize(req, provider)),
        state.provider_last_modified(uuid))


def index(req, state):
    """``GET /resource_providers``, filtered.

    Filters: ``name``, ``uuid``; ``member_of`` (1.3; repeated from 1.24,
    forbidden ``!`` forms from 1.32); ``resources`` (1.4); ``in_tree``
    (1.14); ``required`` (1.18; forbidden ``!`` traits from 1.22, ``in:``
    and repeated from 1.39).

    :param req: the request.
    :param state: the placement state.
    :raises: NotAcceptable, BadRequest (a bad or unknown filter value).
    """
    common.check_accept(req)
    params = req.query
    validation.validate_query(params, query.list_providers(req.version))
    filters = {}
    if 'member_of' in params:
        filters['member_of'], filters['forbidden_aggregates'] = (
            query.member_of_params(req))
    if 'required' in params:
        filters['required_traits'], filters['forbidden_traits'] = (
            query.required_params(req))
    if 'resources' in params:
        filters['resources'] = query.resources(params['resources'])
    try:
        providers = state.list_providers(
            name=params.get('name'), uuid=params.get('uuid'),
            in_tree=params.get('in_tree'), **filters)
    except exception.ResourceClassNotFound as exc:
        raise errors.BadRequest(
            'Invalid resource class in resources parameter: %s' % exc)
    except exception.TraitNotFound as exc:
        raise errors.BadRequest(
            'Invalid trait(s) in "required" parameter: %s' % exc)
    body = {'resource_providers': [serialize(req, rp) for rp in providers]}
    stamps = [state.provider_last_modified(rp.uuid) for rp in providers]
    return common.cache_headers(req, wsgi.json_response(body),
                                common.newest(stamps))


def update(req, state):
    """``PUT /resource_providers/{uuid}``: name and parent.

    Changing or removing an existing parent needs microversion 1.37.

    :param req: the request (path: ``uuid``).
    :param state: the placement state.
    :raises: UnsupportedMediaType, BadRequest, Conflict; unknown uuid: 404.
    """
    common.require_json(req)
    uuid = req.params['uuid']
    current = state.get_provider(uuid)
    schema = schemas.PUT_PROVIDER
    if req.version.matches((1, 14)):
        schema = schemas.PUT_PROVIDER_V1_14
    data = validation.extract_json(req.body, schema)
    parent = data.get('parent_provider_uuid', current.parent_provider_uuid)
    try:
        provider = state.update_provider(
            uuid, data['name'], parent,
            allow_reparenting=req.version.matches((1, 37)))
    except exception.ProviderNameExists:
        raise errors.Conflict(
            'Conflicting resource provider %s already exists.'
            % data['name'], code=errors.DUPLICATE_NAME)
    except exception.ProviderActionError as exc:
        raise errors.BadRequest(
            'Unable to save resource provider %s: %s' % (uuid, exc))
    return common.cache_headers(
        req, wsgi.json_response(serialize(req, provider)),
        state.provider_last_modified(uuid))


def delete(req, state):
    """``DELETE /resource_providers/{uuid}``.

    :param req: the request (path: ``uuid``).
    :param state: the placement state.
    :raises: NotFound, Conflict (in use, has children).
    """
    uuid = req.params['uuid']
    try:
        state.delete_provider(uuid)
    except exception.ResourceProviderNotFound:
        raise errors.NotFound(
            'No resource provider with uuid %s found for delete' % uuid)
    except exception.ResourceProviderInUse as exc:
        raise errors.Conflict(
            'Unable to delete resource provider %s: %s' % (uuid, exc),
            code=errors.PROVIDER_IN_USE)
    except exception.CannotDeleteParentResourceProvider:
        raise errors.Conflict(
            'Unable to delete parent resource provider %s: It has child '
            'resource providers.' % uuid,
            code=errors.PROVIDER_CANNOT_DELETE_PARENT)
    return wsgi.empty_response()
