"""Evaluate small pure predicates of nova's source, such as vm_states'.

nova decides whether the resource tracker may stop counting a server with
a predicate of its states: before bug 2025480 a list,
``vm_states.ALLOW_RESOURCE_REMOVAL``, afterwards a function,
``vm_states.allow_resource_removal(vm_state, task_state)``. The check reads
such a predicate and works out its value for given states with
:class:`Evaluator`, which knows only what a predicate of constants needs:

* names: the function's parameters and the module's constants (``NAME =
  'literal'`` or a list, tuple or set of such names at the top of the
  module), and ``module.NAME`` for the modules it is given;
* ``==``, ``!=``, ``in``, ``not in``, ``is``, ``is not``, ``and``, ``or``,
  ``not``, conditional expressions, literals;
* in a function: a docstring, ``return``, ``if``/``elif``/``else`` and
  assignments of a name to an expression it can evaluate; a call of
  another function of the same module, with keywords or positions.

Anything else raises :class:`CannotEvaluate` naming the construct and its
line, so that the check says it cannot tell instead of guessing.
"""

import ast


# How deep calls of one module function by another are followed.
MAX_CALLS = 8


class CannotEvaluate(Exception):
    """The predicate uses something the evaluator does not model."""

    def __init__(self, what, node):
        super(CannotEvaluate, self).__init__(
            '%s at line %d: %s' % (what, getattr(node, 'lineno', 0),
                                   ast.unparse(node).splitlines()[0]))


class Symbol(object):
    """A constant of another module, known by its dotted name only.

    nova's ``vm_states.SHELVED_OFFLOADED`` is
    ``fields.InstanceState.SHELVED_OFFLOADED``; two symbols are equal when
    their names are, and comparing one with a literal cannot be told.
    """

    def __init__(self, name):
        self.name = name

    def __eq__(self, other):
        return isinstance(other, Symbol) and other.name == self.name

    def __hash__(self):
        return hash(self.name)

    def __repr__(self):
        return self.name


def _equal(left, right, node):
    if isinstance(left, Symbol) != isinstance(right, Symbol) and (
            isinstance(left, str) or isinstance(right, str)):
        raise CannotEvaluate('a comparison of %r with %r'
                             % (left, right), node)
    return left == right


def _member(item, container, node):
    if not isinstance(container, (tuple, list, set, frozenset)):
        raise CannotEvaluate('a membership test of a non-literal', node)
    return any(_equal(item, element, node) for element in container)


def _dotted(node):
    parts = []
    while isinstance(node, ast.Attribute):
        parts.append(node.attr)
        node = node.value
    if not isinstance(node, ast.Name):
        return None
    return '.'.join([node.id] + parts[::-1])


def module_constants(tree):
    """A module's top-level constants: name -> value (str, tuple...).

    A constant taken from another module (``fields.X.Y``) is a
    :class:`Symbol`.
    """
    constants = {}
    for stmt in tree.body:
        if (isinstance(stmt, ast.Assign) and len(stmt.targets) == 1 and
                isinstance(stmt.targets[0], ast.Name)):
            name = stmt.targets[0].id
            try:
                constants[name] = Evaluator({}, {}, constants).value(
                    stmt.value, {})
            except CannotEvaluate:
                dotted = _dotted(stmt.value)
                if dotted is not None and '.' in dotted:
                    constants[name] = Symbol(dotted)
                else:
                    constants.pop(name, None)
    return constants


_COMPARE = {ast.Eq: _equal,
            ast.NotEq: lambda a, b, node: not _equal(a, b, node),
            ast.In: _member,
            ast.NotIn: lambda a, b, node: not _member(a, b, node),
            ast.Is: lambda a, b, node: a is b,
            ast.IsNot: lambda a, b, node: a is not b}


def module_functions(tree):
    """A module's top-level functions by name (the last one wins)."""
    return {stmt.name: stmt for stmt in tree.body
            if isinstance(stmt, ast.FunctionDef)}


