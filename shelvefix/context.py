"""A minimal request context with the attributes nova's code paths read."""

import uuid


def generate_request_id():
    """Return a request id in the ``req-<uuid>`` form of OpenStack."""
    return 'req-%s' % uuid.uuid4()


class RequestContext(object):
    """Identity and request ids for one operation.

    Only what the shelve-offload and claim code paths read is modelled:
    ``user_id``, ``project_id`` and ``global_id`` (sent to placement as the
    ``X-OpenStack-Request-ID`` header).
    """

    def __init__(self, user_id=None, project_id=None, request_id=None,
                 global_request_id=None):
        self.user_id = user_id
        self.project_id = project_id
        self.request_id = request_id or generate_request_id()
        self.global_request_id = global_request_id

    @property
    def global_id(self):
        """The id to propagate to other services, as nova does."""
        return self.global_request_id or self.request_id

    def elevated(self):
        """A copy for admin work on the same request (same ids)."""
        return RequestContext(self.user_id, self.project_id, self.request_id,
                              self.global_request_id)

    def __repr__(self):
        return ('RequestContext(user_id=%r, project_id=%r, global_id=%r)'
                % (self.user_id, self.project_id, self.global_id))


def get_admin_context():
    """Return a context for service-initiated work (no user, no project)."""
    return RequestContext()
