"""nova's installed ``_shelve_offload_instance``, moved back to legacy order.

:func:`legacy_compute_manager` takes the method's source from the nova
installed here (``inspect.getsource``), moves the statement that frees the
allocations after the save that makes SHELVED_OFFLOADED visible
(:func:`shelvefix.tests.nova.rewrite.legacy_order`), compiles the result
against nova's own ``nova.compute.manager`` globals and returns a
``ComputeManager`` subclass using it. The copy therefore follows whatever
nova version is installed: nothing but the position of one statement
differs, which the tests check.

This module imports nova; load it through
:func:`shelvefix.tests.nova.base.load`.
"""

import ast
import inspect
import textwrap

from nova.compute import manager as nova_manager

from shelvefix.nova import shelve_offload
from shelvefix.tests.nova import rewrite

# The method sits in a class in nova's file; a wrapper class of the same
# name keeps the rewrite and the check reading it as they read the file.
WRAPPER = 'class %s:\n' % shelve_offload.CLASS_NAME


def method_source(cls=nova_manager.ComputeManager):
    """The method's source as a one-class module, and its first line.

    :returns: ``(text, first_line)``; line ``n`` of ``text`` is line
        ``n + first_line - 2`` of nova's file
    """
    lines, first_line = inspect.getsourcelines(
        getattr(cls, shelve_offload.METHOD_NAME))
    body = textwrap.indent(textwrap.dedent(''.join(lines)), ' ' * 4)
    return WRAPPER + body, first_line


def legacy_method_source(cls=nova_manager.ComputeManager):
    """The legacy-order copy, as :func:`method_source` returns the method.

    :raises shelvefix.tests.nova.rewrite.RewriteError: the installed
        method is not in the fixed order
    """
    text, first_line = method_source(cls)
    return rewrite.legacy_order(text), first_line


def legacy_compute_manager(cls=nova_manager.ComputeManager):
    """A subclass of ``cls`` whose shelve-offload runs in legacy order.

    :returns: the class; its ``legacy_source`` attribute holds the
        rewritten method
    """
    text, first_line = legacy_method_source(cls)
    tree = ast.parse(text)
    # Tracebacks then point at nova's file, at the statement's own line.
    ast.increment_lineno(tree, first_line - 2)
    namespace = {}
    filename = inspect.getsourcefile(nova_manager)
    exec(compile(tree, filename, 'exec'), vars(nova_manager), namespace)
    method = vars(namespace[shelve_offload.CLASS_NAME])[
        shelve_offload.METHOD_NAME]
    return type('LegacyOrderComputeManager', (cls,), {
        shelve_offload.METHOD_NAME: method,
        'legacy_source': text,
        '__doc__': 'nova\'s ComputeManager, shelve-offload in legacy order.',
    })
