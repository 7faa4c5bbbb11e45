"""Nested finally clauses, with blocks and helpers around a return.

try statements nested in each other or around a ``with``; a return from
an inlined helper's try (back to the method, not out of it); a return or
break in a ``finally`` swallowing a failed free; a finally handing the
unfreed instance on; a ``return`` that is the only way out of the ``try``
once the state is set, so that only the ``finally`` it runs can save it
(see :mod:`.finally_return`).
"""

from shelvefix.tests.unit.novacheck.corpus import edits
from shelvefix.tests.unit.novacheck.corpus import registry

FIXED = registry.FIXED
LEGACY = registry.LEGACY
UNKNOWN = registry.UNKNOWN
variant = registry.variant

DESTROY = '        self.driver.destroy(context, instance, None, None)\n'
NIL_AND_SAVE = '''\
        self._nil_out_instance_obj_host_and_node(instance)
        instance.save(expected_task_state=None)
'''


@variant(FIXED, 'Every way out of the inner try frees and then sets the '
                'state before the outer finally saves.')
def nested_finally_inner_frees_outer_saves():
    """Inner try returns; inner finally frees, sets; outer finally saves."""
    return edits.with_method('''\
        try:
            try:
                self.driver.destroy(context, instance, None, None)
                return
            finally:
                self.rt.delete_allocation_for_shelve_offloaded_instance(
                    context, instance)
                instance.vm_state = vm_states.SHELVED_OFFLOADED
                instance.task_state = None
        finally:
            instance.save(expected_task_state=task_states.SHELVING_OFFLOADING)
''')


@variant(LEGACY, 'On the return the inner finally saves SHELVED_OFFLOADED '
                 'before the outer finally frees.')
def nested_finally_inner_saves_outer_frees():
    """Inner try sets, returns; inner finally saves; outer finally frees."""
    return edits.with_method('''\
        try:
            try:
                self.driver.destroy(context, instance, None, None)
                instance.vm_state = vm_states.SHELVED_OFFLOADED
                instance.task_state = None
                return
            finally:
                instance.save(
                    expected_task_state=task_states.SHELVING_OFFLOADING)
        finally:
            self.rt.delete_allocation_for_shelve_offloaded_instance(
                context, instance)
''')


@variant(FIXED, 'Inside the lock the free comes before the state, so the '
                'finally saves SHELVED_OFFLOADED only once freed.')
def return_in_with_finally_saves():
    """try: with a lock: free, set the state, return; finally: save."""
    return edits.with_method(DESTROY + '''\
        try:
            with lockutils.lock('allocations-%s' % instance.uuid):
                self.rt.delete_allocation_for_shelve_offloaded_instance(
                    context, instance)
                instance.vm_state = vm_states.SHELVED_OFFLOADED
                instance.task_state = None
                return
        finally:
            instance.save(expected_task_state=task_states.SHELVING_OFFLOADING)
''')


@variant(LEGACY, 'The state is set before the lock, so a free that raises '
                 'leaves the lock and the finally saves it unfreed.')
def return_in_with_state_first_finally_saves():
    """The state set; try: with a lock: free, return; finally: save."""
    return edits.with_method(DESTROY + '''\
        instance.vm_state = vm_states.SHELVED_OFFLOADED
        instance.task_state = None
        try:
            with lockutils.lock('allocations-%s' % instance.uuid):
                self.rt.delete_allocation_for_shelve_offloaded_instance(
                    context, instance)
                return
        finally:
            instance.save(expected_task_state=task_states.SHELVING_OFFLOADING)
''')


@variant(FIXED, 'The helper frees and then sets the state before its '
                'finally saves, and its return goes back to the method.')
