"""Where ``ComputeManager`` re-binds the objects the check trusts.

The check takes ``self.rt`` and ``self._resource_tracker`` for nova's
resource tracker, ``self.reportclient`` for its report client and
``self.scheduler_client`` for the scheduler client of old releases, by
name (see :mod:`shelvefix.novacheck.values`): a free method called on one
of them frees placement allocations. That holds only while the class binds
them as nova does. :func:`rebindings` finds every other binding anywhere
in the class, so that the check says it cannot tell instead of reading a
replaced object, or a replaced method of it, as the real one.

Taken as nova's own bindings, the only ones not reported:

* in ``__init__``, the collaborator built by its own class
  (``resource_tracker.ResourceTracker(...)``,
  ``report.SchedulerReportClient()``, ``report.report_client_singleton()``,
  ``scheduler_client.SchedulerClient()``) or, for the report client, the
  scheduler client's (``self.scheduler_client.reportclient``, Queens and
  before) or the tracker's (``self.rt.reportclient``, Stein to Ussuri);
  or one handed to the constructor, as shelvefix's own manager
  takes them (``reportclient or (rt and rt.reportclient) or
  report.SchedulerReportClient()``): its caller's collaborator;
* in ``_get_resource_tracker`` (Rocky and before build the tracker there,
  on first use), a tracker built so, directly or through a local name;
* anywhere, ``None``: a placeholder a free cannot be called on without
  raising, which the check follows as it follows any failed call.

Reported: any other assignment to the collaborator (``self.rt = Other()``,
in ``__init__`` or any other method, nested functions included), any
assignment to or deletion of an attribute reached through it
(``self.reportclient.delete_allocation_for_instance = noop``,
``self.rt.reportclient = fake``), directly or through a local name bound
to it, ``setattr``/``delattr`` on ``self`` with its name (or a name known
only at run time) or on the collaborator itself, and a binding of its name
in the class body.
"""

import ast

from shelvefix.novacheck import classes
from shelvefix.novacheck import values

INIT = '__init__'
# The collaborators, by attribute of self, and what the check takes each for.
TRUSTED = dict([(name, "nova's resource tracker")
                for name in values.TRACKER_ATTRIBUTES] +
               [(name, "nova's report client")
                for name in values.REPORT_CLIENT_ATTRIBUTES] +
               [(values.SCHEDULER_CLIENT_ATTRIBUTE,
                 "nova's scheduler client")])
# The classes (or factories) that build each, by the last name called.
BUILDERS = dict([(name, ('ResourceTracker',))
                 for name in values.TRACKER_ATTRIBUTES] +
                [(name, ('SchedulerReportClient', 'report_client_singleton'))
                 for name in values.REPORT_CLIENT_ATTRIBUTES] +
                [(values.SCHEDULER_CLIENT_ATTRIBUTE, ('SchedulerClient',))])
_SETTERS = ('setattr', 'delattr', '__setattr__', '__delattr__')
_DEFS = (ast.FunctionDef, ast.AsyncFunctionDef, ast.Lambda)


def _trusted_attribute(node):
    """The collaborator ``node`` is (``self.rt`` gives ``'rt'``), or None."""
    if (isinstance(node, ast.Attribute) and node.attr in TRUSTED and
            isinstance(node.value, ast.Name) and node.value.id == 'self'):
        return node.attr
    return None


def _reached(node, aliases):
    """The collaborator ``node`` is, or is reached through, else None.

    ``self.rt``, ``self.rt.reportclient``, ``self.rt.x[0]``, and a local
    name of ``aliases`` (bound to one of them) or an attribute of it.
    """
    while True:
        name = _trusted_attribute(node)
        if name is not None:
            return name
        if isinstance(node, ast.Name):
            return aliases.get(node.id)
        if isinstance(node, (ast.Attribute, ast.Subscript)):
            node = node.value
        elif (isinstance(node, ast.Call) and not node.args and
              isinstance(node.func, ast.Attribute) and
              node.func.attr == values.TRACKER_ACCESSOR and
              isinstance(node.func.value, ast.Name) and
              node.func.value.id == 'self'):
            return values.TRACKER_ATTRIBUTES[0]
        else:
            return None