class Evaluator(object):
    """Values of expressions and calls over constants.

    :param modules: module name -> its constants, for ``module.NAME``
    :param functions: the functions a call may name (``f`` or
        ``module.f``), by name
    :param constants: the names of the module the code is in
    """

    def __init__(self, modules, functions, constants):
        self.modules = modules
        self.functions = functions
        self.constants = constants

    def call(self, function, args, kwargs, depth=0):
        """The value ``function`` returns for ``args`` and ``kwargs``."""
        if depth > MAX_CALLS:
            raise CannotEvaluate('calls nested too deep', function)
        if function.decorator_list:
            raise CannotEvaluate('a decorated function', function)
        spec = function.args
        if spec.vararg or spec.kwarg or spec.posonlyargs or spec.kwonlyargs:
            raise CannotEvaluate('a signature with *, ** or /', function)
        params = [a.arg for a in spec.args]
        if len(args) > len(params) or set(kwargs) - set(params):
            raise CannotEvaluate('arguments the function does not take',
                                 function)
        names = dict(zip(params, args))
        defaults = dict(zip(params[::-1], spec.defaults[::-1]))
        for name in params[len(args):]:
            if name in kwargs:
                names[name] = kwargs[name]
            elif name in defaults:
                names[name] = self.value(defaults[name], {})
            else:
                raise CannotEvaluate('a call without %s' % name, function)
        done, result = self._body(function.body, names, depth)
        if not done:
            return None
        return result

    def _body(self, stmts, names, depth):
        for index, stmt in enumerate(stmts):
            if (index == 0 and isinstance(stmt, ast.Expr) and
                    isinstance(stmt.value, ast.Constant) and
                    isinstance(stmt.value.value, str)):
                continue
            if isinstance(stmt, ast.Return):
                return True, (None if stmt.value is None else
                              self.value(stmt.value, names, depth))
            if isinstance(stmt, ast.If):
                branch = (stmt.body if self.value(stmt.test, names, depth)
                          else stmt.orelse)
                done, result = self._body(branch, names, depth)
                if done:
                    return done, result
            elif (isinstance(stmt, ast.Assign) and len(stmt.targets) == 1 and
                  isinstance(stmt.targets[0], ast.Name)):
                names[stmt.targets[0].id] = self.value(stmt.value, names,
                                                       depth)
            elif not isinstance(stmt, ast.Pass):
                raise CannotEvaluate('a %s statement'
                                     % type(stmt).__name__.lower(), stmt)
        return False, None

    def value(self, node, names, depth=0):
        """The value of the expression ``node``."""
        if isinstance(node, ast.Constant):
            return node.value
        if isinstance(node, ast.Name):
            for scope in (names, self.constants):
                if node.id in scope:
                    return scope[node.id]
            raise CannotEvaluate('a name it does not know', node)
        if (isinstance(node, ast.Attribute) and
                isinstance(node.value, ast.Name) and
                node.value.id in self.modules):
            found = self.modules[node.value.id]
            if node.attr in found:
                return found[node.attr]
            raise CannotEvaluate('no such constant in %s' % node.value.id,
                                 node)
        if isinstance(node, (ast.Tuple, ast.List, ast.Set)):
            return tuple(self.value(e, names, depth) for e in node.elts)
        if isinstance(node, ast.BoolOp):
            result = None
            for part in node.values:
                result = self.value(part, names, depth)
                if bool(result) == isinstance(node.op, ast.Or):
                    return result
            return result
        if isinstance(node, ast.UnaryOp) and isinstance(node.op, ast.Not):
            return not self.value(node.operand, names, depth)
        if isinstance(node, ast.IfExp):
            return self.value(node.body if self.value(node.test, names,
                                                      depth)
                              else node.orelse, names, depth)
        if isinstance(node, ast.Compare):
            return self._compare(node, names, depth)
        if isinstance(node, ast.Call):
            return self._call(node, names, depth)
        raise CannotEvaluate('an expression it does not model', node)

    def _compare(self, node, names, depth):
        left = self.value(node.left, names, depth)
        for op, right_node in zip(node.ops, node.comparators):
            compare = _COMPARE.get(type(op))
            if compare is None:
                raise CannotEvaluate('an ordering comparison', node)
            right = self.value(right_node, names, depth)
            if not compare(left, right, node):
                return False
            left = right
        return True

    def _call(self, node, names, depth):
        func = node.func
        name = None
        if isinstance(func, ast.Name):
            name = func.id
        elif (isinstance(func, ast.Attribute) and
              isinstance(func.value, ast.Name) and
              func.value.id in self.modules):
            name = func.attr
        function = self.functions.get(name)
        if function is None or any(isinstance(a, ast.Starred)
                                   for a in node.args) or any(
                k.arg is None for k in node.keywords):
            raise CannotEvaluate('a call it does not model', node)
        return self.call(function,
                         [self.value(a, names, depth) for a in node.args],
                         {k.arg: self.value(k.value, names, depth)
                          for k in node.keywords}, depth + 1)