def helper_return_finally_saves_fixed():
    """A helper: try: free, set the state, return; finally: save."""
    return edits.with_method(
        DESTROY + '        self._finish_offload(context, instance)\n' +
        NIL_AND_SAVE, '''\
    def _finish_offload(self, context, instance):
        try:
            self.rt.delete_allocation_for_shelve_offloaded_instance(
                context, instance)
            instance.vm_state = vm_states.SHELVED_OFFLOADED
            instance.task_state = None
            return
        finally:
            instance.save(expected_task_state=task_states.SHELVING_OFFLOADING)
''')


@variant(LEGACY, 'The helper\'s return runs its finally, which saves '
                 'SHELVED_OFFLOADED before the method frees.')
def helper_return_finally_saves_legacy():
    """A helper: try: set the state, return; finally: save; then the free."""
    return edits.with_method(
        DESTROY + '        self._mark_offloaded(context, instance)\n' +
        edits.FREE + NIL_AND_SAVE, '''\
    def _mark_offloaded(self, context, instance):
        try:
            instance.vm_state = vm_states.SHELVED_OFFLOADED
            instance.task_state = None
            return
        finally:
            instance.save(expected_task_state=task_states.SHELVING_OFFLOADING)
''')


@variant(LEGACY, 'The return in the helper\'s finally swallows a failed '
                 'free, and the method goes on to save SHELVED_OFFLOADED.')
def finally_return_in_helper_swallows():
    """A helper: try: free; finally: return."""
    return edits.with_method(
        DESTROY + '        self._release_quietly(context, instance)\n' +
        edits.STATE_AND_SAVE, '''\
    def _release_quietly(self, context, instance):
        try:
            self.rt.delete_allocation_for_shelve_offloaded_instance(
                context, instance)
        finally:
            return
''')


@variant(LEGACY, 'The return in the nested function\'s finally swallows a '
                 'failed free, and the save follows.')
def finally_return_in_nested_swallows():
    """A nested function: try: free; finally: return."""
    return edits.with_method('''\
        def _free_quietly():
            try:
                self.rt.delete_allocation_for_shelve_offloaded_instance(
                    context, instance)
            finally:
                return

''' + DESTROY + '        _free_quietly()\n' + edits.STATE_AND_SAVE)


@variant(FIXED, 'The return after the free in the finally swallows only a '
                'failed notification; a failed free still propagates.')
def finally_frees_then_returns_in_helper():
    """A helper: try: notify; finally: free, return."""
    return edits.with_method(
        DESTROY + '        self._release_after_notify(context, instance)\n' +
        edits.STATE_AND_SAVE, '''\
    def _release_after_notify(self, context, instance):
        try:
            self._notify_about_instance_usage(context, instance,
                                              'shelve_offload.release')
        finally:
            self.rt.delete_allocation_for_shelve_offloaded_instance(
                context, instance)
            return
''')


@variant(LEGACY, 'The break in the finally swallows a failed free, and the '
                 'loop is left for the save.')
def break_in_finally_swallows():
    """while True: try: free; finally: break; then the state saved."""
    return edits.with_method(DESTROY + '''\
        while True:
            try:
                self.rt.delete_allocation_for_shelve_offloaded_instance(
                    context, instance)
            finally:
                break
''' + edits.STATE_AND_SAVE)


@variant(UNKNOWN, 'If the free raises, the finally hands the unfreed '
                  'SHELVED_OFFLOADED instance to hooks that may save it.')
def finally_hooks_see_unfreed_state():
    """The state set; try: free, save, return; finally: run hooks."""
    return edits.with_method(DESTROY + '''\
        instance.vm_state = vm_states.SHELVED_OFFLOADED
        instance.task_state = None
        try:
            self.rt.delete_allocation_for_shelve_offloaded_instance(
                context, instance)
            instance.save(expected_task_state=task_states.SHELVING_OFFLOADING)
            return
        finally:
            self._run_offload_hooks(context, instance)
''', '''\
    def _run_offload_hooks(self, context, instance):
        for hook in self.offload_hooks:
            hook(context, instance)
''')


