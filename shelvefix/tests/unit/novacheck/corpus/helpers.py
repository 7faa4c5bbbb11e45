"""The free moved into ``ComputeManager`` helpers.

Frees one to four helper calls deep, helpers that save, swallow or skip
the free, hooks, and the whole offload delegated to a helper.
"""

from shelvefix.tests.unit.novacheck.corpus import edits
from shelvefix.tests.unit.novacheck.corpus import nova_34
from shelvefix.tests.unit.novacheck.corpus import registry

FIXED = registry.FIXED
LEGACY = registry.LEGACY
UNKNOWN = registry.UNKNOWN
variant = registry.variant


def _free_through(call):
    """The modern method with its free replaced by the statement ``call``."""
    return edits.rewrite(nova_34.MANAGER,
                         (nova_34.FREE, '        %s\n' % call))


@variant(FIXED, 'The helper called before the save frees this instance\'s '
                'allocations.')
def free_in_helper_depth_1():
    """The free moved into a helper the method calls."""
    return edits.insert_helpers(
        _free_through('self._release_resources(context, instance)'),
        '''\
    def _release_resources(self, context, instance):
        self.rt.delete_allocation_for_shelve_offloaded_instance(
            context, instance)
''')


@variant(FIXED, 'Two helpers down, the instance (passed as "server") is '
                'freed before the method saves.')
def free_in_helper_depth_2():
    """The free two helper calls deep, the instance renamed on the way."""
    return edits.insert_helpers(
        _free_through('self._release_resources(context, instance)'),
        '''\
    def _release_resources(self, context, instance):
        self._release_placement(context, server=instance)
''', '''\
    def _release_placement(self, context, server):
        LOG.debug('Freeing placement allocations', instance=server)
        self.rt.delete_allocation_for_shelve_offloaded_instance(
            context, server)
''')


@variant(FIXED, 'Three helpers down, the allocations are freed before the '
                'method saves.')
def free_in_helper_depth_3():
    """The free three helper calls deep, the depth the check follows."""
    return edits.insert_helpers(
        _free_through('self._release_resources(context, instance)'),
        '''\
    def _release_resources(self, context, instance):
        self._release_placement(context, instance)
''', '''\
    def _release_placement(self, context, instance):
        self._delete_allocations(context, instance)
''', '''\
    def _delete_allocations(self, context, instance):
        self.rt.delete_allocation_for_shelve_offloaded_instance(
            context, instance)
''')


@variant(UNKNOWN, 'The only free is four helper calls deep, beyond what '
                  'the check reads, so nothing is proven.')
def free_in_helper_depth_4():
    """The free four helper calls deep: one more than the check follows."""
    return edits.insert_helpers(
        _free_through('self._release_resources(context, instance)'),
        '''\
    def _release_resources(self, context, instance):
        self._release_placement(context, instance)
''', '''\
    def _release_placement(self, context, instance):
        self._delete_allocations(context, instance)
''', '''\
    def _delete_allocations(self, context, instance):
        self._delete_allocations_now(context, instance)
''', '''\
    def _delete_allocations_now(self, context, instance):
        self.rt.delete_allocation_for_shelve_offloaded_instance(
            context, instance)
''')


FINISH_OFFLOAD = '        self._finish_offload(context, instance)\n'


@variant(LEGACY, 'The helper saves the instance, already set to '
                 'SHELVED_OFFLOADED, before it frees.')
def helper_saves_then_frees():
    """The first save and then the free moved together into a helper."""
    return edits.insert_helpers(
        edits.rewrite(nova_34.MANAGER, (nova_34.FREE, ''),
                      (nova_34.SAVE, FINISH_OFFLOAD)),
        '''\
    def _finish_offload(self, context, instance):
        instance.save(expected_task_state=[task_states.SHELVING,
                                           task_states.SHELVING_OFFLOADING])
        self.rt.delete_allocation_for_shelve_offloaded_instance(
            context, instance)
''')


@variant(FIXED, 'The helper frees before it saves the state the method '
                'set.')
def helper_frees_then_saves():
    """The free and then the first save moved together into a helper."""
    return edits.insert_helpers(
        edits.rewrite(nova_34.MANAGER, (nova_34.FREE, ''),
                      (nova_34.SAVE, FINISH_OFFLOAD)),
        '''\
    def _finish_offload(self, context, instance):
        self.rt.delete_allocation_for_shelve_offloaded_instance(
            context, instance)
        instance.save(expected_task_state=[task_states.SHELVING,
                                           task_states.SHELVING_OFFLOADING])
''')


