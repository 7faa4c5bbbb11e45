"""Every path through the method, and what happens to the instance on it.

:func:`explore` walks the graph of :mod:`shelvefix.novacheck.cfg` breadth
first over ``(step, state)`` pairs (:mod:`shelvefix.novacheck.events`), so
every path is covered once per distinct state however many loops it goes
round, and the first path found to any pair is a shortest one. The
:class:`Exploration` it returns lists, per save that can make
``SHELVED_OFFLOADED`` visible, whether the allocations were certainly freed
before it; :meth:`Exploration.path` turns any finding into the lines of
the path behind it.
"""

import ast
import collections

from shelvefix.novacheck import events
from shelvefix.novacheck import inline
from shelvefix.novacheck import values

# Events that did not happen when their step raised.
DONE_KINDS = (events.FREE, events.SET, events.SAVE)
# Steps worth a line even when nothing happens at them.
SHOWN = ('except', 'finally', 'exception swallowed')
# A save the verdict rests on: the (step, state) pair and the event.
Finding = collections.namedtuple('Finding', 'key event')


class PathStep(collections.namedtuple('PathStep',
                                      'line source note depth')):
    """One line of a path: where, what, and what it did or decided.

    ``depth`` is how many helper calls deep the line is.
    """


class Site(object):
    """Where a step is, seen from the method.

    :ivar node: the ``ast`` node in ``_shelve_offload_instance``: the step
        itself, or the call that leads to it through helpers
    :ivar stmt: the method's statement holding ``node``
    :ivar via: for a step inside a helper, the :class:`Site` of the next
        call down (or of the step); None for a step of the method itself
    :ivar receiver: for a free, how the object it is called on was
        obtained (see :func:`describe_receiver`); None otherwise
    """

    def __init__(self, where, receiver=None):
        self.node = where[0].node
        self.stmt = where[0].stmt
        self.via = Site(where[1:], receiver) if len(where) > 1 else None
        self.receiver = None if self.via else receiver

    @property
    def position(self):
        """``(line, column)`` of the node: its place in source order."""
        return (self.node.lineno, self.node.col_offset)

    @property
    def innermost(self):
        """The :class:`Site` at the end of the ``via`` chain."""
        return self.via.innermost if self.via else self

    @property
    def source(self):
        """The statement as one line of code.

        The call alone when the statement is compound (the test of an
        ``if``...).
        """
        return _source(self.node, self.stmt)

    def __repr__(self):
        return '<Site line %d: %s>' % (self.node.lineno, self.source)


def _source(node, stmt):
    if node is stmt and isinstance(stmt, ast.stmt) and not isinstance(
            stmt, (ast.Expr, ast.Assign, ast.AnnAssign, ast.AugAssign,
                   ast.Return, ast.Raise)):
        return ast.unparse(stmt).splitlines()[0].rstrip(':')
    if isinstance(stmt, (ast.Expr, ast.Assign, ast.AnnAssign,
                         ast.AugAssign, ast.Return)) and node is not stmt:
        if stmt.value is node or getattr(stmt.value, 'value', None) is node:
            return ast.unparse(stmt)
    return ast.unparse(node if isinstance(node, ast.AST) else stmt)


def format_path(display, path, indent='  '):
    """The lines of a path as the reports print them.

    :param path: :class:`PathStep` objects
    :returns: ``'<indent><display>:<line>: <source> -> <note>'`` strings,
        helper lines indented by their depth
    """
    return ['%s%s:%d: %s%s%s' % (indent, display, step.line,
                                 '  ' * step.depth, step.source,
                                 ' -> %s' % step.note if step.note else '')
            for step in path]


def site_of(step):
    """The :class:`Site` of a step, with the receiver of a free."""
    inner = step.where[-1]
    receiver = None
    if (step.op[0] == 'call' and
            isinstance(inner.node.func, ast.Attribute)):
        receiver = describe_receiver(inner.node.func.value, inner.function,
                                     inner.node)
    return Site(step.where, receiver)


