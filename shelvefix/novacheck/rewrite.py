"""Rewrite nova's compute manager into the shapes and orders it has had.

The rewrites work on the text of ``nova/compute/manager.py`` (or any module
with a ``ComputeManager``), using the verdict of
:mod:`shelvefix.novacheck.check` to find the statements (the free and the
save on the path that proved the fixed order), and move or replace whole
lines so everything else, comments included, stays as nova wrote it:

* :func:`legacy_order` moves the statement that frees the allocations to
  just after the save that makes SHELVED_OFFLOADED visible: the order
  before change I2a6ccaff904c1f0759d55feeeef0ec1da32c65df;
* :func:`local_tracker_shape` frees through ``rt =
  self._get_resource_tracker()``, as Rocky and Stein did;
* :func:`report_client_shape` frees with
  ``self.reportclient.delete_allocation_for_instance``;
* :func:`untrack_spawning` turns every
  ``vm_states.allow_resource_removal(vm_state=V, task_state=T)`` back into
  ``V in (DELETED, SHELVED_OFFLOADED)``: the resource tracker before
  commit f1dc4ec3 (bug 2025480), which stopped counting a server an
  unshelve was spawning;
* :func:`leak_on_bind_failure` moves the network set-up of
  ``_unshelve_instance`` out of its ``try``, before it: the unshelve before
  commit e65d4a13 (bug 1862633), which kept the destination's allocations
  when port binding failed.

:func:`rewrite_method` turns a rewrite into running code: it rewrites the
source of a live ``ComputeManager`` class (nova's, or shelvefix's own) and
returns a subclass whose method runs the rewritten statements, compiled in
the class's own module. The pre-fix variants of the race lab and of the
nova tests are derived this way from the code they demonstrate, so they
can never drift from it.

Nothing here imports nova, so the rewrites also serve on copies of a file.
"""

import ast
import inspect
import sys
import textwrap

from shelvefix.novacheck import check
from shelvefix.novacheck import steps


class RewriteError(ValueError):
    """The text is not in a shape the rewrite applies to."""


def _fixed_sites(text, class_name):
    tree = ast.parse(text)
    result = check.check_tree(tree, '<rewrite>', class_name)
    if result.status != check.FIXED:
        raise RewriteError('expected the fixed order, the check says %s: %s'
                           % (result.status, result.reason))
    return steps.find_method(tree, class_name)[1], result.free, result.save


def _top_level(method, node):
    """The statement of the method's body that holds ``node``."""
    for stmt in method.body:
        if stmt.lineno <= node.lineno <= stmt.end_lineno:
            return stmt
    raise RewriteError('line %d is not in %s' % (node.lineno, method.name))


def legacy_order(text, class_name=steps.CLASS_NAME):
    """Move the free after the save that makes SHELVED_OFFLOADED visible.

    :param text: a compute manager in the fixed order
    :param class_name: the compute manager class in ``text``
    :returns: the same text with the top-level statement holding the free
        moved to just after the one holding that save
    :raises RewriteError: the text is not in the fixed order, or the free
        and the save are in one statement
    """
    method, free, save = _fixed_sites(text, class_name)
    free_stmt = _top_level(method, free.node)
    save_stmt = _top_level(method, save.node)
    if free_stmt is save_stmt:
        raise RewriteError('the free and the save are both in the statement '
                           'at line %d' % free_stmt.lineno)
    lines = text.splitlines(True)
    start, end = free_stmt.lineno - 1, free_stmt.end_lineno
    after = save_stmt.end_lineno
    return ''.join(lines[:start] + lines[end:after] + lines[start:end] +
                   lines[after:])


