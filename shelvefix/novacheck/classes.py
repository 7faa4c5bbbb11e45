"""What a module's ``ComputeManager`` class really binds, as Python runs it.

The check reads ``def`` statements, but the name a method is called by is
whatever the class body (or the module, after the class) bound it to last.
:func:`find_class` and :func:`class_methods` follow the bindings the check
models and mark every other one :class:`Unmodeled`, so that a method
re-bound out of the check's sight is never read as if it ran:

* modelled: a ``def`` at the top of the class body (the last one of a
  name wins), and ``name = other`` where ``other`` is a method defined
  above it in the class (a plain alias);
* not modelled: any other assignment to the name in the class body
  (``name = decorator(name)``, ``name = None``...), ``del name``, a
  definition inside an ``if``, ``try``, ``for``, ``while``, ``with`` or
  ``match`` of the class body, and, after the class, a module-level
  assignment to ``ComputeManager.name``, ``setattr`` or ``delattr`` on the
  class;
* a class the check cannot trust at all: decorated, re-bound at module
  level after its definition (``ComputeManager = Other``), or defined
  inside a compound statement.
"""

import ast

_COMPOUND = (ast.If, ast.Try, ast.For, ast.AsyncFor, ast.While, ast.With,
             ast.AsyncWith, ast.Match) + ((ast.TryStar,) if hasattr(
                 ast, 'TryStar') else ())
_DEFS = (ast.FunctionDef, ast.AsyncFunctionDef)


class Unmodeled(object):
    """A name bound in a way the check does not follow.

    :ivar name: the name
    :ivar line: where it is bound
    :ivar why: what binds it, in a few words (``re-bound at line 12 to
        never(_shelve_offload_instance)``)
    """

    def __init__(self, name, line, why):
        self.name = name
        self.line = line
        self.why = why

    def __repr__(self):
        return '<Unmodeled %s: %s>' % (self.name, self.why)


def _text(node):
    return ast.unparse(node).splitlines()[0]


def _stored_names(node):
    """Names a statement binds (not inside the defs and classes it holds)."""
    todo = [node]
    while todo:
        current = todo.pop()
        if isinstance(current, _DEFS + (ast.ClassDef,)):
            yield current.name, current
            if current is not node:
                continue
            todo.extend(current.decorator_list)
            continue
        if isinstance(current, ast.Name) and not isinstance(current.ctx,
                                                            ast.Load):
            yield current.id, current
        elif isinstance(current, ast.alias):
            yield (current.asname or current.name).split('.')[0], node
        elif isinstance(current, (ast.MatchAs, ast.MatchStar)) and (
                current.name):
            yield current.name, current
        elif isinstance(current, ast.ExceptHandler) and current.name:
            yield current.name, current
        if not isinstance(current, ast.Lambda):
            todo.extend(ast.iter_child_nodes(current))


def class_methods(cls):
    """The class body's bindings that matter: name -> def or Unmodeled.

    :param cls: an ``ast.ClassDef``
    :returns: a dict of ``ast.FunctionDef`` (or ``AsyncFunctionDef``) and
        :class:`Unmodeled` values; names bound to plain values the check
        never calls (constants, nested classes) are left out unless they
        re-bind a method
    """
    methods = {}
    for stmt in cls.body:
        if isinstance(stmt, _DEFS):
            methods[stmt.name] = stmt
        elif (isinstance(stmt, ast.Assign) and len(stmt.targets) == 1 and
              isinstance(stmt.targets[0], ast.Name) and
              isinstance(stmt.value, ast.Name) and
              isinstance(methods.get(stmt.value.id), _DEFS)):
            methods[stmt.targets[0].id] = methods[stmt.value.id]
        elif isinstance(stmt, ast.Delete):
            for name, _node in _stored_names(stmt):
                methods[name] = Unmodeled(name, stmt.lineno,
                                          'deleted at line %d' % stmt.lineno)
        elif isinstance(stmt, _COMPOUND):
            for name, _node in _stored_names(stmt):
                methods[name] = Unmodeled(
                    name, stmt.lineno, 'bound inside the %s statement at '
                    'line %d of the class body, which the check does not '
                    'follow' % (type(stmt).__name__.lower(), stmt.lineno))
        else:
            for name, _node in _stored_names(stmt):
                if name in methods or isinstance(stmt, (ast.Assign,
                                                        ast.AnnAssign,
                                                        ast.AugAssign)):
                    methods[name] = Unmodeled(
                        name, stmt.lineno, 're-bound at line %d: %s'
                        % (stmt.lineno, _text(stmt)))
    return methods


def find_class(tree, class_name):
    """The class definition Python binds ``class_name`` to, as far as known.

    :returns: ``(class_def, trouble)``: ``class_def`` is the last top-level
        definition (None if there is none); ``trouble`` is an
        :class:`Unmodeled` when the name is then bound in a way the check
        does not follow, or the class is decorated, else None
    """
    cls = trouble = None
    for stmt in tree.body:
        if isinstance(stmt, ast.ClassDef) and stmt.name == class_name:
            cls, trouble = stmt, None
            if stmt.decorator_list:
                trouble = Unmodeled(
                    class_name, stmt.lineno, 'decorated with @%s, which may '
                    'replace it or its methods'
                    % _text(stmt.decorator_list[0]))
            continue
        for name, node in _stored_names(stmt):
            if name != class_name:
                continue
            line = getattr(node, 'lineno', stmt.lineno)
            if isinstance(node, ast.ClassDef):
                why = ('defined inside the statement at line %d, which the '
                       'check does not follow' % stmt.lineno)
            else:
                why = 're-bound at line %d: %s' % (line, _text(stmt))
            trouble = Unmodeled(class_name, line, why)
    return cls, trouble


def patched_attributes(tree, class_name, after):
    """Methods of the class patched by module-level code after line ``after``.

    ``ComputeManager.name = ...``, ``del ComputeManager.name`` and
    ``setattr``/``delattr`` calls on the class. A ``setattr`` whose name is
    not a constant patches everything, as ``'*'``.

    :returns: a dict name -> :class:`Unmodeled`
    """
    patched = {}
    for stmt in tree.body:
        if stmt.lineno <= after or isinstance(stmt, _DEFS + (ast.ClassDef,)):
            continue
        for node in ast.walk(stmt):
            name = None
            if (isinstance(node, ast.Attribute) and
                    not isinstance(node.ctx, ast.Load) and
                    isinstance(node.value, ast.Name) and
                    node.value.id == class_name):
                name = node.attr
            elif (isinstance(node, ast.Call) and
                  isinstance(node.func, ast.Name) and
                  node.func.id in ('setattr', 'delattr') and node.args and
                  isinstance(node.args[0], ast.Name) and
                  node.args[0].id == class_name):
                given = node.args[1] if len(node.args) > 1 else None
                name = (given.value if isinstance(given, ast.Constant) and
                        isinstance(given.value, str) else '*')
            if name is not None:
                patched[name] = Unmodeled(
                    name, node.lineno, 'patched at line %d after the class: '
                    '%s' % (node.lineno, _text(stmt)))
    return patched
