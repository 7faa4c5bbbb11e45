"""Rewrite nova's compute manager into the shapes and orders it has had.

The rewrites work on the text of ``nova/compute/manager.py`` (or any module
with a ``ComputeManager``), using :mod:`shelvefix.nova.shelve_offload` to
find the statements, and move or replace whole lines so everything else,
comments included, stays as nova wrote it:

* :func:`legacy_order` moves the statement that frees the allocations to
  just after the save that makes SHELVED_OFFLOADED visible: the order
  before change I2a6ccaff904c1f0759d55feeeef0ec1da32c65df;
* :func:`local_tracker_shape` frees through ``rt =
  self._get_resource_tracker()``, as Rocky and Stein did;
* :func:`report_client_shape` frees with
  ``self.reportclient.delete_allocation_for_instance``.

Nothing here imports nova, so the rewrites also serve on copies of a file.
"""

import ast

from shelvefix.nova import check
from shelvefix.nova import shelve_offload


class RewriteError(ValueError):
    """The text is not in a shape the rewrite applies to."""


def _fixed_sites(text):
    analysis = shelve_offload.analyse(ast.parse(text))
    result = check.judge(analysis, '<rewrite>')
    if result.status != check.FIXED:
        raise RewriteError('expected the fixed order, the check says %s: %s'
                           % (result.status, result.reason))
    return analysis.method, result.free, result.save


def _top_level(method, node):
    """The statement of the method's body that holds ``node``."""
    for stmt in method.body:
        if stmt.lineno <= node.lineno <= stmt.end_lineno:
            return stmt
    raise RewriteError('line %d is not in %s' % (node.lineno, method.name))


def legacy_order(text):
    """Move the free after the save that makes SHELVED_OFFLOADED visible.

    :param text: a compute manager in the fixed order
    :returns: the same text with the top-level statement holding the free
        moved to just after the one holding that save
    :raises RewriteError: the text is not in the fixed order, or the free
        and the save are in one statement
    """
    method, free, save = _fixed_sites(text)
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
    method, free, _save = _fixed_sites(text)
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
