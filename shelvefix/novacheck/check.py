"""Does a nova tree have the fix for bug 1798688?

The fix (change I2a6ccaff904c1f0759d55feeeef0ec1da32c65df, Stein, and
backported to Rocky) moved the freeing of the instance's allocations in
``ComputeManager._shelve_offload_instance`` *before* the save that makes
``vm_state = SHELVED_OFFLOADED`` visible. :func:`check_path`,
:func:`check_installed` and :func:`check_source` decide on paths, not on
line order: they build the method's control-flow graph with the helpers it
calls inlined (:mod:`shelvefix.novacheck.cfg`), follow the instance down
every path (:mod:`shelvefix.novacheck.paths`) and answer with a
:class:`Result`:

``fixed`` (exit 0)
    on every path to every save that can make SHELVED_OFFLOADED visible,
    this instance's allocations were freed first;
``legacy`` (exit 1)
    on some path such a save comes before any free; the path is shown;
``unknown`` (exit 2)
    neither can be proven: the reason, and the path that lacks proof
    (no such method, no free of this instance, a save the check cannot
    see into, a syntax error...).
"""

import ast

from shelvefix.novacheck import cfg
from shelvefix.novacheck import events
from shelvefix.novacheck import paths
from shelvefix.novacheck import source as source_mod
from shelvefix.novacheck import steps
from shelvefix.novacheck import values

FIXED = 'fixed'
LEGACY = 'legacy'
UNKNOWN = 'unknown'
EXIT_CODES = {FIXED: 0, LEGACY: 1, UNKNOWN: 2}
FIX_CHANGE_ID = 'I2a6ccaff904c1f0759d55feeeef0ec1da32c65df'
METHOD = '%s.%s' % (steps.CLASS_NAME, steps.METHOD_NAME)

HEADLINES = {
    FIXED: 'FIXED: %s frees the instance\'s allocations before the save '
           'that makes SHELVED_OFFLOADED visible, on every path.' % METHOD,
    LEGACY: 'LEGACY ORDER: %s saves vm_state = SHELVED_OFFLOADED before it '
            'frees the instance\'s allocations.' % METHOD,
    UNKNOWN: 'CANNOT TELL: %s',
}
PATH_HEADINGS = {FIXED: 'one such path', LEGACY: 'the path',
                 UNKNOWN: 'the path without proof'}

LEGACY_ADVICE = (
    '  An unshelve started as soon as the server shows SHELVED_OFFLOADED\n'
    '  races this cleanup (bug 1798688): the scheduler\'s claim fails with\n'
    '  409 "consumer generation conflict", or its new allocations are\n'
    '  wiped. Backport change %s (free first).' % FIX_CHANGE_ID)


