"""``GET /resource_providers/{uuid}/usages`` and ``GET /usages``."""

from shelvefix.placement.handlers import common
from shelvefix.placement import query
from shelvefix.placement import validation
from shelvefix.placement import wsgi


def for_provider(req, state):
    """Usage of each inventory class of one provider, with its generation.

    :param req: the request.
    :param state: the placement state.
    :raises ~shelvefix.placement.errors.NotFound: unknown provider.
    """
    common.check_accept(req)
    _uuid, (generation, usages) = common.read_provider(
        req, state.provider_usages,
        'No resource provider with uuid %s found: %s')
    body = {'resource_provider_generation': generation, 'usages': usages}
    return common.cache_headers(req, wsgi.json_response(body))


def totals(req, state):
    """Usage of a project (1.9+), grouped by consumer type from 1.38.

    :param req: the request.
    :param state: the placement state.
    :raises ~shelvefix.placement.errors.NotFound: before microversion 1.9.
    :raises BadRequest: invalid query parameters.
    """
    common.require_version(req, (1, 9))
    common.check_accept(req)
    params = req.query
    by_type = req.version.matches((1, 38))
    validation.validate_query(
        params, query.USAGES_V1_38 if by_type else query.USAGES_V1_9)
    usages = state.total_usages(params['project_id'],
                                user_id=params.get('user_id'),
                                by_type=by_type,
                                consumer_type=params.get('consumer_type'))
    return common.cache_headers(req, wsgi.json_response({'usages': usages}))
