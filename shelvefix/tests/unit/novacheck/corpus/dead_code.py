"""Dead code: legacy saves that can never run."""

from shelvefix.tests.unit.novacheck.corpus import edits
from shelvefix.tests.unit.novacheck.corpus import registry

FIXED = registry.FIXED
variant = registry.variant


@variant(FIXED, 'The legacy save sits after an unconditional return and '
                'can never run.')
def dead_save_after_return():
    """A leftover legacy sequence after the method's return."""
    return edits.with_method('''\
        self.driver.destroy(context, instance, None, None)
        self.rt.delete_allocation_for_shelve_offloaded_instance(
            context, instance)
''' + edits.STATE_AND_SAVE + '''\
        return
        instance.vm_state = vm_states.SHELVED_OFFLOADED
        instance.save()
        self.rt.delete_allocation_for_shelve_offloaded_instance(
            context, instance)
''')


@variant(FIXED, 'The legacy save under "if False" can never run.')
def dead_save_under_if_false():
    """A disabled legacy save before the free."""
    return edits.with_method('''\
        self.driver.destroy(context, instance, None, None)
        if False:
            instance.vm_state = vm_states.SHELVED_OFFLOADED
            instance.save()
        self.rt.delete_allocation_for_shelve_offloaded_instance(
            context, instance)
''' + edits.STATE_AND_SAVE)
