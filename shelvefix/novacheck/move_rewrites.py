"""Rewrite the move paths back into the shapes they had before their fixes.

As :mod:`shelvefix.novacheck.rewrite` does for the shelve path, each
rewrite works on the text of a class and moves whole lines, so that the
pre-fix variant it makes is the corrected code with exactly one change:

* :func:`status_outside_lock`: in ``drop_move_claim_at_source`` and
  ``drop_move_claim_at_dest``, the statements that set and save the
  migration's status are moved out of the resource tracker's critical
  section, to just before it. That is how confirm and revert ran before
  nova commits a57800d382 and dc9c7a5ebf (bug 1879878): an audit between
  the status and the drop no longer counts the migration, and the drop
  then subtracts its flavor once more.
* :func:`free_after_success`: in ``confirm_resize``, the ``finally`` that
  deletes the migration's allocations becomes the tail of its ``try``, so
  it runs only when the clean-up of the source succeeded, as before nova
  commit 03a6d26691 (bug 1821594): a failure leaked the source's
  allocations, held by the migration consumer.

Two more give the corrected code back the shape nova's latest release has
where the race lab found a defect upstream has not fixed:

* :func:`revert_outside_lock`: ``_finish_revert_resize`` saves the
  server's host, node and flavor back itself, outside the resource
  tracker's lock, and the source does not count it until its next audit;
* :func:`cleanup_in_flight`: the source's start-up clean-up removes its
  allocations from evacuations still in flight and marks them
  ``completed``, as it does for finished ones;
* :func:`rebuild_saved_apart` and :func:`evacuation_not_counted`: the
  destination saves the end of the rebuild (``ACTIVE``, no task) before
  the instance is its own, and ``finish_evacuation`` then saves host and
  node without the node counting the instance.

Use them through :func:`~shelvefix.novacheck.rewrite.rewrite_method`.
"""

import ast

from shelvefix.novacheck import rewrite
from shelvefix.novacheck import steps

#: The tracker methods that end a move by setting the migration's status.
DROP_METHODS = ('drop_move_claim_at_source', 'drop_move_claim_at_dest')


def _is_status_statement(stmt):
    """``X.status = ...`` or ``X.save()``."""
    if isinstance(stmt, ast.Assign):
        return any(isinstance(target, ast.Attribute) and
                   target.attr == 'status' for target in stmt.targets)
    return (isinstance(stmt, ast.Expr) and
            isinstance(stmt.value, ast.Call) and
            isinstance(stmt.value.func, ast.Attribute) and
            stmt.value.func.attr == 'save')


def _method(tree, class_name, name):
    method = steps.find_method(tree, class_name, name)[1]
    if method is None:
        raise rewrite.RewriteError('%s has no %s' % (class_name, name))
    return method


def _dedented(lines, by):
    return [line[by:] if line.strip() else line for line in lines]


def _leading_status(body, where):
    """The statements that set and save a status at the head of ``body``.

    :raises RewriteError: ``body`` does not start that way, or is nothing
        else
    """
    leading = []
    for stmt in body:
        if not _is_status_statement(stmt):
            break
        leading.append(stmt)
    sets_status = bool(leading) and isinstance(leading[0], ast.Assign)
    if not sets_status or len(leading) == len(body):
        raise rewrite.RewriteError(
            "%s does not start its critical section by setting the "
            "migration's status" % where)
    return leading


def _is_lock_decorator(node):
    """``@<...>.synchronized(...)``, the shape of nova's locked methods."""
    func = node.func if isinstance(node, ast.Call) else node
    return ((isinstance(func, ast.Attribute) and
             func.attr == 'synchronized') or
            (isinstance(func, ast.Name) and func.id == 'synchronized'))


def _split_locked(lines, method, leading):
    """A locked method split into the status statements and a locked rest.

    ``method`` keeps its name and runs ``leading`` unlocked, then calls
    ``_locked_<name>``, the decorated method without them.
    """
    args = method.args
    if args.vararg or args.kwarg or args.kwonlyargs or args.posonlyargs:
        raise rewrite.RewriteError('%s takes more than positional arguments'
                                   % method.name)
    names = [arg.arg for arg in args.args[1:]]
    first = min(d.lineno for d in method.decorator_list) - 1
    indent = lines[method.lineno - 1][:method.col_offset]
    body_indent = indent + '    '
    locked = '_locked_' + method.name
    signature = ', '.join(['self'] + names)
    call = '%sreturn self.%s(%s)\n' % (body_indent, locked, ', '.join(names))
    wrapper = (['%sdef %s(%s):\n' % (indent, method.name, signature)] +
               lines[leading[0].lineno - 1:leading[-1].end_lineno] +
               [call, '\n'])
    definition = lines[method.lineno - 1].replace(
        'def %s(' % method.name, 'def %s(' % locked, 1)
    rest = (lines[first:method.lineno - 1] + [definition] +
            lines[method.lineno:leading[0].lineno - 1] +
            lines[leading[-1].end_lineno:method.end_lineno])
    return first, method.end_lineno, wrapper + rest


