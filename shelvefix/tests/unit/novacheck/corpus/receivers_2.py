"""The free called on receivers not known to free placement allocations.

Other services of the manager, other getters, conditional, fetched by
name or by a context manager, ``self.rt`` replaced in the method, a
decoy freeing before the save with the genuine free after it (see
:mod:`.receivers` for the receivers taken as genuine), and one genuine
receiver of old releases, ``self.scheduler_client.reportclient``.
"""

from shelvefix.tests.unit.novacheck.corpus import edits
from shelvefix.tests.unit.novacheck.corpus import receivers
from shelvefix.tests.unit.novacheck.corpus import registry

FIXED = registry.FIXED
UNKNOWN = registry.UNKNOWN
variant = registry.variant

RT_FREE = receivers.RT_FREE
freeing_first = receivers.freeing_first


@variant(UNKNOWN, 'The network API is not the report client, so its '
                  'delete_allocation_for_instance is not known to free.')
def receiver_network_api():
    """The report client's call made on a local bound to the network API."""
    return freeing_first('''\
        client = self.reportclient
        client = self.network_api
        client.delete_allocation_for_instance(context, instance.uuid)
''')


@variant(UNKNOWN, '_get_tracker is not _get_resource_tracker, and what it '
                  'returns is not known to be a tracker.')
def receiver_other_getter():
    """The tracker fetched through another getter of the manager."""
    return freeing_first(
        '        rt = self._get_tracker(instance.node)\n' + RT_FREE, '''\
    def _get_tracker(self, nodename):
        return self.trackers[nodename]
''')


@variant(UNKNOWN, 'When the instance has no host rt is the driver, and '
                  'nothing shows that its call frees.')
def receiver_conditional_expression():
    """The receiver chosen by a conditional expression."""
    return freeing_first(
        '        rt = self.rt if instance.host else self.driver\n' + RT_FREE)


@variant(UNKNOWN, 'self.rt is replaced by a fake tracker just before the '
                  'free, so the real allocations may stay.')
def receiver_self_rt_reassigned():
    """``self.rt`` assigned a fake tracker in the method, then freeing."""
    return edits.rewrite(
        freeing_first('''\
        self.rt = fake_tracker.FakeTracker()
        self.rt.delete_allocation_for_shelve_offloaded_instance(
            context, instance)
'''),
        ('from nova import utils\n',
         'from nova.tests.unit.compute import fake_tracker\n'
         'from nova import utils\n'))


@variant(UNKNOWN, 'The receiver is fetched by an attribute name known only '
                  'at run time.')
def receiver_getattr():
    """The free on ``getattr(self, name)``."""
    return freeing_first('''\
        name = self.tracker_attribute
        getattr(self, name).delete_allocation_for_shelve_offloaded_instance(
            context, instance)
''')


@variant(UNKNOWN, 'The only call before the save is on the driver, not '
                  'known to free, and the genuine free comes after the '
                  'save.')
def receiver_decoy_before_save():
    """A free on the driver before the save; the tracker's after it."""
    return edits.with_method(receivers.DESTROY + '''\
        rt = self.driver
''' + RT_FREE + edits.STATE_AND_SAVE + '''\
        rt = self.rt
''' + RT_FREE)


@variant(UNKNOWN, 'With the workaround enabled rt is the driver, so on '
                  'that path the free is not proven.')
def receiver_rebound_on_one_branch():
    """The local tracker re-bound to the driver under a flag."""
    return freeing_first('''\
        rt = self.rt
        if CONF.workarounds.skip_placement_cleanup:
            rt = self.driver
''' + RT_FREE)


@variant(FIXED, 'self.scheduler_client.reportclient is the report client '
                'of Queens and before (self.reportclient was that very '
                'object), and it frees the instance\'s uuid first.')
def receiver_scheduler_client():
    """The delete through the scheduler client's report client."""
    return freeing_first('''\
        self.scheduler_client.reportclient.delete_allocation_for_instance(
            context, instance.uuid)
''')


@variant(UNKNOWN, 'rt is whatever the context manager hands out, not known '
                  'to be the resource tracker.')
def receiver_bound_by_with():
    """The receiver bound by a ``with ... as rt`` statement."""
    return freeing_first('''\
        with self._tracker_for(instance) as rt:
            rt.delete_allocation_for_shelve_offloaded_instance(
                context, instance)
''')


@variant(UNKNOWN, 'A tracker built afresh is not the manager\'s tracker, '
                  'and its free is not known to reach placement.')
def receiver_new_tracker():
    """A new ``ResourceTracker`` built in the method, then freeing."""
    return edits.rewrite(
        freeing_first('''\
        rt = resource_tracker.ResourceTracker(self.host, self.driver)
''' + RT_FREE),
        ('from nova.compute import task_states\n',
         'from nova.compute import resource_tracker\n'
         'from nova.compute import task_states\n'))


@variant(UNKNOWN, 'The tuple assignment binds rt to the driver, not the '
                  'tracker.')
def receiver_tuple_rebound():
    """rt bound to the driver by unpacking a tuple."""
    return freeing_first('''\
        rt, client = self.driver, self.reportclient
''' + RT_FREE)


@variant(UNKNOWN, 'The helper frees through the parameter it is given, '
                  'and it is given the driver.')
def receiver_helper_parameter_driver():
    """The freeing helper handed ``self.driver`` instead of the tracker."""
    return freeing_first(
        '        self._release(context, instance, self.driver)\n',
        receivers.RELEASE_WITH)
