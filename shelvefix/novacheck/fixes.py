"""Every fix of the shelve/unshelve lifecycle, checked in one nova tree.

=============  ==========================================================
fix            what is checked
=============  ==========================================================
``1798688``    allocations freed before SHELVED_OFFLOADED is saved
               (:mod:`shelvefix.novacheck.check`)
``2025480``    the tracker keeps a SHELVED_OFFLOADED server being
               unshelved (:mod:`shelvefix.novacheck.tracker`)
``1862633``    unshelve frees the destination's allocations when the
               network set-up fails (:mod:`shelvefix.novacheck.unshelve`)
``host-lost``  host and node cleared in the save that makes
               SHELVED_OFFLOADED visible, or by a guarded later save
               (:mod:`shelvefix.novacheck.hostlost`; no nova release
               has it)
=============  ==========================================================

:func:`check_path` and :func:`check_installed` answer with a
:class:`Report`: one :class:`~shelvefix.novacheck.outcome.Verdict` per
fix, and the exit status for the fixes asked about.
"""

from shelvefix.novacheck import check as offload
from shelvefix.novacheck import hostlost
from shelvefix.novacheck import outcome
from shelvefix.novacheck import source as source_mod
from shelvefix.novacheck import steps
from shelvefix.novacheck import tracker
from shelvefix.novacheck import unshelve

BUGS = ('1798688', '2025480', '1862633', 'host-lost')
DEFAULT_BUGS = ('1798688',)
TITLES = {
    '1798688': 'allocations freed before SHELVED_OFFLOADED is saved',
    '2025480': 'tracker keeps a SHELVED_OFFLOADED server being unshelved',
    '1862633': 'unshelve frees the destination if network set-up fails',
    'host-lost': 'host and node cleared when SHELVED_OFFLOADED is visible',
}
_FROM_OFFLOAD = {offload.FIXED: outcome.FIXED, offload.LEGACY:
                 outcome.MISSING, offload.UNKNOWN: outcome.UNKNOWN}


def _name(bug):
    return 'host lost' if bug == 'host-lost' else 'bug ' + bug


def _offload_verdict(result):
    """Bug 1798688's verdict from :mod:`shelvefix.novacheck.check`."""
    verdict = outcome.Verdict('1798688')
    evidence = None
    site = result.save if result.status == offload.LEGACY else result.free
    if site is not None:
        evidence = result.evidence(site)
    lines = result.render().splitlines()
    if result.filename:
        lines = lines[1:]  # the file, which the report names once
    return verdict.set(_FROM_OFFLOAD[result.status], result.reason,
                       evidence, lines)


class Report(object):
    """The verdicts on one tree.

    :ivar offload: the full bug 1798688 :class:`~shelvefix.novacheck.
        check.Result` (its JSON keys stay those of earlier releases)
    :ivar verdicts: bug -> :class:`~shelvefix.novacheck.outcome.Verdict`
    :ivar asked: the bugs the exit status answers for
    """

    def __init__(self, offload_result, verdicts, asked):
        self.offload = offload_result
        self.verdicts = verdicts
        self.asked = tuple(asked)

    @property
    def unreadable(self):
        return self.offload.unreadable

    @property
    def exit_code(self):
        """0 every fix asked is there, 1 one is missing, 2 one is unknown."""
        codes = [self.verdicts[bug].exit_code for bug in self.asked]
        return 2 if 2 in codes else max(codes)

    def summary(self):
        """One line per fix."""
        lines = []
        for bug in BUGS:
            verdict = self.verdicts[bug]
            where = (verdict.evidence or '').split(': ')[0]
            lines.append('%-12s %-12s %s%s' % (
                _name(bug), verdict.label, TITLES[bug],
                ' (%s)' % where if where else ''))
        return lines

    def render(self):
        """The summary, then the full verdict of each fix asked about."""
        lines = []
        if self.offload.filename:
            lines.append(self.offload.render().splitlines()[0])
        lines += self.summary()
        for bug in self.asked:
            verdict = self.verdicts[bug]
            lines.append('')
            if bug != '1798688':
                # (bug 1798688's details keep the headline they had.)
                lines.append('%s: %s: %s' % (_name(bug), verdict.label,
                                             verdict.reason))
                if verdict.evidence:
                    lines.append('  evidence: %s' % verdict.evidence)
            lines += verdict.details
        return '\n'.join(lines) + '\n'

    def to_dict(self):
        """The bug 1798688 document, with ``fixes`` and ``asked`` added."""
        data = self.offload.to_dict()
        data['fixes'] = {bug: self.verdicts[bug].to_dict() for bug in BUGS}
        data['asked'] = list(self.asked)
        data['exit_code'] = self.exit_code
        return data


def check_manager(manager, asked=DEFAULT_BUGS):
    """Check every fix in the tree of a located manager file."""
    try:
        text = manager.read()
    except source_mod.SourceError as e:
        result = offload.Result(offload.UNKNOWN, str(e),
                                display=manager.display,
                                filename=manager.filename,
                                version=manager.version, unreadable=True)
        return _report(result, outcome.Files(), asked)
    files = outcome.Files(manager, {'manager.py': text})
    parsed = files.parse('manager.py')
    if isinstance(parsed, str):
        result = offload.check_source(text, manager.display)
    else:
        # The graph the host-lost check follows too.
        result = offload.check_tree(parsed[0], manager.display,
                                    built=files.graph(steps.METHOD_NAME))
    result.filename = manager.filename
    result.version = manager.version
    return _report(result, files, asked)


def check_texts(texts, asked=DEFAULT_BUGS):
    """Check every fix in texts: ``{'manager.py': ..., ...}``."""
    result = offload.check_source(texts.get('manager.py', ''))
    return _report(result, outcome.Files(texts=texts), asked)


def _report(result, files, asked):
    verdicts = {'1798688': _offload_verdict(result)}
    if result.unreadable:
        for bug in BUGS[1:]:
            verdicts[bug] = outcome.Verdict(bug).unknown(result.reason)
    else:
        verdicts['2025480'] = tracker.check(files)
        verdicts['1862633'] = unshelve.check(files)
        verdicts['host-lost'] = hostlost.check(files)
    return Report(result, verdicts, asked)


def check_path(path, asked=DEFAULT_BUGS):
    """Check a tree, package directory, manager.py or release archive."""
    try:
        manager = source_mod.from_path(path)
    except source_mod.SourceError as e:
        result = offload.Result(offload.UNKNOWN, str(e), display=path,
                                unreadable=True)
        return _report(result, outcome.Files(), asked)
    return check_manager(manager, asked)


def check_installed(asked=DEFAULT_BUGS, **kwargs):
    """Check the ``nova`` package this Python would import (not imported)."""
    try:
        manager = source_mod.installed(**kwargs)
    except source_mod.SourceError as e:
        result = offload.Result(offload.UNKNOWN, str(e), unreadable=True)
        return _report(result, outcome.Files(), asked)
    return check_manager(manager, asked)
