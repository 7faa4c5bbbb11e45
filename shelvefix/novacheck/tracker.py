"""Bug 2025480: does the resource tracker keep a server being unshelved?

An unshelve spawns the server on its new host while its ``vm_state`` is
still ``SHELVED_OFFLOADED``; the task state says what is going on
(``_unshelve_instance`` sets it, to ``spawning``, before the spawn). Before
commit f1dc4ec39b the tracker untracked every server whose vm_state was in
``vm_states.ALLOW_RESOURCE_REMOVAL``, so the host's periodic audit dropped
the spawning server's usage; since then it asks
``vm_states.allow_resource_removal(vm_state=..., task_state=...)``.

:func:`check` finds, in ``ResourceTracker``, every test that decides
removal from the vm_state (a call of ``allow_resource_removal``, or a
comparison with ``ALLOW_RESOURCE_REMOVAL`` or ``SHELVED_OFFLOADED``) and
evaluates it (:mod:`shelvefix.novacheck.evaluate`, with ``vm_states.py``
and ``task_states.py`` read beside the tracker) for a SHELVED_OFFLOADED
server in each task state ``_unshelve_instance`` sets: FIXED if none
says remove, MISSING with the line of one that does, UNKNOWN when a test
cannot be evaluated or there is none.
"""

import ast

from shelvefix.novacheck import evaluate
from shelvefix.novacheck import outcome
from shelvefix.novacheck import steps

CLASS_NAME = 'ResourceTracker'
PREDICATE = 'allow_resource_removal'
STATES_LIST = 'ALLOW_RESOURCE_REMOVAL'
OFFLOADED = 'SHELVED_OFFLOADED'
FIELDS = ('vm_state', 'task_state')


class _Server(evaluate.Evaluator):
    """Evaluates with ``x.vm_state``, ``x['task_state']``... given."""

    def __init__(self, fields, *args):
        super(_Server, self).__init__(*args)
        self.fields = fields

    def value(self, node, names, depth=0):
        field = None
        if isinstance(node, ast.Attribute) and node.attr in FIELDS:
            field = node.attr
        elif (isinstance(node, ast.Subscript) and
              isinstance(node.slice, ast.Constant) and
              node.slice.value in FIELDS):
            field = node.slice.value
        if field is not None:
            return self.fields[field]
        return super(_Server, self).value(node, names, depth)


def _callee(node):
    func = node.func
    return getattr(func, 'attr', None) or getattr(func, 'id', None)


def decisions(cls):
    """The tests in ``cls`` deciding removal from the vm_state.

    :returns: ``(node, negated)`` pairs: ``negated`` when the test is true
        for a server that is kept (``not in``, ``!=``)
    """
    found = []
    for node in ast.walk(cls):
        if isinstance(node, ast.Call) and _callee(node) == PREDICATE:
            found.append((node, False))
        elif isinstance(node, ast.Compare) and len(node.ops) == 1:
            names = {getattr(n, 'attr', None) or getattr(n, 'id', None)
                     for n in ast.walk(node.comparators[0])}
            if names & {STATES_LIST, OFFLOADED}:
                found.append((node, isinstance(node.ops[0],
                                               (ast.NotIn, ast.NotEq))))
    return sorted(found, key=lambda pair: (pair[0].lineno,
                                           pair[0].col_offset))


def unshelve_task_states(manager_tree, task_constants):
    """The task states ``_unshelve_instance`` gives the instance."""
    method = steps.find_method(manager_tree, steps.CLASS_NAME,
                               '_unshelve_instance')[1]
    if not isinstance(method, ast.FunctionDef):
        return None, None
    found = []
    for node in ast.walk(method):
        if (isinstance(node, ast.Assign) and
                any(isinstance(t, ast.Attribute) and t.attr == 'task_state'
                    for t in node.targets) and
                isinstance(node.value, ast.Attribute) and
                node.value.attr in task_constants):
            found.append((task_constants[node.value.attr], node))
    return method, found


def check(files):
    """The verdict on bug 2025480.

    :param files: a :class:`shelvefix.novacheck.outcome.Files` of the tree
    :returns: a :class:`shelvefix.novacheck.outcome.Verdict`
    """
    verdict = outcome.Verdict('2025480')
    parsed = files.parse('resource_tracker.py', 'vm_states.py',
                         'task_states.py', 'manager.py')
    if isinstance(parsed, str):
        return verdict.unknown(parsed)
    tracker, vm_states, task_states, manager = parsed
    vm_constants = evaluate.module_constants(vm_states)
    task_constants = evaluate.module_constants(task_states)
    method, spawning = unshelve_task_states(manager, task_constants)
    display = files.display('resource_tracker.py')
    if not spawning:
        return verdict.unknown(
            'found no task state that %s._unshelve_instance sets' % (
                steps.CLASS_NAME) if method else 'no %s._unshelve_instance '
            'in %s' % (steps.CLASS_NAME, files.display('manager.py')))
    cls = next((n for n in tracker.body if isinstance(n, ast.ClassDef) and
                n.name == CLASS_NAME), None)
    if cls is None:
        return verdict.unknown('no class %s in %s' % (CLASS_NAME, display))
    tests = decisions(cls)
    if not tests:
        return verdict.unknown(
            'found no test of %s or %s in %s' % (PREDICATE, STATES_LIST,
                                                 CLASS_NAME), display)
    modules = {'vm_states': vm_constants, 'task_states': task_constants}
    functions = evaluate.module_functions(vm_states)
    for task_state, assigned in spawning:
        server = _Server({'vm_state': vm_constants.get(OFFLOADED),
                          'task_state': task_state},
                         modules, functions, vm_constants)
        for node, negated in tests:
            where = '%s:%d' % (display, node.lineno)
            try:
                removes = bool(server.value(node, {})) != negated
            except evaluate.CannotEvaluate as e:
                return verdict.unknown('cannot evaluate %s: %s' % (where, e),
                                       where)
            if removes:
                return verdict.missing(
                    'the tracker untracks a SHELVED_OFFLOADED server whose '
                    'task_state is %s (set by _unshelve_instance at %s:%d), '
                    'so the audit drops a server being unshelved'
                    % (ast.unparse(assigned.value),
                       files.display('manager.py'), assigned.lineno),
                    '%s: %s' % (where, ast.unparse(node)))
    first = tests[0][0]
    return verdict.fixed(
        'none of the %d removal test(s) of %s untracks a SHELVED_OFFLOADED '
        'server whose task_state is %s' % (
            len(tests), CLASS_NAME,
            ' or '.join(ast.unparse(a.value) for _t, a in spawning)),
        '%s:%d: %s' % (display, first.lineno,
                       ast.unparse(first).splitlines()[0]))