def _replace_free(text, make_lines):
    method, free, _save = _fixed_sites(text, steps.CLASS_NAME)
    stmt = _top_level(method, free.node)
    if stmt is not free.stmt or free.via is not None:
        raise RewriteError('the free at line %d is not a statement of its '
                           'own' % free.node.lineno)
    lines = text.splitlines(True)
    indent = lines[stmt.lineno - 1][:stmt.col_offset]
    arguments = ', '.join(ast.unparse(arg) for arg in
                          free.node.args + free.node.keywords)
    new = ['%s%s\n' % (indent, line) for line in make_lines(arguments)]
    return ''.join(lines[:stmt.lineno - 1] + new + lines[stmt.end_lineno:])


def local_tracker_shape(text):
    """Free through a resource tracker fetched into a local, as in Rocky.

    :raises RewriteError: the free is not a plain statement of the method
    """
    return _replace_free(text, lambda arguments: [
        'rt = self._get_resource_tracker()',
        'rt.delete_allocation_for_shelve_offloaded_instance(%s)'
        % arguments])


def report_client_shape(text):
    """Free with the report client directly.

    :raises RewriteError: the free is not a plain statement of the method
    """
    return _replace_free(text, lambda arguments: [
        'self.reportclient.delete_allocation_for_instance('
        'context, instance.uuid)'])


def _callee(node):
    func = node.func
    if isinstance(func, ast.Attribute):
        return func.attr, ast.unparse(func.value)
    if isinstance(func, ast.Name):
        return func.id, None
    return None, None


def _offset(lines, lineno, col):
    """The character offset in ``''.join(lines)`` of an AST position."""
    line = lines[lineno - 1]
    return (sum(len(text) for text in lines[:lineno - 1]) +
            len(line.encode('utf-8')[:col].decode('utf-8')))


def _find_class(tree, class_name):
    for node in ast.walk(tree):
        if isinstance(node, ast.ClassDef) and node.name == class_name:
            return node
    raise RewriteError('no class %s' % class_name)


def untrack_spawning(text, class_name='ResourceTracker'):
    """Test the vm_state alone, as the tracker did before bug 2025480.

    Every call of ``allow_resource_removal`` in the class becomes ``V in
    (vm_states.DELETED, vm_states.SHELVED_OFFLOADED)`` (nova's former
    ``ALLOW_RESOURCE_REMOVAL`` list), with ``V`` the ``vm_state`` argument;
    the task state is no longer looked at. Lines are kept: a call spanning
    several lines becomes an expression spanning as many.

    :raises RewriteError: the class calls no ``allow_resource_removal``
    """
    tree = ast.parse(text)
    calls = [node for node in ast.walk(_find_class(tree, class_name))
             if isinstance(node, ast.Call) and
             _callee(node)[0] == 'allow_resource_removal']
    if not calls:
        raise RewriteError('%s never calls allow_resource_removal'
                           % class_name)
    lines = text.splitlines(True)
    edits = []
    for call in calls:
        module = _callee(call)[1] or 'vm_states'
        vm_state = next((kw.value for kw in call.keywords
                         if kw.arg == 'vm_state'),
                        call.args[0] if call.args else None)
        if vm_state is None:
            raise RewriteError('allow_resource_removal at line %d has no '
                               'vm_state' % call.lineno)
        new = '(%s in (%s.DELETED, %s.SHELVED_OFFLOADED)%s)' % (
            ast.unparse(vm_state), module, module,
            '\n' * (call.end_lineno - call.lineno))
        edits.append((_offset(lines, call.lineno, call.col_offset),
                      _offset(lines, call.end_lineno, call.end_col_offset),
                      new))
    for start, end, new in sorted(edits, reverse=True):
        text = text[:start] + new + text[end:]
    return text


