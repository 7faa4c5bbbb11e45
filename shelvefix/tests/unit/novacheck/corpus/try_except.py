"""try / except / else / finally around the free or the save.

Handlers that log, re-raise, retry or return; the free or the save in a
``finally`` or ``else`` clause.
"""

from shelvefix.tests.unit.novacheck.corpus import edits
from shelvefix.tests.unit.novacheck.corpus import registry

FIXED = registry.FIXED
LEGACY = registry.LEGACY
variant = registry.variant


@variant(LEGACY, 'A failed free is logged and swallowed, and the failure '
                 'path saves SHELVED_OFFLOADED unfreed.')
def try_free_except_log():
    """The free in a try whose handler only logs."""
    return edits.with_method('''\
        try:
            self.rt.delete_allocation_for_shelve_offloaded_instance(
                context, instance)
        except Exception:
            LOG.exception('Failed to free allocations', instance=instance)
''' + edits.STATE_AND_SAVE)


@variant(FIXED, 'A failed free is logged and re-raised, so the save runs '
                'only after a free that succeeded.')
def try_free_except_reraise():
    """The free in a try whose handler logs and re-raises."""
    return edits.with_method('''\
        try:
            self.rt.delete_allocation_for_shelve_offloaded_instance(
                context, instance)
        except Exception:
            LOG.exception('Failed to free allocations', instance=instance)
            raise
''' + edits.STATE_AND_SAVE)


@variant(FIXED, 'The handler retries the free once and lets a second '
                'failure propagate.')
def try_free_except_retry():
    """A failed free is retried once in the handler."""
    return edits.with_method('''\
        try:
            self.rt.delete_allocation_for_shelve_offloaded_instance(
                context, instance)
        except exception.AllocationDeleteFailed:
            LOG.warning('Retrying the allocation delete', instance=instance)
            self.rt.delete_allocation_for_shelve_offloaded_instance(
                context, instance)
''' + edits.STATE_AND_SAVE)


@variant(FIXED, 'The handler returns without saving, so no save follows a '
                'failed free.')
def try_free_except_return():
    """A failed free makes the method return early."""
    return edits.with_method('''\
        try:
            self.rt.delete_allocation_for_shelve_offloaded_instance(
                context, instance)
        except exception.AllocationDeleteFailed:
            LOG.exception('Leaving the instance shelved', instance=instance)
            return
''' + edits.STATE_AND_SAVE)


@variant(FIXED, 'The finally clause frees whether or not destroy raised, '
                'and the save comes after it.')
def free_in_finally():
    """The free in the finally clause of the destroy."""
    return edits.with_method('''\
        try:
            self.driver.destroy(context, instance, None, None)
        finally:
            self.rt.delete_allocation_for_shelve_offloaded_instance(
                context, instance)
''' + edits.STATE_AND_SAVE)


@variant(LEGACY, 'If the free raises, the finally clause still saves the '
                 'SHELVED_OFFLOADED state.')
def save_in_finally():
    """The save in the finally clause of a try that frees."""
    return edits.with_method('''\
        instance.vm_state = vm_states.SHELVED_OFFLOADED
        instance.task_state = None
        try:
            self.driver.destroy(context, instance, None, None)
            self.rt.delete_allocation_for_shelve_offloaded_instance(
                context, instance)
        finally:
            instance.save(expected_task_state=task_states.SHELVING_OFFLOADING)
''')


@variant(LEGACY, 'When destroy raises InstanceNotFound the else clause, '
                 'and its free, are skipped but the save is not.')
def free_in_try_else_after_swallow():
    """The free in the else clause of a try whose handler swallows."""
    return edits.with_method('''\
        try:
            self.driver.destroy(context, instance, None, None)
        except exception.InstanceNotFound:
            LOG.info('Instance already destroyed', instance=instance)
        else:
            self.rt.delete_allocation_for_shelve_offloaded_instance(
                context, instance)
''' + edits.STATE_AND_SAVE)
