"""The control-flow graph of ``ComputeManager._shelve_offload_instance``.

:func:`build` turns the method into :class:`Step` objects joined by edges,
one step per thing that may matter (a call, an assignment, a branch test,
a ``return``...), with the ``ComputeManager`` helpers it calls inlined up
to :data:`HELPER_DEPTH` deep and the nested functions and lambdas it calls
inlined where they are called. The graph covers ``if/elif/else``, ``for``
and ``while`` (``else`` clauses, ``break``, ``continue``), ``try`` with
``except``, ``else`` and ``finally`` (a copy of the ``finally`` clause per
way of leaving the ``try``), ``with`` (only ``contextlib.suppress`` is
taken to swallow exceptions), ``match``, ``assert``, short-circuit
operators, conditional expressions and comprehensions. Code after a
``return`` and branches on constants (``if False:``, ``while True:``, a
local flag assigned once) are left out, as Python never runs them.

Every step that calls something may raise; its exceptional edge goes to
the innermost handler (or ``finally``), carrying the state from before the
step. What steps do to the instance is :mod:`shelvefix.novacheck.events`'
business; walking the graph is :mod:`shelvefix.novacheck.paths`'.
"""

import ast
import itertools

from shelvefix.novacheck import classes
from shelvefix.novacheck import collaborators
from shelvefix.novacheck import expressions
from shelvefix.novacheck import inline
from shelvefix.novacheck import steps as steps_mod

SUPPRESSORS = ('suppress',)
CATCH_ALL = ('Exception', 'BaseException')
_risky = expressions.risky


def build(cls, method, methods=None):
    """The :class:`~shelvefix.novacheck.steps.Graph` of ``method``.

    :param cls: the ``ComputeManager`` class definition (``ast``)
    :param method: the method of it to follow
    :param methods: the class's methods as the module binds them
        (:func:`~shelvefix.novacheck.steps.methods_of`), when not just its
        ``def`` statements
    """
    if methods is None:
        methods = steps_mod.methods_of(cls)
    return _Builder(methods).build(method)


def method_graph(tree, display, method_name=steps_mod.METHOD_NAME,
                 class_name=steps_mod.CLASS_NAME):
    """The graph of a method of a parsed module, or why there is none.

    :returns: ``(graph, why, line)``: the
        :class:`~shelvefix.novacheck.steps.Graph`, or None and one sentence
        saying why (no such class or method, a method that may not run its
        body when called, or an object the check trusts re-bound, see
        :mod:`~shelvefix.novacheck.collaborators`); ``line`` is where the
        method starts, when known
    """
    cls, method = steps_mod.find_method(tree, class_name, method_name)
    if cls is None:
        return None, 'no class %s in %s' % (class_name, display), None
    if method is None:
        return None, 'no %s in %s' % (method_name, class_name), None
    line = getattr(method, 'lineno', None)
    why = inline.not_run(method)
    if why is not None:
        named = isinstance(method, classes.Unmodeled) and (
            method.name == class_name)
        return None, '%s is %s' % (
            class_name if named else '%s.%s' % (class_name, method_name),
            why), line
    why = collaborators.why_untrusted(cls, display)
    if why is not None:
        return None, why, line
    return build(cls, method, steps_mod.methods_of(cls, tree)), None, line


def _catches_all(kind):
    if kind is None:
        return True
    names = kind.elts if isinstance(kind, ast.Tuple) else [kind]
    return any(inline.decorator_name(n) in CATCH_ALL for n in names)


def _irrefutable(pattern):
    if isinstance(pattern, ast.MatchAs):
        return pattern.pattern is None or _irrefutable(pattern.pattern)
    if isinstance(pattern, ast.MatchOr):
        return any(_irrefutable(p) for p in pattern.patterns)
    return False


def _store(name):
    return ast.Name(id=name, ctx=ast.Store())


