"""Instance vm_state values used on the shelve path (nova's strings)."""

from shelvefix.compute import task_states

ACTIVE = 'active'
STOPPED = 'stopped'
ERROR = 'error'
SHELVED = 'shelved'
SHELVED_OFFLOADED = 'shelved_offloaded'

ALL_STATES = (ACTIVE, STOPPED, ERROR, SHELVED, SHELVED_OFFLOADED)


def allow_resource_removal(vm_state, task_state=None):
    """True if the resource tracker may stop counting the instance.

    An offloaded instance no longer uses its host's resources, unless it is
    being spawned again by an unshelve.
    """
    return (vm_state == SHELVED_OFFLOADED and
            task_state != task_states.SPAWNING)
