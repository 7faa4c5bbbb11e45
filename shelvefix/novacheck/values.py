"""What an expression in nova's compute manager evaluates to, for the check.

The check follows one object, the instance being offloaded. A name (or a
``self.`` attribute) may be bound to it, to its uuid, to the value
``SHELVED_OFFLOADED`` or another vm_state, to the instance's bound
``save``, to a method that frees allocations, or to a dict of instance
fields: :func:`classify` tells which, given the bindings a path has made.
Levels say how sure the check is that ``vm_state`` is SHELVED_OFFLOADED.
"""

import ast

FREE_METHODS = ('delete_allocation_for_shelve_offloaded_instance',
                'delete_allocation_for_instance')
STATE_ATTRIBUTE = 'SHELVED_OFFLOADED'
STATE_VALUE = 'shelved_offloaded'
# nova's ComputeManager helper that sets fields and saves in one call.
UPDATE_AND_SAVE = '_instance_update'
# Calls that receive the instance but never save it.
HARMLESS_CALLEES = frozenset(['LOG', 'getattr', 'hasattr', 'isinstance',
                              'len', 'repr', 'str', 'print', 'id'])

NO, MAYBE, YES = 0, 1, 2

# What a name may be bound to.
INSTANCE = 'instance'
UUID = 'uuid'
OFFLOADED = 'offloaded'
OTHER_STATE = 'other-state'
SAVER = 'saver'
FREER = 'freer'
# nova's resource tracker and report client, the objects whose free
# methods free placement allocations; a free method on anything else
# proves nothing.
TRACKER = 'tracker'
REPORT_CLIENT = 'report-client'
UNTRUSTED_FREER = 'untrusted-freer'
# A ``self.`` attribute the method re-bound to something the check does
# not follow (so no longer what the class set it to).
REBOUND = 'rebound'
SCHEDULER_CLIENT = 'scheduler-client'
# How nova's ComputeManager reaches them.
TRACKER_ATTRIBUTES = ('rt', '_resource_tracker')
TRACKER_ACCESSOR = '_get_resource_tracker'
REPORT_CLIENT_ATTRIBUTES = ('reportclient',)
# Queens and before: self.scheduler_client.reportclient.
SCHEDULER_CLIENT_ATTRIBUTE = 'scheduler_client'
RECEIVERS = (TRACKER, REPORT_CLIENT)
FIELDS_OFFLOADED = 'fields-offloaded'
FIELDS_OTHER = 'fields-other'
FIELDS_NONE = 'fields-none'
FIELD_LEVELS = {FIELDS_OFFLOADED: YES, FIELDS_OTHER: NO}


def is_offloaded(expr):
    """True if ``expr`` is ``vm_states.SHELVED_OFFLOADED`` or its value."""
    return ((isinstance(expr, ast.Attribute) and
             expr.attr == STATE_ATTRIBUTE) or
            (isinstance(expr, ast.Name) and expr.id == STATE_ATTRIBUTE) or
            (isinstance(expr, ast.Constant) and expr.value == STATE_VALUE))


def _is_state_constant(expr):
    """A vm_state value that is certainly not SHELVED_OFFLOADED."""
    if isinstance(expr, ast.Constant):
        return True
    return (isinstance(expr, ast.Attribute) and
            isinstance(expr.value, ast.Name) and
            expr.value.id in ('vm_states', 'task_states', 'power_state'))


def name_key(expr, scope):
    """The binding key of a name or ``self.attr``, else None."""
    if isinstance(expr, ast.Name):
        return scope.key(expr.id)
    if (isinstance(expr, ast.Attribute) and
            isinstance(expr.value, ast.Name) and expr.value.id == 'self'):
        return ('self', expr.attr)
    return None


def classify(expr, scope, bindings):
    """What ``expr`` evaluates to, as far as the check is concerned.

    :returns: one of the binding kinds, or None when it is none of them
    """
    if expr is None:
        return None
    if is_offloaded(expr):
        return OFFLOADED
    key = name_key(expr, scope)
    if key is not None:
        found = [kind for k, kind in bindings if k == key]
        if found:
            return None if found[0] == REBOUND else found[0]
        if key[0] == 'self':
            return _self_attribute(key[1])
    if isinstance(expr, ast.Name):
        return None
    if _is_state_constant(expr):
        return OTHER_STATE
    if isinstance(expr, ast.Attribute):
        owner = classify(expr.value, scope, bindings)
        if owner == INSTANCE and expr.attr == 'uuid':
            return UUID
        if owner == INSTANCE and expr.attr == 'save':
            return SAVER
        if (owner in (TRACKER, SCHEDULER_CLIENT) and
                expr.attr in REPORT_CLIENT_ATTRIBUTES):
            return REPORT_CLIENT
        if expr.attr in FREE_METHODS:
            return FREER if owner in RECEIVERS else UNTRUSTED_FREER
        return None
    if isinstance(expr, ast.Subscript):
        if (classify(expr.value, scope, bindings) == INSTANCE and
                isinstance(expr.slice, ast.Constant) and
                expr.slice.value == 'uuid'):
            return UUID
        return None
    if isinstance(expr, ast.IfExp):
        body = classify(expr.body, scope, bindings)
        return body if body == classify(expr.orelse, scope,
                                        bindings) else None
    if isinstance(expr, ast.NamedExpr):
        return classify(expr.value, scope, bindings)
    if isinstance(expr, ast.Dict):
        return _fields_kind(expr, scope, bindings)
    if isinstance(expr, ast.Call):
        return _call_result(expr, scope, bindings)
    return None


