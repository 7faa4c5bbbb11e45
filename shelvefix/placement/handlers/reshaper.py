"""``POST /reshaper``.

(Being written: the routes answer 501 until then.)
"""

from shelvefix.placement import errors
from shelvefix.placement.handlers import common


def _not_yet(since):
    def handler(req, state):
        common.require_version(req, since)
        raise errors.NotImplementedInDouble(
            '%s %s is not implemented by the placement double.'
            % (req.method, req.path))
    return handler


reshape = _not_yet((1, 30))
