"""Early returns, early saves and exception handlers.

Paths that set or save ``SHELVED_OFFLOADED`` before the free and leave
the method, or save something else first.
"""

from shelvefix.tests.unit.novacheck.corpus import edits
from shelvefix.tests.unit.novacheck.corpus import registry

FIXED = registry.FIXED
LEGACY = registry.LEGACY
variant = registry.variant


@variant(LEGACY, 'When the instance has no host the method saves '
                 'SHELVED_OFFLOADED and returns without ever freeing.')
def early_return_path_saves_offloaded():
    """A shortcut for host-less instances saves the state and returns."""
    return edits.with_method('''\
        if instance.host is None:
            # Nothing left on a hypervisor: only record the new state.
            instance.vm_state = vm_states.SHELVED_OFFLOADED
            instance.task_state = None
            instance.save(expected_task_state=task_states.SHELVING_OFFLOADING)
            return
        self._power_off_instance(context, instance, clean_shutdown)
        self.driver.destroy(context, instance, None, None)
        self.rt.delete_allocation_for_shelve_offloaded_instance(
            context, instance)
        instance.vm_state = vm_states.SHELVED_OFFLOADED
        instance.task_state = None
        instance.save(expected_task_state=task_states.SHELVING_OFFLOADING)
        self._nil_out_instance_obj_host_and_node(instance)
        instance.save(expected_task_state=None)
''')


@variant(LEGACY, 'With volumes, the state set early is saved inside the '
                 'if, before the free.')
def conditional_early_save():
    """The state set first and saved early when the instance has volumes."""
    return edits.with_method('''\
        self.driver.destroy(context, instance, None, None)
        instance.vm_state = vm_states.SHELVED_OFFLOADED
        instance.task_state = None
        if bdms:
            instance.save(expected_task_state=task_states.SHELVING_OFFLOADING)
            self._terminate_volume_connections(context, instance, bdms)
        self.rt.delete_allocation_for_shelve_offloaded_instance(
            context, instance)
        instance.save()
''')


@variant(FIXED, 'The early return happens before any state is set, and '
                'the remaining path frees before it saves.')
def early_return_before_state():
    """The method returns early for a host-less instance, saving nothing."""
    return edits.with_method('''\
        if not instance.host:
            LOG.warning('Instance has no host, nothing to offload',
                        instance=instance)
            return
        self.driver.destroy(context, instance, None, None)
        self.rt.delete_allocation_for_shelve_offloaded_instance(
            context, instance)
        instance.vm_state = vm_states.SHELVED_OFFLOADED
        instance.task_state = None
        instance.save(expected_task_state=task_states.SHELVING_OFFLOADING)
''')


@variant(FIXED, 'The branch that sets SHELVED_OFFLOADED returns without '
                'saving, so the early save only records the task state.')
def state_set_on_returning_branch():
    """The state set on a branch that returns; a progress save follows."""
    return edits.with_method('''\
        if instance.host is None:
            instance.vm_state = vm_states.SHELVED_OFFLOADED
            LOG.warning('Instance has no host', instance=instance)
            return
        instance.task_state = task_states.SHELVING_OFFLOADING
        instance.save(expected_task_state=task_states.SHELVING)
        self.driver.destroy(context, instance, None, None)
        self.rt.delete_allocation_for_shelve_offloaded_instance(
            context, instance)
        instance.vm_state = vm_states.SHELVED_OFFLOADED
        instance.task_state = None
        instance.save(expected_task_state=task_states.SHELVING_OFFLOADING)
''')


@variant(LEGACY, 'When the hypervisor no longer knows the instance, the '
                 'handler saves SHELVED_OFFLOADED and returns unfreed.')
def except_before_free_saves_offloaded():
    """An error before the free is handled by saving the offloaded state."""
    return edits.with_method('''\
        try:
            self.driver.destroy(context, instance, None, None)
        except exception.InstanceNotFound:
            LOG.info('Instance already gone from the hypervisor',
                     instance=instance)
            instance.vm_state = vm_states.SHELVED_OFFLOADED
            instance.task_state = None
            instance.save(expected_task_state=task_states.SHELVING_OFFLOADING)
            return
        self.rt.delete_allocation_for_shelve_offloaded_instance(
            context, instance)
        instance.vm_state = vm_states.SHELVED_OFFLOADED
        instance.task_state = None
        instance.save(expected_task_state=task_states.SHELVING_OFFLOADING)
''')


@variant(LEGACY, 'If the free fails, the handler saves the instance whose '
                 'vm_state is already SHELVED_OFFLOADED.')
def except_saves_early_state():
    """The state set first; a failed free is recorded by a save."""
    return edits.with_method('''\
        self.driver.destroy(context, instance, None, None)
        instance.vm_state = vm_states.SHELVED_OFFLOADED
        instance.task_state = None
        try:
            self.rt.delete_allocation_for_shelve_offloaded_instance(
                context, instance)
        except Exception:
            LOG.exception('Failed to free allocations', instance=instance)
            instance.save()
            raise
        instance.save(expected_task_state=task_states.SHELVING_OFFLOADING)
''')


@variant(FIXED, 'The handler saves the instance in ERROR, never '
                'SHELVED_OFFLOADED, and re-raises.')
def except_sets_error_state():
    """A failure anywhere is recorded as ERROR, then re-raised."""
    return edits.with_method('''\
        self.driver.destroy(context, instance, None, None)
        try:
            self.rt.delete_allocation_for_shelve_offloaded_instance(
                context, instance)
            instance.vm_state = vm_states.SHELVED_OFFLOADED
            instance.task_state = None
            instance.save(expected_task_state=task_states.SHELVING_OFFLOADING)
        except Exception:
            instance.vm_state = vm_states.ERROR
            instance.task_state = None
            instance.save()
            raise
        self._nil_out_instance_obj_host_and_node(instance)
        instance.save(expected_task_state=None)
''')
