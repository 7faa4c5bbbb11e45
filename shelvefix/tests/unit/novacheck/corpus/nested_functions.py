"""Nested functions and lambdas that free or save.

Defined early and called before or after the free, never called, or
handed to the driver.
"""

from shelvefix.tests.unit.novacheck.corpus import edits
from shelvefix.tests.unit.novacheck.corpus import registry

FIXED = registry.FIXED
LEGACY = registry.LEGACY
UNKNOWN = registry.UNKNOWN
variant = registry.variant


@variant(FIXED, 'The nested function that saves is defined early but '
                'called only after the free.')
def nested_save_called_after_free():
    """A nested function holding the state change and save."""
    return edits.with_method('''\
        def _record_offloaded():
            instance.vm_state = vm_states.SHELVED_OFFLOADED
            instance.task_state = None
            instance.save(expected_task_state=task_states.SHELVING_OFFLOADING)

        self.driver.destroy(context, instance, None, None)
        self.rt.delete_allocation_for_shelve_offloaded_instance(
            context, instance)
        _record_offloaded()
''')


@variant(LEGACY, 'The nested function saving SHELVED_OFFLOADED is called '
                 'before the free.')
def nested_save_called_before_free():
    """The same nested function, called before the free."""
    return edits.with_method('''\
        def _record_offloaded():
            instance.vm_state = vm_states.SHELVED_OFFLOADED
            instance.task_state = None
            instance.save(expected_task_state=task_states.SHELVING_OFFLOADING)

        self.driver.destroy(context, instance, None, None)
        _record_offloaded()
        self.rt.delete_allocation_for_shelve_offloaded_instance(
            context, instance)
''')


@variant(FIXED, 'The nested function that frees is called before the '
                'save.')
def nested_free_called_before_save():
    """A nested function holding the free, called first."""
    return edits.with_method('''\
        def _free_allocations():
            self.rt.delete_allocation_for_shelve_offloaded_instance(
                context, instance)

        self.driver.destroy(context, instance, None, None)
        _free_allocations()
''' + edits.STATE_AND_SAVE)


@variant(UNKNOWN, 'The only free is in a nested function that is never '
                  'called.')
def nested_free_never_called():
    """A nested function holding the free, never called."""
    return edits.with_method('''\
        def _free_allocations():
            self.rt.delete_allocation_for_shelve_offloaded_instance(
                context, instance)

        self.driver.destroy(context, instance, None, None)
''' + edits.STATE_AND_SAVE)


@variant(UNKNOWN, 'The driver may call the saving lambda at any time, '
                  'SHELVED_OFFLOADED already set, before the free.')
def lambda_save_passed_to_driver():
    """A lambda that saves handed to the driver before the free."""
    return edits.with_method('''\
        instance.vm_state = vm_states.SHELVED_OFFLOADED
        instance.task_state = None
        self.driver.destroy(context, instance, None, None,
                            on_cleanup=lambda: instance.save())
        self.rt.delete_allocation_for_shelve_offloaded_instance(
            context, instance)
        instance.save(expected_task_state=task_states.SHELVING_OFFLOADING)
''')


@variant(FIXED, 'The lambda that frees is called before the save.')
def lambda_free_called():
    """A lambda that frees, called directly."""
    return edits.with_method('''\
        free_allocations = lambda: (
            self.rt.delete_allocation_for_shelve_offloaded_instance(
                context, instance))
        self.driver.destroy(context, instance, None, None)
        free_allocations()
''' + edits.STATE_AND_SAVE)