def _built(value, name, locals_built, params=()):
    """True if ``value`` is the collaborator ``name`` built by nova's class.

    :param locals_built: local names bound only to such a build
    :param params: ``__init__``'s parameters: a collaborator handed to the
        constructor (``reportclient``, or the same collaborator of another
        one handed in, ``rt.reportclient``) is its caller's, as trusted as
        one built here; ``a or b`` and ``a and b`` are built when each
        operand is
    """
    if isinstance(value, ast.BoolOp):
        return all(_built(v, name, locals_built, params)
                   for v in value.values)
    if isinstance(value, ast.Name):
        return value.id in locals_built or value.id in params
    if (isinstance(value, ast.Attribute) and value.attr == name and
            isinstance(value.value, ast.Name) and
            value.value.id in params):
        return True
    if isinstance(value, ast.Call):
        return _callee_name(value.func) in BUILDERS[name]
    # The report client of another trusted collaborator: the scheduler
    # client's (Queens and before) or the tracker's (Stein to Ussuri).
    return (name in values.REPORT_CLIENT_ATTRIBUTES and
            isinstance(value, ast.Attribute) and
            value.attr == name and _trusted_attribute(value.value) in (
                (values.SCHEDULER_CLIENT_ATTRIBUTE,) +
                tuple(values.TRACKER_ATTRIBUTES)))


def _callee_name(func):
    """The last name of a callee (``a.b.C`` gives ``C``), else None."""
    if isinstance(func, ast.Attribute):
        return func.attr
    if isinstance(func, ast.Name):
        return func.id
    return None


def _genuine(stmt, target, function, locals_built):
    """True if ``target = ...`` in ``stmt`` is one of nova's own bindings."""
    name = _trusted_attribute(target)
    if name is None or not isinstance(stmt, (ast.Assign, ast.AnnAssign)):
        return False
    value = stmt.value
    if isinstance(value, ast.Constant) and value.value is None:
        return True
    where = getattr(function, 'name', None)
    if where == INIT:
        return _built(value, name, locals_built, _parameters(function))
    if where == values.TRACKER_ACCESSOR and name in values.TRACKER_ATTRIBUTES:
        return _built(value, name, locals_built)
    return False


def _parameters(function):
    """The names of ``function``'s parameters, ``self`` left out."""
    arguments = function.args
    names = [a.arg for a in (arguments.posonlyargs + arguments.args +
                             arguments.kwonlyargs)]
    return frozenset(names[1:] if names[:1] == ['self'] else names)


def _function_locals(assigns):
    """``(aliases, built)`` of one function, from its assignments.

    ``aliases`` maps a local name bound to a collaborator (or to something
    reached through it) to the collaborator; ``built`` holds the local
    names every assignment of which builds a resource tracker.
    """
    aliases, assigned, built = {}, {}, set()
    for node in assigns:
        for target in node.targets:
            if isinstance(target, ast.Name):
                assigned.setdefault(target.id, []).append(node.value)
                reached = _reached(node.value, {})
                if reached is not None:
                    aliases[target.id] = reached
    for local, bound in assigned.items():
        if all(isinstance(v, ast.Call) and _callee_name(v.func) in
               BUILDERS[values.TRACKER_ATTRIBUTES[0]] for v in bound):
            built.add(local)
    return aliases, built


def _scan(cls):
    """What each function of the class assigns and stores, in one walk.

    :returns: ``{function: (assignments, stores)}`` for every function,
        nested ones and lambdas included: its own ``Assign`` statements,
        and ``(node, statement)`` of each attribute or subscript it stores
        or deletes and each ``setattr``-like call, ``statement`` being the
        innermost statement holding it (the node itself in a lambda)
    """
    found = {}
    todo = [(node, None, None) for node in cls.body]
    while todo:
        node, function, stmt = todo.pop()
        if function is not None:
            if isinstance(node, ast.stmt):
                stmt = node
            assigns, stores = found.setdefault(function, ([], []))
            if isinstance(node, ast.Assign):
                assigns.append(node)
            if (isinstance(node, (ast.Attribute, ast.Subscript)) and
                    not isinstance(node.ctx, ast.Load)) or (
                        isinstance(node, ast.Call) and
                        _callee_name(node.func) in _SETTERS):
                stores.append((node, stmt or node))
        if isinstance(node, _DEFS):
            # The body runs in the function; decorators and defaults run
            # where it is defined.
            for field, value in ast.iter_fields(node):
                for child in (value if isinstance(value, list) else [value]):
                    if isinstance(child, ast.AST):
                        todo.append((child, node, None) if field == 'body'
                                    else (child, function, stmt))
        else:
            todo.extend((child, function, stmt)
                        for child in ast.iter_child_nodes(node))
    return found


