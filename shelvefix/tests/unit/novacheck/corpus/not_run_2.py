"""nova's decorators on the freeing helper or on the method itself.

``wrap_exception()``, ``wrap_instance_event(prefix=...)``,
``reverts_task_state`` and ``wrap_instance_fault`` call the function they
wrap (the trimmed copies leave out their definitions, as they leave out
nova's other module-level code); the method under an unknown decorator,
or one that drops it (see :mod:`.not_run` for helpers that do not run).
"""

from shelvefix.tests.unit.novacheck.corpus import edits
from shelvefix.tests.unit.novacheck.corpus import not_run
from shelvefix.tests.unit.novacheck.corpus import nova_34
from shelvefix.tests.unit.novacheck.corpus import registry
from shelvefix.tests.unit.novacheck.corpus import releases

FIXED = registry.FIXED
LEGACY = registry.LEGACY
UNKNOWN = registry.UNKNOWN
variant = registry.variant

DESTROY = not_run.DESTROY
RELEASE_CALL = not_run.RELEASE_CALL
release = not_run.release
releasing_first = not_run.releasing_first
# The decorators of nova's shelve_offload_instance, outermost first.
NOVA_DECORATORS = ('wrap_exception()', 'reverts_task_state',
                   "wrap_instance_event(prefix='compute')",
                   'wrap_instance_fault')


def saving_first(helper):
    """The method: destroy, the state saved, then the helper called."""
    return edits.with_method(DESTROY + edits.STATE_AND_SAVE + RELEASE_CALL,
                             helper)


def decorating_method(text, decorator):
    """``text`` with ``decorator`` on ``_shelve_offload_instance``."""
    return edits.rewrite(text, ('    def _shelve_offload_instance(',
                                '    @%s\n'
                                '    def _shelve_offload_instance(' %
                                decorator))


@variant(FIXED, 'wrap_exception calls the helper, which frees before the '
                'save.')
def helper_wrap_exception():
    """The freeing helper under ``@wrap_exception()``."""
    return releasing_first(release('wrap_exception()'))


@variant(FIXED, 'wrap_instance_event records the event around a call of '
                'the helper, which frees before the save.')
def helper_wrap_instance_event():
    """The freeing helper under ``@wrap_instance_event(prefix=...)``."""
    return releasing_first(release("wrap_instance_event(prefix='compute')"))


@variant(FIXED, 'reverts_task_state calls the helper, and a failed free '
                'reverts and saves an instance not yet SHELVED_OFFLOADED.')
def helper_reverts_task_state():
    """The freeing helper under ``@reverts_task_state``, the state later."""
    return releasing_first(release('reverts_task_state'))


@variant(FIXED, 'wrap_instance_fault calls the helper and only records a '
                'fault if it raises.')
def helper_wrap_instance_fault():
    """The freeing helper under ``@wrap_instance_fault``."""
    return releasing_first(release('wrap_instance_fault'))


@variant(FIXED, 'All of nova\'s decorators call the helper in turn, and it '
                'frees before the save.')
def helper_nova_decorators_stacked():
    """The freeing helper under the decorators of shelve_offload_instance."""
    return releasing_first(release(*NOVA_DECORATORS))


@variant(LEGACY, 'The decorated helper saves SHELVED_OFFLOADED before it '
                 'frees.')
def helper_wrap_instance_fault_saves_first():
    """A helper under ``@wrap_instance_fault`` that saves, then frees."""
    return edits.with_method(DESTROY + '''\
        instance.vm_state = vm_states.SHELVED_OFFLOADED
        instance.task_state = None
        self._finish_offload(context, instance)
''', '''\
    @wrap_instance_fault
    def _finish_offload(self, context, instance):
        instance.save(expected_task_state=task_states.SHELVING_OFFLOADING)
        self.rt.delete_allocation_for_shelve_offloaded_instance(
            context, instance)
''')


@variant(LEGACY, 'The decorators call the helper, but only after the method '
                 'saved SHELVED_OFFLOADED.')
def helper_stacked_decorators_after_save():
    """The helper under nova's decorators, called after the save."""
    return saving_first(release(*NOVA_DECORATORS))


@variant(LEGACY, 'If the free raises, reverts_task_state saves the '
                 'instance, already SHELVED_OFFLOADED, with nothing freed.')
def helper_reverts_task_state_after_state():
    """The helper under ``@reverts_task_state`` called after the state."""
    return edits.with_method(DESTROY + '''\
        instance.vm_state = vm_states.SHELVED_OFFLOADED
        instance.task_state = None
''' + RELEASE_CALL + '''\
        instance.save(expected_task_state=task_states.SHELVING_OFFLOADING)
''', release('reverts_task_state'))


@variant(UNKNOWN, 'The only free before the save is in a helper under an '
                  'unknown decorator; the tracker frees again only after '
                  'the save.')
def helper_unknown_decorator_late_free():
    """An unknown decorator on the early free; the genuine free after."""
    return not_run.with_cache_utils(edits.with_method(
        DESTROY + RELEASE_CALL + edits.STATE_AND_SAVE + edits.FREE,
        release('cache_utils.memoize')))


@variant(FIXED, 'wrap_instance_fault calls the method, which frees before '
                'the save, and only records a fault on failure.')
def method_wrap_instance_fault():
    """nova 34.0.0's method under ``@wrap_instance_fault``."""
    return decorating_method(nova_34.MANAGER, 'wrap_instance_fault')


@variant(LEGACY, 'wrap_exception calls the method, which saves '
                 'SHELVED_OFFLOADED before it frees.')
def method_wrap_exception_legacy():
    """The reverted method under ``@wrap_exception()``."""
    return decorating_method(releases.nova_34_0_0_reverted(),
                             'wrap_exception()')


@variant(UNKNOWN, 'The method is under a memoizing decorator the check does '
                  'not know, so what runs is not known.')
def method_unknown_decorator():
    """nova 34.0.0's method under an imported, unknown decorator."""
    return not_run.with_cache_utils(
        decorating_method(nova_34.MANAGER, 'cache_utils.memoize'))


@variant(UNKNOWN, 'The module\'s _skip decorator replaces the method by a '
                  'lambda, so none of it runs.')
def method_decorator_never_calls():
    """The method under a module decorator that drops it."""
    return not_run.with_module_code(
        decorating_method(nova_34.MANAGER, '_skip'), '''\
def _skip(function):
    """Replace function by a function that does nothing."""
    return lambda *args, **kwargs: None
''')
