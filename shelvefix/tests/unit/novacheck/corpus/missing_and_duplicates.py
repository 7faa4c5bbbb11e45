"""What cannot be told, and what Python binds.

The class, the method, the state, a save or the free missing; a text
that does not parse; the method defined twice.
"""

from shelvefix.tests.unit.novacheck.corpus import edits
from shelvefix.tests.unit.novacheck.corpus import nova_34
from shelvefix.tests.unit.novacheck.corpus import registry
from shelvefix.tests.unit.novacheck.corpus import releases

FIXED = registry.FIXED
LEGACY = registry.LEGACY
UNKNOWN = registry.UNKNOWN
variant = registry.variant


@variant(UNKNOWN, 'There is no _shelve_offload_instance to read.')
def method_missing():
    """The method removed from the class."""
    return edits.replace_method(nova_34.MANAGER, '')


@variant(UNKNOWN, 'There is no ComputeManager class to read.')
def class_missing():
    """The class renamed."""
    return edits.rewrite(nova_34.MANAGER,
                         ('class ComputeManager(manager.Manager):',
                          'class ComputeWorker(manager.Manager):'))


@variant(UNKNOWN, 'vm_state is never set to SHELVED_OFFLOADED, so no save '
                  'can make it visible.')
def state_never_set():
    """nova 34.0.0 without the state assignment."""
    return edits.rewrite(nova_34.MANAGER, (nova_34.STATE, ''))


@variant(UNKNOWN, 'SHELVED_OFFLOADED is set but the instance is never '
                  'saved.')
def state_never_saved():
    """nova 34.0.0 without either save."""
    return edits.rewrite(nova_34.MANAGER, (nova_34.SAVE, ''),
                         (nova_34.NIL_SAVE, ''))


@variant(UNKNOWN, 'The allocations are never freed.')
def never_freed():
    """nova 34.0.0 without the free."""
    return edits.rewrite(nova_34.MANAGER, (nova_34.FREE, ''))


@variant(UNKNOWN, 'The file does not parse.')
def syntax_error():
    """nova 34.0.0 with a broken statement."""
    return edits.rewrite(
        nova_34.MANAGER, ('        instance.task_state = None\n',
                          '        instance.task_state = = None\n'))


def _twice(first, last):
    """``last``, its shelve-offload method preceded by ``first``'s."""
    name = '_shelve_offload_instance'
    first_lines = first.splitlines(keepends=True)
    start, end = edits.method_span(first_lines, name)
    return edits.insert_helpers(last, ''.join(first_lines[start:end]))


@variant(LEGACY, 'Python binds the later, legacy definition of the method, '
                 'which saves before it frees.')
def duplicate_method_last_legacy():
    """The method defined twice, the legacy order last."""
    return _twice(first=nova_34.MANAGER, last=releases.nova_34_0_0_reverted())


@variant(FIXED, 'Python binds the later, fixed definition of the method; '
                'the legacy one is dead.')
def duplicate_method_last_fixed():
    """The method defined twice, the fixed order last."""
    return _twice(first=releases.nova_34_0_0_reverted(), last=nova_34.MANAGER)
