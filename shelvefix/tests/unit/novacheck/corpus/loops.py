"""Loops around the free.

``while True`` and bounded ``for``/``while`` loops, retries, ``break``,
``continue`` and ``for``/``else``.
"""

from shelvefix.tests.unit.novacheck.corpus import edits
from shelvefix.tests.unit.novacheck.corpus import registry

FIXED = registry.FIXED
LEGACY = registry.LEGACY
variant = registry.variant


@variant(FIXED, 'The only way out of the while True loop is the break '
                'after the free.')
def while_true_free_break():
    """The free inside ``while True`` followed by ``break``."""
    return edits.with_method('''\
        while True:
            self.rt.delete_allocation_for_shelve_offloaded_instance(
                context, instance)
            break
''' + edits.STATE_AND_SAVE)


@variant(LEGACY, 'With zero attempts configured the loop body never runs '
                 'and the save follows unfreed.')
def for_loop_free():
    """The free inside a for loop over a configured range."""
    return edits.with_method('''\
        for _attempt in range(CONF.compute.shelve_free_attempts):
            self.rt.delete_allocation_for_shelve_offloaded_instance(
                context, instance)
''' + edits.STATE_AND_SAVE)


@variant(FIXED, 'The loop is left only by the break after a free that '
                'succeeded; failures go round again.')
def while_retry_until_freed():
    """Retry the free forever, continuing after each failure."""
    return edits.with_method('''\
        while True:
            try:
                self.rt.delete_allocation_for_shelve_offloaded_instance(
                    context, instance)
                break
            except exception.AllocationDeleteFailed:
                LOG.warning('Retrying the allocation delete',
                            instance=instance)
                time.sleep(1)
                continue
''' + edits.STATE_AND_SAVE)


@variant(LEGACY, 'After three failed frees the loop ends and the save '
                 'runs with the allocations in place.')
def while_retry_gives_up():
    """Retry the free three times, then carry on regardless."""
    return edits.with_method('''\
        attempts = 3
        while attempts:
            try:
                self.rt.delete_allocation_for_shelve_offloaded_instance(
                    context, instance)
                break
            except exception.AllocationDeleteFailed:
                attempts -= 1
''' + edits.STATE_AND_SAVE)


@variant(FIXED, 'Leaving the loop without the break after a successful '
                'free runs the else clause, which raises.')
def for_else_raise():
    """Bounded retries with ``for``/``else`` raising when all failed."""
    return edits.with_method('''\
        for _attempt in range(3):
            try:
                self.rt.delete_allocation_for_shelve_offloaded_instance(
                    context, instance)
            except exception.AllocationDeleteFailed:
                LOG.warning('Allocation delete failed', instance=instance)
            else:
                break
        else:
            raise exception.AllocationDeleteFailed(consumer_uuid=instance.uuid,
                                                   error='gave up')
''' + edits.STATE_AND_SAVE)


@variant(LEGACY, 'For an instance on another host every iteration '
                 'continues past the free, and the save follows.')
def continue_skips_free():
    """``continue`` before the free in a bounded loop."""
    return edits.with_method('''\
        for _attempt in range(2):
            if instance.host != self.host:
                continue
            self.rt.delete_allocation_for_shelve_offloaded_instance(
                context, instance)
            break
''' + edits.STATE_AND_SAVE)


@variant(FIXED, 'continue only goes round the while True loop again; the '
                'exit is the break after the free.')
def continue_retries_free():
    """``continue`` while the tracker is busy, then free and break."""
    return edits.with_method('''\
        while True:
            if self.rt.disabled(instance.node):
                LOG.debug('Tracker busy, waiting', instance=instance)
                time.sleep(1)
                continue
            self.rt.delete_allocation_for_shelve_offloaded_instance(
                context, instance)
            break
''' + edits.STATE_AND_SAVE)
