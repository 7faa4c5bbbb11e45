"""The method's name, or a helper's, bound again after its def.

In the class body: plain aliases to sibling defs (which Python binds and
the check follows), wrappers, ``property``, ``del``, ``None``, defs under
``if`` or ``try``; after the class: the method patched or set by name,
the class decorated, replaced, or defined a second time.
"""

from shelvefix.tests.unit.novacheck.corpus import edits
from shelvefix.tests.unit.novacheck.corpus import nova_34
from shelvefix.tests.unit.novacheck.corpus import registry
from shelvefix.tests.unit.novacheck.corpus import releases

FIXED = registry.FIXED
LEGACY = registry.LEGACY
UNKNOWN = registry.UNKNOWN
variant = registry.variant

DESTROY = '        self.driver.destroy(context, instance, None, None)\n'
LEGACY_BODY = DESTROY + edits.STATE_AND_SAVE + edits.FREE
FIXED_BODY = DESTROY + edits.FREE + edits.STATE_AND_SAVE
LEGACY_SIBLING = '_legacy_shelve_offload_instance'
CLASS_LINE = 'class ComputeManager(manager.Manager):\n'


def sibling(name, body, indent=''):
    """A method ``name`` with the offload signature and ``body``.

    :param indent: put before every line (for defs under a block)
    """
    text = ('    def %s(\n'
            '            self, context, instance, clean_shutdown, bdms=None,\n'
            '            accel_uuids=None):\n' % name) + body
    return ''.join(indent + line if line.strip() else line
                   for line in text.splitlines(keepends=True))


def then_in_class(text, statements):
    """``text`` with class-body ``statements`` after its last method."""
    return text + '\n' + statements


def then_in_module(text, statements):
    """``text`` with module-level ``statements`` after the class."""
    return text + '\n\n' + statements


def with_offload_hooks(text):
    """``text`` importing ``nova.compute.offload_hooks``."""
    return edits.rewrite(text, ('from nova.compute import power_state\n',
                                'from nova.compute import offload_hooks\n'
                                'from nova.compute import power_state\n'))


def with_legacy_sibling(text):
    """``text`` with the legacy sibling before the shelve-offload method."""
    return edits.insert_helpers(text, sibling(LEGACY_SIBLING, LEGACY_BODY))


@variant(LEGACY, 'The class binds the name to its legacy sibling, which '
                 'saves SHELVED_OFFLOADED before it frees.')
def class_alias_to_legacy_sibling():
    """The method re-bound after its def to a legacy-order sibling."""
    return then_in_class(
        with_legacy_sibling(nova_34.MANAGER),
        '    _shelve_offload_instance = %s\n' % LEGACY_SIBLING)


@variant(FIXED, 'The legacy def is re-bound to the fixed sibling, which '
                'frees before it saves.')
def class_alias_to_fixed_sibling():
    """The reverted method re-bound after its def to a fixed sibling."""
    return then_in_class(
        edits.insert_helpers(releases.nova_34_0_0_reverted(),
                             sibling('_fixed_shelve_offload_instance',
                                     FIXED_BODY)),
        '    _shelve_offload_instance = _fixed_shelve_offload_instance\n')


@variant(FIXED, 'The alias to the legacy sibling comes before the def, '
                'which binds the name again to the fixed method.')
def class_alias_before_def():
    """The alias to a legacy sibling, then nova 34.0.0's def."""
    return edits.insert_helpers(
        nova_34.MANAGER, sibling(LEGACY_SIBLING, LEGACY_BODY),
        '    _shelve_offload_instance = %s\n' % LEGACY_SIBLING)


@variant(UNKNOWN, 'The method is replaced by what an unknown wrapper '
                  'returns for it.')
def class_method_wrapped_by_call():
    """The method passed to a wrapper in the class body."""
    return then_in_class(
        with_offload_hooks(nova_34.MANAGER),
        '    _shelve_offload_instance = offload_hooks.traced(\n'
        '        _shelve_offload_instance)\n')


@variant(UNKNOWN, 'The method becomes a partialmethod, which the check does '
                  'not read.')
def class_method_partialmethod():
    """The method re-bound to a ``functools.partialmethod`` of itself."""
    return then_in_class(
        edits.rewrite(nova_34.MANAGER,
                      ('from oslo_log import log as logging\n',
                       'import functools\n\n'
                       'from oslo_log import log as logging\n')),
        '    _shelve_offload_instance = functools.partialmethod(\n'
        '        _shelve_offload_instance, accel_uuids=None)\n')


@variant(UNKNOWN, 'The method becomes a property, so the call in '
                  'shelve_offload_instance does not run it as written.')
def class_method_property():
    """The method re-bound to a property."""
    return then_in_class(
        nova_34.MANAGER,
        '    _shelve_offload_instance = property(_shelve_offload_instance)\n')


@variant(UNKNOWN, 'The method is deleted from the class after its def, so '
                  'there is no ComputeManager method left to read.')
