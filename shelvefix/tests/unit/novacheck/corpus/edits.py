"""Helpers to write a variant's text, and the snippets the variants share.

The variants are small rewrites of the trimmed releases
(:mod:`.nova_34`, :mod:`.nova_18_3`): whole lines replaced with
:func:`rewrite`, methods replaced, inserted or written out with
:func:`replace_method`, :func:`insert_helpers` and :func:`with_method`.
"""

from shelvefix.tests.unit.novacheck.corpus import nova_34

# The signature of the modern method, for the methods written out.
SIGNATURE = '''\
    def _shelve_offload_instance(self, context, instance, clean_shutdown,
                                 bdms=None, accel_uuids=None):
'''

# Statements shared by the methods written out, indented 8 spaces: the
# free through the tracker, and SHELVED_OFFLOADED set and saved.
FREE = '''\
        self.rt.delete_allocation_for_shelve_offloaded_instance(
            context, instance)
'''
STATE_AND_SAVE = '''\
        instance.vm_state = vm_states.SHELVED_OFFLOADED
        instance.task_state = None
        instance.save(expected_task_state=task_states.SHELVING_OFFLOADING)
'''


def rewrite(text, *edits):
    """``text`` with each ``(old, new)`` of ``edits`` replaced in turn.

    :raises ValueError: when an ``old`` does not occur exactly once
    """
    for old, new in edits:
        count = text.count(old)
        if count != 1:
            raise ValueError('%r occurs %d times' % (old, count))
        text = text.replace(old, new)
    return text


def method_span(lines, name):
    """``(start, end)`` of the last ``ComputeManager`` method ``name``.

    The span covers its decorators and body (indented 8 or more), not the
    blank lines after it.
    """
    starts = [number for number, line in enumerate(lines)
              if line.startswith('    def %s(' % name)]
    if not starts:
        raise ValueError('no method %s' % name)
    start = starts[-1]
    end = start + 1
    while start > 0 and lines[start - 1].startswith('    @'):
        start -= 1
    while end < len(lines) and (not lines[end].strip() or
                                lines[end].startswith(' ' * 8)):
        end += 1
    while not lines[end - 1].strip():
        end -= 1
    return start, end


def replace_method(text, new, name='_shelve_offload_instance'):
    """``text`` with method ``name`` replaced by the source ``new``.

    ``new`` may hold several methods (helpers first), or be empty.
    """
    lines = text.splitlines(keepends=True)
    start, end = method_span(lines, name)
    return ''.join(lines[:start]) + new + ''.join(lines[end:])


def insert_helpers(text, *helpers):
    """``text`` with ``helpers`` inserted before the shelve-offload method.

    :param helpers: ``ComputeManager`` methods, indented 4 spaces
    """
    lines = text.splitlines(keepends=True)
    start, _end = method_span(lines, '_shelve_offload_instance')
    return (''.join(lines[:start]) + '\n'.join(helpers) + '\n' +
            ''.join(lines[start:]))


def with_method(body, *helpers, base=nova_34.MANAGER, signature=SIGNATURE):
    """``base`` with ``_shelve_offload_instance`` written out.

    :param body: the method body, indented 8 spaces
    :param helpers: further ``ComputeManager`` methods (indented 4),
        inserted before it
    """
    return replace_method(base, '\n'.join(helpers + (signature + body,)))
