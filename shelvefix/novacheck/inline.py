"""Calls in the control-flow graph: which are followed, which are not.

:class:`Calls` is the part of :mod:`shelvefix.novacheck.cfg`'s builder
that meets a call. It inlines, with their own scope:

* ``ComputeManager`` helpers called as ``self.name(...)``, up to
  :data:`HELPER_DEPTH` calls deep and never recursively;
* nested functions called by name (undecorated, or decorated with one of
  nova's locks, :data:`TRANSPARENT_DECORATORS`) and lambdas called where
  they are written.

Anything else becomes one step: a helper it does not read (too deep, or
recursive), a nested function whose decorator may not call it, or an
ordinary call, with the nested functions and lambdas handed to it and
whether each may free allocations or save the instance.
"""

import ast

from shelvefix.novacheck import classes
from shelvefix.novacheck import steps as steps_mod
from shelvefix.novacheck import values

# How deep ComputeManager helper calls are followed.
HELPER_DEPTH = 3
# Decorators taken to call the function they wrap, each time it is called,
# with the arguments it was given: nova's locks, and the decorators of
# ComputeManager's methods, which record an action event, a fault or a
# notification and re-raise. Any other decorator may not call it at all.
TRANSPARENT_DECORATORS = ('synchronized', 'lock', 'wraps', 'wrap_exception',
                          'wrap_instance_event', 'wrap_instance_fault',
                          'reverts_task_state', 'expected_exceptions')
# The one of them that saves the instance when the function raises: it
# sets task_state back to None and saves (through _instance_update).
SAVES_ON_ERROR = 'reverts_task_state'


def not_run(function):
    """Why calling ``function`` may not run its body, or None.

    A decorator the check does not know, an ``async def`` (a call makes a
    coroutine, run only when awaited) or a generator function (a call
    makes a generator, run only as it is iterated).
    """
    if isinstance(function, classes.Unmodeled):
        return function.why
    odd = [d for d in getattr(function, 'decorator_list', ())
           if decorator_name(d) not in TRANSPARENT_DECORATORS]
    if odd:
        return ('decorated with @%s, which the check does not know to call '
                'it' % ast.unparse(odd[0]))
    if isinstance(function, ast.AsyncFunctionDef):
        return ('an async def: calling it only makes a coroutine, which runs '
                'none of its body until awaited')
    if _yields(function):
        return ('a generator function: calling it runs none of its body '
                'until the generator is iterated')
    return None


def _yields(function):
    """True if ``function`` itself (not a function inside it) yields."""
    body = function.body
    todo = list(body) if isinstance(body, list) else [body]
    while todo:
        node = todo.pop()
        if isinstance(node, (ast.Yield, ast.YieldFrom, ast.Await)):
            return True
        if not isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef,
                                 ast.Lambda, ast.ClassDef)):
            todo.extend(ast.iter_child_nodes(node))
    return False


def saves_on_error(function):
    """True if a decorator of ``function`` saves the instance on an error."""
    return any(decorator_name(d) == SAVES_ON_ERROR
               for d in getattr(function, 'decorator_list', ()))


def decorator_name(decorator):
    """The last name of a decorator or context manager expression."""
    if isinstance(decorator, ast.Call):
        decorator = decorator.func
    if isinstance(decorator, ast.Attribute):
        return decorator.attr
    return getattr(decorator, 'id', '')


