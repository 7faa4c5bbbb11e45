"""return, break and continue leaving a try whose finally saves or frees.

A ``finally`` clause runs on every way out of its ``try``: a return (the
returned value evaluated first), a break, a continue, an exception. So a
``finally`` that saves after SHELVED_OFFLOADED is set saves it unfreed
when the free itself raises; a ``return`` in a ``finally`` swallows the
exception. :mod:`.finally_return_2` has nested clauses and helpers.
"""

from shelvefix.tests.unit.novacheck.corpus import edits
from shelvefix.tests.unit.novacheck.corpus import registry

FIXED = registry.FIXED
LEGACY = registry.LEGACY
UNKNOWN = registry.UNKNOWN
variant = registry.variant

DESTROY = '        self.driver.destroy(context, instance, None, None)\n'


@variant(FIXED, 'The state is set only after the free and the finally then '
                'saves; if the free raises it saves the unchanged state.')
def return_after_free_finally_saves():
    """try: free, set the state, return; finally: save."""
    return edits.with_method(DESTROY + '''\
        try:
            self.rt.delete_allocation_for_shelve_offloaded_instance(
                context, instance)
            instance.vm_state = vm_states.SHELVED_OFFLOADED
            instance.task_state = None
            return
        finally:
            instance.save(expected_task_state=task_states.SHELVING_OFFLOADING)
''')


@variant(LEGACY, 'For an instance without a host the try returns before '
                 'the free, and the finally saves SHELVED_OFFLOADED.')
def conditional_return_skips_free_finally_saves():
    """try: set the state, maybe return, free; finally: save."""
    return edits.with_method(DESTROY + '''\
        try:
            instance.vm_state = vm_states.SHELVED_OFFLOADED
            instance.task_state = None
            if not instance.host:
                return
            self.rt.delete_allocation_for_shelve_offloaded_instance(
                context, instance)
        finally:
            instance.save(expected_task_state=task_states.SHELVING_OFFLOADING)
''')


@variant(UNKNOWN, 'The finally frees after the return, and the save after '
                  'the try can never run, so the instance is never saved.')
def return_finally_frees_never_saved():
    """try: set the state, return; finally: free; a dead save after it."""
    return edits.with_method(DESTROY + '''\
        try:
            instance.vm_state = vm_states.SHELVED_OFFLOADED
            instance.task_state = None
            return
        finally:
            self.rt.delete_allocation_for_shelve_offloaded_instance(
                context, instance)
        instance.save(expected_task_state=task_states.SHELVING_OFFLOADING)
''')


@variant(LEGACY, 'The try saves SHELVED_OFFLOADED before its return, and '
                 'the finally frees only after that.')
def save_then_return_finally_frees():
    """try: set the state, save, return; finally: free."""
    return edits.with_method(DESTROY + '''\
        try:
            instance.vm_state = vm_states.SHELVED_OFFLOADED
            instance.task_state = None
            instance.save(expected_task_state=task_states.SHELVING_OFFLOADING)
            return
        finally:
            self.rt.delete_allocation_for_shelve_offloaded_instance(
                context, instance)
''')


@variant(FIXED, 'The save after the try is reached only by falling through '
                'the finally, which frees first.')
def finally_frees_save_on_fallthrough():
    """try: destroy, maybe return; finally: free; then the state saved."""
    return edits.with_method('''\
        try:
            self.driver.destroy(context, instance, None, None)
            if not bdms:
                return
            self._terminate_volume_connections(context, instance, bdms)
        finally:
            self.rt.delete_allocation_for_shelve_offloaded_instance(
                context, instance)
''' + edits.STATE_AND_SAVE)


@variant(LEGACY, 'The returned value is computed first: if that free '
                 'raises, the finally saves SHELVED_OFFLOADED unfreed.')
def return_value_frees_finally_saves():
    """try: set the state, return the free's result; finally: save."""
    return edits.with_method(DESTROY + '''\
        instance.vm_state = vm_states.SHELVED_OFFLOADED
        instance.task_state = None
        try:
            return self.rt.delete_allocation_for_shelve_offloaded_instance(
                context, instance)
        finally:
            instance.save(expected_task_state=task_states.SHELVING_OFFLOADING)
''')


@variant(FIXED, 'The returned helper call frees and then sets the state, '
                'all before the finally saves.')
def return_value_helper_finally_saves():
    """try: return a helper that frees, then sets; finally: save."""
    return edits.with_method(DESTROY + '''\
        try:
            return self._free_and_mark(context, instance)
        finally:
            instance.save(expected_task_state=task_states.SHELVING_OFFLOADING)
''', '''\
    def _free_and_mark(self, context, instance):
        self.rt.delete_allocation_for_shelve_offloaded_instance(
            context, instance)
        instance.vm_state = vm_states.SHELVED_OFFLOADED
        instance.task_state = None
''')


