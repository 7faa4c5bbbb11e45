"""``shelvefix check``: does a nova tree have the fix? Read, never run.

* :mod:`shelvefix.novacheck.source` - finds ``nova/compute/manager.py`` in
  a source tree, a package directory or the installed ``nova`` package,
  without importing nova;
* :mod:`shelvefix.novacheck.sites` - reads nova's
  ``ComputeManager._shelve_offload_instance`` with :mod:`ast` and finds the
  statements bug 1798688 is about: the one that frees the instance's
  placement allocations, and the save that makes ``SHELVED_OFFLOADED``
  visible;
* :mod:`shelvefix.novacheck.check` - the verdict (fixed, legacy order,
  cannot tell) with file:line evidence;
* :mod:`shelvefix.novacheck.rewrite` - the same statements moved or
  reshaped: the pre-fix order and the shapes of older releases, as text or
  as a running subclass.

Nothing here imports nova: a downstream tree is checked as text, so the
check works for any branch, whatever its dependencies.
"""