def _self_attribute(name):
    """What ``self.name`` is, the method not having re-bound it."""
    if name in TRACKER_ATTRIBUTES:
        return TRACKER
    if name in REPORT_CLIENT_ATTRIBUTES:
        return REPORT_CLIENT
    if name == SCHEDULER_CLIENT_ATTRIBUTE:
        return SCHEDULER_CLIENT
    return None


def _call_result(call, scope, bindings):
    func = call.func
    if not isinstance(func, ast.Attribute):
        if isinstance(func, ast.Name) and func.id == 'dict':
            return keywords_kind(call.keywords, scope, bindings)
        return None
    if (func.attr == TRACKER_ACCESSOR and isinstance(func.value, ast.Name)
            and func.value.id == 'self' and not call.args and
            not call.keywords):
        return TRACKER
    if func.attr == 'get_by_uuid':
        # A fresh copy of the same database row is the same instance.
        values = list(call.args) + [k.value for k in call.keywords]
        if any(classify(v, scope, bindings) == UUID for v in values):
            return INSTANCE
    if func.attr == 'obj_clone' and classify(func.value, scope,
                                             bindings) == INSTANCE:
        return INSTANCE
    return None


def level_of(kind):
    """The ``offloaded`` level a vm_state value of ``kind`` gives."""
    if kind == OFFLOADED:
        return YES
    if kind == OTHER_STATE:
        return NO
    return MAYBE


def _fields_kind(node, scope, bindings):
    """FIELDS_* for a dict literal of instance fields."""
    level = None
    for key, value in zip(node.keys, node.values):
        if key is None:
            return None
        if isinstance(key, ast.Constant) and key.value == 'vm_state':
            level = level_of(classify(value, scope, bindings))
        elif not isinstance(key, ast.Constant):
            return None
    return _fields_for(level)


def keywords_kind(keywords, scope, bindings):
    level = None
    for keyword in keywords:
        if keyword.arg is None:
            return None
        if keyword.arg == 'vm_state':
            level = level_of(classify(keyword.value, scope, bindings))
    return _fields_for(level)


def _fields_for(level):
    if level is None:
        return FIELDS_NONE
    return {YES: FIELDS_OFFLOADED, NO: FIELDS_OTHER}.get(level)


def fields_level(kind):
    """The vm_state level a FIELDS_* kind sets; None: leaves it alone."""
    if kind == FIELDS_NONE:
        return None
    return FIELD_LEVELS.get(kind, MAYBE)


def callee_name(call):
    """``self.x.y`` for a call of ``self.x.y(...)``; None if not dotted."""
    parts = []
    node = call.func
    while isinstance(node, ast.Attribute):
        parts.append(node.attr)
        node = node.value
    if not isinstance(node, ast.Name):
        return None
    parts.append(node.id)
    return '.'.join(reversed(parts))


def holds_instance(expr, scope, bindings):
    if isinstance(expr, ast.Starred):
        expr = expr.value
    if isinstance(expr, (ast.List, ast.Tuple, ast.Set)):
        return any(holds_instance(e, scope, bindings) for e in expr.elts)
    if isinstance(expr, ast.Dict):
        return any(holds_instance(v, scope, bindings) for v in expr.values)
    return classify(expr, scope, bindings) in (INSTANCE, SAVER)


def arguments(function, call, caller, bindings):
    """``(parameter, value, kind)`` for an inlined call.

    Defaults that are constants count; ``**kwargs`` holds the keywords no
    parameter took, which matters when they carry ``vm_state``.
    """
    args = function.args
    positional = list(args.posonlyargs) + list(args.args)
    if (isinstance(function, (ast.FunctionDef, ast.AsyncFunctionDef)) and
            positional and positional[0].arg == 'self' and
            isinstance(call.func, ast.Attribute)):
        positional = positional[1:]
    given = {}
    starred = any(isinstance(a, ast.Starred) for a in call.args)
    if not starred:
        for param, value in zip(positional, call.args):
            given[param.arg] = value
    names = set(p.arg for p in positional + list(args.kwonlyargs))
    extra = []
    for keyword in call.keywords:
        if keyword.arg in names:
            given[keyword.arg] = keyword.value
        else:
            extra.append(keyword)
    defaults = dict(zip([p.arg for p in positional][::-1],
                        args.defaults[::-1]))
    defaults.update((p.arg, d) for p, d in
                    zip(args.kwonlyargs, args.kw_defaults) if d)
    for param in positional + list(args.kwonlyargs):
        value = given.get(param.arg, defaults.get(param.arg))
        yield param.arg, value, classify(value, caller, bindings)
    if args.kwarg is not None:
        yield args.kwarg.arg, None, keywords_kind(extra, caller, bindings)
