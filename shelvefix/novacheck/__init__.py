"""``shelvefix check``: does a nova tree have the fix? Read, never run.

* :mod:`shelvefix.novacheck.source` - finds ``nova/compute/manager.py`` in
  a source tree, a package directory or the installed ``nova`` package,
  without importing nova;
* :mod:`shelvefix.novacheck.steps` and :mod:`shelvefix.novacheck.cfg`
  (with :mod:`~shelvefix.novacheck.expressions` and
  :mod:`~shelvefix.novacheck.inline`) - the control-flow graph of nova's
  ``ComputeManager._shelve_offload_instance``, read with :mod:`ast`, with
  the helpers it calls inlined;
* :mod:`shelvefix.novacheck.values` and :mod:`shelvefix.novacheck.events` -
  what each step does to the instance: aliases, frees, the offloaded state
  set, saves;
* :mod:`shelvefix.novacheck.paths` - every path through the graph, and the
  lines of the one that decides;
* :mod:`shelvefix.novacheck.check` - the verdict (fixed, legacy order,
  cannot tell) with file:line evidence and that path;
* :mod:`shelvefix.novacheck.rewrite` - the same statements moved or
  reshaped: the pre-fix order and the shapes of older releases, as text or
  as a running subclass.

Nothing here imports nova: a downstream tree is checked as text, so the
check works for any branch, whatever its dependencies.
"""
