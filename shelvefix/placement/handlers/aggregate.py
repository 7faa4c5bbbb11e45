"""``/resource_providers/{uuid}/aggregates`` (microversion 1.1 on).

Before 1.19 a PUT sends the bare list of aggregate uuids and leaves the
provider generation alone; from 1.19 it sends ``{"aggregates": [...],
"resource_provider_generation": N}``, must name the current generation
and moves it. Answers carry the generation from 1.19 on, and the cache
headers from 1.15 on (placement stamps them with the current time: it
does not record when a provider joined an aggregate).
"""

from shelvefix.placement import errors
from shelvefix.placement import exception
from shelvefix.placement.handlers import common
from shelvefix.placement import schemas
from shelvefix.placement import validation
from shelvefix.placement import wsgi

AGGREGATES_VERSION = (1, 1)
GENERATION_VERSION = (1, 19)


def _response(req, aggregates, generation):
    body = {'aggregates': aggregates}
    if req.version.matches(GENERATION_VERSION):
        body['resource_provider_generation'] = generation
    return common.cache_headers(req, wsgi.json_response(body))


def for_provider(req, state):
    """``GET /resource_providers/{uuid}/aggregates``.

    :param req: the request (path: ``uuid``).
    :param state: the placement state.
    :raises: NotAcceptable, NotFound (before 1.1); an unknown provider
        escapes as a plain 404.
    """
    common.check_accept(req)
    common.require_version(req, AGGREGATES_VERSION)
    aggregates, generation = state.get_provider_aggregates(
        req.params['uuid'])
    return _response(req, aggregates, generation)


def replace_for_provider(req, state):
    """``PUT /resource_providers/{uuid}/aggregates``.

    The answer lists the aggregates as the request wrote them, in its
    order (a GET lists them in placement's order).

    :param req: the request (path: ``uuid``).
    :param state: the placement state.
    :raises: UnsupportedMediaType, NotFound (before 1.1), BadRequest,
        Conflict (stale generation); an unknown provider escapes as a
        plain 404 before the body is read.
    """
    common.require_json(req)
    common.require_version(req, AGGREGATES_VERSION)
    uuid = req.params['uuid']
    state.get_provider(uuid)
    with_generation = req.version.matches(GENERATION_VERSION)
    if with_generation:
        data = validation.extract_json(req.body,
                                       schemas.PUT_AGGREGATES_V1_19)
        aggregates = data['aggregates']
        generation = data['resource_provider_generation']
    else:
        aggregates = validation.extract_json(req.body,
                                             schemas.PUT_AGGREGATES_V1_1)
        generation = None
    try:
        generation = state.set_provider_aggregates(uuid, aggregates,
                                                   generation)
    except exception.ProviderGenerationConflict:
        raise errors.Conflict(
            "Resource provider's generation already changed. Please update "
            "the generation and try again.", code=errors.CONCURRENT_UPDATE)
    return _response(req, aggregates, generation)