@variant(LEGACY, 'With a root volume the loop returns from the try before '
                 'the free, and the finally saves SHELVED_OFFLOADED.')
def return_in_loop_finally_saves():
    """A for loop in a try returns after setting the state; finally saves."""
    return edits.with_method(DESTROY + '''\
        try:
            for bdm in bdms:
                if bdm.is_root:
                    instance.vm_state = vm_states.SHELVED_OFFLOADED
                    instance.task_state = None
                    return
            self.rt.delete_allocation_for_shelve_offloaded_instance(
                context, instance)
        finally:
            instance.save(expected_task_state=task_states.SHELVING_OFFLOADING)
''')


@variant(FIXED, 'The state is set only after a free that succeeded; every '
                'other way out saves the state unchanged.')
def retry_loop_return_finally_saves():
    """Retries of the free in a try, returning once freed; finally saves."""
    return edits.with_method(DESTROY + '''\
        try:
            for attempt in range(3):
                try:
                    self.rt.delete_allocation_for_shelve_offloaded_instance(
                        context, instance)
                except exception.AllocationDeleteFailed:
                    continue
                instance.vm_state = vm_states.SHELVED_OFFLOADED
                instance.task_state = None
                return
            raise exception.AllocationDeleteFailed(
                consumer_uuid=instance.uuid, error='three attempts failed')
        finally:
            instance.save(expected_task_state=task_states.SHELVING_OFFLOADING)
''')


@variant(LEGACY, 'If the free raises, the finally still saves the '
                 'SHELVED_OFFLOADED set before the loop.')
def break_through_finally_saves():
    """while True: try: free, break; finally: save; the state set first."""
    return edits.with_method(DESTROY + '''\
        instance.vm_state = vm_states.SHELVED_OFFLOADED
        instance.task_state = None
        while True:
            try:
                self.rt.delete_allocation_for_shelve_offloaded_instance(
                    context, instance)
                break
            finally:
                instance.save(
                    expected_task_state=task_states.SHELVING_OFFLOADING)
''')


@variant(LEGACY, 'A failed free continues the loop through the finally, '
                 'which saves the SHELVED_OFFLOADED already set.')
def continue_through_finally_saves():
    """A retry loop whose finally saves, the state set before it."""
    return edits.with_method(DESTROY + '''\
        instance.vm_state = vm_states.SHELVED_OFFLOADED
        instance.task_state = None
        for attempt in range(3):
            try:
                self.rt.delete_allocation_for_shelve_offloaded_instance(
                    context, instance)
            except exception.AllocationDeleteFailed:
                continue
            finally:
                instance.save(
                    expected_task_state=task_states.SHELVING_OFFLOADING)
            break
''')


@variant(FIXED, 'The state is set in the else clause of a free that '
                'succeeded, and the save after the loop runs only then.')
def continue_until_freed_then_break():
    """Retries: continue through a logging finally, break once freed."""
    return edits.with_method(DESTROY + '''\
        for attempt in range(3):
            try:
                self.rt.delete_allocation_for_shelve_offloaded_instance(
                    context, instance)
            except exception.AllocationDeleteFailed:
                continue
            else:
                instance.vm_state = vm_states.SHELVED_OFFLOADED
                instance.task_state = None
                break
            finally:
                LOG.debug('Free attempt %d done', attempt, instance=instance)
        instance.save(expected_task_state=task_states.SHELVING_OFFLOADING)
''')


@variant(LEGACY, 'A failed free returns from the handler through the '
                 'finally, which saves the SHELVED_OFFLOADED set first.')
def except_return_finally_saves_set_state():
    """The state set, then try: free; except: return; finally: save."""
    return edits.with_method(DESTROY + '''\
        instance.vm_state = vm_states.SHELVED_OFFLOADED
        instance.task_state = None
        try:
            self.rt.delete_allocation_for_shelve_offloaded_instance(
                context, instance)
        except exception.AllocationDeleteFailed:
            LOG.exception('Leaving the instance shelved', instance=instance)
            return
        finally:
            instance.save(expected_task_state=task_states.SHELVING_OFFLOADING)
''')


@variant(FIXED, 'The state is set only after the free succeeds, so the '
                'handler\'s return saves the state unchanged.')
def except_return_finally_saves_unset_state():
    """try: free, set the state; except: return; finally: save."""
    return edits.with_method(DESTROY + '''\
        try:
            self.rt.delete_allocation_for_shelve_offloaded_instance(
                context, instance)
            instance.vm_state = vm_states.SHELVED_OFFLOADED
            instance.task_state = None
        except exception.AllocationDeleteFailed:
            LOG.exception('Leaving the instance shelved', instance=instance)
            return
        finally:
            instance.save(expected_task_state=task_states.SHELVING_OFFLOADING)
''')
