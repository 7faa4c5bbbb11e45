"""Does a nova tree have the fix for bug 1798688?

The fix (change I2a6ccaff904c1f0759d55feeeef0ec1da32c65df, Stein, and
backported to Rocky) moved the freeing of the instance's allocations in
``ComputeManager._shelve_offload_instance`` *before* the save that makes
``vm_state = SHELVED_OFFLOADED`` visible. :func:`check_path`,
:func:`check_installed` and :func:`check_source` read the method (see
:mod:`shelvefix.novacheck.sites`) and answer with a :class:`Result`:

``fixed`` (exit 0)
    an unconditional free comes before that save;
``legacy`` (exit 1)
    every free comes after it: the pre-fix order;
``unknown`` (exit 2)
    the answer cannot be read from the code, with the reason (no such
    method, no free, a free only in a branch, a syntax error...).

Order is source order within the method, which is execution order for
straight-line code and for ``try``/``with`` blocks; a free or save that a
branch, loop or exception handler may skip is reported as such, and paths
cut short by an early ``return`` are not analysed.
"""

import ast

from shelvefix.novacheck import sites
from shelvefix.novacheck import source as source_mod

FIXED = 'fixed'
LEGACY = 'legacy'
UNKNOWN = 'unknown'
EXIT_CODES = {FIXED: 0, LEGACY: 1, UNKNOWN: 2}
FIX_CHANGE_ID = 'I2a6ccaff904c1f0759d55feeeef0ec1da32c65df'
METHOD = '%s.%s' % (sites.CLASS_NAME, sites.METHOD_NAME)

HEADLINES = {
    FIXED: 'FIXED: %s frees the instance\'s allocations before the save '
           'that makes SHELVED_OFFLOADED visible.' % METHOD,
    LEGACY: 'LEGACY ORDER: %s saves vm_state = SHELVED_OFFLOADED before it '
            'frees the instance\'s allocations.' % METHOD,
    UNKNOWN: 'CANNOT TELL: %s',
}

LEGACY_ADVICE = (
    '  An unshelve started as soon as the server shows SHELVED_OFFLOADED\n'
    '  races this cleanup (bug 1798688): the scheduler\'s claim fails with\n'
    '  409 "consumer generation conflict", or its new allocations are\n'
    '  wiped. Backport change %s (free first).' % FIX_CHANGE_ID)


class Result(object):
    """The verdict on one compute manager file.

    :ivar status: :data:`FIXED`, :data:`LEGACY` or :data:`UNKNOWN`
    :ivar reason: why, in one sentence (always set for UNKNOWN)
    :ivar display: the file as evidence names it
    :ivar filename: the file that was read (None if none was found)
    :ivar version: the installed nova version, when known
    :ivar method_line: where ``_shelve_offload_instance`` starts
    :ivar free: the free :class:`~shelvefix.novacheck.sites.Site` the
        verdict rests on, or None
    :ivar state: the site setting ``vm_state = SHELVED_OFFLOADED``
    :ivar save: the save that makes that state visible
    :ivar notes: further findings worth reading (list of str)
    """

    def __init__(self, status, reason=None, display=None, filename=None,
                 version=None, method_line=None, free=None, state=None,
                 save=None, notes=None):
        self.status = status
        self.reason = reason
        self.display = display
        self.filename = filename
        self.version = version
        self.method_line = method_line
        self.free = free
        self.state = state
        self.save = save
        self.notes = notes or []

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
            'notes': list(self.notes),
        }

    def _site_dict(self, site):
        if site is None:
            return None
        data = {'line': site.node.lineno,
                'end_line': site.node.end_lineno,
                'source': site.source,
                'evidence': self.evidence(site),
                'only_when': site.all_guards}
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
        if self.free is not None:
            lines.extend(self._site_lines('frees allocations', self.free))
        if self.state is not None:
            lines.extend(self._site_lines('sets the state', self.state))
        if self.save is not None:
            lines.extend(self._site_lines('saves it', self.save))
        lines.extend('  note: %s' % note for note in self.notes)
        if self.status == LEGACY:
            lines.append(LEGACY_ADVICE)
        return '\n'.join(lines) + '\n'

    def _site_lines(self, label, site):
        lines = ['  %-18s %s' % (label + ':', self.evidence(site))]
        receiver = site.receiver or {}
        if receiver.get('binding'):
            lines.append('  %-18s %s:%d: %s' % (
                '%s bound at:' % receiver['expression'], self.display,
                receiver['bound_at'], receiver['binding']))
        inner = site.via
        while inner is not None:
            lines.append('  %-18s %s' % ('which calls:', self.evidence(inner)))
            inner = inner.via
        for guard in site.all_guards:
            lines.append('  %-18s %s' % ('only when:', guard))
        return lines


def check_path(path):
    """Check the compute manager in a tree, package directory or file.

    :returns: a :class:`Result` (UNKNOWN when there is nothing to read)
    """
    try:
        manager = source_mod.from_path(path)
    except source_mod.SourceError as e:
        return Result(UNKNOWN, str(e), display=path)
    return check_file(manager)


