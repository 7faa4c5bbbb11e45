"""``shelvefix check``: which fixes does a nova tree have? Read, never run.

* :mod:`shelvefix.novacheck.source` - finds ``nova/compute/manager.py`` (and
  the modules beside it) in a source tree, a package directory, a release
  archive or the installed ``nova`` package, without importing nova;
* :mod:`shelvefix.novacheck.classes` - what the ``ComputeManager`` class
  really binds each method name to, and what the check does not follow;
* :mod:`shelvefix.novacheck.steps` and :mod:`shelvefix.novacheck.cfg`
  (with :mod:`~shelvefix.novacheck.expressions` and
  :mod:`~shelvefix.novacheck.inline`) - the control-flow graph of a
  ``ComputeManager`` method, read with :mod:`ast`, with the helpers it
  calls inlined when they certainly run;
* :mod:`shelvefix.novacheck.values` and :mod:`shelvefix.novacheck.events` -
  what each step does to the instance: aliases, frees, the offloaded state
  set, saves;
* :mod:`shelvefix.novacheck.paths` - every path through the graph, and the
  lines of the one that decides;
* :mod:`shelvefix.novacheck.check` - bug 1798688's verdict (fixed, legacy
  order, cannot tell) with file:line evidence and that path;
* :mod:`shelvefix.novacheck.tracker` (with
  :mod:`~shelvefix.novacheck.evaluate`), :mod:`shelvefix.novacheck.unshelve`
  and :mod:`shelvefix.novacheck.hostlost` - bug 2025480, bug 1862633 and
  host lost;
* :mod:`shelvefix.novacheck.fixes` (with
  :mod:`~shelvefix.novacheck.outcome`) - the report: one verdict per fix,
  and the exit status for the fixes asked about;
* :mod:`shelvefix.novacheck.rewrite` - the same statements moved or
  reshaped: the pre-fix orders and the shapes of older releases, as text or
  as a running subclass.

Nothing here imports nova: a downstream tree is checked as text, so the
check works for any branch, whatever its dependencies.
"""
