"""Locate, in nova's compute manager, the statements bug 1798688 is about.

:func:`analyse` reads ``ComputeManager._shelve_offload_instance`` from a
parsed ``nova/compute/manager.py`` and returns every :class:`Site` that

* frees the instance's allocations: a call of
  ``delete_allocation_for_shelve_offloaded_instance`` (on ``self.rt`` since
  Train, on ``rt = self._get_resource_tracker()`` in Rocky and Stein) or of
  the report client's ``delete_allocation_for_instance``, directly or
  through another ``ComputeManager`` method;
* sets ``vm_state`` to ``SHELVED_OFFLOADED`` (an assignment,
  ``instance.update({...})``, ``setattr``, or a helper such as
  ``self._instance_update(..., vm_state=...)`` that also saves);
* saves an object (``instance.save(...)``, ``self._instance_update``).

Each site carries its *guards*: the enclosing constructs that may skip it
(an ``if`` branch, an ``except`` clause, a loop body, a nested function...).
Statements in a ``try`` body, a ``finally`` clause or a ``with`` block run
whenever the method gets there, so they carry no guard. Deciding what the
sites mean is left to :mod:`shelvefix.novacheck.check`.
"""

import ast

from shelvefix.novacheck import guards as guards_mod

CLASS_NAME = 'ComputeManager'
METHOD_NAME = '_shelve_offload_instance'

# The calls that free an instance's allocations in placement, in every
# shape the method has had: the resource tracker's wrapper, or the report
# client's method it wraps.
FREE_METHODS = ('delete_allocation_for_shelve_offloaded_instance',
                'delete_allocation_for_instance')
STATE_ATTRIBUTE = 'SHELVED_OFFLOADED'
STATE_VALUE = 'shelved_offloaded'
# nova's ComputeManager helper that sets fields and saves in one call.
UPDATE_AND_SAVE = '_instance_update'
# How deep frees are followed through ComputeManager helper methods.
HELPER_DEPTH = 3


class Site(object):
    """One call or assignment the verdict may rest on.

    :ivar node: the ``ast`` node (a ``Call`` or an assignment)
    :ivar stmt: the statement that holds it
    :ivar guards: descriptions of the enclosing constructs that may skip
        it, outermost first; empty when it runs whenever the method
        reaches it
    :ivar obj: for state and save sites, the source of the object whose
        state is set or saved (``'instance'``); None for frees
    :ivar via: for a free reached through a ``ComputeManager`` method, the
        :class:`Site` of the free inside that method (which may itself
        have a ``via``); None for a direct call
    :ivar receiver: for a free, how the object it is called on was
        obtained (see :func:`describe_receiver`); None otherwise
    """

    def __init__(self, node, stmt, guards, obj=None, via=None,
                 receiver=None):
        self.node = node
        self.stmt = stmt
        self.guards = list(guards)
        self.obj = obj
        self.via = via
        self.receiver = receiver

    @property
    def position(self):
        """``(line, column)`` of the node: its place in source order."""
        return (self.node.lineno, self.node.col_offset)

    @property
    def all_guards(self):
        """The guards of this site and of the chain of helpers it calls."""
        guards = list(self.guards)
        if self.via is not None:
            guards.extend('in %s: %s' % (_called_name(self.node), g)
                          for g in self.via.all_guards)
        return guards

    @property
    def source(self):
        """The statement as one line of code.

        The call alone when the statement is compound (the test of an
        ``if``, a ``with`` item...).
        """
        if isinstance(self.stmt, (ast.Expr, ast.Assign, ast.AnnAssign,
                                  ast.AugAssign, ast.Return)):
            return ast.unparse(self.stmt)
        return ast.unparse(self.node)

    def __repr__(self):
        return '<Site line %d: %s>' % (self.node.lineno, self.source)


class Analysis(object):
    """What :func:`analyse` found.

    :ivar cls: the ``ComputeManager`` ``ClassDef`` (None if absent)
    :ivar method: the ``_shelve_offload_instance`` function (None if
        absent)
    :ivar frees: free :class:`Site` objects in source order
    :ivar states: sites setting ``vm_state = SHELVED_OFFLOADED``
    :ivar saves: sites saving an object (a state site made by a helper
        that also saves is in both lists)
    """

    def __init__(self, cls=None, method=None):
        self.cls = cls
        self.method = method
        self.frees = []
        self.states = []
        self.saves = []


def find_method(tree, class_name=CLASS_NAME, method_name=METHOD_NAME):
    """The class and method definitions, as Python would bind them.

    A later definition of the same name replaces an earlier one at import
    time, so the last one wins here too.

    :returns: ``(class_def, function_def)``, either None when missing
    """
    cls = None
    for node in tree.body:
        if isinstance(node, ast.ClassDef) and node.name == class_name:
            cls = node
    if cls is None:
        return None, None
    return cls, _methods(cls).get(method_name)


def _methods(cls):
    return {node.name: node for node in cls.body
            if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef))}