class _Builder(expressions.Expressions, inline.Calls):
    """Builds the steps of one method.

    Each statement method takes and returns *dangling* edges: ``(step,
    label)`` pairs waiting for the step that comes next.
    """

    def __init__(self, methods):
        self.methods = methods
        self.steps = []
        self._scopes = itertools.count(1)

    def build(self, method):
        scope = steps_mod.Scope(0, method)
        returns = []
        ctx = steps_mod.Context(scope, method, (), None, returns.extend,
                                None, None, 0, (method,), frozenset([0]))
        ctx = ctx._replace(raise_to=self.reverter(method, scope, method,
                                                  method, ctx))
        entry = self.step(('pass',), method, method, ctx,
                          text='def %s' % method.name)
        out = self.body(method.body, [(entry, None)], ctx)
        self.step(('exit',), method, method, ctx, dangling=out + returns,
                  text='%s returns' % method.name)
        return steps_mod.Graph(method, self.methods, self.steps, entry,
                               scope.key(steps_mod.instance_parameter(
                                   method)))

    def step(self, op, node, stmt, ctx, dangling=(), text=None,
             may_raise=False):
        where = ctx.where + (steps_mod.Location(node, stmt, ctx.function),)
        step = steps_mod.Step(len(self.steps), op, where, ctx.scope, text)
        step.exc = ctx.raise_to
        step.may_raise = may_raise
        step.live = ctx.live
        self.steps.append(step)
        steps_mod.connect(dangling, step)
        return step

    # Statements.

    def body(self, stmts, dangling, ctx):
        for stmt in stmts:
            if not dangling:
                break  # after return, raise, break...: never runs
            handler = getattr(self, '_' + type(stmt).__name__, None)
            if handler is None:
                for child in ast.iter_child_nodes(stmt):
                    dangling = self.expr(child, dangling, ctx, stmt)
            else:
                dangling = handler(stmt, dangling, ctx)
        return dangling

    def _Expr(self, stmt, dangling, ctx):
        return self.expr(stmt.value, dangling, ctx, stmt)

    def _Assign(self, stmt, dangling, ctx):
        dangling = self.expr(stmt.value, dangling, ctx, stmt)
        step = self.step(('assign', stmt.targets, stmt.value), stmt, stmt,
                         ctx, dangling,
                         may_raise=_risky(stmt.value, *stmt.targets))
        return [(step, None)]

    def _AnnAssign(self, stmt, dangling, ctx):
        if stmt.value is None:
            return dangling
        dangling = self.expr(stmt.value, dangling, ctx, stmt)
        step = self.step(('assign', [stmt.target], stmt.value), stmt, stmt,
                         ctx, dangling,
                         may_raise=_risky(stmt.value, stmt.target))
        return [(step, None)]

    def _AugAssign(self, stmt, dangling, ctx):
        dangling = self.expr(stmt.value, dangling, ctx, stmt)
        return [(self.step(('unbind', [stmt.target]), stmt, stmt, ctx,
                           dangling, may_raise=True), None)]

    def _Delete(self, stmt, dangling, ctx):
        return [(self.step(('unbind', stmt.targets), stmt, stmt, ctx,
                           dangling), None)]

    def _Import(self, stmt, dangling, ctx):
        names = [_store((a.asname or a.name).split('.')[0])
                 for a in stmt.names]
        return [(self.step(('unbind', names), stmt, stmt, ctx, dangling,
                           may_raise=True), None)]

    _ImportFrom = _Import

    def _Return(self, stmt, dangling, ctx):
        dangling = self.expr(stmt.value, dangling, ctx, stmt)
        ctx.on_return([(self.step(('return',), stmt, stmt, ctx, dangling,
                                  may_raise=_risky(stmt.value)), None)])
        return []

    def _Raise(self, stmt, dangling, ctx):
        for part in (stmt.exc, stmt.cause):
            dangling = self.expr(part, dangling, ctx, stmt)
        step = self.step(('raise',), stmt, stmt, ctx, dangling)
        if ctx.raise_to is not None:
            steps_mod.connect([(step, 'raises')], ctx.raise_to)
        return []

    def _Break(self, stmt, dangling, ctx):
        ctx.on_break(dangling)
        return []

    def _Continue(self, stmt, dangling, ctx):
        ctx.on_continue(dangling)
        return []

    def _Assert(self, stmt, dangling, ctx):
        dangling = self.expr(stmt.test, dangling, ctx, stmt)
        step = self.step(('test',), stmt, stmt, ctx, dangling,
                         text='assert %s' % ast.unparse(stmt.test))
        if ctx.raise_to is not None:
            steps_mod.connect([(step, 'fails')], ctx.raise_to)
        return [(step, 'holds')]

    def _FunctionDef(self, stmt, dangling, ctx):
        for decorator in stmt.decorator_list:
            dangling = self.expr(decorator, dangling, ctx, stmt)
        return [(self.step(('unbind', [_store(stmt.name)]), stmt, stmt, ctx,
                           dangling, text='def %s' % stmt.name), None)]

    _AsyncFunctionDef = _ClassDef = _FunctionDef

    def _If(self, stmt, dangling, ctx):
        dangling = self.expr(stmt.test, dangling, ctx, stmt)
        truth = self.truth(stmt.test, ctx)
        test = self.step(('test',), stmt, stmt, ctx, dangling,
                         text='if %s' % ast.unparse(stmt.test),
                         may_raise=_risky(stmt.test))
        out = []
        if truth is not False:
            out += self.body(stmt.body, [(test, 'true')], ctx)
        if truth is not True:
            out += self.body(stmt.orelse, [(test, 'false')], ctx)
        return out

    def _While(self, stmt, dangling, ctx):
        head = self.step(('pass',), stmt, stmt, ctx, dangling)
        tested = self.expr(stmt.test, [(head, None)], ctx, stmt)
        test = self.step(('test',), stmt, stmt, ctx, tested,
                         text='while %s' % ast.unparse(stmt.test),
                         may_raise=_risky(stmt.test))
        truth = self.truth(stmt.test, ctx)
        breaks = []
        inner = ctx._replace(on_break=breaks.extend,
                             on_continue=lambda d: steps_mod.connect(d, head))
        if truth is not False:
            looped = self.body(stmt.body, [(test, 'true')], inner)
            steps_mod.connect(looped, head)
        out = []
        if truth is not True:
            out = self.body(stmt.orelse, [(test, 'false')], ctx)
        return out + breaks

    def _For(self, stmt, dangling, ctx):
        dangling = self.expr(stmt.iter, dangling, ctx, stmt)
        text = 'for %s in %s' % (ast.unparse(stmt.target),
                                 ast.unparse(stmt.iter))
        size = _literal_size(stmt.iter)
        # Taking the next item may raise, unless the items are a literal.
        again = self.step(('pass',), stmt, stmt, ctx, text=text,
                          may_raise=size is None)
        first = again
        if size:
            # A literal that is not empty: the first item is certain.
            first = self.step(('pass',), stmt, stmt, ctx, text=text)
        steps_mod.connect(dangling, first)
        bind = self.step(('loop-bind', stmt.target, stmt.iter), stmt, stmt,
                         ctx, may_raise=_risky(stmt.target))
        if size != 0:
            items = [(first, 'next item')]
            if size:
                items.append((again, 'next item'))
            steps_mod.connect(items, bind)
        breaks = []
        inner = ctx._replace(on_break=breaks.extend,
                             on_continue=lambda d: steps_mod.connect(d, again))
        steps_mod.connect(self.body(stmt.body, [(bind, None)], inner), again)
        return self.body(stmt.orelse, [(again, 'loop ends')], ctx) + breaks

    _AsyncFor = _For

    def _With(self, stmt, dangling, ctx):
        for item in stmt.items:
            dangling = self.expr(item.context_expr, dangling, ctx, stmt)
        names = [i.optional_vars for i in stmt.items if i.optional_vars]
        enter = self.step(('unbind', names), stmt, stmt, ctx, dangling,
                          text='with %s' % ', '.join(
                              ast.unparse(i) for i in stmt.items),
                          may_raise=True)
        suppressors = [i.context_expr for i in stmt.items
                       if inline.decorator_name(i.context_expr) in SUPPRESSORS]
        inner, after = ctx, []
        if suppressors:
            catcher = self.step(('pass',), stmt, stmt, ctx,
                                text='exception swallowed by %s'
                                % ast.unparse(suppressors[0]))
            inner = ctx._replace(raise_to=catcher)
            after = [(catcher, None)]
        return self.body(stmt.body, [(enter, None)], inner) + after

    _AsyncWith = _With

    def _Try(self, stmt, dangling, ctx):
        if not stmt.finalbody:
            return self._handlers(stmt, dangling, ctx)
        final = stmt.finalbody
        # Leaving by an exception: the clause, then the exception goes on.
        catcher = self.step(('pass',), stmt, stmt, ctx,
                            text='finally (line %d), after an exception'
                            % final[0].lineno)
        out = self.body(final, [(catcher, None)], ctx)
        if ctx.raise_to is not None:
            steps_mod.connect(out, ctx.raise_to)

        def through_finally(route, why):
            def go(pending):
                entry = self.step(('pass',), stmt, stmt, ctx, pending,
                                  text='finally (line %d), %s'
                                  % (final[0].lineno, why))
                route(self.body(final, [(entry, None)], ctx))
            return go

        inner = ctx._replace(
            raise_to=catcher,
            on_return=through_finally(ctx.on_return, 'on return'),
            on_break=ctx.on_break and through_finally(ctx.on_break,
                                                      'on break'),
            on_continue=ctx.on_continue and through_finally(
                ctx.on_continue, 'on continue'))
        out = self._handlers(stmt, dangling, inner)
        entry = self.step(('pass',), stmt, stmt, ctx, out,
                          text='finally (line %d)' % final[0].lineno)
        return self.body(final, [(entry, None)], ctx)

    _TryStar = _Try

    def _handlers(self, stmt, dangling, ctx):
        if not stmt.handlers:
            return self.body(stmt.orelse, self.body(stmt.body, dangling, ctx),
                             ctx)
        dispatch = self.step(('pass',), stmt, stmt, ctx)
        out = self.body(stmt.body, dangling, ctx._replace(raise_to=dispatch))
        out = self.body(stmt.orelse, out, ctx)
        for handler in stmt.handlers:
            caught = 'except %s' % ast.unparse(handler.type) if (
                handler.type) else 'except'
            names = [_store(handler.name)] if handler.name else []
            bind = self.step(('unbind', names), handler, handler, ctx,
                             [(dispatch, caught)], text=caught)
            out += self.body(handler.body, [(bind, None)], ctx)
            if _catches_all(handler.type):
                break
        else:
            if ctx.raise_to is not None:
                steps_mod.connect([(dispatch, 'not caught')], ctx.raise_to)
        return out

    def _Match(self, stmt, dangling, ctx):
        dangling = self.expr(stmt.subject, dangling, ctx, stmt)
        pending = [(self.step(('pass',), stmt, stmt, ctx, dangling,
                              text='match %s' % ast.unparse(stmt.subject)),
                    None)]
        out = []
        for case in stmt.cases:
            names = [_store(n.name) for n in ast.walk(case.pattern)
                     if getattr(n, 'name', None)]
            test = self.step(('unbind', names), case.pattern, stmt, ctx,
                             pending,
                             text='case %s' % ast.unparse(case.pattern))
            matched = [(test, 'matches')]
            pending = [] if (case.guard is None and
                             _irrefutable(case.pattern)) else [
                (test, 'does not match')]
            if case.guard is not None:
                guarded = self.expr(case.guard, matched, ctx, stmt)
                guard = self.step(('test',), case.guard, stmt, ctx, guarded,
                                  text='if %s' % ast.unparse(case.guard))
                matched = [(guard, 'true')]
                pending.append((guard, 'false'))
            out += self.body(case.body, matched, ctx)
        return out + pending


def _literal_size(node):
    """The length of a literal list/tuple/set or constant range, else None."""
    if isinstance(node, (ast.List, ast.Tuple, ast.Set)):
        if not any(isinstance(e, ast.Starred) for e in node.elts):
            return len(node.elts)
    if (isinstance(node, ast.Call) and isinstance(node.func, ast.Name) and
            node.func.id == 'range' and len(node.args) == 1 and
            isinstance(node.args[0], ast.Constant) and
            isinstance(node.args[0].value, int)):
        return max(node.args[0].value, 0)
    return None
