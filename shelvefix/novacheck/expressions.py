"""Expressions in the control-flow graph, in the order Python runs them.

:class:`Expressions` is the part of :mod:`shelvefix.novacheck.cfg`'s
builder that walks an expression: only calls (and ``:=``) make steps; a
short-circuit ``and``/``or``, a conditional expression or a comprehension
whose skipped part calls something makes a branch. Lambdas are not run
where they are written.
"""

import ast

from shelvefix.novacheck import steps as steps_mod

# Expressions that cannot raise by themselves (calls raise in their step).
_SAFE = (ast.Name, ast.Constant, ast.Tuple, ast.List, ast.Starred,
         ast.expr_context, ast.Call, ast.Lambda)


def calls_in(node):
    """True if evaluating ``node`` calls something (lambdas not run)."""
    todo = [node]
    while todo:
        current = todo.pop()
        if isinstance(current, (ast.Call, ast.NamedExpr)):
            return True
        if not isinstance(current, ast.Lambda):
            todo.extend(ast.iter_child_nodes(current))
    return False


def risky(*nodes):
    """Whether evaluating or assigning to ``nodes`` may raise."""
    todo = [n for n in nodes if n is not None]
    while todo:
        node = todo.pop()
        if not isinstance(node, _SAFE):
            return True
        if not isinstance(node, (ast.Call, ast.Lambda)):
            todo.extend(ast.iter_child_nodes(node))
    return False


class Expressions(object):
    """The expression handling of the graph builder.

    A mixin: it uses the builder's ``step`` and ``call``.
    """

    def truth(self, test, ctx):
        """True or False when ``test`` is constant, else None."""
        if isinstance(test, ast.Constant):
            return bool(test.value)
        if isinstance(test, ast.Name):
            known, value = ctx.scope.constant(test.id)
            return bool(value) if known else None
        if isinstance(test, ast.UnaryOp) and isinstance(test.op, ast.Not):
            inner = self.truth(test.operand, ctx)
            return None if inner is None else not inner
        return None

    def expr(self, node, dangling, ctx, stmt):
        if node is None or not dangling or not calls_in(node):
            return dangling
        if isinstance(node, ast.Call):
            return self.call(node, dangling, ctx, stmt)
        if isinstance(node, ast.BoolOp):
            return self._bool_op(node, dangling, ctx, stmt)
        if isinstance(node, ast.IfExp):
            dangling = self.expr(node.test, dangling, ctx, stmt)
            test = self.step(('test',), node, stmt, ctx, dangling,
                             text='if %s' % ast.unparse(node.test),
                             may_raise=risky(node.test))
            return (self.expr(node.body, [(test, 'true')], ctx, stmt) +
                    self.expr(node.orelse, [(test, 'false')], ctx, stmt))
        if isinstance(node, (ast.ListComp, ast.SetComp, ast.GeneratorExp,
                             ast.DictComp)):
            return self._comprehension(node, dangling, ctx, stmt)
        if isinstance(node, ast.NamedExpr):
            dangling = self.expr(node.value, dangling, ctx, stmt)
            return [(self.step(('assign', [node.target], node.value), node,
                               stmt, ctx, dangling,
                               may_raise=risky(node.value)), None)]
        for child in ast.iter_child_nodes(node):
            dangling = self.expr(child, dangling, ctx, stmt)
        return dangling

    def _bool_op(self, node, dangling, ctx, stmt):
        stop, go = (('false', 'true') if isinstance(node.op, ast.And)
                    else ('true', 'false'))
        dangling = self.expr(node.values[0], dangling, ctx, stmt)
        out = []
        for before, value in zip(node.values, node.values[1:]):
            if not calls_in(value):
                continue
            test = self.step(('test',), before, stmt, ctx, dangling,
                             text=ast.unparse(before),
                             may_raise=risky(before))
            out.append((test, stop + ', so the rest is skipped'))
            dangling = self.expr(value, [(test, go)], ctx, stmt)
        return out + dangling

    def _comprehension(self, node, dangling, ctx, stmt):
        first = node.generators[0]
        dangling = self.expr(first.iter, dangling, ctx, stmt)
        head = self.step(('pass',), node, stmt, ctx, dangling,
                         text='for %s in %s' % (ast.unparse(first.target),
                                                ast.unparse(first.iter)),
                         may_raise=True)
        inner = [(self.step(('loop-bind', first.target, first.iter), node,
                            stmt, ctx, [(head, 'next item')]), None)]
        for generator in node.generators:
            if generator is not first:
                inner = self.expr(generator.iter, inner, ctx, stmt)
                inner = [(self.step(('unbind', [generator.target]), node,
                                    stmt, ctx, inner), None)]
            for test in generator.ifs:
                inner = self.expr(test, inner, ctx, stmt)
                step = self.step(('test',), test, stmt, ctx, inner,
                                 text='if %s' % ast.unparse(test))
                steps_mod.connect([(step, 'false')], head)
                inner = [(step, 'true')]
        parts = ((node.key, node.value) if isinstance(node, ast.DictComp)
                 else (node.elt,))
        for part in parts:
            inner = self.expr(part, inner, ctx, stmt)
        steps_mod.connect(inner, head)
        return [(head, 'loop ends')]
