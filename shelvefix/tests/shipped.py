"""The folders beside the package that tests read: benchmarks and tools.

``benchmarks/`` and ``tools/`` are scripts, not modules of the package.
In a checkout they sit beside ``shelvefix/``; the wheel installs them
under ``<prefix>/share/shelvefix/`` (``data_files`` in setup.cfg), so that
the tests of an installed shelvefix read the same scripts.
"""

import importlib.util
import os
import sys

#: Set (``tools/release.py`` does, for an installed wheel): a missing
#: folder fails the test instead of skipping it.
REQUIRED = 'SHELVEFIX_SHIPPED_REQUIRED'

#: The checkout's root, when the package runs from one.
CHECKOUT = os.path.dirname(os.path.dirname(os.path.dirname(
    os.path.abspath(__file__))))
#: Where an installed wheel puts them.
INSTALLED = os.path.join(sys.prefix, 'share', 'shelvefix')


def folder(name, marker):
    """The folder ``name`` (``'benchmarks'``, ``'tools'``), or None.

    :param marker: a file the folder must have (a checkout's root may not
        be one: an installed package's parent is ``site-packages``)
    """
    for base in (CHECKOUT, INSTALLED):
        path = os.path.join(base, name)
        if os.path.isfile(os.path.join(path, marker)):
            return path
    return None


def load_script(name, filename):
    """``NAME/FILENAME`` as a module, its folder first on ``sys.path``.

    The caller puts ``sys.path`` back (:func:`use_script` does).

    :raises LookupError: the folder is not there
    """
    where = folder(name, filename)
    if where is None:
        raise LookupError('%s/%s is neither beside the package nor in %s'
                          % (name, filename, INSTALLED))
    sys.path.insert(0, where)
    path = os.path.join(where, filename)
    spec = importlib.util.spec_from_file_location(
        os.path.splitext(filename)[0], path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def missing(testcase, reason):
    """Skip ``testcase`` for want of a shipped folder, or fail it.

    It fails where :data:`REQUIRED` is set: a release's tests must find
    everything the wheel should have installed.
    """
    if os.environ.get(REQUIRED):
        testcase.fail(reason)
    testcase.skipTest(reason)


def use_script(testcase, name, filename):
    """``NAME/FILENAME`` as a module, for the length of ``testcase``.

    As when the script runs: its folder first on ``sys.path`` (for its
    sibling modules), put back at the test's cleanup. A folder that is not
    there skips the test, or fails it (:func:`missing`).
    """
    import fixtures
    testcase.useFixture(fixtures.MonkeyPatch('sys.path', list(sys.path)))
    try:
        return load_script(name, filename)
    except LookupError as e:
        missing(testcase, str(e))