def _class_level(stmt):
    """``(node, None)`` of a class-body statement, not inside its defs."""
    todo = [stmt]
    while todo:
        node = todo.pop()
        yield node, None
        if not isinstance(node, _DEFS + (ast.ClassDef,)):
            todo.extend(ast.iter_child_nodes(node))


def _text(node):
    return ast.unparse(node).splitlines()[0]


def _setter_target(call, aliases):
    """The collaborator a ``setattr``-like call re-binds, else None."""
    args = list(call.args)
    if (isinstance(call.func, ast.Attribute) and
            call.func.attr.startswith('__') and not (
                isinstance(call.func.value, ast.Name) and
                call.func.value.id == 'object')):
        # self.__setattr__('rt', x): the object is the callee's owner.
        args.insert(0, call.func.value)
    if not args:
        return None
    owner = args[0]
    reached = _reached(owner, aliases)
    if reached is not None:
        return reached
    if isinstance(owner, ast.Name) and owner.id == 'self':
        given = args[1] if len(args) > 1 else None
        if not (isinstance(given, ast.Constant) and
                isinstance(given.value, str)):
            return '*'
        if given.value in TRUSTED:
            return given.value
    return None


def rebindings(cls):
    """Every binding of a trusted collaborator the check does not model.

    :param cls: the ``ComputeManager`` class definition (``ast``)
    :returns: a list of :class:`~shelvefix.novacheck.classes.Unmodeled`,
        in line order; ``name`` is the collaborator (``'*'`` for a
        ``setattr`` on ``self`` whose name is known only at run time)
    """
    found = []
    for stmt in cls.body:
        if isinstance(stmt, _DEFS + (ast.ClassDef,)):
            continue
        # A class attribute of that name is what self.name reads until an
        # instance attribute hides it.
        for node, _function in _class_level(stmt):
            if (isinstance(node, ast.Name) and node.id in TRUSTED and
                    not isinstance(node.ctx, ast.Load)):
                found.append(classes.Unmodeled(
                    node.id, node.lineno, 'in the class body: %s'
                    % _text(stmt)))
    for function, (assigns, stores) in _scan(cls).items():
        aliases, built = _function_locals(assigns)
        for node, stmt in stores:
            if isinstance(node, ast.Call):
                name = _setter_target(node, aliases)
            else:
                name = _reached(node, aliases)
                if name is not None and _genuine(stmt, node, function,
                                                 built):
                    continue
            if name is None:
                continue
            where = getattr(function, 'name', 'a lambda')
            found.append(classes.Unmodeled(
                name, node.lineno, 'in %s: %s' % (where, _text(stmt))))
    return sorted(found, key=lambda u: u.line)


def why_untrusted(cls, display):
    """One sentence on the first rebinding of a collaborator, or None.

    :param cls: the ``ComputeManager`` class definition (``ast``)
    :param display: the file name the sentence gives
    """
    found = rebindings(cls)
    if not found:
        return None
    first = found[0]
    if first.name == '*':
        what = 'an attribute of self named only at run time'
    else:
        what = 'self.%s, which the check takes for %s,' % (
            first.name, TRUSTED[first.name])
    more = (' (and %d more)' % (len(found) - 1)) if len(found) > 1 else ''
    return ('%s re-binds %s at %s:%d %s%s; the check does not follow what '
            'that makes of the calls it trusts' % (
                cls.name, what, display, first.line, first.why, more))
