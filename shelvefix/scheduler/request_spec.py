"""The parts of nova's RequestSpec that claiming resources reads."""


class RequestSpec(object):
    """What the scheduler knows about the request it is placing.

    :param instance_uuid: the instance being scheduled
    :param project_id: project to charge the allocations to
    :param user_id: user to charge the allocations to (may be None)
    :param flavor: the instance's flavor
    :param scheduler_hints: nova's hints; ``_nova_check_type: ['rebuild']``
        marks a rebuild-only request
    """

    def __init__(self, instance_uuid, project_id, user_id=None, flavor=None,
                 scheduler_hints=None):
        self.instance_uuid = instance_uuid
        self.project_id = project_id
        self.user_id = user_id
        self.flavor = flavor
        self.scheduler_hints = scheduler_hints or {}

    @classmethod
    def from_instance(cls, instance):
        """Build the spec nova would build for unshelving ``instance``."""
        return cls(instance.uuid, instance.project_id, instance.user_id,
                   instance.flavor)
