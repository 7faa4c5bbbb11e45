"""Other ways of setting the state.

``instance.update``, ``setattr``, ``_instance_update``, tuple assignment,
a string literal, a state reset before an early save, and a save of the
task state only.
"""

from shelvefix.tests.unit.novacheck.corpus import edits
from shelvefix.tests.unit.novacheck.corpus import registry

FIXED = registry.FIXED
LEGACY = registry.LEGACY
variant = registry.variant


def _state_then(statements, free_first):
    """The method freeing before or after ``statements``."""
    return edits.with_method(
        '        self.driver.destroy(context, instance, None, None)\n' +
        (edits.FREE + statements if free_first else statements + edits.FREE))


_UPDATE = '''\
        instance.update({'vm_state': vm_states.SHELVED_OFFLOADED,
                         'task_state': None})
        instance.save(expected_task_state=task_states.SHELVING_OFFLOADING)
'''
_SETATTR = '''\
        setattr(instance, 'vm_state', vm_states.SHELVED_OFFLOADED)
        setattr(instance, 'task_state', None)
        instance.save(expected_task_state=task_states.SHELVING_OFFLOADING)
'''
_INSTANCE_UPDATE = '''\
        self._instance_update(context, instance,
                              vm_state=vm_states.SHELVED_OFFLOADED,
                              task_state=None)
'''


@variant(FIXED, 'instance.update sets SHELVED_OFFLOADED after the free, '
                'and the save follows.')
def update_dict_fixed():
    """The state set with ``instance.update({...})`` after the free."""
    return _state_then(_UPDATE, free_first=True)


@variant(LEGACY, 'instance.update sets SHELVED_OFFLOADED and the save '
                 'comes before the free.')
def update_dict_legacy():
    """The state set with ``instance.update({...})``, saved, then freed."""
    return _state_then(_UPDATE, free_first=False)


@variant(FIXED, 'setattr sets SHELVED_OFFLOADED after the free, and the '
                'save follows.')
def setattr_fixed():
    """The state set with ``setattr`` after the free."""
    return _state_then(_SETATTR, free_first=True)


@variant(LEGACY, 'setattr sets SHELVED_OFFLOADED and the save comes before '
                 'the free.')
def setattr_legacy():
    """The state set with ``setattr``, saved, then freed."""
    return _state_then(_SETATTR, free_first=False)


@variant(FIXED, '_instance_update sets and saves SHELVED_OFFLOADED after '
                'the free.')
def instance_update_fixed():
    """The state set and saved by ``self._instance_update`` after the free."""
    return _state_then(_INSTANCE_UPDATE, free_first=True)


@variant(LEGACY, '_instance_update sets and saves SHELVED_OFFLOADED before '
                 'the free.')
def instance_update_legacy():
    """The state set and saved by ``self._instance_update``, then freed."""
    return _state_then(_INSTANCE_UPDATE, free_first=False)


@variant(LEGACY, '_instance_update saves every pending change, including '
                 'the SHELVED_OFFLOADED just assigned, before the free.')
def instance_update_other_field_saves_state():
    """The state assigned, then ``_instance_update`` given only task_state."""
    return edits.with_method('''\
        self.driver.destroy(context, instance, None, None)
        instance.vm_state = vm_states.SHELVED_OFFLOADED
        self._instance_update(context, instance, task_state=None)
        self.rt.delete_allocation_for_shelve_offloaded_instance(
            context, instance)
        self._nil_out_instance_obj_host_and_node(instance)
        instance.save(expected_task_state=None)
''')


@variant(FIXED, 'The early save writes vm_state SHELVED, reset from '
                'SHELVED_OFFLOADED; the offloaded state is saved after the '
                'free.')
def state_reset_before_early_save():
    """SHELVED_OFFLOADED set, reset to SHELVED for an early save."""
    return edits.with_method('''\
        self.driver.destroy(context, instance, None, None)
        instance.vm_state = vm_states.SHELVED_OFFLOADED
        instance.task_state = None
        # Not offloaded until placement is clean: record only the progress.
        instance.vm_state = vm_states.SHELVED
        instance.task_state = task_states.SHELVING_OFFLOADING
        instance.save(expected_task_state=task_states.SHELVING_OFFLOADING)
        self.rt.delete_allocation_for_shelve_offloaded_instance(
            context, instance)
''' + edits.STATE_AND_SAVE)


@variant(LEGACY, 'The tuple assignment sets vm_state to SHELVED_OFFLOADED, '
                 'saved before the free.')
def tuple_assignment_legacy():
    """The state set by unpacking a tuple, saved, then freed."""
    return edits.with_method('''\
        self.driver.destroy(context, instance, None, None)
        instance.vm_state, instance.task_state = (
            vm_states.SHELVED_OFFLOADED, None)
        instance.save(expected_task_state=task_states.SHELVING_OFFLOADING)
''' + edits.FREE)


@variant(LEGACY, 'The literal \'shelved_offloaded\' is the state\'s '
                 'value, and it is saved before the free.')
def state_as_string_legacy():
    """The state set as a string literal, saved, then freed."""
    return edits.with_method('''\
        self.driver.destroy(context, instance, None, None)
        instance.vm_state = 'shelved_offloaded'
        instance.task_state = None
        instance.save(expected_task_state=task_states.SHELVING_OFFLOADING)
''' + edits.FREE)


@variant(FIXED, 'The save before the free records only the task state; '
                'SHELVED_OFFLOADED is set and saved after it.')
def progress_save_before_state():
    """A task-state save before the free, the state saved after it."""
    return edits.with_method('''\
        instance.task_state = task_states.SHELVING_OFFLOADING
        instance.save(expected_task_state=task_states.SHELVING)
        self.driver.destroy(context, instance, None, None)
''' + edits.FREE + edits.STATE_AND_SAVE)