def check_installed(**kwargs):
    """Check the ``nova`` package this Python would import (not imported).

    :param kwargs: passed to :func:`shelvefix.novacheck.source.installed`
    :returns: a :class:`Result`
    """
    try:
        manager = source_mod.installed(**kwargs)
    except source_mod.SourceError as e:
        return Result(UNKNOWN, str(e))
    return check_file(manager)


def check_file(manager):
    """Check one :class:`~shelvefix.novacheck.source.ManagerFile`."""
    try:
        text = manager.read()
    except source_mod.SourceError as e:
        return Result(UNKNOWN, str(e), display=manager.display,
                      filename=manager.filename, version=manager.version)
    result = check_source(text, manager.display)
    result.filename = manager.filename
    result.version = manager.version
    return result


def check_source(text, display=source_mod.MANAGER_RELPATH):
    """Check compute manager source text.

    :param text: the contents of ``nova/compute/manager.py``
    :param display: the name evidence uses for the file
    :returns: a :class:`Result`
    """
    try:
        tree = ast.parse(text, filename=display)
    except SyntaxError as e:
        return Result(UNKNOWN, 'syntax error in %s line %s: %s'
                      % (display, e.lineno, e.msg), display=display)
    return judge(sites.analyse(tree), display)


def judge(analysis, display):
    """Read the verdict off an analysis.

    :param analysis: a :class:`~shelvefix.novacheck.sites.Analysis`
    :param display: the name evidence uses for the file
    :returns: a :class:`Result`
    """
    if analysis.cls is None:
        return Result(UNKNOWN, 'no class %s in %s'
                      % (sites.CLASS_NAME, display),
                      display=display)
    if analysis.method is None:
        return Result(UNKNOWN, 'no %s in %s' % (sites.METHOD_NAME,
                                                sites.CLASS_NAME),
                      display=display)
    result = Result(UNKNOWN, display=display,
                    method_line=analysis.method.lineno)
    state, save = _visible_save(analysis, result)
    result.state, result.save = state, save
    if not analysis.frees:
        result.reason = (
            'allocations are never freed in %s (no call of %s, directly or '
            'through another %s method)' % (
                sites.METHOD_NAME,
                ' or '.join(sites.FREE_METHODS),
                sites.CLASS_NAME))
        return result
    if state is None:
        result.free = analysis.frees[0]
        result.reason = ('vm_state is never set to SHELVED_OFFLOADED in %s'
                         % sites.METHOD_NAME)
        return result
    if save is None:
        result.free = analysis.frees[0]
        result.reason = (
            'vm_state = SHELVED_OFFLOADED is set at line %d but %s is not '
            'saved after it in %s' % (state.node.lineno, state.obj,
                                      sites.METHOD_NAME))
        return result
    before = [f for f in analysis.frees if f.position < save.position]
    after = [f for f in analysis.frees if f.position > save.position]
    always_before = [f for f in before if not f.all_guards]
    if always_before:
        result.status, result.free = FIXED, always_before[0]
        result.reason = ('allocations are freed at line %d, before the save '
                         'at line %d' % (result.free.node.lineno,
                                         save.node.lineno))
    elif not before and after:
        result.status, result.free = LEGACY, after[0]
        result.reason = ('allocations are freed at line %d, after the save '
                         'at line %d' % (result.free.node.lineno,
                                         save.node.lineno))
        if after[0].all_guards:
            result.notes.append('even that free is conditional')
    elif not before:
        # One helper call both saves the state and frees: which comes first
        # is inside it, where the save is not followed.
        result.free = analysis.frees[0]
        result.reason = ('the call at line %d both saves SHELVED_OFFLOADED '
                         'and frees the allocations' % save.node.lineno)
    else:
        result.free = before[0]
        result.reason = (
            'allocations are freed before the save at line %d only in a '
            'branch (%s); on the other paths they are %s' % (
                save.node.lineno, '; '.join(before[0].all_guards),
                'freed only after it (line %d)' % after[0].node.lineno
                if after else 'not freed in %s' % sites.METHOD_NAME))
    for site in analysis.frees:
        if site is not result.free:
            result.notes.append('allocations are also freed at %s'
                                % result.evidence(site))
    return result


def _visible_save(analysis, result):
    """The state site and the first save of that object after it.

    The first unconditional state change counts; a conditional one only
    if there is nothing else, with a note.
    """
    if not analysis.states:
        return None, None
    unconditional = [s for s in analysis.states if not s.guards]
    state = (unconditional or analysis.states)[0]
    if state.guards:
        result.notes.append('vm_state is set to SHELVED_OFFLOADED only when '
                            '%s' % '; '.join(state.guards))
    saves = [s for s in analysis.saves
             if s.obj == state.obj and s.position >= state.position]
    if not saves:
        return state, None
    save = saves[0]
    if save.guards:
        result.notes.append('the save that makes SHELVED_OFFLOADED visible '
                            'runs only when %s' % '; '.join(save.guards))
    return state, save
