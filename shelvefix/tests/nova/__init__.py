"""Tests that run nova's own code (``tox -e nova``).

They need nova installed (the ``nova`` tox environment installs it from
PyPI) and skip without it. nova is imported when a test starts, never when
a module here is loaded (see :mod:`shelvefix.tests.nova.base`).
"""