@variant(LEGACY, 'A helper sets SHELVED_OFFLOADED and the method saves it '
                 'before freeing.')
def helper_sets_state_method_saves_first():
    """The state set in a helper; the method saves, then frees."""
    return edits.with_method('''\
        self._power_off_instance(context, instance, clean_shutdown)
        self.driver.destroy(context, instance, None, None)
        self._mark_offloaded(instance)
        instance.save(expected_task_state=task_states.SHELVING_OFFLOADING)
        self.rt.delete_allocation_for_shelve_offloaded_instance(
            context, instance)
        self._nil_out_instance_obj_host_and_node(instance)
        instance.save(expected_task_state=None)
''', '''\
    def _mark_offloaded(self, instance):
        instance.vm_state = vm_states.SHELVED_OFFLOADED
        instance.task_state = None
''')


@variant(LEGACY, 'The helper logs and swallows a failed free, and the '
                 'method then saves SHELVED_OFFLOADED anyway.')
def helper_swallows_free_failure():
    """The helper catches every error of the free."""
    return edits.insert_helpers(
        _free_through('self._release_resources(context, instance)'),
        '''\
    def _release_resources(self, context, instance):
        try:
            self.rt.delete_allocation_for_shelve_offloaded_instance(
                context, instance)
        except Exception:
            LOG.exception('Could not free the allocations', instance=instance)
''')


@variant(LEGACY, 'The helper returns without freeing when the instance has '
                 'no host, and the method saves anyway.')
def helper_returns_before_free():
    """The helper frees only when the instance still has a host."""
    return edits.insert_helpers(
        _free_through('self._release_resources(context, instance)'),
        '''\
    def _release_resources(self, context, instance):
        if not instance.host:
            return
        self.rt.delete_allocation_for_shelve_offloaded_instance(
            context, instance)
''')


@variant(UNKNOWN, 'The helper meant to free is not defined in the class, '
                  'so no free of this instance can be seen.')
def helper_not_defined():
    """The free delegated to a method the class does not define."""
    return _free_through('self._release_resources(context, instance)')


@variant(UNKNOWN, 'Hooks that receive the instance, already set to '
                  'SHELVED_OFFLOADED, run before the free and may save '
                  'it.')
def helper_runs_hooks():
    """A helper calls registered hooks between the state and the free."""
    return edits.with_method('''\
        self.driver.destroy(context, instance, None, None)
        instance.vm_state = vm_states.SHELVED_OFFLOADED
        instance.task_state = None
        self._run_offload_hooks(context, instance)
        self.rt.delete_allocation_for_shelve_offloaded_instance(
            context, instance)
        instance.save(expected_task_state=task_states.SHELVING_OFFLOADING)
''', '''\
    def _run_offload_hooks(self, context, instance):
        for hook in self.offload_hooks:
            hook(context, instance)
''')


def _delegating(helper_body):
    """The method hands everything to ``_do_shelve_offload``."""
    return edits.with_method(
        '''\
        self._do_shelve_offload(context, instance, clean_shutdown,
                                bdms=bdms, accel_uuids=accel_uuids)
''', '''\
    def _do_shelve_offload(self, context, instance, clean_shutdown,
                           bdms=None, accel_uuids=None):
''' + helper_body)


@variant(FIXED, 'The helper doing the whole offload frees before it '
                'saves.')
def delegate_to_fixed_helper():
    """The whole body moved into a helper, in the fixed order."""
    return _delegating('''\
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


@variant(LEGACY, 'The helper doing the whole offload saves '
                 'SHELVED_OFFLOADED before it frees.')
def delegate_to_legacy_helper():
    """The whole body moved into a helper, in the legacy order."""
    return _delegating('''\
        self._power_off_instance(context, instance, clean_shutdown)
        self.driver.destroy(context, instance, None, None)
        instance.vm_state = vm_states.SHELVED_OFFLOADED
        instance.task_state = None
        instance.save(expected_task_state=task_states.SHELVING_OFFLOADING)
        self.rt.delete_allocation_for_shelve_offloaded_instance(
            context, instance)
        self._nil_out_instance_obj_host_and_node(instance)
        instance.save(expected_task_state=None)
''')
