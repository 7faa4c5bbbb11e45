"""Instance vm_state values of the shelve and move paths (nova's strings)."""

from shelvefix.compute import task_states

ACTIVE = 'active'
#: A server the API accepted, until its build ends.
BUILDING = 'building'
STOPPED = 'stopped'
ERROR = 'error'
RESIZED = 'resized'
SHELVED = 'shelved'
SHELVED_OFFLOADED = 'shelved_offloaded'
DELETED = 'deleted'

ALL_STATES = (ACTIVE, BUILDING, STOPPED, ERROR, RESIZED, SHELVED,
              SHELVED_OFFLOADED, DELETED)


def allow_resource_removal(vm_state, task_state=None):
    """True if the resource tracker may stop counting the instance.

    A deleted instance uses nothing. An offloaded one no longer uses its
    host's resources, unless an unshelve is spawning it again: then it is
    the node's (bug 2025480 counted it as free while it spawned).
    """
    return (vm_state == DELETED or
            vm_state == SHELVED_OFFLOADED and
            task_state != task_states.SPAWNING)
