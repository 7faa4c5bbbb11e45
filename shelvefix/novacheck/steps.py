"""The steps of a control-flow graph, and the scopes their names live in.

:mod:`shelvefix.novacheck.cfg` builds a :class:`Graph` of
``ComputeManager._shelve_offload_instance`` out of :class:`Step` objects;
each step resolves names in a :class:`Scope`, one per run of a function
(every inlined call has its own). :func:`find_method` finds the method the
way Python binds it.
"""

import ast
import collections

from shelvefix.novacheck import classes

CLASS_NAME = 'ComputeManager'
METHOD_NAME = '_shelve_offload_instance'

# Where the graph builder is: the scope and function it is in, the
# Locations of the calls inlined down to there, where an exception, a
# return, a break or a continue goes, how many helper calls deep it is, the
# functions being inlined and the idents of the scopes still running.
Context = collections.namedtuple(
    'Context', 'scope function where raise_to on_return on_break '
               'on_continue depth stack live')
# Where a step is: its node, the statement holding it, and the function
# that statement belongs to.
Location = collections.namedtuple('Location', 'node stmt function')


class Step(object):
    """One step of the graph.

    :ivar op: what the step does, for
        :class:`shelvefix.novacheck.events.Semantics`
    :ivar where: :class:`Location` tuples from the method down to the
        step, one per inlined call
    :ivar scope: the :class:`Scope` its names resolve in
    :ivar succ: ``(step, label)`` pairs; the label names the branch taken
    :ivar exc: where an exception raised by the step goes (None: out of
        the method)
    :ivar may_raise: whether the step can raise at all
    :ivar text: how the path display names the step, when not its code
    :ivar live: the idents of the scopes running at the step (names of
        any other scope are forgotten on the way to it)
    """

    __slots__ = ('index', 'op', 'where', 'scope', 'succ', 'exc',
                 'may_raise', 'text', 'live')

    def __init__(self, index, op, where, scope, text):
        self.index = index
        self.op = op
        self.where = where
        self.scope = scope
        self.text = text
        self.succ = []
        self.exc = None
        self.may_raise = False
        self.live = frozenset()

    @property
    def line(self):
        return self.where[-1].node.lineno

    def __repr__(self):
        return '<Step %d line %d %s>' % (self.index, self.line, self.op[0])


class Scope(object):
    """The names of one run of a function (each inlined call has its own).

    Nested functions see their enclosing scope's names.
    """

    def __init__(self, ident, function, parent=None):
        self.ident = ident
        self.function = function
        self.parent = parent
        found = _Bindings(function)
        self.locals = found.names
        self.nested = found.nested
        self.constants = found.constants

    def _owner(self, name):
        scope = self
        while scope is not None and name not in scope.locals:
            scope = scope.parent
        return scope

    def key(self, name):
        """The binding key of ``name`` here."""
        owner = self._owner(name)
        return (owner.ident if owner else 'module', name)

    def definition(self, name):
        """The nested def or lambda ``name`` always refers to, or None."""
        owner = self._owner(name)
        return owner.nested.get(name) if owner else None

    def constant(self, name):
        """``(True, value)`` for a local assigned one constant only."""
        owner = self._owner(name)
        if owner is not None and name in owner.constants:
            return True, owner.constants[name]
        return False, None


class _Bindings(ast.NodeVisitor):
    """The local names of a function: how often and to what bound."""

    def __init__(self, function):
        args = function.args
        params = [a.arg for a in args.posonlyargs + args.args +
                  args.kwonlyargs]
        params += [a.arg for a in (args.vararg, args.kwarg) if a]
        self.count = collections.Counter(params + params)
        self.values = {}
        self.declared = set()
        body = function.body
        for node in (body if isinstance(body, list) else [body]):
            self.visit(node)
        self.names = set(self.count) - self.declared
        self.nested = {name: node for name, node in self.values.items()
                       if self.count[name] == 1 and name in self.names and
                       isinstance(node, (ast.FunctionDef, ast.Lambda,
                                         ast.AsyncFunctionDef))}
        self.constants = {name: node.value
                          for name, node in self.values.items()
                          if self.count[name] == 1 and name in self.names and
                          isinstance(node, ast.Constant)}

    def _bound(self, target, value=None):
        for node in ast.walk(target):
            if isinstance(node, ast.Name) and not isinstance(node.ctx,
                                                             ast.Load):
                self.count[node.id] += 1
                self.values[node.id] = value if node is target else None

    def visit_Assign(self, node):
        for target in node.targets:
            self._bound(target, node.value)
        self.visit(node.value)

    def visit_FunctionDef(self, node):
        self.count[node.name] += 1
        self.values[node.name] = node
        for decorator in node.decorator_list:
            self.visit(decorator)

    visit_AsyncFunctionDef = visit_FunctionDef

    def visit_ClassDef(self, node):
        self.count[node.name] += 1

    def visit_Lambda(self, node):
        pass

    def visit_Global(self, node):
        self.declared.update(node.names)

    visit_Nonlocal = visit_Global

    def visit_Name(self, node):
        if not isinstance(node.ctx, ast.Load):
            self._bound(node)

    def visit_alias(self, node):
        self.count[(node.asname or node.name).split('.')[0]] += 1

    def visit_ExceptHandler(self, node):
        if node.name:
            self.count[node.name] += 1
        self.generic_visit(node)


def find_method(tree, class_name=CLASS_NAME, method_name=METHOD_NAME):
    """The class and method definitions, as Python would bind them.

    A later definition of the same name replaces an earlier one at import
    time, so the last one wins here too; bindings the check does not follow
    (see :mod:`shelvefix.novacheck.classes`) give an
    :class:`~shelvefix.novacheck.classes.Unmodeled` instead of a
    definition.

    :returns: ``(class_def, function_def)``, either None when missing
    """
    cls, trouble = classes.find_class(tree, class_name)
    if cls is None:
        return None, None
    if trouble is not None:
        return cls, trouble
    return cls, methods_of(cls, tree).get(method_name)


def methods_of(cls, tree=None):
    """The methods of a class body by name, as the class binds them.

    :param tree: the module, when module-level code after the class may
        patch it
    :returns: a dict of definitions and
        :class:`~shelvefix.novacheck.classes.Unmodeled` values
    """
    methods = classes.class_methods(cls)
    if tree is not None:
        patched = classes.patched_attributes(tree, cls.name,
                                             cls.end_lineno)
        everything = patched.pop('*', None)
        if everything is not None:
            methods = dict.fromkeys(methods, everything)
        methods.update(patched)
    return methods


def instance_parameter(method):
    """The parameter holding the instance: ``instance``, else the third."""
    names = [a.arg for a in method.args.posonlyargs + method.args.args]
    if 'instance' in names or len(names) < 3:
        return 'instance'
    return names[2]


class Graph(object):
    """A built graph.

    :ivar steps: every :class:`Step` built
    :ivar entry: the first step
    :ivar methods: the class's methods by name
    :ivar instance_key: the binding key of the instance parameter
    """

    def __init__(self, method, methods, steps, entry, instance_key):
        self.method = method
        self.methods = methods
        self.steps = steps
        self.entry = entry
        self.instance_key = instance_key


def connect(dangling, target):
    """Join dangling ``(step, label)`` edges to ``target``."""
    for step, label in dangling:
        step.succ.append((target, label))