def analyse(tree, class_name=CLASS_NAME, method_name=METHOD_NAME):
    """Find the free, state and save sites of the shelve-offload method.

    :param tree: a parsed ``nova/compute/manager.py`` (``ast.Module``)
    :returns: an :class:`Analysis`; its lists are empty when the class or
        the method is missing
    """
    cls, method = find_method(tree, class_name, method_name)
    result = Analysis(cls, method)
    if method is None:
        return result
    scanner = _Scanner(_methods(cls))
    for node, stmt, guards in guards_mod.walk_body(method.body, []):
        free = scanner.free_site(node, stmt, guards, method, 0,
                                 {method.name})
        if free is not None:
            result.frees.append(free)
        state = _state_site(node, stmt, guards)
        if state is not None:
            result.states.append(state)
        save = _save_site(node, stmt, guards)
        if save is not None:
            result.saves.append(save)
    for sites in (result.frees, result.states, result.saves):
        sites.sort(key=lambda site: site.position)
    return result


class _Scanner(object):
    """Recognises frees, following calls of ComputeManager methods."""

    def __init__(self, methods):
        self.methods = methods
        self._helper_frees = {}

    def free_site(self, node, stmt, guards, function, depth, seen):
        if not isinstance(node, ast.Call):
            return None
        func = node.func
        if isinstance(func, ast.Attribute) and func.attr in FREE_METHODS:
            return Site(node, stmt, guards,
                        receiver=describe_receiver(func.value, function,
                                                   node))
        helper = _self_method_name(node)
        if (helper is None or helper not in self.methods or
                helper in seen or depth >= HELPER_DEPTH):
            return None
        inner = self._first_free_in(helper, depth + 1, seen | {helper})
        if inner is None:
            return None
        return Site(node, stmt, guards, via=inner)

    def _first_free_in(self, name, depth, seen):
        # Keyed by depth too: how far the search may go depends on it.
        key = (name, depth)
        if key not in self._helper_frees:
            method = self.methods[name]
            frees = [self.free_site(node, stmt, guards, method, depth, seen)
                     for node, stmt, guards in
                     guards_mod.walk_body(method.body, [])]
            frees = sorted((f for f in frees if f is not None),
                           key=lambda site: (bool(site.all_guards),
                                             site.position))
            # An unconditional free in the helper is the one that counts;
            # otherwise the first guarded one, whose guards then show.
            self._helper_frees[key] = frees[0] if frees else None
        return self._helper_frees[key]


def _self_method_name(call):
    func = call.func
    if (isinstance(func, ast.Attribute) and
            isinstance(func.value, ast.Name) and func.value.id == 'self'):
        return func.attr
    return None


def _called_name(call):
    return ast.unparse(call.func)


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


def is_offloaded(expr):
    """True if ``expr`` is ``vm_states.SHELVED_OFFLOADED`` or its value."""
    return ((isinstance(expr, ast.Attribute) and
             expr.attr == STATE_ATTRIBUTE) or
            (isinstance(expr, ast.Name) and expr.id == STATE_ATTRIBUTE) or
            (isinstance(expr, ast.Constant) and expr.value == STATE_VALUE))


def _state_site(node, stmt, guards):
    if isinstance(node, (ast.Assign, ast.AnnAssign)):
        targets = node.targets if isinstance(node, ast.Assign) else [
            node.target]
        for target in targets:
            if (isinstance(target, ast.Attribute) and
                    target.attr == 'vm_state' and node.value is not None and
                    is_offloaded(node.value)):
                return Site(node, stmt, guards,
                            obj=ast.unparse(target.value))
        return None
    if not isinstance(node, ast.Call):
        return None
    func = node.func
    if isinstance(func, ast.Name) and func.id == 'setattr':
        args = node.args
        if (len(args) == 3 and isinstance(args[1], ast.Constant) and
                args[1].value == 'vm_state' and is_offloaded(args[2])):
            return Site(node, stmt, guards, obj=ast.unparse(args[0]))
        return None
    if _sets_offloaded(node):
        return Site(node, stmt, guards, obj=_updated_object(node))
    return None


def _sets_offloaded(call):
    for keyword in call.keywords:
        if keyword.arg == 'vm_state' and is_offloaded(keyword.value):
            return True
    func = call.func
    if isinstance(func, ast.Attribute) and func.attr == 'update':
        for arg in call.args:
            if isinstance(arg, ast.Dict):
                for key, value in zip(arg.keys, arg.values):
                    if (isinstance(key, ast.Constant) and
                            key.value == 'vm_state' and is_offloaded(value)):
                        return True
    return False


def _updated_object(call):
    """The object a state-setting call changes.

    ``instance.update(...)`` changes ``instance``; nova's helpers take
    ``(context, instance, **fields)``.
    """
    func = call.func
    if isinstance(func, ast.Attribute) and func.attr == 'update':
        return ast.unparse(func.value)
    if len(call.args) >= 2:
        return ast.unparse(call.args[1])
    if call.args:
        return ast.unparse(call.args[0])
    return None


def _save_site(node, stmt, guards):
    if not isinstance(node, ast.Call):
        return None
    func = node.func
    if isinstance(func, ast.Attribute) and func.attr == 'save':
        return Site(node, stmt, guards, obj=ast.unparse(func.value))
    if _self_method_name(node) == UPDATE_AND_SAVE:
        return Site(node, stmt, guards, obj=_updated_object(node))
    if _self_method_name(node) is not None and _sets_offloaded(node):
        # Another ComputeManager helper given vm_state=... is taken to
        # save, as _instance_update does.
        return Site(node, stmt, guards, obj=_updated_object(node))
    return None
