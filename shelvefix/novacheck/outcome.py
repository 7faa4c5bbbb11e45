"""The files of a nova tree a fix is checked in, and a fix's verdict.

:class:`Files` reads the modules of ``nova/compute/`` beside the compute
manager (the resource tracker, ``vm_states``, ``task_states``), from a
tree, a package directory, a release archive or texts given directly;
:class:`Verdict` is the answer for one fix: FIXED, MISSING or UNKNOWN
(cannot tell), why, and the evidence, ``file:line: code``.
"""

import ast

from shelvefix.novacheck import cfg
from shelvefix.novacheck import source as source_mod

FIXED = 'fixed'
MISSING = 'missing'
UNKNOWN = 'unknown'
EXIT_CODES = {FIXED: 0, MISSING: 1, UNKNOWN: 2}
LABELS = {FIXED: 'FIXED', MISSING: 'MISSING', UNKNOWN: 'CANNOT TELL'}


class Files(object):
    """The ``nova/compute`` modules a check reads, parsed once each.

    :param manager: the :class:`~shelvefix.novacheck.source.ManagerFile`
        found (None when only ``texts`` are given)
    :param texts: file name (``'resource_tracker.py'``) -> source text,
        for what is not read from ``manager``'s tree
    """

    def __init__(self, manager=None, texts=None):
        self.manager = manager
        self.texts = dict(texts or {})
        self._trees = {}
        self._graphs = {}

    def display(self, name):
        """How evidence names the file ``name``."""
        if self.manager is None:
            return 'nova/compute/%s' % name
        if name == 'manager.py':
            return self.manager.display
        return self.manager.sibling(name).display

    def parse(self, *names):
        """The parsed modules, or one line saying why one cannot be read."""
        trees = []
        for name in names:
            if name not in self._trees:
                self._trees[name] = self._parse(name)
            if isinstance(self._trees[name], str):
                return self._trees[name]
            trees.append(self._trees[name])
        return trees

    def graph(self, method_name):
        """The compute manager method's graph, built once for every check.

        :returns: ``(graph, why, line)`` as
            :func:`shelvefix.novacheck.cfg.method_graph` gives it; ``why``
            is why the manager cannot be read, if it cannot
        """
        if method_name not in self._graphs:
            parsed = self.parse('manager.py')
            self._graphs[method_name] = (
                (None, parsed, None) if isinstance(parsed, str) else
                cfg.method_graph(parsed[0], self.display('manager.py'),
                                 method_name))
        return self._graphs[method_name]

    def _parse(self, name):
        try:
            text = self.texts.get(name)
            if text is None:
                if self.manager is None:
                    return 'no %s to read' % self.display(name)
                found = (self.manager if name == 'manager.py'
                         else self.manager.sibling(name))
                text = found.read()
            return ast.parse(text, filename=self.display(name))
        except source_mod.SourceError as e:
            return str(e)
        except SyntaxError as e:
            return 'syntax error in %s line %s: %s' % (
                self.display(name), e.lineno, e.msg)
        except ValueError as e:
            return 'not Python source: %s: %s' % (self.display(name), e)


class Verdict(object):
    """Whether one fix holds.

    :ivar bug: the fix's name (``'1798688'``, ``'host-lost'``...)
    :ivar status: :data:`FIXED`, :data:`MISSING` or :data:`UNKNOWN`
    :ivar reason: why, in one sentence
    :ivar evidence: ``file:line: code`` the verdict rests on, or None
    :ivar details: further lines for the full report (a path...)
    """

    def __init__(self, bug):
        self.bug = bug
        self.status = UNKNOWN
        self.reason = None
        self.evidence = None
        self.details = []

    def set(self, status, reason, evidence, details):
        self.status = status
        self.reason = reason
        self.evidence = evidence
        self.details = list(details or [])
        return self

    def fixed(self, reason, evidence=None, details=None):
        return self.set(FIXED, reason, evidence, details)

    def missing(self, reason, evidence=None, details=None):
        return self.set(MISSING, reason, evidence, details)

    def unknown(self, reason, evidence=None, details=None):
        return self.set(UNKNOWN, reason, evidence, details)

    @property
    def exit_code(self):
        return EXIT_CODES[self.status]

    @property
    def label(self):
        return LABELS[self.status]

    def to_dict(self):
        return {'bug': self.bug, 'status': self.status,
                'exit_code': self.exit_code, 'reason': self.reason,
                'evidence': self.evidence, 'details': list(self.details)}
