"""Aliases of the instance, and other objects.

The instance saved or freed through locals, a bound ``save``, a fresh
copy; another instance's or the migration's allocations freed instead;
the early state handed on before the free.
"""

from shelvefix.tests.unit.novacheck.corpus import edits
from shelvefix.tests.unit.novacheck.corpus import nova_34
from shelvefix.tests.unit.novacheck.corpus import registry

FIXED = registry.FIXED
LEGACY = registry.LEGACY
UNKNOWN = registry.UNKNOWN
variant = registry.variant


@variant(LEGACY, 'inst is the instance, and it is saved as '
                 'SHELVED_OFFLOADED before the free.')
def alias_saves_before_free():
    """The state set and saved through an alias, then the free."""
    return edits.with_method('''\
        inst = instance
        self.driver.destroy(context, inst, None, None)
        inst.vm_state = vm_states.SHELVED_OFFLOADED
        inst.task_state = None
        inst.save(expected_task_state=task_states.SHELVING_OFFLOADING)
        self.rt.delete_allocation_for_shelve_offloaded_instance(
            context, instance)
        self._nil_out_instance_obj_host_and_node(inst)
        inst.save(expected_task_state=None)
''')


@variant(FIXED, 'The alias is saved only after the instance\'s '
                'allocations are freed.')
def alias_after_free():
    """An alias used for the state and the save, after the free."""
    return edits.with_method('''\
        inst = instance
        self.driver.destroy(context, inst, None, None)
        self.rt.delete_allocation_for_shelve_offloaded_instance(
            context, inst)
        inst.vm_state = vm_states.SHELVED_OFFLOADED
        inst.task_state = None
        inst.save(expected_task_state=task_states.SHELVING_OFFLOADING)
''')


@variant(LEGACY, 'server is inst is instance, and the save through it '
                 'comes before the free.')
def alias_chain_saves_before_free():
    """An alias of an alias saves the state before the free."""
    return edits.with_method('''\
        inst = instance
        server = inst
        server.vm_state = vm_states.SHELVED_OFFLOADED
        server.task_state = None
        server.save(expected_task_state=task_states.SHELVING_OFFLOADING)
        self.rt.delete_allocation_for_shelve_offloaded_instance(
            context, instance)
''')


@variant(LEGACY, 'The state set through the alias is the instance\'s own, '
                 'saved before the free.')
def alias_sets_original_saves():
    """The state set on an alias, the instance itself saved, then freed."""
    return edits.with_method('''\
        inst = instance
        inst.vm_state = vm_states.SHELVED_OFFLOADED
        inst.task_state = None
        instance.save(expected_task_state=task_states.SHELVING_OFFLOADING)
        self.rt.delete_allocation_for_shelve_offloaded_instance(
            context, instance)
''')


@variant(FIXED, 'The uuid deleted is instance.uuid held in a local, '
                'before the save.')
def uuid_alias_free():
    """The report client frees ``instance_uuid = instance.uuid``."""
    return edits.with_method('''\
        instance_uuid = instance.uuid
        self.driver.destroy(context, instance, None, None)
        self.reportclient.delete_allocation_for_instance(context,
                                                         instance_uuid)
        instance.vm_state = vm_states.SHELVED_OFFLOADED
        instance.task_state = None
        instance.save(expected_task_state=task_states.SHELVING_OFFLOADING)
''')


@variant(LEGACY, 'save is instance.save, and calling it before the free '
                 'makes SHELVED_OFFLOADED visible.')
def bound_save_alias():
    """The save made through a bound method held in a local."""
    return edits.with_method('''\
        save = instance.save
        instance.vm_state = vm_states.SHELVED_OFFLOADED
        instance.task_state = None
        save(expected_task_state=task_states.SHELVING_OFFLOADING)
        self.rt.delete_allocation_for_shelve_offloaded_instance(
            context, instance)
        self._nil_out_instance_obj_host_and_node(instance)
        instance.save(expected_task_state=None)
''')


@variant(LEGACY, 'A fresh copy of the same instance (same uuid) is saved '
                 'as SHELVED_OFFLOADED before the free.')
