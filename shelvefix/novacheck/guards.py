"""The nodes of a method, each with the constructs that may skip it.

A *guard* describes an enclosing construct that may skip a node: an ``if``
branch (``if x (line 12)``), an ``except`` clause, a loop body, a nested
function or lambda, a comprehension, a short-circuit operand. Statements
in a ``try`` body, a ``finally`` clause, an ``else`` of a ``try`` or a
``with`` block run whenever the method gets there, so they add none.
"""

import ast


def walk_body(stmts, guards):
    """Every node of ``stmts``, with the guards that may skip it.

    :param stmts: a list of statements (a method's body)
    :param guards: the guards around them (descriptions, outermost first)
    :returns: an iterator of ``(node, statement, guards)``
    """
    for stmt in stmts:
        yield from _walk_stmt(stmt, guards)


def _walk_stmt(stmt, guards):
    line = stmt.lineno
    if isinstance(stmt, ast.If):
        test = ast.unparse(stmt.test)
        yield from _walk_expr(stmt.test, stmt, guards)
        yield from walk_body(stmt.body, guards + [
            'if %s (line %d)' % (test, line)])
        yield from walk_body(stmt.orelse, guards + [
            'else of if %s (line %d)' % (test, line)])
    elif isinstance(stmt, (ast.For, ast.AsyncFor)):
        yield from _walk_expr(stmt.iter, stmt, guards)
        loop = guards + ['for loop (line %d)' % line]
        yield from _walk_expr(stmt.target, stmt, loop)
        yield from walk_body(stmt.body, loop)
        yield from walk_body(stmt.orelse, loop)
    elif isinstance(stmt, ast.While):
        yield from _walk_expr(stmt.test, stmt, guards)
        loop = guards + ['while loop (line %d)' % line]
        yield from walk_body(stmt.body, loop)
        yield from walk_body(stmt.orelse, loop)
    elif isinstance(stmt, (ast.With, ast.AsyncWith)):
        for item in stmt.items:
            yield from _walk_expr(item, stmt, guards)
        yield from walk_body(stmt.body, guards)
    elif isinstance(stmt, (ast.Try, getattr(ast, 'TryStar', ast.Try))):
        yield from walk_body(stmt.body, guards)
        for handler in stmt.handlers:
            caught = ' ' + ast.unparse(handler.type) if handler.type else ''
            yield from walk_body(handler.body, guards + [
                'except%s (line %d)' % (caught, handler.lineno)])
        # The else clause runs when the body did, like the statements
        # after the try; only an exception skips both.
        yield from walk_body(stmt.orelse, guards)
        yield from walk_body(stmt.finalbody, guards)
    elif isinstance(stmt, ast.Match):
        yield from _walk_expr(stmt.subject, stmt, guards)
        for case in stmt.cases:
            branch = guards + ['case %s (line %d)' % (
                ast.unparse(case.pattern), case.pattern.lineno)]
            if case.guard is not None:
                yield from _walk_expr(case.guard, stmt, branch)
            yield from walk_body(case.body, branch)
    elif isinstance(stmt, (ast.FunctionDef, ast.AsyncFunctionDef,
                           ast.ClassDef)):
        for decorator in stmt.decorator_list:
            yield from _walk_expr(decorator, stmt, guards)
        # The body runs only if and when the nested definition is called.
        yield from walk_body(stmt.body, guards + [
            'nested %s %s (line %d)' % (
                'class' if isinstance(stmt, ast.ClassDef) else 'function',
                stmt.name, line)])
    else:
        yield from _walk_expr(stmt, stmt, guards)


def _walk_expr(node, stmt, guards):
    yield node, stmt, guards
    if isinstance(node, ast.Lambda):
        inner = guards + ['lambda (line %d)' % node.lineno]
        yield from _walk_expr(node.body, stmt, inner)
    elif isinstance(node, (ast.ListComp, ast.SetComp, ast.GeneratorExp,
                           ast.DictComp)):
        first, rest = node.generators[0], node.generators[1:]
        yield from _walk_expr(first.iter, stmt, guards)
        inner = guards + ['comprehension (line %d)' % node.lineno]
        for part in [first.target] + first.ifs + rest:
            yield from _walk_expr(part, stmt, inner)
        for part in ((node.key, node.value) if isinstance(node, ast.DictComp)
                     else (node.elt,)):
            yield from _walk_expr(part, stmt, inner)
    elif isinstance(node, ast.IfExp):
        yield from _walk_expr(node.test, stmt, guards)
        test = ast.unparse(node.test)
        yield from _walk_expr(node.body, stmt, guards + [
            'if %s (line %d)' % (test, node.lineno)])
        yield from _walk_expr(node.orelse, stmt, guards + [
            'else of if %s (line %d)' % (test, node.lineno)])
    elif isinstance(node, ast.BoolOp):
        yield from _walk_expr(node.values[0], stmt, guards)
        inner = guards + ['short-circuit %s (line %d)' % (
            'and' if isinstance(node.op, ast.And) else 'or', node.lineno)]
        for value in node.values[1:]:
            yield from _walk_expr(value, stmt, inner)
    else:
        for child in ast.iter_child_nodes(node):
            yield from _walk_expr(child, stmt, guards)