def class_method_deleted():
    """``del _shelve_offload_instance`` in the class body."""
    return then_in_class(nova_34.MANAGER, '    del _shelve_offload_instance\n')


@variant(UNKNOWN, 'A configuration flag read at import decides whether the '
                  'legacy def replaces the fixed one.')
def class_def_under_if():
    """A legacy def of the method under an ``if`` after the fixed one."""
    return then_in_class(
        nova_34.MANAGER,
        '    if CONF.workarounds.legacy_shelve_offload:\n' +
        sibling('_shelve_offload_instance', LEGACY_BODY, indent='    '))


@variant(UNKNOWN, 'Whether an import succeeds decides whether the legacy '
                  'def replaces the fixed one.')
def class_def_under_try():
    """A legacy def of the method in a ``try`` handler after the fixed one."""
    return then_in_class(
        nova_34.MANAGER,
        '    try:\n'
        '        from nova.compute import offload_hooks  # noqa\n'
        '    except ImportError:\n' +
        sibling('_shelve_offload_instance', LEGACY_BODY, indent='    '))


@variant(UNKNOWN, 'The name is bound to None after the def, so the method '
                  'is gone.')
def class_method_rebound_to_none():
    """``_shelve_offload_instance = None`` in the class body."""
    return then_in_class(nova_34.MANAGER,
                         '    _shelve_offload_instance = None\n')


RELEASE_CALL = '        self._release(context, instance)\n'
FREEING = '''\
    def _free_allocations(self, context, instance):
        self.rt.delete_allocation_for_shelve_offloaded_instance(
            context, instance)
'''


@variant(UNKNOWN, '_release is re-bound to a method that does nothing, so '
                  'the allocations are never freed.')
def class_helper_aliased_to_noop():
    """The freeing helper's name re-bound to a no-op sibling."""
    return edits.with_method(DESTROY + RELEASE_CALL + edits.STATE_AND_SAVE,
                             FREEING.replace('_free_allocations', '_release'),
                             '''\
    def _noop(self, context, instance):
        pass
''', '    _release = _noop\n')


@variant(FIXED, '_release is re-bound to the sibling that frees, and it is '
                'called before the save.')
def class_helper_aliased_to_free():
    """A logging-only helper's name re-bound to a freeing sibling."""
    return edits.with_method(DESTROY + RELEASE_CALL + edits.STATE_AND_SAVE,
                             '''\
    def _release(self, context, instance):
        LOG.debug('Not freeing yet', instance=instance)
''', FREEING, '    _release = _free_allocations\n')


@variant(UNKNOWN, 'After the class the method is replaced by an imported '
                  'function the check cannot read.')
def module_assigns_method():
    """``ComputeManager._shelve_offload_instance = ...`` after the class."""
    return then_in_module(
        with_offload_hooks(nova_34.MANAGER),
        'ComputeManager._shelve_offload_instance = (\n'
        '    offload_hooks.shelve_offload_instance)\n')


@variant(UNKNOWN, 'setattr replaces the method after the class by an '
                  'imported function the check cannot read.')
def module_setattr_method():
    """``setattr(ComputeManager, '_shelve_offload_instance', ...)``."""
    return then_in_module(
        with_offload_hooks(nova_34.MANAGER),
        'setattr(ComputeManager, \'_shelve_offload_instance\',\n'
        '        offload_hooks.shelve_offload_instance)\n')


@variant(UNKNOWN, 'An unknown class decorator may replace the class or its '
                  'methods.')
def class_decorator_on_manager():
    """An imported, unknown decorator on ``ComputeManager``."""
    return edits.rewrite(with_offload_hooks(nova_34.MANAGER),
                         (CLASS_LINE,
                          '@offload_hooks.instrumented\n' + CLASS_LINE))


@variant(UNKNOWN, 'The module name ComputeManager is re-bound to what an '
                  'unknown function returns for the class.')
def module_rebinds_class():
    """``ComputeManager = ...(ComputeManager)`` after the class."""
    return then_in_module(
        with_offload_hooks(nova_34.MANAGER),
        'ComputeManager = offload_hooks.instrumented(ComputeManager)\n')


def _second_class(first, last):
    """``first`` followed by the whole ``ComputeManager`` class of ``last``."""
    return then_in_module(first, last[last.index(CLASS_LINE):])


@variant(LEGACY, 'The second class statement binds ComputeManager last, and '
                 'its method, with its own helpers, saves before it frees.')
def second_class_legacy():
    """A second, standalone ``ComputeManager`` in the legacy order."""
    return _second_class(nova_34.MANAGER, releases.nova_34_0_0_reverted())


@variant(FIXED, 'The second class statement binds ComputeManager last, and '
                'its method frees before it saves.')
def second_class_fixed():
    """The legacy ``ComputeManager``, then a second one in the fixed order."""
    return _second_class(releases.nova_34_0_0_reverted(), nova_34.MANAGER)