@variant(UNKNOWN, 'If the free raises, the finally calls a saving function '
                  'under an unknown decorator, which may or may not save.')
def finally_calls_decorated_save():
    """The state set; try: free, return; finally: a decorated saver."""
    return edits.rewrite(edits.with_method('''\
        @offload_hooks.deferred
        def _record_offloaded():
            instance.save(expected_task_state=task_states.SHELVING_OFFLOADING)

''' + DESTROY + '''\
        instance.vm_state = vm_states.SHELVED_OFFLOADED
        instance.task_state = None
        try:
            self.rt.delete_allocation_for_shelve_offloaded_instance(
                context, instance)
            return
        finally:
            _record_offloaded()
'''), ('from nova.compute import power_state\n',
       'from nova.compute import offload_hooks\n'
       'from nova.compute import power_state\n'))


# Once vm_state is set below, the return is the only way out of the try:
# task_state is set first, and neither the return nor anything after the
# state may raise, so no exception path reaches the finally with the state
# set. Only a return that runs the finally, with the state the return
# leaves, gets these right.

@variant(FIXED, 'The free comes before the try, and the finally that the '
                'return runs saves SHELVED_OFFLOADED only after it.')
def free_first_return_only_way_out_finally_saves():
    """The free; try: set the state, return; finally: save."""
    return edits.with_method(DESTROY + edits.FREE + '''\
        try:
            instance.task_state = None
            instance.vm_state = vm_states.SHELVED_OFFLOADED
            return
        finally:
            instance.save(expected_task_state=task_states.SHELVING_OFFLOADING)
''')


@variant(LEGACY, 'The return runs the finally, which saves '
                 'SHELVED_OFFLOADED and only then frees.')
def return_only_way_out_finally_saves_then_frees():
    """try: set the state, return; finally: save, then the free."""
    return edits.with_method(DESTROY + '''\
        try:
            instance.task_state = None
            instance.vm_state = vm_states.SHELVED_OFFLOADED
            return
        finally:
            instance.save(expected_task_state=task_states.SHELVING_OFFLOADING)
            self.rt.delete_allocation_for_shelve_offloaded_instance(
                context, instance)
''')


@variant(LEGACY, 'Both branches return, each through the finally, which '
                 'saves SHELVED_OFFLOADED before it frees.')
def both_branches_return_finally_saves_then_frees():
    """try: set the state; if/else, both return; finally: save, free."""
    return edits.with_method(DESTROY + '''\
        try:
            instance.task_state = None
            instance.vm_state = vm_states.SHELVED_OFFLOADED
            if bdms:
                return
            else:
                return
        finally:
            instance.save(expected_task_state=task_states.SHELVING_OFFLOADING)
            self.rt.delete_allocation_for_shelve_offloaded_instance(
                context, instance)
''')


@variant(UNKNOWN, 'The return runs the finally, which saves '
                  'SHELVED_OFFLOADED, and the free after the try never '
                  'runs.')
def return_only_way_out_free_after_try_is_dead():
    """try: set the state, return; finally: save; the free after the try."""
    return edits.with_method(DESTROY + '''\
        try:
            instance.task_state = None
            instance.vm_state = vm_states.SHELVED_OFFLOADED
            return
        finally:
            instance.save(expected_task_state=task_states.SHELVING_OFFLOADING)
''' + edits.FREE)


@variant(FIXED, 'The loop returns from the try as soon as the state is '
                'set, and the finally saves it after the free before the '
                'loop.')
def loop_return_only_way_out_finally_saves():
    """The free; try: while True: set the state, return; finally: save."""
    return edits.with_method(DESTROY + edits.FREE + '''\
        try:
            while True:
                instance.task_state = None
                instance.vm_state = vm_states.SHELVED_OFFLOADED
                return instance
        finally:
            instance.save(expected_task_state=task_states.SHELVING_OFFLOADING)
''')
