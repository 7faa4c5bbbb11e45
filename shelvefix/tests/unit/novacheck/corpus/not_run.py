"""A free in a function that does not run when it is called.

``ComputeManager`` helpers and nested functions that free, but are
wrapped by a decorator that never calls them or one the check does not
know, are generators or coroutines, or are static or class methods;
:mod:`.not_run_2` has nova's own decorators, which call the function.
"""

from shelvefix.tests.unit.novacheck.corpus import edits
from shelvefix.tests.unit.novacheck.corpus import registry

FIXED = registry.FIXED
UNKNOWN = registry.UNKNOWN
variant = registry.variant

DESTROY = '        self.driver.destroy(context, instance, None, None)\n'
RELEASE_CALL = '        self._release(context, instance)\n'
RELEASE_BODY = '''\
        self.rt.delete_allocation_for_shelve_offloaded_instance(
            context, instance)
'''


def release(*decorators, keyword='def', tail=''):
    """The helper ``_release`` that frees, with ``decorators`` on it.

    :param keyword: ``def`` or ``async def``
    :param tail: statements after the free, indented 8 spaces
    """
    return (''.join('    @%s\n' % decorator for decorator in decorators) +
            '    %s _release(self, context, instance):\n' % keyword +
            RELEASE_BODY + tail)


def releasing_first(helper, call=RELEASE_CALL):
    """The method: destroy, ``call`` the helper, the state set and saved."""
    return edits.with_method(DESTROY + call + edits.STATE_AND_SAVE, helper)


def with_module_code(text, code):
    """``text`` with the module-level ``code`` just before the class."""
    return edits.rewrite(text, ('\n\n\nclass ComputeManager(',
                                '\n\n\n' + code + '\n\nclass ComputeManager('))


def with_cache_utils(text):
    """``text`` importing ``nova.cache_utils``."""
    return edits.rewrite(text, ('from nova import exception\n',
                                'from nova import cache_utils\n'
                                'from nova import exception\n'))


def nested_free(*decorators, keyword='def', tail=''):
    """The method freeing through a nested ``_free_allocations()``."""
    return edits.with_method(
        ''.join('        @%s\n' % decorator for decorator in decorators) +
        '        %s _free_allocations():\n' % keyword + '''\
            self.rt.delete_allocation_for_shelve_offloaded_instance(
                context, instance)
''' + tail + '\n' + DESTROY + '        _free_allocations()\n' +
        edits.STATE_AND_SAVE)


@variant(UNKNOWN, 'The module\'s _skip decorator replaces the helper by a '
                  'lambda that never calls it, so nothing is freed.')
def helper_decorator_never_calls():
    """The freeing helper decorated with a module function that drops it."""
    return with_module_code(releasing_first(release('_skip')), '''\
def _skip(function):
    """Replace function by a function that does nothing."""
    return lambda *args, **kwargs: None
''')


@variant(UNKNOWN, 'The memoizing decorator, which the check does not know, '
                  'may answer from its cache without running the free.')
def helper_decorator_unknown():
    """The freeing helper decorated with an imported, unknown decorator."""
    return with_cache_utils(releasing_first(release('cache_utils.memoize')))


@variant(UNKNOWN, 'The helper is a generator, so calling it only builds '
                  'the generator and its free never runs.')
def helper_generator_never_iterated():
    """The freeing helper holds a ``yield``; the method only calls it."""
    return releasing_first(release(tail='        yield\n'))


@variant(UNKNOWN, 'The free runs only while the generator is iterated, a '
                  'flow the check does not follow, so nothing is proven.')
def helper_generator_iterated():
    """The freeing generator helper iterated by a for loop."""
    return releasing_first(
        release(tail='        yield\n'),
        call='        for _ in self._release(context, instance):\n'
             '            pass\n')


@variant(UNKNOWN, 'The helper is a coroutine that is never awaited, so its '
                  'free never runs.')
def helper_async_never_awaited():
    """The freeing helper is ``async def``; the method calls it plainly."""
    return releasing_first(release(keyword='async def'))


ASYNC_SIGNATURE = '''\
    async def _shelve_offload_instance(self, context, instance,
                                       clean_shutdown, bdms=None,
                                       accel_uuids=None):
'''


@variant(UNKNOWN, 'The method is a coroutine that shelve_offload_instance '
                  'calls without awaiting, so none of it runs.')
def method_async_awaits_helper():
    """An ``async`` method that awaits a coroutine helper, then saves."""
    return edits.with_method(
        DESTROY + '        await self._release(context, instance)\n' +
        edits.STATE_AND_SAVE, release(keyword='async def'),
        signature=ASYNC_SIGNATURE)


@variant(UNKNOWN, 'The nested function is a generator, so calling it does '
                  'not run its free.')
def nested_generator_called():
    """The nested freeing function holds a ``yield``."""
    return nested_free(tail='            yield\n')


@variant(UNKNOWN, 'The nested function is a coroutine, and calling it '
                  'without awaiting does not run its free.')
def nested_async_called():
    """The nested freeing function is ``async def``."""
    return nested_free(keyword='async def')


@variant(UNKNOWN, 'The nested function\'s memoizing decorator is unknown '
                  'and may not call it, so the free is not proven.')
def nested_unknown_decorator():
    """The nested freeing function under an imported, unknown decorator."""
    return with_cache_utils(nested_free('cache_utils.memoize'))


@variant(FIXED, 'The lock decorator calls the nested function, which frees '
                'before the save.')
def nested_synchronized_free_called():
    """The nested freeing function under ``utils.synchronized``."""
    return nested_free('utils.synchronized(instance.uuid)')


@variant(UNKNOWN, 'The static helper would free through the tracker it is '
                  'handed, but static methods are not read, so to be '
                  'conservative nothing is proven.')
def helper_staticmethod_free():
    """A ``staticmethod`` helper handed ``self.rt``, called through self."""
    return releasing_first('''\
    @staticmethod
    def _release(tracker, context, instance):
        tracker.delete_allocation_for_shelve_offloaded_instance(
            context, instance)
''', call='        self._release(self.rt, context, instance)\n')


@variant(UNKNOWN, 'The class method frees through cls.rt, an attribute of '
                  'the class and not the manager\'s tracker.')
def helper_classmethod_free():
    """A ``classmethod`` helper freeing through ``cls.rt``."""
    return releasing_first('''\
    @classmethod
    def _release(cls, context, instance):
        cls.rt.delete_allocation_for_shelve_offloaded_instance(
            context, instance)
''')
