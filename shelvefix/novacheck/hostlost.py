"""Host lost: are host and node cleared when SHELVED_OFFLOADED is visible?

``race --scenario lifecycle`` found it, and no nova release fixes it:
``_shelve_offload_instance`` saves ``SHELVED_OFFLOADED`` first and clears
``host`` and ``node`` in a second save that checks no task state. An
unshelve started on the first save can place the server on another host
and save that host before the second save lands, which then wipes it: the
server runs on a host nova no longer records.

The fix holds when, on every path, the save that makes SHELVED_OFFLOADED
visible already carries ``host = None`` and ``node = None``, or when the
later save that clears them is guarded by an expected task state (so it
fails once an unshelve has begun). :func:`check` follows the method's
paths (:mod:`shelvefix.novacheck.paths`) with :class:`Cleared`, the
semantics in which "freed" means the field was set to None, once for
``host`` and once for ``node``.
"""

import ast

from shelvefix.novacheck import events
from shelvefix.novacheck import outcome
from shelvefix.novacheck import paths
from shelvefix.novacheck import steps
from shelvefix.novacheck import values

FIELDS = ('host', 'node')
# Marks a state in which SHELVED_OFFLOADED has been saved already.
VISIBLE = (('state', 'visible'), 'yes')


class Cleared(events.Semantics):
    """Steps as they clear one field of the instance, frees ignored.

    As for the allocations, code the check does not read may save the
    instance it is handed and does nothing else to it, except a
    ``ComputeManager`` helper it cannot read, which may clear the field.
    """

    def __init__(self, field):
        self.field = field

    def _free(self, step, state, call, happened):
        return state, tuple(happened)

    _untrusted_free = _free

    def _op_opaque(self, step, state, call, frees, why):
        happened = []
        self._escapes(step, state, call, happened, why)
        if any(values.holds_instance(v, step.scope, state.bindings)
               for v in list(call.args) + [k.value for k in call.keywords]):
            state = state._replace(maybe_freed=why)
        return state, tuple(happened)

    def _save(self, state, happened):
        state, happened = super(Cleared, self)._save(state, happened)
        if state.offloaded == values.YES:
            # Visible from now on: later saves no longer decide.
            state = state._replace(bindings=state.bindings | {VISIBLE})
        return state, happened

    def _bind(self, step, state, target, value, kind, happened):
        owner = field = None
        if isinstance(target, ast.Attribute):
            owner, field = target.value, target.attr
        if (field == self.field and values.classify(
                owner, step.scope, state.bindings) == values.INSTANCE):
            cleared = isinstance(value, ast.Constant) and value.value is None
            happened.append(events.Event(
                events.FREE if cleared else events.ALIAS, None,
                'clears %s' % field if cleared else 'sets %s' % field))
            return state._replace(freed=cleared)
        return super(Cleared, self)._bind(step, state, target, value, kind,
                                          happened)


def guarded(step):
    """Whether the save at ``step`` checks an expected task state."""
    call = step.where[-1].node
    if not (isinstance(call, ast.Call) and
            getattr(call.func, 'attr', None) == 'save'):
        return False
    expected = next((k.value for k in call.keywords
                     if k.arg == 'expected_task_state'),
                    call.args[1] if len(call.args) > 1 else None)
    return expected is not None and not (
        isinstance(expected, ast.Constant) and expected.value is None)


def _one(graph, field, display):
    """``(status, reason, evidence, found, pairs)`` for one field."""
    found = paths.explore(graph, Cleared(field))
    if not found.sets:
        return (outcome.UNKNOWN, 'vm_state is never set to SHELVED_OFFLOADED',
                None, found, [])
    unfreed = [f for f in found.unfreed if VISIBLE not in f.key[1].bindings]
    doubtful = [f for f in found.doubtful
                if VISIBLE not in f.key[1].bindings]
    for finding in unfreed:
        step = finding.key[0]
        ends = found.reach(finding.key, lambda k: k is not finding.key and (
            k[1].freed and _saves(found, k)))
        for end, pairs in sorted(ends.items(), key=lambda i: len(i[1])):
            path = found.keys_to(finding.key) + pairs[1:]
            where = '%s:%d' % (display, end[0].line)
            if not (end[1].freed and _saves(found, end)):
                status = (outcome.MISSING if end[1].maybe_freed is None
                          else outcome.UNKNOWN)
                return (status, 'the save at line %d makes '
                        'SHELVED_OFFLOADED visible and %s is not cleared '
                        'after it on the path shown' % (step.line, field),
                        '%s:%d: %s' % (display, step.line,
                                       paths.site_of(step).source),
                        found, path)
            if not guarded(end[0]):
                return (outcome.MISSING, 'the save at line %d makes '
                        'SHELVED_OFFLOADED visible with %s still set; the '
                        'save at line %d clears it without an expected task '
                        'state, so it can wipe the host an unshelve just '
                        'saved' % (step.line, field, end[0].line),
                        '%s: %s' % (where, paths.site_of(end[0]).source),
                        found, path)
    if doubtful:
        # Only when no path shows it certainly missing.
        finding = doubtful[0]
        return (outcome.UNKNOWN, 'the save at line %d may make '
                'SHELVED_OFFLOADED visible with %s set, or %s is cleared '
                'out of the check\'s sight' % (finding.key[0].line, field,
                                               field),
                None, found, found.keys_to(finding.key))
    if unfreed:
        return (outcome.FIXED, '%s is cleared by a save guarded by an '
                'expected task state' % field, None, found, [])
    first = found.proven[0]
    return (outcome.FIXED, '%s is cleared before the save that makes '
            'SHELVED_OFFLOADED visible (line %d)' % (field,
                                                     first.key[0].line),
            '%s:%d: %s' % (display, first.key[0].line,
                           paths.site_of(first.key[0]).source),
            found, found.keys_to(first.key))


def _saves(found, key):
    return any(e.kind == events.SAVE for e in found.events_at(key))


def check(files):
    """The verdict on host lost.

    :param files: a :class:`shelvefix.novacheck.outcome.Files`
    :returns: a :class:`shelvefix.novacheck.outcome.Verdict`
    """
    verdict = outcome.Verdict('host-lost')
    graph, why, _line = files.graph(steps.METHOD_NAME)
    if graph is None:
        return verdict.unknown(why)
    display = files.display('manager.py')
    results = [_one(graph, field, display) for field in FIELDS]
    rank = {outcome.MISSING: 0, outcome.UNKNOWN: 1, outcome.FIXED: 2}
    status, reason, evidence, found, pairs = min(
        results, key=lambda r: rank[r[0]])
    if status == outcome.FIXED:
        reason = '; '.join(r[1] for r in results)
    return verdict.set(status, reason, evidence,
                       paths.format_path(display, found.path(pairs)))
