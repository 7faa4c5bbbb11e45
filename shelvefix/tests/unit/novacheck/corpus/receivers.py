"""The free called on a receiver that may not free anything.

The receivers taken as genuine: ``self.rt``, ``self.reportclient``,
``self.rt.reportclient``, a local bound to one of them or to
``self._get_resource_tracker()`` (the Rocky shape), that local's
``reportclient``, a helper's parameter given one of them. Here those
shapes, before and after the save, and locals re-bound to something else
before the free; :mod:`.receivers_2` has the other receivers.
"""

from shelvefix.tests.unit.novacheck.corpus import edits
from shelvefix.tests.unit.novacheck.corpus import nova_18_3
from shelvefix.tests.unit.novacheck.corpus import registry

FIXED = registry.FIXED
LEGACY = registry.LEGACY
UNKNOWN = registry.UNKNOWN
variant = registry.variant

DESTROY = '        self.driver.destroy(context, instance, None, None)\n'
# The free through a local named rt, whatever rt was bound to.
RT_FREE = ('        rt.delete_allocation_for_shelve_offloaded_instance('
           'context, instance)\n')


def freeing_first(free, *helpers):
    """The method written out: destroy, ``free``, the state set and saved."""
    return edits.with_method(DESTROY + free + edits.STATE_AND_SAVE, *helpers)


def saving_first(free, *helpers):
    """The method written out: destroy, the state saved, then ``free``."""
    return edits.with_method(DESTROY + edits.STATE_AND_SAVE + free, *helpers)


def rocky_freeing_with(free):
    """Rocky, its free replaced by ``free`` before the state is set."""
    return edits.rewrite(
        nova_18_3.MANAGER, (nova_18_3.FREE + '\n', ''),
        (nova_18_3.POWER_STATE, free + '\n' + nova_18_3.POWER_STATE))


RELEASE_WITH = '''\
    def _release(self, context, instance, tracker):
        tracker.delete_allocation_for_shelve_offloaded_instance(
            context, instance)
'''


@variant(FIXED, 'rt is self.rt, the resource tracker, and it frees before '
                'the save.')
def receiver_local_bound_to_rt():
    """The free through a local bound to ``self.rt``."""
    return freeing_first('        rt = self.rt\n' + RT_FREE)


@variant(FIXED, 'client is self.reportclient, and it deletes '
                'instance.uuid\'s allocations before the save.')
def receiver_local_bound_to_reportclient():
    """The report client's delete through a local."""
    return freeing_first('''\
        client = self.reportclient
        client.delete_allocation_for_instance(context, instance.uuid)
''')


@variant(FIXED, 'The tracker\'s own report client deletes instance.uuid\'s '
                'allocations before the save.')
def receiver_rt_reportclient():
    """The delete through ``self.rt.reportclient``."""
    return freeing_first('''\
        self.rt.reportclient.delete_allocation_for_instance(
            context, instance.uuid)
''')


@variant(FIXED, 'rt is self.rt, so rt.reportclient is the tracker\'s '
                'report client, and it frees before the save.')
def receiver_local_rt_reportclient():
    """The delete through the report client of a local tracker."""
    return freeing_first('''\
        rt = self.rt
        rt.reportclient.delete_allocation_for_instance(context, instance.uuid)
''')


@variant(FIXED, 'rt is re-bound to self.rt before the free, so the '
                'placeholder it held first never frees anything.')
def receiver_rebound_to_rt():
    """A local bound to a placeholder, then to the tracker, then freeing."""
    return freeing_first('''\
        rt = object()
        LOG.debug('Looking up the resource tracker', instance=instance)
        rt = self.rt
''' + RT_FREE)


@variant(FIXED, 'The helper frees through the parameter it is given, '
                'self.rt, before the save.')
def receiver_helper_parameter():
    """The tracker handed to a freeing helper as an argument."""
    return freeing_first(
        '        self._release(context, instance, self.rt)\n', RELEASE_WITH)


@variant(FIXED, 'Rocky\'s helper is given the tracker from '
                '_get_resource_tracker and frees before the state is set.')
def receiver_rocky_helper_parameter():
    """Rocky, the fetched tracker passed by keyword to a freeing helper."""
    return edits.insert_helpers(
        rocky_freeing_with(
            '        self._release(context, instance,\n'
            '                      tracker=self._get_resource_tracker())\n'),
        RELEASE_WITH)


@variant(FIXED, 'The genuine tracker frees first; the call after rt is '
                're-bound to the driver cannot undo that.')
def receiver_genuine_then_rebound():
    """The tracker frees, then the local is re-bound and called again."""
    return freeing_first('        rt = self.rt\n' + RT_FREE + '''\
        rt = self.driver
''' + RT_FREE)


@variant(LEGACY, 'rt is self.rt, but it frees only after SHELVED_OFFLOADED '
                 'was saved.')
def receiver_local_rt_after_save():
    """The free through a local tracker, after the save."""
    return saving_first('        rt = self.rt\n' + RT_FREE)


@variant(LEGACY, 'The helper given Rocky\'s tracker frees only after '
                 'SHELVED_OFFLOADED was saved.')
def receiver_rocky_helper_parameter_after_save():
    """Rocky, the free left after the save but moved into a helper."""
    return edits.insert_helpers(
        edits.rewrite(
            nova_18_3.MANAGER,
            (nova_18_3.FREE,
             '        self._release(context, instance,\n'
             '                      self._get_resource_tracker())\n')),
        RELEASE_WITH)


@variant(LEGACY, 'The save comes before any free; the genuine free after '
                 'it, and the call on the driver after that, are too late.')
def receiver_genuine_after_save_then_rebound():
    """The save, the tracker's free, then the local re-bound to the driver."""
    return saving_first('        rt = self.rt\n' + RT_FREE + '''\
        rt = self.driver
''' + RT_FREE)


@variant(UNKNOWN, 'rt is re-bound to a bare object() before the call, so '
                  'nothing shows that the allocations are freed.')
def receiver_rebound_to_object():
    """A local tracker re-bound to ``object()`` just before the free."""
    return freeing_first('''\
        rt = self.rt
        rt = object()
''' + RT_FREE)


@variant(UNKNOWN, 'rt is re-bound to a Mock, which accepts the call and '
                  'frees nothing, so the free is not proven.')
def receiver_rebound_to_mock():
    """A local tracker re-bound to ``mock.Mock()`` before the free."""
    return edits.rewrite(
        freeing_first('''\
        rt = self.rt
        rt = mock.Mock()
''' + RT_FREE),
        ('from oslo_log import log as logging\n',
         'from unittest import mock\n\nfrom oslo_log import log as logging\n'))


@variant(UNKNOWN, 'rt is re-bound to the virt driver, which is not known '
                  'to free placement allocations.')
def receiver_rebound_to_driver():
    """A local tracker re-bound to ``self.driver`` before the free."""
    return freeing_first('''\
        rt = self.rt
        rt = self.driver
''' + RT_FREE)


@variant(UNKNOWN, 'In the Rocky shape rt is re-bound to the driver after '
                  '_get_resource_tracker, so the free is not proven.')
def receiver_rocky_rebound_to_driver():
    """Rocky backported, the fetched tracker replaced by the driver."""
    return rocky_freeing_with(
        '        rt = self._get_resource_tracker()\n'
        '        rt = self.driver\n' + RT_FREE)
