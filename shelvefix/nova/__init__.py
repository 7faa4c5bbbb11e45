"""Checks that run against nova's own code rather than shelvefix's.

* :mod:`shelvefix.nova.shelve_offload` - reads nova's
  ``ComputeManager._shelve_offload_instance`` with :mod:`ast` and finds the
  statements bug 1798688 is about: the one that frees the instance's
  placement allocations, and the save that makes ``SHELVED_OFFLOADED``
  visible.
* :mod:`shelvefix.nova.source` - finds ``nova/compute/manager.py`` in a
  source tree, a package directory or the installed ``nova`` package,
  without importing nova.
* :mod:`shelvefix.nova.check` - the verdict (fixed, legacy order, cannot
  tell) with file:line evidence, behind ``shelvefix check``.

Nothing here imports nova: a downstream tree is checked as text, so the
check works for any branch, whatever its dependencies.
"""