def refetched_copy_saved_before_free():
    """The state saved on a copy loaded by ``instance.uuid``, then freed."""
    return edits.with_method('''\
        self.driver.destroy(context, instance, None, None)
        fresh = objects.Instance.get_by_uuid(context, instance.uuid)
        fresh.vm_state = vm_states.SHELVED_OFFLOADED
        fresh.task_state = None
        fresh.save()
        self.rt.delete_allocation_for_shelve_offloaded_instance(
            context, instance)
        instance.vm_state = vm_states.SHELVED_OFFLOADED
        instance.task_state = None
        instance.save(expected_task_state=task_states.SHELVING_OFFLOADING)
''')


_SHADOW = '''\
        shadow = objects.Instance.get_by_uuid(
            context, instance.system_metadata['shadow_instance_uuid'])
'''


@variant(UNKNOWN, 'Only another instance\'s allocations are freed; this '
                  'instance\'s never are.')
def frees_other_instance():
    """The tracker frees a different instance's allocations."""
    return edits.with_method(_SHADOW + '''\
        self.driver.destroy(context, instance, None, None)
        self.rt.delete_allocation_for_shelve_offloaded_instance(
            context, shadow)
        instance.vm_state = vm_states.SHELVED_OFFLOADED
        instance.task_state = None
        instance.save(expected_task_state=task_states.SHELVING_OFFLOADING)
''')


@variant(UNKNOWN, 'The consumer deleted is the migration, not the '
                  'instance, whose allocations are never freed.')
def frees_migration_uuid():
    """The report client deletes the migration record's allocations."""
    return edits.with_method('''\
        migration = objects.Migration.get_by_instance_and_status(
            context, instance.uuid, 'shelving')
        self.driver.destroy(context, instance, None, None)
        self.reportclient.delete_allocation_for_instance(context,
                                                         migration.uuid)
        instance.vm_state = vm_states.SHELVED_OFFLOADED
        instance.task_state = None
        instance.save(expected_task_state=task_states.SHELVING_OFFLOADING)
''')


@variant(LEGACY, 'The free before the save is the migration\'s; the '
                 'instance is freed only after SHELVED_OFFLOADED is saved.')
def frees_other_first_then_instance():
    """The migration freed first, the instance after the save."""
    return edits.with_method('''\
        migration = objects.Migration.get_by_instance_and_status(
            context, instance.uuid, 'shelving')
        self.reportclient.delete_allocation_for_instance(context,
                                                         migration.uuid)
        instance.vm_state = vm_states.SHELVED_OFFLOADED
        instance.task_state = None
        instance.save(expected_task_state=task_states.SHELVING_OFFLOADING)
        self.reportclient.delete_allocation_for_instance(context,
                                                         instance.uuid)
''')


@variant(FIXED, 'The early save is of another instance; this one is saved '
                'only after its allocations are freed.')
def other_instance_saved_before_free():
    """A different instance is set and saved as offloaded first."""
    return edits.with_method(_SHADOW + '''\
        shadow.vm_state = vm_states.SHELVED_OFFLOADED
        shadow.save()
        self.rt.delete_allocation_for_shelve_offloaded_instance(
            context, instance)
        instance.vm_state = vm_states.SHELVED_OFFLOADED
        instance.task_state = None
        instance.save(expected_task_state=task_states.SHELVING_OFFLOADING)
''')


@variant(UNKNOWN, 'The instance, already SHELVED_OFFLOADED in memory, is '
                  'handed to the driver by the volume cleanup before the '
                  'free; nothing shows whether the driver saves it.')
def state_set_early_handed_to_driver():
    """The state set before the volume cleanup, which calls the driver."""
    return edits.rewrite(
        nova_34.MANAGER, (nova_34.STATE, ''),
        ('        # The instance leaves this host: drop its volume '
         'connections.\n',
         nova_34.STATE +
         '        # The instance leaves this host: drop its volume '
         'connections.\n'))


@variant(FIXED, 'Between the early state change and the free only block '
                'device mappings are saved, never the instance.')
def state_set_early_only_bdms_saved():
    """The state set early; each bdm saved before the free."""
    return edits.with_method('''\
        self.driver.destroy(context, instance, None, None)
        instance.vm_state = vm_states.SHELVED_OFFLOADED
        for bdm in bdms or []:
            bdm.connection_info = None
            bdm.save()
''' + edits.FREE + '''\
        instance.task_state = None
        instance.save(expected_task_state=task_states.SHELVING_OFFLOADING)
''')
