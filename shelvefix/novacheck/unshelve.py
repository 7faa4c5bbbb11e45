"""Bug 1862633: does unshelve give the allocations back when ports fail?

The scheduler's claim on the destination is made before the compute
service unshelves. ``ComputeManager._unshelve_instance`` frees it in the
handler of the ``try`` around the spawn; before commit e65d4a131a the
network set-up (``setup_instance_network_on_host``, where a port binding
fails) came before that ``try``, so its failure kept the allocations.

:func:`check` builds the graph of ``_unshelve_instance`` with the helpers
it calls (:mod:`shelvefix.novacheck.cfg`) and follows, from every network
set-up, the edge taken when it raises, along the code's own edges (no
second exception): FIXED if every way out of the method from there frees
this instance's allocations first, MISSING with the path of one that does
not, UNKNOWN when the free is out of the check's sight.
"""

import ast

from shelvefix.novacheck import events
from shelvefix.novacheck import outcome
from shelvefix.novacheck import paths

METHOD_NAME = '_unshelve_instance'
SETUP = 'setup_instance_network_on_host'


def _setups(found):
    """The explored keys whose step calls the network set-up."""
    keys = []
    for key in found.keys():
        step = key[0]
        if step.op[0] in ('call', 'opaque') and getattr(
                step.op[1].func, 'attr', None) == SETUP:
            keys.append(key)
    return sorted(keys, key=lambda k: k[0].index)


def _lines(display, found, pairs):
    return paths.format_path(display, found.path(pairs))


def check(files):
    """The verdict on bug 1862633.

    :param files: a :class:`shelvefix.novacheck.outcome.Files`
    :returns: a :class:`shelvefix.novacheck.outcome.Verdict`
    """
    verdict = outcome.Verdict('1862633')
    graph, why, _line = files.graph(METHOD_NAME)
    if graph is None:
        return verdict.unknown(why)
    display = files.display('manager.py')
    found = paths.explore(graph)
    setups = _setups(found)
    if not setups:
        return verdict.unknown('%s never calls %s' % (METHOD_NAME, SETUP))
    doubt = None
    for key in setups:
        step, state = key
        where = '%s:%d: %s' % (display, step.line,
                               paths.site_of(step).source)
        if step.exc is None:
            return verdict.missing(
                'the network set-up at line %d is in no try: when port '
                'binding fails the allocations on this host are kept'
                % step.line, where, _lines(display, found,
                                           found.keys_to(key)))
        start = (step.exc, events.forget(state, step.exc.live))
        ends = found.reach(start, lambda k: k[1].freed)
        for end, pairs in sorted(ends.items(),
                                 key=lambda item: len(item[1])):
            if end[1].freed:
                continue
            lines = _lines(display, found, found.keys_to(key) + pairs[1:])
            if end[1].maybe_freed is None:
                return verdict.missing(
                    'when the network set-up at line %d fails, %s leaves '
                    'without freeing the allocations (the path shown)'
                    % (step.line, METHOD_NAME), where, lines)
            doubt = doubt or (end[1].maybe_freed, where, lines)
    if doubt is not None:
        return verdict.unknown(
            'when the network set-up fails, the allocations are freed only '
            'if %s' % doubt[0], doubt[1], doubt[2])
    step = setups[0][0]
    frees = sorted({k[0].line for k in found.frees})
    return verdict.fixed(
        'when the network set-up at line %d fails, every way out of %s '
        'frees the allocations first (line %s)' % (
            step.line, METHOD_NAME, ', '.join(str(n) for n in frees)),
        '%s:%d: %s' % (display, step.line, ast.unparse(
            paths.site_of(step).node).splitlines()[0]))