class Result(object):
    """The verdict on one compute manager file.

    :ivar status: :data:`FIXED`, :data:`LEGACY` or :data:`UNKNOWN`
    :ivar reason: why, in one sentence
    :ivar display: the file as evidence names it
    :ivar filename: the file that was read (None if none was found)
    :ivar version: the installed nova version, when known
    :ivar method_line: where ``_shelve_offload_instance`` starts
    :ivar free: the :class:`~shelvefix.novacheck.paths.Site` freeing the
        allocations on the path that decided, or None
    :ivar state: the site setting ``vm_state = SHELVED_OFFLOADED``
    :ivar save: the save that makes that state visible
    :ivar path: the :class:`~shelvefix.novacheck.paths.PathStep` lines of
        the path that decided (empty when no path did)
    :ivar states: how many (step, state) pairs were explored
    :ivar notes: further findings worth reading (list of str)
    :ivar unreadable: True when there was nothing to check: no such file,
        or one that cannot be read as Python source (status UNKNOWN)
    """

    def __init__(self, status, reason=None, display=None, filename=None,
                 version=None, method_line=None, free=None, state=None,
                 save=None, notes=None, path=None, unreadable=False):
        self.status = status
        self.unreadable = unreadable
        self.reason = reason
        self.display = display
        self.filename = filename
        self.version = version
        self.method_line = method_line
        self.free = free
        self.state = state
        self.save = save
        self.notes = notes or []
        self.path = path or []
        self.states = 0

    @property
    def exit_code(self):
        return EXIT_CODES[self.status]

    def evidence(self, site):
        """``path:line: statement`` for a site."""
        return '%s:%d: %s' % (self.display, site.node.lineno, site.source)

    def to_dict(self):
        """The result as JSON-serialisable data."""
        return {
            'file': self.filename, 'path': self.display,
            'nova_version': self.version, 'status': self.status,
            'exit_code': self.exit_code, 'reason': self.reason,
            'method': METHOD, 'method_line': self.method_line,
            'free': self._site_dict(self.free),
            'state': self._site_dict(self.state),
            'save': self._site_dict(self.save),
            'witness': [dict(step._asdict()) for step in self.path],
            'states_explored': self.states,
            'notes': list(self.notes),
            'unreadable': self.unreadable,
        }

    def _site_dict(self, site):
        if site is None:
            return None
        data = {'line': site.node.lineno,
                'end_line': site.node.end_lineno,
                'source': site.source,
                'evidence': self.evidence(site)}
        if site.receiver is not None:
            data['receiver'] = dict(site.receiver)
        if site.via is not None:
            data['via'] = self._site_dict(site.via)
        return data

    def render(self):
        """The result as text, evidence first-class."""
        lines = []
        if self.filename:
            # Evidence uses the short name; say once which file that is.
            about = [self.filename] if self.filename != self.display else []
            if self.version:
                about.append('nova %s' % self.version)
            lines.append(self.display + (' (%s)' % ', '.join(about)
                                         if about else ''))
        headline = HEADLINES[self.status]
        lines.append(headline % self.reason if self.status == UNKNOWN
                     else headline)
        if self.status != UNKNOWN and self.reason:
            lines.append('  %s' % self.reason)
        for label, site in (('frees allocations', self.free),
                            ('sets the state', self.state),
                            ('saves it', self.save)):
            if site is not None:
                lines.extend(self._site_lines(label, site))
        if self.path:
            lines.append('  %s:' % PATH_HEADINGS[self.status])
            lines.extend(paths.format_path(self.display, self.path,
                                           '    '))
        lines.extend('  note: %s' % note for note in self.notes)
        if self.status == LEGACY:
            lines.append(LEGACY_ADVICE)
        return '\n'.join(lines) + '\n'

    def _site_lines(self, label, site):
        lines = ['  %-18s %s' % (label + ':', self.evidence(site))]
        inner = site.via
        while inner is not None:
            lines.append('  %-18s %s' % ('which calls:', self.evidence(inner)))
            inner = inner.via
        receiver = site.innermost.receiver or {}
        if receiver.get('binding'):
            lines.append('  %-18s %s:%d: %s' % (
                '%s bound at:' % receiver['expression'], self.display,
                receiver['bound_at'], receiver['binding']))
        return lines


def check_path(path):
    """Check the compute manager in a tree, package directory or file.

    :returns: a :class:`Result` (UNKNOWN when there is nothing to read)
    """
    try:
        manager = source_mod.from_path(path)
    except source_mod.SourceError as e:
        return Result(UNKNOWN, str(e), display=path, unreadable=True)
    return check_file(manager)


def check_installed(**kwargs):
    """Check the ``nova`` package this Python would import (not imported).

    :param kwargs: passed to :func:`shelvefix.novacheck.source.installed`
    :returns: a :class:`Result`
    """
    try:
        manager = source_mod.installed(**kwargs)
    except source_mod.SourceError as e:
        return Result(UNKNOWN, str(e), unreadable=True)
    return check_file(manager)


def check_file(manager):
    """Check one :class:`~shelvefix.novacheck.source.ManagerFile`."""
    try:
        text = manager.read()
    except source_mod.SourceError as e:
        return Result(UNKNOWN, str(e), display=manager.display,
                      filename=manager.filename, version=manager.version,
                      unreadable=True)
    result = check_source(text, manager.display)
    result.filename = manager.filename
    result.version = manager.version
    return result


def check_source(text, display=source_mod.MANAGER_RELPATH,
                 class_name=steps.CLASS_NAME):
    """Check compute manager source text.

    :param text: the contents of ``nova/compute/manager.py``
    :param display: the name evidence uses for the file
    :param class_name: the compute manager class in ``text``
    :returns: a :class:`Result`
    """
    if '\0' in text:
        # Looked for here: compile() refuses it with a ValueError on some
        # Pythons (3.11.2) and a SyntaxError on others (3.11.7, 3.12).
        return Result(UNKNOWN, 'not Python source: %s: a NUL byte at '
                      'offset %d' % (display, text.index('\0')),
                      display=display, unreadable=True)
    try:
        tree = ast.parse(text, filename=display)
    except SyntaxError as e:
        return Result(UNKNOWN, 'syntax error in %s line %s: %s'
                      % (display, e.lineno, e.msg), display=display)
    return check_tree(tree, display, class_name)


def check_tree(tree, display, class_name=steps.CLASS_NAME, built=None):
    """Check a parsed compute manager (``ast.Module``).

    :param built: what :func:`shelvefix.novacheck.cfg.method_graph` gave
        for it already, if anything
    """
    graph, why, line = built or cfg.method_graph(tree, display,
                                                 class_name=class_name)
    if graph is None:
        return Result(UNKNOWN, why, display=display, method_line=line)
    found = paths.explore(graph)
    result = judge(found, Result(UNKNOWN, display=display, method_line=line))
    result.states = found.states
    return result