def status_outside_lock(text, class_name='MoveClaims'):
    """Set the migration's status before the critical section, not in it.

    In each of :data:`DROP_METHODS`, the leading statements of the
    critical section that set ``.status`` and ``save()`` are moved out of
    it. The critical section is the method's ``with`` block (the
    library's shape): they go just before the ``with``. Or it is the whole
    method, locked by a ``synchronized`` decorator (nova's shape): the
    method keeps its name and runs them, then calls the decorated rest,
    renamed ``_locked_<name>``; that is how nova's manager ran them before
    calling the tracker's locked drop.

    :raises RewriteError: a method has no such critical section
    """
    tree = ast.parse(text)
    lines = text.splitlines(True)
    edits = []
    for name in DROP_METHODS:
        method = _method(tree, class_name, name)
        block = next((stmt for stmt in method.body
                      if isinstance(stmt, ast.With)), None)
        if block is not None:
            leading = _leading_status(block.body, name)
            first, last = leading[0].lineno - 1, leading[-1].end_lineno
            moved = _dedented(lines[first:last],
                              leading[0].col_offset - block.col_offset)
            edits.append((block.lineno - 1, block.lineno - 1, moved,
                          (first, last)))
        elif any(_is_lock_decorator(d) for d in method.decorator_list):
            body = method.body
            if (body and isinstance(body[0], ast.Expr) and
                    isinstance(body[0].value, ast.Constant)):
                body = body[1:]
            leading = _leading_status(body, name)
            first, last, new = _split_locked(lines, method, leading)
            edits.append((first, last, new, None))
        else:
            raise rewrite.RewriteError('%s has no with block and no lock '
                                       'decorator' % name)
    for first, last, new, removed in sorted(edits, key=lambda e: -e[0]):
        if removed is not None:
            lines = lines[:removed[0]] + lines[removed[1]:]
        lines = lines[:first] + new + lines[last:]
    return ''.join(lines)


def free_after_success(text, class_name='ResizeMixin'):
    """Delete the migration's allocations only if the clean-up succeeded.

    The ``finally`` of the ``try`` in ``confirm_resize`` that calls
    ``_delete_allocation_after_move`` is dropped and its statements
    appended to the ``try``'s own body.

    :raises RewriteError: no such ``try``
    """
    tree = ast.parse(text)
    method = _method(tree, class_name, 'confirm_resize')
    found = [node for node in ast.walk(method)
             if isinstance(node, ast.Try) and node.handlers and
             any(isinstance(call, ast.Call) and
                 isinstance(call.func, ast.Attribute) and
                 call.func.attr == '_delete_allocation_after_move'
                 for stmt in node.finalbody for call in ast.walk(stmt))]
    if len(found) != 1:
        raise rewrite.RewriteError(
            'expected one try with handlers whose finally deletes the '
            "migration's allocations in confirm_resize, found %d"
            % len(found))
    node = found[0]
    lines = text.splitlines(True)
    final_first = node.finalbody[0].lineno - 1
    final_last = node.finalbody[-1].end_lineno
    # The ``finally:`` line is the last non-blank line before its body.
    keyword = final_first - 1
    while keyword > node.body[-1].end_lineno - 1 and not (
            lines[keyword].strip().startswith('finally')):
        keyword -= 1
    if (not lines[keyword].strip().startswith('finally') or
            keyword == node.finalbody[0].lineno - 1):
        raise rewrite.RewriteError(
            'the finally at line %d does not stand on a line of its own'
            % node.finalbody[0].lineno)
    moved = _dedented(lines[final_first:final_last],
                      node.finalbody[0].col_offset - node.body[0].col_offset)
    body_end = node.body[-1].end_lineno
    return ''.join(lines[:body_end] + moved + lines[body_end:keyword] +
                   lines[final_last:])


def _call_statement(method, callee):
    """The statement of ``method`` that is a call of ``callee``."""
    found = [node for node in ast.walk(method)
             if isinstance(node, ast.Expr) and
             isinstance(node.value, ast.Call) and
             isinstance(node.value.func, ast.Attribute) and
             node.value.func.attr == callee]
    if len(found) != 1:
        raise rewrite.RewriteError('expected one call of %s in %s, found %d'
                                   % (callee, method.name, len(found)))
    return found[0]


