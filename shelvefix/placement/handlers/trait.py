"""``/traits``, ``/traits/{name}`` and ``/resource_providers/{uuid}/traits``.

Every route appeared in microversion 1.6. ``GET /traits`` filters with
``name=in:A,B`` or ``name=startswith:P`` (another operator filters
nothing) and ``associated=true|false``; ``PUT /traits/{name}`` creates a
custom trait (201) or confirms it exists (204).
"""

import json

from shelvefix.placement import errors
from shelvefix.placement import exception
from shelvefix.placement.handlers import common
from shelvefix.placement import query
from shelvefix.placement import schemas
from shelvefix.placement import validation
from shelvefix.placement import wsgi

SINCE = (1, 6)


def _traits_response(req, traits, generation=None):
    body = {'traits': [trait.name for trait in traits]}
    if generation is not None:
        body['resource_provider_generation'] = generation
    return common.cache_headers(
        req, wsgi.json_response(body),
        common.newest(trait.last_modified for trait in traits))


def _name_filter(value):
    try:
        operator, operand = value.split(':', 1)
    except ValueError:
        raise errors.BadRequest(
            'Badly formatted name parameter. Expected name query string '
            'parameter in form: ?name=[in|startswith]:[name1,name2|prefix]. '
            'Got: "%s"' % value)
    if operator == 'in':
        return {'name_in': operand.split(',')}
    if operator == 'startswith':
        return {'prefix': operand}
    return {}


def index(req, state):
    """``GET /traits`` with the ``name`` and ``associated`` filters.

    :param req: the request.
    :param state: the placement state.
    :raises: NotFound (before 1.6), NotAcceptable, BadRequest.
    """
    common.require_version(req, SINCE)
    common.check_accept(req)
    params = req.query
    validation.validate_query(params, query.LIST_TRAITS)
    filters = {}
    if 'name' in params:
        filters = _name_filter(params['name'])
    if 'associated' in params:
        associated = params['associated'].lower()
        if associated not in ('true', 'false'):
            raise errors.BadRequest(
                'The query parameter "associated" only accepts "true" or '
                '"false"')
        filters['associated'] = associated == 'true'
    return _traits_response(req, state.list_traits(**filters))


def show(req, state):
    """``GET /traits/{name}``: 204 if the trait exists.

    :param req: the request (path: ``name``).
    :param state: the placement state.
    :raises: NotFound (before 1.6, or no such trait).
    """
    common.require_version(req, SINCE)
    try:
        trait = state.get_trait(req.params['name'])
    except exception.TraitNotFound as exc:
        raise errors.NotFound(str(exc))
    return common.cache_headers(req, wsgi.empty_response(),
                                trait.last_modified)


def update(req, state):
    """``PUT /traits/{name}``: create a custom trait unless it exists.

    :param req: the request (path: ``name``).
    :param state: the placement state.
    :raises: NotFound (before 1.6), BadRequest (not a custom trait name).
    """
    common.require_version(req, SINCE)
    name = req.params['name']
    try:
        validation.extract_json(json.dumps(name).encode('utf-8'),
                                schemas.CUSTOM_TRAIT)
    except errors.BadRequest:
        raise errors.BadRequest(
            'The trait is invalid. A valid trait must be no longer than 255 '
            'characters, start with the prefix "CUSTOM_" and use following '
            'characters: "A"-"Z", "0"-"9" and "_"')
    trait, created = state.ensure_trait(name)
    response = wsgi.empty_response(201 if created else 204)
    response.add_header('Location', '%s%s/traits/%s' % (
        req.host_url, req.script_name, trait.name))
    return common.cache_headers(req, response, trait.last_modified)


def delete(req, state):
    """``DELETE /traits/{name}`` of a custom trait no provider has.

    :param req: the request (path: ``name``).
    :param state: the placement state.
    :raises: NotFound (before 1.6, or no such trait), BadRequest
        (standard trait), Conflict (in use).
    """
    common.require_version(req, SINCE)
    try:
        state.delete_trait(req.params['name'])
    except exception.TraitNotFound as exc:
        raise errors.NotFound(str(exc))
    except exception.TraitCannotDeleteStandard as exc:
        raise errors.BadRequest(str(exc))
    except exception.TraitInUse as exc:
        raise errors.Conflict(str(exc))
    return wsgi.empty_response()


def for_provider(req, state):
    """``GET /resource_providers/{uuid}/traits``.

    :param req: the request (path: ``uuid``).
    :param state: the placement state.
    :raises: NotFound (before 1.6, or no such provider), NotAcceptable.
    """
    common.require_version(req, SINCE)
    common.check_accept(req)
    _uuid, (generation, traits) = common.read_provider(
        req, state.provider_traits,
        'No resource provider with uuid %s found: %s')
    return _traits_response(req, traits, generation)


def replace_for_provider(req, state):
    """``PUT /resource_providers/{uuid}/traits``: set a provider's traits.

    :param req: the request (path: ``uuid``).
    :param state: the placement state.
    :raises: NotFound (before 1.6), UnsupportedMediaType, BadRequest
        (body, unknown traits), Conflict (stale generation); an unknown
        provider escapes as a plain 404.
    """
    common.require_version(req, SINCE)
    common.require_json(req)
    data = validation.extract_json(req.body, schemas.SET_PROVIDER_TRAITS)
    try:
        generation, traits = state.set_provider_traits(
            req.params['uuid'], data['resource_provider_generation'],
            data['traits'])
    except exception.ProviderGenerationConflict:
        raise errors.Conflict(
            "Resource provider's generation already changed. Please update "
            "the generation and try again.", code=errors.CONCURRENT_UPDATE)
    except exception.TraitNotFound as exc:
        raise errors.BadRequest('No such trait %s' % exc.kwargs['name'])
    return _traits_response(req, traits, generation)


def delete_for_provider(req, state):
    """``DELETE /resource_providers/{uuid}/traits``: remove them all.

    :param req: the request (path: ``uuid``).
    :param state: the placement state.
    :raises: NotFound (before 1.6); an unknown provider escapes as a
        plain 404.
    """
    common.require_version(req, SINCE)
    state.clear_provider_traits(req.params['uuid'])
    return wsgi.empty_response()