def judge(found, result):
    """Read the verdict off an :class:`~shelvefix.novacheck.paths.Exploration`.

    :param result: the :class:`Result` to fill in
    :returns: ``result``
    """
    result.notes.extend('line %d %s' % (step.line, what)
                        for step, what in found.other_frees.items())
    if not found.frees:
        return _never_freed(found, result)
    if not found.sets:
        result.free = paths.site_of(found.frees[0][0])
        result.reason = ('vm_state is never set to SHELVED_OFFLOADED in %s'
                         % steps.METHOD_NAME)
        return result
    if found.unfreed:
        return _legacy(found, result, found.unfreed[0])
    if found.doubtful:
        return _doubtful(found, result, found.doubtful[0])
    if not found.proven:
        state = found.sets[0][0]
        result.state = paths.site_of(state)
        result.free = paths.site_of(found.frees[0][0])
        result.reason = (
            'vm_state = SHELVED_OFFLOADED is set at line %d but the instance '
            'is not saved after it in %s' % (_line(result.state),
                                             steps.METHOD_NAME))
        return result
    finding = found.proven[0]
    pairs = found.keys_to(finding.key)
    _evidence(found, result, pairs)
    result.status = FIXED
    result.reason = (
        'every path to a save of SHELVED_OFFLOADED frees the allocations '
        'first (%d program states explored); the first save is at line %d, '
        'after the free at line %d' % (found.states,
                                       _line(result.save),
                                       _line(result.free)))
    result.path = found.path(pairs)
    return result


def _line(site):
    """The line a site really is on, inside helpers if it is in one."""
    return site.innermost.node.lineno


def _evidence(found, result, pairs):
    """Free, state and save sites from the path ``pairs``."""
    for key, label in pairs:
        if label == 'raises':
            continue
        for event in found.events_at(key):
            if event.kind == events.FREE and result.free is None:
                result.free = paths.site_of(key[0])
            elif event.kind == events.SET and event.level == values.YES:
                result.state = paths.site_of(key[0])
    result.save = paths.site_of(pairs[-1][0][0])


def _legacy(found, result, finding):
    pairs = found.keys_to(finding.key)
    _evidence(found, result, pairs)
    save = _line(result.save)
    onward = found.onward(finding.key, events.FREE)
    result.status = LEGACY
    if onward:
        pairs = pairs[:-1] + onward
        result.free = paths.site_of(onward[-1][0][0])
        result.reason = ('on the path shown, the save at line %d makes '
                         'SHELVED_OFFLOADED visible before the allocations '
                         'are freed at line %d'
                         % (save, _line(result.free)))
    else:
        result.free = paths.site_of(min(
            (key[0] for key in found.frees), key=lambda s: s.index))
        result.reason = ('on the path shown, the save at line %d makes '
                         'SHELVED_OFFLOADED visible and the allocations are '
                         'not freed at all' % save)
    result.path = found.path(pairs)
    return result


def _doubtful(found, result, finding):
    pairs = found.keys_to(finding.key)
    _evidence(found, result, pairs)
    result.free = paths.site_of(found.frees[0][0])
    step, state = finding.key
    line = _line(result.save)
    event = finding.event
    if event.kind == events.MAY_SAVE:
        result.reason = ('at line %d %s, with vm_state set to '
                         'SHELVED_OFFLOADED and the allocations not freed'
                         % (line, event.what))
    elif state.maybe_freed is not None and event.level == values.YES:
        result.reason = ('the save at line %d makes SHELVED_OFFLOADED '
                         'visible, and the allocations are freed before it '
                         'only if %s' % (line, state.maybe_freed))
    else:
        result.reason = ('the save at line %d may make SHELVED_OFFLOADED '
                         'visible (vm_state may have been set to it) before '
                         'the allocations are freed' % line)
    result.path = found.path(pairs)
    return result


def _never_freed(found, result):
    reasons = ['%s (line %d)' % (what, step.line)
               for step, what in found.maybe_frees.items()]
    result.reason = (
        'allocations are never freed in %s (no call of %s given this '
        'instance, directly or through another %s method%s)' % (
            steps.METHOD_NAME, ' or '.join(values.FREE_METHODS),
            steps.CLASS_NAME,
            '; ' + '; '.join(reasons) if reasons else ''))
    findings = found.unfreed or found.doubtful or found.proven
    if findings:
        _evidence(found, result, found.keys_to(findings[0].key))
    return result