class Calls(object):
    """The call handling of the graph builder.

    A mixin: it uses the builder's ``methods``, ``step``, ``expr``,
    ``body`` and scope counter.
    """

    def call(self, node, dangling, ctx, stmt):
        func = node.func
        if not isinstance(func, (ast.Name, ast.Lambda)):
            dangling = self.expr(getattr(func, 'value', func), dangling, ctx,
                                 stmt)
        for arg in node.args:
            dangling = self.expr(arg, dangling, ctx, stmt)
        for keyword in node.keywords:
            dangling = self.expr(keyword.value, dangling, ctx, stmt)
        kind, function, why = self.resolve(node, ctx)
        if kind in ('helper', 'nested'):
            return self.inline(function, node, dangling, ctx, stmt,
                               helper=kind == 'helper')
        if kind == 'opaque':
            op = ('opaque', node, _mentions(function, self.methods, _frees),
                  why)
        else:
            escaped = self.escaped(node, ctx)
            if kind == 'decorated':
                escaped += (_describe(function, self.methods, why),)
            op = ('call', node, escaped, kind == 'undefined')
        return [(self.step(op, node, stmt, ctx, dangling, may_raise=True),
                 None)]

    def resolve(self, node, ctx):
        """``(kind, function, why)``: what a call runs.

        ``helper`` and ``nested`` are inlined; ``opaque`` is a helper the
        check does not read; ``decorated`` a nested function whose
        decorator may not call it; ``undefined`` a ``self.`` method the
        class lacks; ``external`` anything else.
        """
        func = node.func
        if isinstance(func, ast.Lambda):
            return 'nested', func, None
        if (isinstance(func, ast.Attribute) and
                isinstance(func.value, ast.Name) and func.value.id == 'self'):
            method = self.methods.get(func.attr)
            if func.attr == values.UPDATE_AND_SAVE and not isinstance(
                    method, classes.Unmodeled):
                return 'external', None, None
            if method is None:
                return 'undefined', None, None
            why = not_run(method)
            if why is not None:
                return 'opaque', method, 'self.%s is %s' % (func.attr, why)
            if method in ctx.stack:
                return 'opaque', method, (
                    'self.%s calls itself again; the check does not follow '
                    'the recursion' % func.attr)
            if ctx.depth >= HELPER_DEPTH:
                return 'opaque', method, (
                    'self.%s is more than %d helper calls deep, where the '
                    'check stops reading' % (func.attr, HELPER_DEPTH))
            return 'helper', method, None
        if isinstance(func, ast.Name):
            function = ctx.scope.definition(func.id)
            if function is None:
                return 'external', None, None
            if function in ctx.stack:
                return 'opaque', function, '%s calls itself' % func.id
            why = not_run(function)
            if why is not None:
                return 'decorated', function, why
            return 'nested', function, None
        return 'external', None, None

    def escaped(self, node, ctx):
        """Nested functions and lambdas handed to a call, described."""
        found = []
        for value in list(node.args) + [k.value for k in node.keywords]:
            if isinstance(value, ast.Starred):
                value = value.value
            function = None
            if isinstance(value, ast.Lambda):
                function = value
            elif isinstance(value, ast.Name):
                function = ctx.scope.definition(value.id)
            if function is not None:
                found.append(_describe(function, self.methods,
                                       'handed to %s'
                                       % ast.unparse(node.func)))
        return tuple(found)

    def inline(self, function, call, dangling, ctx, stmt, helper):
        scope = steps_mod.Scope(next(self._scopes), function,
                                parent=None if helper else ctx.scope)
        returns = []
        raise_to = self.reverter(function, scope, call, stmt, ctx)
        inner = steps_mod.Context(scope, function, ctx.where + (
            steps_mod.Location(call, stmt, ctx.function),), raise_to,
            returns.extend, None, None, ctx.depth + (1 if helper else 0),
            ctx.stack + (function,), ctx.live | {scope.ident})
        name = ast.unparse(call.func)
        enter = self.step(('bind', scope, function, call, ctx.scope), call,
                          stmt, ctx, dangling, text='calls %s' % name)
        if isinstance(function, ast.Lambda):
            out = self.expr(function.body, [(enter, None)], inner,
                            function.body)
        else:
            out = self.body(function.body, [(enter, None)], inner)
        leave = self.step(('leave', scope.ident), call, stmt, ctx,
                          out + returns, text='back from %s' % name)
        return [(leave, None)]

    def reverter(self, function, scope, node, stmt, ctx):
        """Where an exception inside ``function`` goes first.

        For a function decorated with ``@reverts_task_state``, a step that
        saves the instance it was given, then lets the exception go on;
        otherwise where exceptions go already.
        """
        if not saves_on_error(function):
            return ctx.raise_to
        step = self.step(('revert-save', scope), node, stmt, ctx,
                         text='@%s saves the instance after the exception'
                         % SAVES_ON_ERROR, may_raise=True)
        # The function's names are still there when the decorator runs.
        step.live = ctx.live | {scope.ident}
        return step


def _frees(node):
    return isinstance(node, ast.Attribute) and (
        node.attr in values.FREE_METHODS)


def _saves(node):
    if isinstance(node, ast.Attribute):
        return node.attr in ('save', 'vm_state', values.UPDATE_AND_SAVE)
    return isinstance(node, ast.Constant) and node.value == 'vm_state'


def _mentions(function, methods, predicate, seen=None):
    """Whether ``function``, or a helper it calls, has a matching node.

    A method bound out of the check's sight may do anything.
    """
    if isinstance(function, classes.Unmodeled):
        return True
    seen = set() if seen is None else seen
    seen.add(function)
    for node in ast.walk(function):
        if predicate(node):
            return True
        if (isinstance(node, ast.Attribute) and
                isinstance(node.value, ast.Name) and
                node.value.id == 'self' and node.attr in methods and
                methods[node.attr] not in seen):
            if _mentions(methods[node.attr], methods, predicate, seen):
                return True
    return False


def mentions_free(function, methods):
    """Whether ``function`` or a helper it calls names a free method."""
    return _mentions(function, methods, _frees)


def _describe(function, methods, why):
    """``(display, may free, may save)`` for a function run out of sight."""
    name = getattr(function, 'name', None) or (
        'the lambda at line %d' % function.lineno)
    return ('%s (%s)' % (name, why), _mentions(function, methods, _frees),
            _mentions(function, methods, _saves))
