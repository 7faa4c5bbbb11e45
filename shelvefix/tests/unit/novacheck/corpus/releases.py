"""Real releases and their historical shapes.

nova 34.0.0 and 18.3.0 as released, the fix reverted or backported, the
Stein/Train and Pike shapes, and the report client called directly.
"""

from shelvefix.tests.unit.novacheck.corpus import edits
from shelvefix.tests.unit.novacheck.corpus import nova_18_3
from shelvefix.tests.unit.novacheck.corpus import nova_34
from shelvefix.tests.unit.novacheck.corpus import registry

FIXED = registry.FIXED
LEGACY = registry.LEGACY
variant = registry.variant


@variant(FIXED, 'The allocations are freed before the first save of '
                'SHELVED_OFFLOADED, the order of the fix.')
def nova_34_0_0():
    """nova 34.0.0's method, as released."""
    return nova_34.MANAGER


@variant(LEGACY, 'The free was moved back after the save that makes '
                 'SHELVED_OFFLOADED visible.')
def nova_34_0_0_reverted():
    """nova 34.0.0 with the fix reverted: the free after the first save."""
    return edits.rewrite(
        nova_34.MANAGER, (nova_34.FREE + '\n', ''),
        (nova_34.SAVE, nova_34.SAVE +
         '        self.rt.delete_allocation_for_shelve_offloaded_instance(\n'
         '            context, instance)\n'))


@variant(FIXED, 'Stein and Train free through self.rt before the save, '
                'like today.')
def nova_19_to_20_shape():
    """The method as in nova 19.0.0 to 20.6.1 (Stein, Train).

    Network cleanup on the host instead of unbinding ports, no
    accelerators; only ``_get_power_state`` (then given ``context`` too)
    differs from those releases.
    """
    return edits.rewrite(
        nova_34.MANAGER,
        ('        network_info = self.network_api.get_instance_nw_info('
         'context, instance)\n\n'
         '        ports_id = [vif[\'id\'] for vif in network_info]\n'
         '        self.network_api.unbind_ports(context, ports_id, '
         'detach=False)\n',
         '\n        self.network_api.cleanup_instance_network_on_host(\n'
         '            context, instance, instance.host)\n'
         '        network_info = self.network_api.get_instance_nw_info('
         'context, instance)\n'),
        ('        # Release the accelerators held in cyborg.\n'
         '        if accel_uuids:\n'
         '            cyclient = cyborg.get_client(context)\n'
         '            cyclient.delete_arqs_for_instance(instance.uuid)\n\n',
         ''))


@variant(LEGACY, 'Rocky saves SHELVED_OFFLOADED and only then asks the '
                 'resource tracker to free the allocations.')
def nova_18_3_0_rocky():
    """nova 18.3.0's method, as released (the last Rocky release)."""
    return nova_18_3.MANAGER


@variant(FIXED, 'The tracker is fetched and the allocations freed before '
                'the state is set and saved.')
def rocky_backport():
    """Rocky with the fix backported: ``rt`` fetched and used first."""
    return edits.rewrite(
        nova_18_3.MANAGER, (nova_18_3.FREE + '\n', ''),
        (nova_18_3.POWER_STATE,
         nova_18_3.FREE + '\n' + nova_18_3.POWER_STATE))


@variant(LEGACY, 'Pike frees through the tracker, without a context '
                 'argument, after the save.')
def pike_16_1_8():
    """The Pike shape (nova 16.1.8): ``rt`` frees given only the instance."""
    return edits.rewrite(
        nova_18_3.MANAGER,
        ('rt.delete_allocation_for_shelve_offloaded_instance(context, '
         'instance)',
         'rt.delete_allocation_for_shelve_offloaded_instance(instance)'))


@variant(FIXED, 'The report client deletes the allocations of '
                'instance.uuid before the save.')
def report_client_fixed():
    """The report client called directly, before the state is set."""
    return edits.rewrite(
        nova_34.MANAGER,
        (nova_34.FREE,
         '        self.reportclient.delete_allocation_for_instance(\n'
         '            context, instance.uuid)\n'))


@variant(LEGACY, 'The report client deletes the allocations only after '
                 'SHELVED_OFFLOADED was saved.')
def report_client_legacy():
    """The report client called directly, after the first save."""
    return edits.rewrite(
        nova_34.MANAGER, (nova_34.FREE + '\n', ''),
        (nova_34.SAVE, nova_34.SAVE +
         '        self.reportclient.delete_allocation_for_instance(\n'
         '            context, instance.uuid)\n'))


@variant(FIXED, 'The tracker\'s report client frees instance.uuid before '
                'the state is set and saved.')
def tracker_report_client_fixed():
    """Rocky, freeing through ``rt.reportclient`` (the Queens idiom) first."""
    return edits.rewrite(
        nova_18_3.MANAGER, (nova_18_3.FREE + '\n', ''),
        (nova_18_3.POWER_STATE,
         '        rt = self._get_resource_tracker()\n'
         '        rt.reportclient.delete_allocation_for_instance(\n'
         '            context, instance.uuid)\n\n' + nova_18_3.POWER_STATE))
