"""Branches around the free.

if/else and if/elif/else chains, the free in an if test, a conditional
expression or the right operand of ``and``.
"""

from shelvefix.tests.unit.novacheck.corpus import edits
from shelvefix.tests.unit.novacheck.corpus import registry

FIXED = registry.FIXED
LEGACY = registry.LEGACY
variant = registry.variant


@variant(FIXED, 'Both branches free the instance before the save.')
def free_on_both_branches():
    """if/else, freeing through the tracker or the report client."""
    return edits.with_method('''\
        self.driver.destroy(context, instance, None, None)
        if instance.host == self.host:
            self.rt.delete_allocation_for_shelve_offloaded_instance(
                context, instance)
        else:
            self.reportclient.delete_allocation_for_instance(
                context, instance.uuid)
        instance.vm_state = vm_states.SHELVED_OFFLOADED
        instance.task_state = None
        instance.save(expected_task_state=task_states.SHELVING_OFFLOADING)
''')


@variant(LEGACY, 'An instance on another host reaches the save with its '
                 'allocations still in place.')
def free_on_one_branch():
    """The free only when the instance is on this host."""
    return edits.with_method('''\
        self.driver.destroy(context, instance, None, None)
        if instance.host == self.host:
            self.rt.delete_allocation_for_shelve_offloaded_instance(
                context, instance)
        instance.vm_state = vm_states.SHELVED_OFFLOADED
        instance.task_state = None
        instance.save(expected_task_state=task_states.SHELVING_OFFLOADING)
''')


@variant(FIXED, 'Every branch of the if/elif/else chain frees before the '
                'save.')
def elif_chain_all_free():
    """if/elif/else, each freeing its own way."""
    return edits.with_method('''\
        if accel_uuids:
            cyborg.get_client(context).delete_arqs_for_instance(
                instance.uuid)
            self.rt.delete_allocation_for_shelve_offloaded_instance(
                context, instance)
        elif instance.host == self.host:
            self.rt.delete_allocation_for_shelve_offloaded_instance(
                context, instance)
        else:
            self.reportclient.delete_allocation_for_instance(
                context, instance.uuid)
        instance.vm_state = vm_states.SHELVED_OFFLOADED
        instance.task_state = None
        instance.save(expected_task_state=task_states.SHELVING_OFFLOADING)
''')


@variant(LEGACY, 'The elif branch only logs, and its path saves '
                 'SHELVED_OFFLOADED unfreed.')
def elif_chain_one_misses():
    """if/elif/else where the elif branch forgets to free."""
    return edits.with_method('''\
        if accel_uuids:
            cyborg.get_client(context).delete_arqs_for_instance(
                instance.uuid)
            self.rt.delete_allocation_for_shelve_offloaded_instance(
                context, instance)
        elif instance.host != self.host:
            LOG.warning('Instance is not on this host', instance=instance)
        else:
            self.rt.delete_allocation_for_shelve_offloaded_instance(
                context, instance)
        instance.vm_state = vm_states.SHELVED_OFFLOADED
        instance.task_state = None
        instance.save(expected_task_state=task_states.SHELVING_OFFLOADING)
''')


@variant(FIXED, 'The branch without the free raises, so every save is '
                'preceded by the free.')
def free_guarded_else_raise():
    """The free under ``if instance.host``, the else branch raising."""
    return edits.with_method('''\
        if instance.host:
            self.rt.delete_allocation_for_shelve_offloaded_instance(
                context, instance)
        else:
            raise exception.InstanceNotFound(instance_id=instance.uuid)
        instance.vm_state = vm_states.SHELVED_OFFLOADED
        instance.task_state = None
        instance.save(expected_task_state=task_states.SHELVING_OFFLOADING)
''')


@variant(FIXED, 'The free is the if test itself, so it runs on both '
                'branches before the save.')
def free_in_if_test():
    """The report client's result tested by an if."""
    return edits.with_method('''\
        if not self.reportclient.delete_allocation_for_instance(
                context, instance.uuid):
            LOG.warning('No allocations to free', instance=instance)
        instance.vm_state = vm_states.SHELVED_OFFLOADED
        instance.task_state = None
        instance.save(expected_task_state=task_states.SHELVING_OFFLOADING)
''')


@variant(LEGACY, 'The conditional expression skips the free when the '
                 'instance has no host, and the save follows.')
def free_in_conditional_expression():
    """The free in one arm of a conditional expression."""
    return edits.with_method('''\
        deleted = (self.reportclient.delete_allocation_for_instance(
            context, instance.uuid) if instance.host else False)
        LOG.debug('Allocations deleted: %s', deleted, instance=instance)
        instance.vm_state = vm_states.SHELVED_OFFLOADED
        instance.task_state = None
        instance.save(expected_task_state=task_states.SHELVING_OFFLOADING)
''')


@variant(LEGACY, 'The "and" short-circuits past the free when the instance '
                 'has no host, and the save follows.')
def free_in_short_circuit():
    """The free as the right operand of ``and``."""
    return edits.with_method('''\
        instance.host and (
            self.rt.delete_allocation_for_shelve_offloaded_instance(
                context, instance))
        instance.vm_state = vm_states.SHELVED_OFFLOADED
        instance.task_state = None
        instance.save(expected_task_state=task_states.SHELVING_OFFLOADING)
''')
