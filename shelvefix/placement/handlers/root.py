"""``GET /``: the version document."""

from shelvefix.placement.handlers import common
from shelvefix.placement import microversion
from shelvefix.placement import wsgi


def home(req, state):
    """Describe the single API version and its microversion range.

    :param req: the request.
    :param state: the placement state (unused).
    """
    minimum = microversion.min_version_string()
    document = {'versions': [{
        'id': 'v%s' % minimum,
        'max_version': microversion.max_version_string(),
        'min_version': minimum,
        'status': 'CURRENT',
        # Relative on purpose: placement does not know its public URL.
        'links': [{'rel': 'self', 'href': ''}],
    }]}
    return common.cache_headers(req, wsgi.json_response(document))