def describe_receiver(expr, function, call):
    """How the object a free is called on was obtained.

    ``self.rt`` is described as itself. For a local name the last
    assignment to it before the call is looked up in ``function``, so the
    Rocky shape reads ``rt = self._get_resource_tracker()``.

    :returns: ``{'expression': ..., 'bound_at': line or None,
        'binding': source of the assignment or None}``
    """
    described = {'expression': ast.unparse(expr), 'bound_at': None,
                 'binding': None}
    if not isinstance(expr, ast.Name):
        return described
    before = (call.lineno, call.col_offset)
    last = None
    for node in ast.walk(function):
        if (isinstance(node, ast.Assign) and
                (node.lineno, node.col_offset) < before and
                any(isinstance(t, ast.Name) and t.id == expr.id
                    for t in node.targets)):
            if last is None or node.lineno > last.lineno:
                last = node
    if last is not None:
        described['bound_at'] = last.lineno
        described['binding'] = ast.unparse(last)
    return described


class Exploration(object):
    """What :func:`explore` found.

    :ivar frees: ``(step, state)`` keys where the instance's allocations
        are freed
    :ivar other_frees: steps freeing someone else's allocations, with what
    :ivar maybe_frees: steps that may free out of the check's sight, why
    :ivar sets: keys setting ``vm_state = SHELVED_OFFLOADED`` for certain
    :ivar proven: :class:`Finding` saves of SHELVED_OFFLOADED after a free
    :ivar unfreed: :class:`Finding` saves of SHELVED_OFFLOADED with the
        allocations certainly not freed
    :ivar doubtful: :class:`Finding` saves that may make SHELVED_OFFLOADED
        visible before a free, or that may come after one the check
        cannot see
    """

    def __init__(self, graph):
        self.graph = graph
        self.frees = []
        self.other_frees = {}
        self.maybe_frees = {}
        self.sets = []
        self.proven = []
        self.unfreed = []
        self.doubtful = []
        self._parent = {}
        self._after = {}
        self._events = {}

    def note(self, key, happened):
        self._events[key] = happened
        step, state = key
        for event in happened:
            if event.kind == events.FREE:
                self.frees.append(key)
            elif event.kind == events.OTHER_FREE:
                self.other_frees.setdefault(step, event.what)
            elif event.kind == events.MAY_FREE:
                self.maybe_frees.setdefault(step, event.what)
            elif event.kind == events.SET and event.level == values.YES:
                self.sets.append(key)
            elif (event.kind in (events.SAVE, events.MAY_SAVE) and
                  event.level != values.NO):
                self._saved(key, event)

    def _saved(self, key, event):
        state = key[1]
        certain = event.kind == events.SAVE and event.level == values.YES
        if state.freed:
            if certain:
                self.proven.append(Finding(key, event))
        elif certain and state.maybe_freed is None:
            self.unfreed.append(Finding(key, event))
        else:
            self.doubtful.append(Finding(key, event))

    def keys(self):
        """Every ``(step, state)`` pair explored."""
        return list(self._after)

    def normal_successors(self, key):
        """Successors of ``key`` along its own edges, no exception raised.

        (A ``raise`` statement's edge to its handler is its own.)
        """
        step, _state = key
        after = self._after[key]
        for succ, label in step.succ:
            yield (succ, events.forget(after, succ.live)), label

    def reach(self, start, stop):
        """Every path from ``start`` along normal edges, until ``stop``.

        :param stop: ``stop(key)`` true ends a path at ``key``; so does a
            step with no normal successor (the method left)
        :returns: ``{key: pairs}`` for each key a path ended at, ``pairs``
            the ``(key, label)`` path from ``start`` to it
        """
        parent = {start: None}
        queue = collections.deque([start])
        ends = {}
        while queue:
            key = queue.popleft()
            following = [] if stop(key) else list(
                self.normal_successors(key))
            if not following:
                pairs = [(key, None)]
                while parent[pairs[-1][0]] is not None:
                    pairs.append(parent[pairs[-1][0]])
                ends[key] = pairs[::-1]
                continue
            for nxt, label in following:
                if nxt not in parent:
                    parent[nxt] = (key, label)
                    queue.append(nxt)
        return ends

    @property
    def states(self):
        """How many ``(step, state)`` pairs were explored."""
        return len(self._after)

    def events_at(self, key):
        return self._events.get(key, ())

    def keys_to(self, key):
        """The ``(key, label)`` pairs of the path from the entry to ``key``.

        ``label`` names the edge taken out of each step (None at the end).
        """
        path = [(key, None)]
        while self._parent[key] is not None:
            key, label = self._parent[key]
            path.append((key, label))
        return path[::-1]

    def successors(self, key):
        """``(key, label)`` pairs one step on from an explored ``key``."""
        step, state = key
        after = self._after[key]
        for succ, label in step.succ:
            yield (succ, events.forget(after, succ.live)), label
        if step.may_raise and step.exc is not None:
            yield (step.exc, events.forget(state, step.exc.live)), 'raises'

    def onward(self, start, wanted):
        """A shortest path from ``start`` to a step with a ``wanted`` event.

        :returns: ``(key, label)`` pairs from ``start`` on, or None
        """
        parent = {start: None}
        queue = collections.deque([start])
        while queue:
            key = queue.popleft()
            if key is not start and any(e.kind == wanted
                                        for e in self.events_at(key)):
                pairs = [(key, None)]
                while parent[key] is not None:
                    key, label = parent[key]
                    pairs.append((key, label))
                return pairs[::-1]
            for nxt, label in self.successors(key):
                if nxt not in parent:
                    parent[nxt] = (key, label)
                    queue.append(nxt)
        return None

    def path(self, pairs):
        """The :class:`PathStep` lines of ``(key, label)`` pairs.

        Steps that did nothing are left out, and so are helpers the path
        went through without anything happening inside.
        """
        lines = []
        skip_until = None
        for index, (key, label) in enumerate(pairs):
            step = key[0]
            if skip_until is not None:
                if step is skip_until:
                    skip_until = None
                continue
            if step.op[0] == 'bind' and not self._worth_showing(
                    pairs, index):
                skip_until = self._leave_of(pairs, index)
                continue
            line = self._line(key, label, last=index == len(pairs) - 1)
            if line is not None:
                lines.append(line)
        return lines

    def _leave_of(self, pairs, index):
        scope = pairs[index][0][0].op[1].ident
        for key, _label in pairs[index + 1:]:
            if key[0].op == ('leave', scope):
                return key[0]
        return None

    def _worth_showing(self, pairs, index):
        """Whether a helper call on the path did or skipped something."""
        enter = pairs[index][0][0]
        function = enter.op[2]
        leave = self._leave_of(pairs, index)
        for key, label in pairs[index + 1:]:
            if key[0] is leave:
                break
            if any(e.kind != events.ALIAS for e in self.events_at(key)):
                return True
        else:
            return True  # the path ends inside it
        return inline.mentions_free(function, self.graph.methods)

    def _line(self, key, label, last):
        step = key[0]
        happened = [e.what for e in self.events_at(key)
                    if label != 'raises' or e.kind not in DONE_KINDS]
        op = step.op[0]
        if op in ('return', 'raise'):
            happened.append(op == 'return' and 'returns' or 'raises')
        if label:
            happened.append(label)
        if op == 'pass' and not step.text:
            return None
        if (step.text or '').startswith(SHOWN):
            happened.insert(0, 'catches it' if step.text.startswith(
                'except') else 'runs')
        if not happened and not last:
            return None
        where = step.where[-1]
        if op == 'bind':
            source = _source(where.node, where.stmt)
            happened.insert(0, step.text)
        elif step.text and op in ('test', 'pass', 'unbind'):
            source = step.text
        else:
            source = _source(where.node, where.stmt)
        return PathStep(step.line, source, '; '.join(happened),
                        len(step.where) - 1)


def explore(graph, semantics=None):
    """Walk every path of ``graph``; returns an :class:`Exploration`.

    :param semantics: what steps do (an :class:`events.Semantics`; the
        allocations freed, by default)
    """
    semantics = semantics or events.Semantics()
    found = Exploration(graph)
    start = (graph.entry, events.initial_state(graph.instance_key))
    found._parent[start] = None
    queue = collections.deque([start])
    while queue:
        key = queue.popleft()
        step, state = key
        found._after[key], happened = semantics.apply(step, state)
        found.note(key, happened)
        for nxt, label in found.successors(key):
            if nxt not in found._parent:
                found._parent[nxt] = (key, label)
                queue.append(nxt)
    return found