def leak_on_bind_failure(text, class_name=steps.CLASS_NAME):
    """Set up the network before the ``try``, as before bug 1862633.

    The statement of ``_unshelve_instance`` that calls
    ``setup_instance_network_on_host`` inside the ``try`` whose handler
    gives the allocations back is moved to just before that ``try``, so a
    port binding failure skips the clean-up.

    :raises RewriteError: no such statement inside a ``try``
    """
    tree = ast.parse(text)
    method = steps.find_method(tree, class_name, '_unshelve_instance')[1]
    if method is None:
        raise RewriteError('%s has no _unshelve_instance' % class_name)
    for stmt in method.body:
        if not isinstance(stmt, ast.Try):
            continue
        inner = [node for node in ast.walk(ast.Module(stmt.body, []))
                 if isinstance(node, ast.Expr) and
                 isinstance(node.value, ast.Call) and
                 _callee(node.value)[0] == 'setup_instance_network_on_host']
        if inner:
            break
    else:
        raise RewriteError('no setup_instance_network_on_host inside a try '
                           'in _unshelve_instance')
    setup = inner[0]
    lines = text.splitlines(True)
    moved = [line[setup.col_offset - stmt.col_offset:] if line.strip()
             else line
             for line in lines[setup.lineno - 1:setup.end_lineno]]
    rest = lines[:setup.lineno - 1] + lines[setup.end_lineno:]
    return ''.join(rest[:stmt.lineno - 1] + moved + rest[stmt.lineno - 1:])


def class_source(cls):
    """The source of a class, as a module holding only that class.

    :returns: ``(text, first_line)``: line ``n`` of ``text`` is line
        ``n + first_line - 1`` of the class's file
    """
    lines, first_line = inspect.getsourcelines(cls)
    return textwrap.dedent(''.join(lines)), first_line


def _changed_methods(text, rewritten, class_name):
    before = steps.methods_of(_find_class(ast.parse(text), class_name))
    after = steps.methods_of(_find_class(ast.parse(rewritten), class_name))
    return [node for name, node in after.items()
            if name not in before or
            ast.dump(node) != ast.dump(before[name])]


def rewrite_method(cls, rewrite, name, method_name=steps.METHOD_NAME,
                   defined_in=None):
    """A subclass of ``cls`` whose methods run rewritten code.

    The rewrite sees the whole class (so a statement reached through a
    helper method is found as the check finds it); only the rewritten
    methods are compiled, with the line numbers of the class's file, in
    the namespace of the class's module, so they use the very objects (and
    stubs) the originals use.

    :param cls: the class, e.g. ``ComputeManager``
    :param rewrite: ``rewrite(text, class_name=...) -> text``, e.g.
        :func:`legacy_order`
    :param name: the new class's name
    :param method_name: the method to replace, or None for every method
        the rewrite changed
    :param defined_in: the base of ``cls`` (a mixin) whose source holds
        the methods to rewrite (default: ``cls`` itself)
    :returns: the subclass; its ``rewritten_source`` holds the rewritten
        class text
    :raises RewriteError: the rewrite does not apply to the class
    """
    source_cls = defined_in or cls
    if source_cls not in cls.__mro__:
        raise RewriteError('%s is not a base of %s'
                           % (source_cls.__name__, cls.__name__))
    text, first_line = class_source(source_cls)
    rewritten = rewrite(text, class_name=source_cls.__name__)
    if method_name is None:
        found = _changed_methods(text, rewritten, source_cls.__name__)
        if not found:
            raise RewriteError('%s changed no method of %s'
                               % (rewrite.__name__, source_cls.__name__))
    else:
        found = [node for node in ast.walk(ast.parse(rewritten))
                 if isinstance(node, ast.FunctionDef) and
                 node.name == method_name]
        if len(found) != 1:
            raise RewriteError('%s has %d methods named %s'
                               % (source_cls.__name__, len(found),
                                  method_name))
    module = ast.Module(body=found, type_ignores=[])
    ast.increment_lineno(module, first_line - 1)
    namespace = {}
    exec(compile(module, inspect.getsourcefile(source_cls), 'exec'),
         vars(sys.modules[source_cls.__module__]), namespace)
    attributes = {node.name: namespace[node.name] for node in found}
    attributes.update({
        'rewritten_source': rewritten,
        '__doc__': '%s with %s rewritten by %s.' % (
            cls.__name__, ', '.join(sorted(n.name for n in found)),
            rewrite.__name__),
        '__module__': cls.__module__,
    })
    return type(name, (cls,), attributes)
