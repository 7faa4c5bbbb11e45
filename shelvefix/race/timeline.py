"""One ordered timeline of placement requests and instance saves.

Bug 1798688 is about the order of two kinds of events that are recorded in
different places: placement requests (the transport's call log) and
instance saves (the instance store). :class:`Timeline` merges them, and
:func:`order_violations` says whether a shelve-offload freed the
instance's allocations before the save that made ``SHELVED_OFFLOADED``
visible. The library's code and nova's own are judged by this one rule.

Only ``vm_states`` is imported, so the tests on nova's code can use it.
"""

from shelvefix.compute import vm_states


class Timeline(object):
    """Placement calls and saves, in the order they happened.

    :param placement: a placement fixture (its ``calls`` are the log)
    :param store: the :class:`~shelvefix.objects.instance.InstanceStore`
        whose saves to record
    """

    def __init__(self, placement, store):
        self.placement = placement
        self._marks = []
        store.observers.append(self._saved)

    def _saved(self, uuid, row):
        # Store observers run under the store's lock, in save order.
        self._marks.append((len(self.placement.calls), row))

    def reset(self):
        """Forget the saves recorded so far.

        The call log is the placement fixture's: reset it there.
        """
        del self._marks[:]

    def events(self):
        """The merged timeline.

        :returns: a list of ``('placement', Call)`` and ``('save', row)``;
            a save is placed before the first call that completed after it
        """
        events = []
        marks = list(self._marks)
        for index, call in enumerate(list(self.placement.calls)):
            while marks and marks[0][0] <= index:
                events.append(('save', marks.pop(0)[1]))
            events.append(('placement', call))
        events.extend(('save', row) for _, row in marks)
        return events


def index_of_offloaded_save(timeline):
    """Position of the save that made SHELVED_OFFLOADED visible, or None."""
    for index, (kind, item) in enumerate(timeline):
        if kind == 'save' and item['vm_state'] == vm_states.SHELVED_OFFLOADED:
            return index
    return None


def order_violations(timeline, consumer):
    """What is wrong with the order of a shelve-offload's timeline.

    The allocations must be freed (a successful DELETE
    /allocations/{consumer}, or the GET and then the successful PUT of empty
    allocations) before the save that makes SHELVED_OFFLOADED visible.

    :param timeline: as returned by :meth:`Timeline.events`
    :param consumer: the instance uuid
    :returns: a list of problems, empty when the order is right
    """
    url = '/allocations/%s' % consumer
    saved_at = index_of_offloaded_save(timeline)
    if saved_at is None:
        return ['SHELVED_OFFLOADED was never saved']
    freeing = []
    for index, (kind, call) in enumerate(timeline):
        if kind != 'placement' or call.path != url or call.status != 204:
            continue
        if call.method == 'DELETE':
            freeing = [index]
        elif (call.method == 'PUT' and isinstance(call.body, dict) and
              call.body.get('allocations') == {}):
            gets = [i for i, (k, c) in enumerate(timeline[:index])
                    if k == 'placement' and c.method == 'GET' and
                    c.path == url]
            freeing = gets[-1:] + [index]
    if not freeing:
        return ['the allocations of %s were never freed' % consumer]
    return ['%s %s came after the save that made SHELVED_OFFLOADED visible'
            % (timeline[i][1].method, timeline[i][1].path)
            for i in freeing if i > saved_at]
