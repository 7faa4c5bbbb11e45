"""Synthetic ``nova/compute/manager.py`` files in the shapes nova has had.

Each shape is a minimal, rewritten ``_shelve_offload_instance``: only the
statements the check looks at and a few neighbours to read past, in the
arrangement the named release had. :func:`module` wraps a method in a
``ComputeManager`` class inside a small module; :func:`line_of` finds the
line a test expects evidence for.
"""

import textwrap

MODULE = '''\
"""Compute manager ({title})."""

from nova.compute import task_states
from nova.compute import vm_states
from nova import manager
from nova import objects

SHELVING_STATES = [task_states.SHELVING, task_states.SHELVING_OFFLOADING]


class ComputeManager(manager.Manager):

    def _get_power_state(self, instance):
        return self.driver.get_info(instance).state

{methods}
'''

STEPS_BEFORE = '''\
        if bdms is None:
            bdms = objects.BlockDeviceMappingList.get_by_instance_uuid(
                context, instance.uuid)
        self._power_off_instance(context, instance, clean_shutdown)
        current_power_state = self._get_power_state(instance)
        self.driver.destroy(context, instance, [], None)
'''

# Rocky before the fix: the tracker is fetched and asked to free the
# allocations only after the offloaded state was saved.
ROCKY_LEGACY = '''\
    def _shelve_offload_instance(self, context, instance, clean_shutdown,
                                 bdms=None):
{steps}
        instance.power_state = current_power_state
        instance.vm_state = vm_states.SHELVED_OFFLOADED
        instance.task_state = None
        instance.save(expected_task_state=SHELVING_STATES)

        self._update_resource_tracker(context, instance)

        rt = self._get_resource_tracker()
        rt.delete_allocation_for_shelve_offloaded_instance(context, instance)

        self._nil_out_instance_obj_host_and_node(instance)
        instance.save(expected_task_state=None)
'''

# Stein, and Rocky with the backport: same calls, the free moved first.
ROCKY_FIXED = '''\
    def _shelve_offload_instance(self, context, instance, clean_shutdown,
                                 bdms=None):
{steps}
        rt = self._get_resource_tracker()
        rt.delete_allocation_for_shelve_offloaded_instance(context, instance)

        instance.power_state = current_power_state
        instance.vm_state = vm_states.SHELVED_OFFLOADED
        instance.task_state = None
        instance.save(expected_task_state=SHELVING_STATES)

        self._update_resource_tracker(context, instance)
        self._nil_out_instance_obj_host_and_node(instance)
        instance.save(expected_task_state=None)
'''

# Train onwards: one tracker in self.rt; accelerators since Wallaby.
MODERN_FIXED = '''\
    def _shelve_offload_instance(self, context, instance, clean_shutdown,
                                 bdms=None, accel_uuids=None):
{steps}
        if accel_uuids:
            cyclient = cyborg.get_client(context)
            cyclient.delete_arqs_for_instance(instance.uuid)

        self.rt.delete_allocation_for_shelve_offloaded_instance(context,
                                                                instance)

        instance.power_state = current_power_state
        instance.vm_state = vm_states.SHELVED_OFFLOADED
        instance.task_state = None
        instance.save(expected_task_state=[task_states.SHELVING,
                                           task_states.SHELVING_OFFLOADING])

        self._update_resource_tracker(context, instance)
        self._nil_out_instance_obj_host_and_node(instance)
        instance.save(expected_task_state=None)
'''

# A modern tree with the pre-fix order (a bad merge, or a revert).
MODERN_LEGACY = '''\
    def _shelve_offload_instance(self, context, instance, clean_shutdown,
                                 bdms=None, accel_uuids=None):
{steps}
        instance.power_state = current_power_state
        instance.vm_state = vm_states.SHELVED_OFFLOADED
        instance.task_state = None
        instance.save(expected_task_state=[task_states.SHELVING,
                                           task_states.SHELVING_OFFLOADING])

        self.rt.delete_allocation_for_shelve_offloaded_instance(context,
                                                                instance)
        self._update_resource_tracker(context, instance)
        self._nil_out_instance_obj_host_and_node(instance)
        instance.save(expected_task_state=None)
'''

# Older variant: the report client frees the allocations itself.
REPORT_CLIENT = '''\
    def _shelve_offload_instance(self, context, instance, clean_shutdown,
                                 bdms=None):
{steps}
{free_before}
        instance.vm_state = vm_states.SHELVED_OFFLOADED
        instance.task_state = None
        instance.save(expected_task_state=SHELVING_STATES)
{free_after}
        self._nil_out_instance_obj_host_and_node(instance)
        instance.save(expected_task_state=None)
'''


def rocky_legacy():
    return module(ROCKY_LEGACY.format(steps=STEPS_BEFORE),
                  title='Rocky, legacy')


def rocky_fixed():
    return module(ROCKY_FIXED.format(steps=STEPS_BEFORE),
                  title='Rocky, fixed')


def modern_fixed():
    return module(MODERN_FIXED.format(steps=STEPS_BEFORE),
                  title='Train+, fixed')


def modern_legacy():
    return module(MODERN_LEGACY.format(steps=STEPS_BEFORE),
                  title='Train+, legacy')


def report_client(free, before=True):
    """The report-client variant, freeing with the statement ``free``."""
    line = '        %s\n' % free
    return module(REPORT_CLIENT.format(
        steps=STEPS_BEFORE, free_before=line if before else '',
        free_after='' if before else line), title='report client')


def method(body, signature='self, context, instance, clean_shutdown'):
    """A ``_shelve_offload_instance`` with ``body`` (indented 4 spaces)."""
    return ('    def _shelve_offload_instance(%s):\n' % signature +
            textwrap.indent(textwrap.dedent(body), ' ' * 8))


def module(*methods, title='synthetic'):
    """A manager module whose ComputeManager holds ``methods``."""
    return MODULE.format(title=title, methods='\n'.join(methods))


def line_of(text, fragment, nth=1):
    """The 1-based line holding the ``nth`` occurrence of ``fragment``."""
    seen = 0
    for number, line in enumerate(text.splitlines(), 1):
        if fragment in line:
            seen += 1
            if seen == nth:
                return number
    raise AssertionError('%r not found %d times' % (fragment, nth))