def revert_outside_lock(text, class_name='ResizeMixin'):
    """Save the reverted server back on the source as nova does.

    The call of ``revert_migration_at_source`` in ``_finish_revert_resize``
    becomes the four statements nova runs there: flavor, host and node
    set, and saved, with no resource tracker involved.

    :raises RewriteError: no such call
    """
    tree = ast.parse(text)
    stmt = _call_statement(_method(tree, class_name, '_finish_revert_resize'),
                           'revert_migration_at_source')
    args = [ast.unparse(arg) for arg in stmt.value.args]
    if len(args) != 3:
        raise rewrite.RewriteError('revert_migration_at_source takes '
                                   '(context, instance, migration)')
    instance, migration = args[1], args[2]
    lines = text.splitlines(True)
    indent = lines[stmt.lineno - 1][:stmt.col_offset]
    new = ['%s.flavor = %s.old_flavor' % (instance, migration),
           '%s.host = %s.source_compute' % (instance, migration),
           '%s.node = %s.source_node' % (instance, migration),
           '%s.save(expected_task_state=[task_states.RESIZE_REVERTING])'
           % instance]
    return ''.join(lines[:stmt.lineno - 1] +
                   ['%s%s\n' % (indent, line) for line in new] +
                   lines[stmt.end_lineno:])


def cleanup_in_flight(text, class_name='EvacuateMixin'):
    """Clean up after evacuations in flight too, as nova's start-up does.

    In ``_destroy_evacuated_instances`` every use of
    ``FINISHED_EVACUATION_STATUSES`` becomes ``EVACUATION_STATUSES``.

    :raises RewriteError: the method does not use the former
    """
    tree = ast.parse(text)
    method = _method(tree, class_name, '_destroy_evacuated_instances')
    names = [node for node in ast.walk(method)
             if isinstance(node, ast.Name) and
             node.id == 'FINISHED_EVACUATION_STATUSES']
    if not names:
        raise rewrite.RewriteError('_destroy_evacuated_instances does not '
                                   'test FINISHED_EVACUATION_STATUSES')
    lines = text.splitlines(True)
    for node in sorted(names, key=lambda n: (-n.lineno, -n.col_offset)):
        line = lines[node.lineno - 1]
        lines[node.lineno - 1] = (line[:node.col_offset] +
                                  'EVACUATION_STATUSES' +
                                  line[node.end_col_offset:])
    return ''.join(lines)


def rebuild_saved_apart(text, class_name='EvacuateMixin'):
    """Save the end of the rebuild at once, as nova's rebuild does.

    A save expecting ``REBUILD_SPAWNING`` is added after the statement of
    ``_do_rebuild_instance`` that calls ``_update_instance_after_spawn``.

    :raises RewriteError: no such statement
    """
    tree = ast.parse(text)
    stmt = _call_statement(_method(tree, class_name, '_do_rebuild_instance'),
                           '_update_instance_after_spawn')
    lines = text.splitlines(True)
    indent = lines[stmt.lineno - 1][:stmt.col_offset]
    save = ('%sinstance.save(expected_task_state=['
            'task_states.REBUILD_SPAWNING])\n' % indent)
    return ''.join(lines[:stmt.end_lineno] + [save] +
                   lines[stmt.end_lineno:])


def evacuation_not_counted(text, class_name='ResourceTracker'):
    """``finish_evacuation`` saves host and node and counts nothing.

    In its ``with`` block, the statements between the first
    ``instance.save()`` and the ``if`` on the migration are removed.

    :raises RewriteError: the method is not in that shape
    """
    tree = ast.parse(text)
    method = _method(tree, class_name, 'finish_evacuation')
    block = next((stmt for stmt in method.body
                  if isinstance(stmt, ast.With)), None)
    body = block.body if block is not None else []
    saves = [i for i, stmt in enumerate(body) if _is_status_statement(stmt)
             and isinstance(stmt, ast.Expr)]
    ifs = [i for i, stmt in enumerate(body) if isinstance(stmt, ast.If)]
    if not saves or not ifs or ifs[-1] <= saves[0] + 1:
        raise rewrite.RewriteError('finish_evacuation does not count the '
                                   'instance between its save and the '
                                   'migration')
    first, last = body[saves[0] + 1], body[ifs[-1] - 1]
    lines = text.splitlines(True)
    return ''.join(lines[:first.lineno - 1] + lines[last.end_lineno:])
