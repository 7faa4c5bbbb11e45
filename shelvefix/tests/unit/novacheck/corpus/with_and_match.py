"""with and match statements around the free or the save.

A lock held around the free or the save, ``contextlib.suppress``, and
match statements with and without a catch-all case.
"""

from shelvefix.tests.unit.novacheck.corpus import edits
from shelvefix.tests.unit.novacheck.corpus import registry

FIXED = registry.FIXED
LEGACY = registry.LEGACY
variant = registry.variant


@variant(FIXED, 'The free inside the lock\'s with block runs before the '
                'save.')
def free_inside_lock():
    """The free inside ``with lockutils.lock(...)``."""
    return edits.with_method('''\
        self.driver.destroy(context, instance, None, None)
        with lockutils.lock('allocations-%s' % instance.uuid):
            self.rt.delete_allocation_for_shelve_offloaded_instance(
                context, instance)
''' + edits.STATE_AND_SAVE)


@variant(LEGACY, 'The with block saves SHELVED_OFFLOADED and the free '
                 'comes after it.')
def save_inside_with_before_free():
    """The state saved inside a ``with`` block before the free."""
    return edits.with_method('''\
        self.driver.destroy(context, instance, None, None)
        with lockutils.lock('instance-%s' % instance.uuid):
            instance.vm_state = vm_states.SHELVED_OFFLOADED
            instance.task_state = None
            instance.save(expected_task_state=task_states.SHELVING_OFFLOADING)
''' + edits.FREE)


@variant(LEGACY, 'contextlib.suppress swallows a failed free, and the save '
                 'follows.')
def free_inside_suppress():
    """The free inside ``with contextlib.suppress(...)``."""
    return edits.with_method('''\
        self.driver.destroy(context, instance, None, None)
        with contextlib.suppress(exception.AllocationDeleteFailed):
            self.rt.delete_allocation_for_shelve_offloaded_instance(
                context, instance)
''' + edits.STATE_AND_SAVE)


@variant(LEGACY, 'The case for a host-less instance saves '
                 'SHELVED_OFFLOADED and returns without freeing.')
def match_case_saves_first():
    """A match statement whose first case saves the state unfreed."""
    return edits.with_method('''\
        match instance.host:
            case None:
                instance.vm_state = vm_states.SHELVED_OFFLOADED
                instance.task_state = None
                instance.save()
                return
            case _:
                self.driver.destroy(context, instance, None, None)
                self.rt.delete_allocation_for_shelve_offloaded_instance(
                    context, instance)
''' + edits.STATE_AND_SAVE)


@variant(FIXED, 'Both cases, one of them the catch-all, free before the '
                'save.')
def match_all_cases_free():
    """A match statement freeing in every case."""
    return edits.with_method('''\
        match accel_uuids:
            case None | []:
                self.rt.delete_allocation_for_shelve_offloaded_instance(
                    context, instance)
            case _:
                cyborg.get_client(context).delete_arqs_for_instance(
                    instance.uuid)
                self.reportclient.delete_allocation_for_instance(
                    context, instance.uuid)
''' + edits.STATE_AND_SAVE)


@variant(LEGACY, 'An instance on another host matches no case and reaches '
                 'the save unfreed.')
def match_not_exhaustive():
    """A match without a catch-all: no case for another host."""
    return edits.with_method('''\
        match instance.host:
            case None:
                raise exception.InstanceNotFound(instance_id=instance.uuid)
            case self.host:
                self.rt.delete_allocation_for_shelve_offloaded_instance(
                    context, instance)
''' + edits.STATE_AND_SAVE)
