"""The parts of nova's RequestSpec that an unshelve or a move reads."""


class RequestSpec(object):
    """What the scheduler knows about the request it is placing.

    :param instance_uuid: the instance being scheduled
    :param project_id: project to charge the allocations to
    :param user_id: user to charge the allocations to (may be None)
    :param flavor: the instance's flavor
    :param scheduler_hints: nova's hints; ``_nova_check_type: ['rebuild']``
        marks a rebuild-only request
    :ivar ignore_hosts: hosts the scheduler may not choose (a cold
        migration's source, which the API adds)
    :ivar root_required: traits the chosen root provider must have (request
        filters add to it)
    :ivar root_forbidden: traits it must not have
    """

    def __init__(self, instance_uuid, project_id, user_id=None, flavor=None,
                 scheduler_hints=None):
        self.instance_uuid = instance_uuid
        self.project_id = project_id
        self.user_id = user_id
        self.flavor = flavor
        self.scheduler_hints = scheduler_hints or {}
        self.ignore_hosts = []
        self.root_required = set()
        self.root_forbidden = set()

    def ensure_project_and_user_id(self, instance):
        """Fill in the project and user from the instance if missing."""
        if self.project_id is None:
            self.project_id = instance.project_id
        if self.user_id is None:
            self.user_id = instance.user_id

    def to_legacy_filter_properties_dict(self):
        """The filter properties the compute side reads (``limits``)."""
        return {'limits': {}}

    @classmethod
    def from_instance(cls, instance):
        """Build the spec nova would build for unshelving ``instance``."""
        return cls(instance.uuid, instance.project_id, instance.user_id,
                   instance.flavor)
